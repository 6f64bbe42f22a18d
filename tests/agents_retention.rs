//! Closed-handle retention: a long-lived runtime that spawns, runs and closes a handle per
//! task (as a served agent does) keeps only the newest closed handles, never a live one,
//! and an evicted id is an unknown handle to `inspect` and `wait`.

mod agents_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agents_support::scripted_client;
use serde_json::json;
use toolnexus::agents::{
    AgentDef, AgentRuntime, Handle, HandleState, Registry, RuntimeBuilder, TaskStatus, VerbError,
    VirtualClock,
};
use toolnexus::client::HttpResponse;
use toolnexus::client::transport::from_fn;

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("bounded wait")
}

/// A model answering `reply N` to its N-th request.
fn runtime() -> RuntimeBuilder {
    let n = Arc::new(AtomicUsize::new(0));
    let t = from_fn(move |_req| {
        let k = n.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            Ok(HttpResponse::json(&json!({
                "choices": [{"message": {"role": "assistant", "content": format!("reply {k}")}}]})))
        }
    });
    AgentRuntime::builder(scripted_client(t))
}

fn registry() -> Registry {
    Registry::new([AgentDef::new("a", "does a")]).unwrap()
}

/// One task the way `Agent::serve` runs it: spawn, wake, wait, close.
async fn one_task(rt: &AgentRuntime, prompt: &str) -> Handle {
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some(prompt.to_owned())).unwrap();
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(r.status, TaskStatus::Done);
    rt.close(&h).await;
    h
}

#[tokio::test]
async fn a_thousand_closed_one_shot_runs_leave_only_the_newest_n() {
    let rt = runtime().retain_closed(3).build(registry()).unwrap();
    let live = rt.spawn(&rt.root(), "a", None).unwrap();
    let second = one_task(&rt, "task 0").await;
    assert_eq!(second.id(), "root/a.2");
    for i in 1..1000 {
        one_task(&rt, &format!("task {i}")).await;
    }
    let ids: Vec<String> = rt.list().into_iter().map(|v| v.id).collect();
    // The live handle (spawned first, so the oldest) stays; of the closed, the newest 3.
    assert_eq!(ids, ["root/a.1", "root/a.999", "root/a.1000", "root/a.1001"]);
    assert_eq!(rt.inspect(&rt.root()).unwrap().children.len(), 4);
    assert_eq!(rt.inspect(&live).unwrap().state, HandleState::Idle);
    let kept = rt.handle("root/a.1001").unwrap();
    assert_eq!(rt.inspect(&kept).unwrap().state, HandleState::Closed);
    assert_eq!(bounded(rt.wait(&kept, None)).await.text, "reply 1000");

    // `handle` only finds what the table holds; a handle kept from before is now unknown.
    assert_eq!(rt.handle("root/a.2"), None);
    let evicted = second;
    let err = rt.inspect(&evicted).unwrap_err();
    assert!(matches!(&err, VerbError::UnknownHandle(id) if id == "root/a.2"));
    assert_eq!(err.to_string(), "unknown handle root/a.2");
    let r = bounded(rt.wait(&evicted, None)).await;
    assert_eq!(
        (r.status, r.text.as_str()),
        (TaskStatus::Error, "unknown handle root/a.2")
    );
    assert!(matches!(
        rt.wake(&evicted, None),
        Err(VerbError::UnknownHandle(_))
    ));
}

#[tokio::test]
async fn closed_handles_older_than_the_age_are_evicted_on_the_runtime_clock() {
    let clock = VirtualClock::new();
    let rt = runtime()
        .clock(Arc::new(clock.clone()))
        .retain_closed_for(Duration::from_secs(60))
        .build(registry())
        .unwrap();
    one_task(&rt, "first").await;
    clock.advance(Duration::from_secs(59));
    one_task(&rt, "second").await;
    let ids = |rt: &AgentRuntime| rt.list().into_iter().map(|v| v.id).collect::<Vec<_>>();
    assert_eq!(ids(&rt), ["root/a.1", "root/a.2"]);
    clock.advance(Duration::from_secs(1));
    // Age is checked when a handle closes: the first is now 60 s old, the second 1 s.
    one_task(&rt, "third").await;
    assert_eq!(ids(&rt), ["root/a.2", "root/a.3"]);
}

#[tokio::test]
async fn max_children_counts_lifetime_spawns_not_the_children_kept() {
    let coord = Registry::new([
        AgentDef::new("c", "coordinates")
            .team(["a"])
            .budget(toolnexus::agents::Budget::new().max_children(2)),
        AgentDef::new("a", "does a"),
    ])
    .unwrap();
    let rt2 = runtime().retain_closed(0).build(coord).unwrap();
    let c = rt2.spawn(&rt2.root(), "c", None).unwrap();
    for _ in 0..2 {
        let h = rt2.spawn(&c, "a", None).unwrap();
        rt2.close(&h).await;
    }
    assert!(rt2.inspect(&c).unwrap().children.is_empty());
    let err = rt2.spawn(&c, "a", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        toolnexus::agents::SpawnError::MaxChildren(2).to_string()
    );
}
