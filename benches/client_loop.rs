//! Loop overhead per LLM request: the cross-port bench scenario (turn 1 calls `get_weather`
//! and `add` in parallel, turn 2 answers) against the loopback mock model, for both styles,
//! and against an in-process `generate` (no HTTP at all) to isolate the loop itself.
//! Each iteration is one run = 2 LLM requests + 2 tool calls.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolnexus::client::{Client, GeneratedCall, Generation, Style};
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};
use toolnexus_mock::{BENCH_ANSWER, MockModel, Scenario};

fn toolkit() -> Toolkit {
    let weather = Tool::new("get_weather", |args: Value, _: ToolContext| async move {
        ToolResult::success(format!(
            "The weather in {} is Sunny, 22C.",
            args["city"].as_str().unwrap_or("?")
        ))
    })
    .with_description("Current weather for a city")
    .with_schema(json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}));
    let add = Tool::new("add", |args: Value, _: ToolContext| async move {
        ToolResult::success(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))
    })
    .with_description("Add two integers")
    .with_schema(json!({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}));
    Toolkit::new([weather, add])
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mock = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Bench))
        .expect("mock model");
    let tk = toolkit();
    let prompt = "What is the weather in Paris, and what is 2 + 2?";
    let mut group = c.benchmark_group("client_loop");
    for style in [Style::OpenAi, Style::Anthropic] {
        let client = Client::builder()
            .base_url(mock.base_url())
            .style(style)
            .model("mock-model")
            .api_key("bench")
            .build()
            .expect("client");
        group.bench_function(format!("{style}_run_loopback"), |b| {
            b.to_async(&rt).iter(|| async {
                let r = client.run(prompt, &tk).await.expect("run");
                assert_eq!(r.text, BENCH_ANSWER);
            })
        });
    }
    let generate = |req: toolnexus::client::GenerateRequest| async move {
        Ok(if req.messages.len() < 3 {
            Generation::calls(vec![
                GeneratedCall {
                    id: None,
                    name: "get_weather".into(),
                    arguments: json!({"city": "Paris"}),
                },
                GeneratedCall {
                    id: None,
                    name: "add".into(),
                    arguments: json!({"a": 2, "b": 2}),
                },
            ])
        } else {
            Generation::text(BENCH_ANSWER)
        })
    };
    let in_process = Client::in_process("mock-model", generate)
        .build()
        .expect("client");
    group.bench_function("in_process_run", |b| {
        b.to_async(&rt)
            .iter(|| async { in_process.run(prompt, &tk).await.expect("run") })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
