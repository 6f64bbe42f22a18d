//! The end-to-end cost of one heartbeat tick at idle (SPEC §7E): post a tick, take it, run
//! the heartbeat turn on the persona's conversation, classify the reply. Against the
//! embedded mock model over loopback HTTP, and against an in-process transport answering
//! `HEARTBEAT_OK` (the library's own share). The conversation is reset each time, so every
//! tick costs the same: one request carrying the soul and the heartbeat prompt.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolnexus::Toolkit;
use toolnexus::client::transport::{HttpResponse, from_fn};
use toolnexus::client::{Client, Style};
use toolnexus::persona::{Beat, Heartbeat, Persona};
use toolnexus_mock::{MockModel, Scenario};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mock = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Planner))
        .expect("mock model");
    let home = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        home.path().join("SOUL.md"),
        "You are Ava, a calm support assistant.",
    )
    .expect("SOUL.md");
    std::fs::write(
        home.path().join("HEARTBEAT.md"),
        "If nothing is due, reply HEARTBEAT_OK.",
    )
    .expect("HEARTBEAT.md");
    let persona = Persona::from_dir(home.path()).expect("persona");
    let builder = || {
        Client::builder()
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("bench")
            .system_prompt(persona.soul())
    };
    let loopback = builder().base_url(mock.base_url()).build().expect("client");
    let ok = from_fn(|_req| async {
        Ok(HttpResponse::json(
            &json!({"choices": [{"message": {"role": "assistant", "content": "HEARTBEAT_OK"}}]}),
        ))
    });
    let in_process = builder()
        .base_url("http://127.0.0.1:9/v1")
        .transport(ok)
        .build()
        .expect("client");
    let tk = Toolkit::new([persona.memory_tool()]);
    let mut group = c.benchmark_group("heartbeat");
    for (name, client) in [
        ("tick_loopback_mock", &loopback),
        ("tick_in_process", &in_process),
    ] {
        let heartbeat = Heartbeat::new();
        let mut convo = client.conversation(&tk);
        group.bench_function(name, |b| {
            b.iter(|| {
                convo.reset();
                heartbeat.ticks().post();
                let beat = rt.block_on(heartbeat.beat(&mut convo)).expect("beat");
                assert_eq!(beat, Beat::Silent);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
