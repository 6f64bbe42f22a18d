//! Bad input and faults of the agent runtime (SPEC §7D): each is a clear result or error —
//! never a panic across a handle boundary, never a hang, never a leaked turn-gate permit,
//! never an orphaned turn (the handle table and the gate are checked after `close(root)`).

mod agents_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_support::{scripted_client, tool};
use serde_json::{Value, json};
use toolnexus::agents::{
    AgentDef, AgentError, AgentRuntime, Budget, DefError, HandleState, InboxItem, LimitName, Registry,
    RuntimeBuilder, SpawnError, TaskStatus, VerbError, VirtualClock, agent,
};
use toolnexus::client::hooks::Hooks;
use toolnexus::client::transport::from_fn;
use toolnexus::client::{HttpResponse, HttpTransport};

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("bounded wait")
}

fn reply(message: Value) -> HttpResponse {
    HttpResponse::json(&json!({"choices": [{"message": message}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}))
}

fn text(s: &str) -> Value {
    json!({"role": "assistant", "content": s})
}

fn call(name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": name, "arguments": args.to_string()}}]})
}

/// A model that never answers (until the request is dropped), counting the requests.
fn silent_model() -> (Arc<dyn HttpTransport>, Arc<AtomicUsize>) {
    let n = Arc::new(AtomicUsize::new(0));
    let c = n.clone();
    let t = from_fn(move |_req| {
        c.fetch_add(1, Ordering::SeqCst);
        std::future::pending()
    });
    (t, n)
}

fn runtime(t: Arc<dyn HttpTransport>) -> RuntimeBuilder {
    AgentRuntime::builder(scripted_client(t))
}

#[tokio::test]
async fn an_unknown_agent_is_a_spawn_error_naming_the_known_ones() {
    let (t, _) = silent_model();
    let rt = runtime(t)
        .build(Registry::new([AgentDef::new("b", "x"), AgentDef::new("a", "y")]).unwrap())
        .unwrap();
    let err = rt.spawn(&rt.root(), "nope", None).unwrap_err();
    assert_eq!(err.to_string(), "unknown agent \"nope\" (known: a, b)");
    assert_eq!(rt.run("nope", "go").await.unwrap_err(), err);
    assert!(rt.list().is_empty());
}

#[tokio::test]
async fn an_out_of_team_task_is_an_error_the_model_reads_listing_the_team() {
    let bodies = Arc::new(Mutex::new(Vec::<Value>::new()));
    let seen = bodies.clone();
    let t = from_fn(move |req| {
        let body = req.json();
        seen.lock().unwrap().push(body.clone());
        async move {
            let tool_msg = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "tool")
                .cloned();
            Ok(reply(match tool_msg {
                None => call("task", json!({"agent": "stranger", "prompt": "hi"})),
                Some(m) => text(m["content"].as_str().unwrap()),
            }))
        }
    });
    let reg = Registry::new([
        AgentDef::new("lead", "leads").team(["zeta", "alpha"]),
        AgentDef::new("zeta", "last"),
        AgentDef::new("alpha", "first"),
        AgentDef::new("stranger", "not on the team"),
    ])
    .unwrap();
    let rt = runtime(t).build(reg).unwrap();
    let r = bounded(rt.run("lead", "go")).await.unwrap();
    assert_eq!(r.status, TaskStatus::Done);
    assert_eq!(
        r.text,
        "agent \"stranger\" not in this agent's team (alpha, zeta)"
    );
    let first = &bodies.lock().unwrap()[0];
    assert_eq!(
        first["tools"][0]["function"]["description"],
        "Delegate a subtask to an isolated subagent. Available agents — alpha: first; zeta: last"
    );
    assert!(rt.handle("root/lead.1/stranger.1").is_none(), "nothing spawned");
}

#[tokio::test]
async fn bad_definitions_are_typed_errors_naming_the_agent_and_file() {
    let cycle = Registry::new([
        AgentDef::new("a", "x").team(["b"]),
        AgentDef::new("b", "x").team(["a"]),
    ])
    .unwrap_err();
    assert!(matches!(&cycle, DefError::TeamCycle { cycle } if cycle == &["a", "b", "a"]));

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("SOUL.md");
    let (t, calls) = silent_model();
    let err = agent("writer", "writes")
        .soul_file(&missing)
        .run("go", runtime(t.clone()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AgentError::Def(DefError::SoulFile { agent, path, .. }) if agent == "writer" && *path == missing)
    );
    let bad = dir.path().join("latin1.md");
    std::fs::write(&bad, b"na\xefve").unwrap();
    let err = agent("writer", "writes")
        .soul_file(&bad)
        .run("go", runtime(t.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "agent `writer`: soul_file {} is not UTF-8 (invalid byte at offset 2)",
            bad.display()
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing reached the model");
}

#[tokio::test]
async fn a_zero_budget_is_refused_before_anything_runs() {
    let (t, calls) = silent_model();
    let err = Registry::new([AgentDef::new("a", "x").budget(Budget::new().max_tokens(0))]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent `a`: budget maxTokens is 0, so it could never run"
    );
    let rt = runtime(t)
        .build(Registry::new([AgentDef::new("a", "x")]).unwrap())
        .unwrap();
    let err = rt
        .spawn(&rt.root(), "a", Some(Budget::new().max_turns(0)))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent `a`: budget maxTurns is 0, so it could never run"
    );
    assert!(matches!(err, SpawnError::Def(_)));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_panicking_child_is_an_error_result_for_its_parent() {
    let t = from_fn(|req| async move {
        let body = req.json();
        let msgs = body["messages"].as_array().unwrap().clone();
        Ok(reply(match msgs.iter().find(|m| m["role"] == "tool") {
            None => call("task", json!({"agent": "fragile", "prompt": "try"})),
            Some(m) => text(&format!("child said: {}", m["content"].as_str().unwrap())),
        }))
    });
    let boom = Hooks::new().before_llm(|_req| async move {
        panic!("the hook exploded");
    });
    let reg = Registry::new([
        AgentDef::new("lead", "leads").team(["fragile"]),
        AgentDef::new("fragile", "panics").hooks(boom),
    ])
    .unwrap();
    let rt = runtime(t).build(reg).unwrap();
    let r = bounded(rt.run("lead", "go")).await.unwrap();
    assert_eq!(r.status, TaskStatus::Done, "{r:?}");
    assert_eq!(
        r.text,
        "child said: [error] the agent's run panicked: the hook exploded"
    );
    let child = rt.handle("root/lead.1/fragile.1").unwrap();
    assert_eq!(rt.inspect(&child).unwrap().state, HandleState::Closed);
    bounded(rt.close(&rt.root())).await;
    assert!(rt.is_quiescent());
}

#[tokio::test]
async fn a_panicking_transport_releases_its_turn_gate_permit() {
    let t = from_fn(|_req| async move {
        panic!("transport bug");
    });
    let rt = runtime(t)
        .max_concurrent_turns(1)
        .build(Registry::new([AgentDef::new("a", "x")]).unwrap())
        .unwrap();
    let r = bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(r.status, TaskStatus::Error);
    assert_eq!(r.text, "the agent's run panicked: transport bug");
    assert_eq!(rt.turns_in_flight(), (0, 1));
    assert!(rt.is_quiescent(), "the one permit is back");
    // And the runtime goes on: the next run gets the permit (and the same panic).
    let r = bounded(rt.run("a", "again")).await.unwrap();
    assert_eq!(r.status, TaskStatus::Error);
}

#[tokio::test]
async fn a_model_that_never_answers_is_bounded_by_max_wall_ms() {
    let (t, calls) = silent_model();
    let clock = VirtualClock::new();
    let reg = Registry::new([AgentDef::new("a", "x").budget(Budget::new().max_wall_ms(1_000))]).unwrap();
    let rt = runtime(t).clock(Arc::new(clock.clone())).build(reg).unwrap();
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.post(&h, InboxItem::external("context")).unwrap();
    rt.wake(&h, Some("go".into())).unwrap();
    bounded(async {
        while calls.load(Ordering::SeqCst) == 0 || clock.sleepers() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert_eq!(rt.turns_in_flight().0, 1);
    // A wait with a shorter deadline times out; the run goes on.
    let waited = {
        let (rt, h) = (rt.clone(), h.clone());
        tokio::spawn(async move { rt.wait(&h, Some(Duration::from_millis(500))).await })
    };
    bounded(async {
        while clock.sleepers() < 2 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    clock.advance(Duration::from_millis(500));
    let r = bounded(waited).await.unwrap();
    assert_eq!(
        (r.status, r.limit),
        (TaskStatus::Timeout, Some(LimitName::Timeout))
    );
    assert_eq!(r.text, "wait timeout after 500ms (child still running)");
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Running);
    clock.advance(Duration::from_millis(500));
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(
        (r.status, r.limit),
        (TaskStatus::Incomplete, Some(LimitName::MaxWallMs))
    );
    assert_eq!(r.text, "budget exhausted (maxWallMs); partial work preserved");
    assert!(r.is_error);
    assert!(rt.is_quiescent(), "the aborted call gave its permit back");
    assert_eq!(rt.inspect(&h).unwrap().inbox, 0, "the drained item was consumed");
    // The spent wall budget refuses the next wake loudly.
    rt.wake(&h, Some("again".into())).unwrap();
    let r = rt.wait(&h, None).await;
    assert_eq!(r.text, "budget exhausted (maxWallMs); partial work preserved");
}

#[tokio::test]
async fn closing_a_tree_of_50_running_handles_leaves_nothing_behind() {
    let (t, calls) = silent_model();
    let closes = Arc::new(Mutex::new(Vec::<String>::new()));
    let c = closes.clone();
    let reg = Registry::new([
        AgentDef::new("boss", "x").budget(Budget::new().max_concurrent(64)),
        AgentDef::new("worker", "y")
            .on_close(move |h, reason| c.lock().unwrap().push(format!("{h} {reason}"))),
    ])
    .unwrap();
    let rt = runtime(t)
        .max_concurrent_turns(64)
        .shutdown(Duration::from_millis(20))
        .build(reg)
        .unwrap();
    let boss = rt.spawn(&rt.root(), "boss", None).unwrap();
    let mut waiters = Vec::new();
    for i in 0..49 {
        let w = rt.spawn(&boss, "worker", None).unwrap();
        assert_eq!(w.id(), format!("root/boss.1/worker.{}", i + 1));
        rt.wake(&w, Some("work".into())).unwrap();
        let rt2 = rt.clone();
        waiters.push(tokio::spawn(async move { rt2.wait(&w, None).await }));
    }
    rt.wake(&boss, Some("lead".into())).unwrap();
    bounded(async {
        while calls.load(Ordering::SeqCst) < 50 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert_eq!(rt.turns_in_flight().0, 50);
    bounded(rt.close(&rt.root())).await;
    for w in waiters {
        assert_eq!(bounded(w).await.unwrap().status, TaskStatus::Closed);
    }
    assert_eq!(rt.list().len(), 50);
    assert!(rt.list().iter().all(|v| v.state == HandleState::Closed));
    assert!(rt.is_quiescent(), "no running handle, no held permit");
    assert_eq!(rt.turns_in_flight().0, 0);
    let closes = closes.lock().unwrap();
    assert_eq!(closes.len(), 49);
    assert!(closes.iter().all(|l| l.ends_with(" closed")));
    assert_eq!(
        rt.post(&boss, InboxItem::external("late")),
        Err(VerbError::Closed("root/boss.1".into()))
    );
    assert!(matches!(
        rt.spawn(&boss, "worker", None),
        Err(SpawnError::ParentClosed(_))
    ));
}

#[tokio::test]
async fn interrupt_keeps_the_handle_usable_and_its_inbox_intact() {
    let (t, calls) = silent_model();
    let rt = runtime(t)
        .build(Registry::new([AgentDef::new("a", "x")]).unwrap())
        .unwrap();
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.post(&h, InboxItem::new("root", "peer", "keep me")).unwrap();
    rt.wake(&h, None).unwrap();
    assert_eq!(rt.inspect(&h).unwrap().inbox, 0, "drained into the turn");
    bounded(async {
        while calls.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    let waiter = {
        let (rt, h) = (rt.clone(), h.clone());
        tokio::spawn(async move { rt.wait(&h, None).await })
    };
    tokio::task::yield_now().await;
    rt.interrupt(&h);
    let r = bounded(waiter).await.unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.is_error),
        (TaskStatus::Interrupted, "interrupted", true)
    );
    let v = rt.inspect(&h).unwrap();
    assert_eq!((v.state, v.inbox), (HandleState::Idle, 1));
    assert!(rt.is_quiescent());
    assert_eq!(
        rt.transitions(&h)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["idle→running", "running→idle"]
    );
}

#[tokio::test]
async fn an_inline_suspension_answered_by_the_host_at_the_root_agent() {
    // The entry agent holds the interpreter: its own tool's suspension is answered inline.
    let t = from_fn(|req| async move {
        let body = req.json();
        let msgs = body["messages"].as_array().unwrap().clone();
        Ok(reply(match msgs.iter().find(|m| m["role"] == "tool") {
            None => call("check_secret", json!({})),
            Some(m) => text(m["content"].as_str().unwrap()),
        }))
    });
    let asked = Arc::new(Mutex::new(Vec::<String>::new()));
    let a = asked.clone();
    let def = AgentDef::new("solo", "x")
        .uses([tool("check_secret")])
        .wait_for(Arc::new(move |req: toolnexus::Request| {
            a.lock().unwrap().push(req.prompt.clone());
            Box::pin(async move { toolnexus::Answer::output(req.id, "yes") })
        }));
    let rt = runtime(t).build(Registry::new([def]).unwrap()).unwrap();
    let r = bounded(rt.run("solo", "go")).await.unwrap();
    assert_eq!((r.status, r.text.as_str()), (TaskStatus::Done, "secret-token"));
    assert_eq!(*asked.lock().unwrap(), ["approve secret access?"]);
    let h = rt.handle("root/solo.1").unwrap();
    assert_eq!(
        rt.transitions(&h)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "idle→running",
            "running→suspended",
            "suspended→running",
            "running→idle"
        ]
    );
    assert!(
        rt.trace()
            .iter()
            .any(|l| l == "root/solo.1: escalate → self answers (nearest interpreter)")
    );
}

#[tokio::test]
async fn a_resume_whose_answer_does_not_echo_the_request_is_refused() {
    let t = from_fn(|_req| async move { Ok(reply(call("check_secret", json!({})))) });
    let rt = runtime(t)
        .build(Registry::new([AgentDef::new("a", "x").uses([tool("check_secret")])]).unwrap())
        .unwrap();
    let r = bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(r.status, TaskStatus::Pending);
    let pending = r.pending.unwrap();
    assert_eq!(pending.data.as_ref().unwrap()["path"], json!(["root", "a.1"]));
    let err = rt
        .resume(toolnexus::Answer::output("stale", "x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "answer id stale does not match the pending request {} of root/a.1",
            pending.id
        )
    );
    // Interrupting a parked handle drops its request: nothing is left to resume.
    rt.interrupt(&rt.handle("root/a.1").unwrap());
    assert_eq!(
        rt.resume(toolnexus::Answer::output(pending.id, "x"))
            .await
            .unwrap_err()
            .to_string(),
        "no suspended handle to resume"
    );
}

#[tokio::test]
async fn as_tool_returns_only_the_final_text_and_metadata() {
    let t = from_fn(|_req| async move { Ok(reply(text("the answer"))) });
    let tool = agent("explore", "read-only research").as_tool(runtime(t));
    assert_eq!(tool.source().as_str(), "agent");
    assert_eq!(
        *tool.input_schema(),
        json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})
    );
    let r = tool.execute(json!({"prompt": "look"}), Default::default()).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"the answer","isError":false,"metadata":{"agent":"explore","turns":1,"totalTokens":4}}"#
    );
    let r = tool.execute(json!({}), Default::default()).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"missing required argument: prompt (a string)","isError":true}"#
    );
}

#[tokio::test]
async fn interrupting_a_parent_interrupts_the_child_its_task_call_waits_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let t = from_fn(move |req| {
        c.fetch_add(1, Ordering::SeqCst);
        let body = req.json();
        async move {
            if body["model"] == "lead-model" {
                Ok(reply(call(
                    "task",
                    json!({"agent": "worker", "prompt": "slow work"}),
                )))
            } else {
                std::future::pending().await
            }
        }
    });
    let reg = Registry::new([
        AgentDef::new("lead", "leads")
            .model("lead-model")
            .team(["worker"]),
        AgentDef::new("worker", "works"),
    ])
    .unwrap();
    let rt = runtime(t).build(reg).unwrap();
    let lead = rt.spawn(&rt.root(), "lead", None).unwrap();
    rt.wake(&lead, Some("go".into())).unwrap();
    bounded(async {
        while calls.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    let worker = rt.handle("root/lead.1/worker.1").unwrap();
    assert_eq!(rt.inspect(&worker).unwrap().state, HandleState::Running);
    rt.interrupt(&lead);
    let r = bounded(rt.wait(&lead, None)).await;
    assert_eq!(r.status, TaskStatus::Interrupted);
    let w = bounded(rt.wait(&worker, None)).await;
    assert_eq!(w.status, TaskStatus::Interrupted);
    assert!(rt.is_quiescent(), "nothing runs on for nobody");
    assert!(
        rt.trace()
            .iter()
            .any(|l| l == "root/lead.1/worker.1: interrupted (its task call was abandoned)")
    );
}
