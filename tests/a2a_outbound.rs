//! Remote A2A agents as tools (SPEC §7A) against a scripted peer on 127.0.0.1 that records
//! every request: naming, schema, the exact wire of both dialects, the polling order, the
//! byte-exact result strings and metadata, `CancelTask` on timeout and cancellation, and
//! failures that never panic and never show a header value.

mod a2a_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_support::{Peer, Script, ok, spec_card};
use axum::http::StatusCode;
use serde_json::{Value, json};
use toolnexus::a2a::{Agent, AgentOptions, Dialect, ResolveError};
use toolnexus::{CancellationToken, ToolContext, ToolResult, ToolSource};

fn fast() -> AgentOptions {
    AgentOptions::default().poll_every(Duration::from_millis(20))
}

/// Replaces the random `id`/`messageId` values so a body compares byte for byte.
fn canonical(mut body: Value) -> String {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, v) in m.iter_mut() {
                    if (k == "id" || k == "messageId") && v.as_str().is_some_and(|s| s.len() == 36) {
                        *v = json!("<uuid>");
                    } else {
                        walk(v);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut body);
    body.to_string()
}

fn meta(r: &ToolResult) -> Value {
    let mut m = Value::Object(r.metadata.clone().expect("metadata on every result"));
    assert!(m["ms"].is_u64(), "ms is an integer: {m}");
    m["ms"] = json!("<ms>");
    m
}

/// A peer whose tasks are keyed by the task text: `SendMessage` answers `submitted` with
/// id = text, and `GetTask` answers `states[id]` in turn (the last one repeats).
fn by_text(states: Vec<(&str, Vec<Value>)>) -> Script {
    let table: HashMap<String, Vec<Value>> = states.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let served: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    Arc::new(move |_, body| match body["method"].as_str() {
        Some("SendMessage") => {
            let id = body
                .pointer("/params/message/parts/0/text")
                .and_then(Value::as_str)
                .unwrap_or("?");
            ok(body, json!({"id": id, "status": {"state": "submitted"}}))
        }
        Some("GetTask") => {
            let id = body
                .pointer("/params/id")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            let mut served = served.lock().unwrap();
            let n = served.entry(id.clone()).or_default();
            let list = &table[&id];
            let answer = list[(*n).min(list.len() - 1)].clone();
            *n += 1;
            let mut task = json!({"id": id});
            task.as_object_mut()
                .unwrap()
                .extend(answer.as_object().unwrap().clone());
            ok(body, task)
        }
        _ => ok(body, json!({"id": "x", "status": {"state": "canceled"}})),
    })
}

#[tokio::test]
async fn one_tool_per_skill_named_and_shaped_by_the_spec() {
    let card = spec_card(json!([
        {"id": "book-flight", "name": "Book flight", "description": "Books a flight", "tags": ["travel"]},
        {"id": "", "name": "hotel search.v2"},
        {"name": "", "description": "no id, no name: skipped"}
    ]));
    let peer = Peer::start(card, Arc::new(|_, b| ok(b, json!({})))).await;
    let agent = Agent::resolve(peer.card_url(), AgentOptions::default())
        .await
        .unwrap();
    assert_eq!(agent.name(), "Travel Agent");
    assert_eq!(agent.endpoint(), format!("http://{}/rpc", peer.addr));
    assert_eq!(agent.dialect(), Dialect::Spec);
    let tools = agent.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        ["Travel_Agent_book-flight", "Travel_Agent_hotel_search_v2"]
    );
    assert_eq!(tools[0].description(), "Books a flight");
    assert_eq!(tools[1].description(), "hotel search.v2");
    for t in &tools {
        assert_eq!(t.source(), ToolSource::A2a);
        assert_eq!(
            t.input_schema().to_string(),
            r#"{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}"#
        );
    }
    // A call without `task` never reaches the agent.
    let r = tools[0].execute(json!({"task": 5}), ToolContext::default()).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"missing required argument: task (a string)","isError":true}"#
    );
    assert!(peer.seen().is_empty());
}

#[tokio::test]
async fn submit_then_poll_to_completed_on_the_spec_wire() {
    // SAFETY: set before any thread reads the environment in this test binary's test.
    unsafe { std::env::set_var("A2A_OUTBOUND_TOKEN", "tok-123") };
    let script = by_text(vec![(
        "t1",
        vec![
            json!({"status": {"state": "working"}}),
            json!({"status": {"state": "completed"}, "artifacts": [
                {"artifactId": "a1", "parts": [{"kind": "text", "text": "Flight AF12"}, {"kind": "data", "data": {"x": 1}}]},
                {"artifactId": "a2", "parts": [{"kind": "text", "text": "Seat 3A"}]}
            ], "history": [{"role": "agent", "parts": [{"kind": "text", "text": "not used"}]}]}),
        ],
    )]);
    let peer = Peer::start(spec_card(json!([{"id": "book"}])), script).await;
    let options = fast().header("Authorization", "Bearer ${A2A_OUTBOUND_TOKEN}");
    let agent = Agent::resolve(peer.card_url(), options).await.unwrap();
    let tool = &agent.tools()[0];
    let r = tool.execute(json!({"task": "t1"}), ToolContext::default()).await;
    assert_eq!(r.output, "Flight AF12\nSeat 3A");
    assert!(!r.is_error);
    assert_eq!(
        meta(&r),
        json!({"agent": "Travel Agent", "taskId": "t1", "state": "completed", "polls": 2, "ms": "<ms>"})
    );
    assert_eq!(
        r.to_json().split(r#","ms":"#).next().unwrap(),
        r#"{"output":"Flight AF12\nSeat 3A","isError":false,"metadata":{"agent":"Travel Agent","taskId":"t1","state":"completed","polls":2"#
    );

    let seen = peer.seen();
    assert_eq!(peer.methods(), ["SendMessage", "GetTask", "GetTask"]);
    assert_eq!(
        canonical(seen[0].body.clone()),
        r#"{"jsonrpc":"2.0","id":"<uuid>","method":"SendMessage","params":{"message":{"role":"user","messageId":"<uuid>","parts":[{"kind":"text","text":"t1"}]},"configuration":{"blocking":false}}}"#
    );
    assert_eq!(
        canonical(seen[1].body.clone()),
        r#"{"jsonrpc":"2.0","id":"<uuid>","method":"GetTask","params":{"id":"t1"}}"#
    );
    assert_ne!(
        seen[1].body["id"], seen[2].body["id"],
        "a fresh JSON-RPC id per request"
    );
    for s in &seen {
        assert_eq!(s.headers["content-type"], "application/json");
        assert_eq!(s.headers["authorization"], "Bearer tok-123");
        assert!(
            s.headers.get("a2a-version").is_none(),
            "the SPEC dialect sends no version header"
        );
    }
    assert_eq!(peer.card_headers()[0]["authorization"], "Bearer tok-123");
}

#[tokio::test]
async fn every_end_state_reads_as_the_spec_says() {
    let agent_msg = |t: &str| json!({"role": "agent", "parts": [{"kind": "text", "text": t}]});
    let script = by_text(vec![
        (
            "hist",
            vec![json!({"status": {"state": "completed"}, "history": [
            {"role": "user", "parts": [{"kind": "text", "text": "q"}]}, agent_msg("from history"),
            {"role": "user", "parts": [{"kind": "text", "text": "later question"}]}]})],
        ),
        ("empty", vec![json!({"status": {"state": "completed"}})]),
        (
            "fail",
            vec![json!({"status": {"state": "failed", "message": agent_msg("disk full")}})],
        ),
        ("bare", vec![json!({"status": {"state": "failed"}})]),
        (
            "stop",
            vec![json!({"status": {"state": "canceled", "message": agent_msg("by operator")}})],
        ),
        (
            "refuse",
            vec![
                json!({"status": {"state": "TASK_STATE_REJECTED", "message": {"role": "ROLE_AGENT", "parts": [{"text": "no"}]}}}),
            ],
        ),
        (
            "ask",
            vec![json!({"status": {"state": "input-required", "message": agent_msg("which date?")}})],
        ),
    ]);
    let peer = Peer::start(spec_card(json!([{"id": "s"}])), script).await;
    let agent = Agent::resolve(peer.card_url(), fast()).await.unwrap();
    let tool = &agent.tools()[0];
    for (text, output, is_error, state) in [
        ("hist", "from history", false, "completed"),
        ("empty", "", false, "completed"),
        ("fail", "A2A task fail failed: disk full", true, "failed"),
        ("bare", "A2A task bare failed", true, "failed"),
        ("stop", "A2A task stop canceled: by operator", true, "canceled"),
        ("refuse", "A2A task refuse rejected: no", true, "rejected"),
        (
            "ask",
            "A2A task ask input-required: which date?",
            true,
            "input-required",
        ),
    ] {
        let r = tool.execute(json!({"task": text}), ToolContext::default()).await;
        assert_eq!((r.output.as_str(), r.is_error), (output, is_error), "{text}");
        assert_eq!(
            meta(&r),
            json!({"agent": "Travel Agent", "taskId": text, "state": state, "polls": 1, "ms": "<ms>"})
        );
    }
    // Every task ended on its own: nothing to cancel.
    assert!(!peer.methods().contains(&"CancelTask".to_owned()));
}

#[tokio::test]
async fn a_task_done_at_submit_is_not_polled() {
    let script: Script = Arc::new(|_, b| {
        ok(
            b,
            json!({"id": "t9", "status": {"state": "completed"}, "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "instant"}]}]}),
        )
    });
    let peer = Peer::start(spec_card(json!([{"id": "s"}])), script).await;
    let agent = Agent::resolve(peer.card_url(), fast()).await.unwrap();
    let r = agent.send("go", ToolContext::default()).await;
    assert_eq!(r.output, "instant");
    assert_eq!(meta(&r)["polls"], 0);
    assert_eq!(peer.methods(), ["SendMessage"]);
}

#[tokio::test]
async fn timeout_reports_the_budget_and_cancels_the_remote_task() {
    let script = by_text(vec![("slow", vec![json!({"status": {"state": "working"}})])]);
    let peer = Peer::start(spec_card(json!([{"id": "s"}])), script).await;
    let options = fast().timeout(Duration::from_millis(300));
    let agent = Agent::resolve(peer.card_url(), options).await.unwrap();
    let r = agent.tools()[0]
        .execute(json!({"task": "slow"}), ToolContext::default())
        .await;
    assert_eq!(r.output, "A2A task slow timed out after 300ms (state=working)");
    assert!(r.is_error);
    let m = meta(&r);
    assert_eq!((&m["taskId"], &m["state"]), (&json!("slow"), &json!("working")));
    assert!(m["polls"].as_u64().unwrap() >= 5, "{m}");
    peer.wait_for("CancelTask", 1).await;
    let cancel = peer
        .seen()
        .into_iter()
        .find(|s| s.method == "CancelTask")
        .unwrap();
    assert_eq!(
        canonical(cancel.body),
        r#"{"jsonrpc":"2.0","id":"<uuid>","method":"CancelTask","params":{"id":"slow"}}"#
    );
}

#[tokio::test]
async fn cancellation_stops_before_the_next_poll_and_cancels_the_remote_task() {
    let script = by_text(vec![("long", vec![json!({"status": {"state": "working"}})])]);
    let peer = Peer::start(spec_card(json!([{"id": "s"}])), script).await;
    let options = AgentOptions::default().poll_every(Duration::from_millis(50));
    let agent = Agent::resolve(peer.card_url(), options).await.unwrap();
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(180)).await;
        canceller.cancel();
    });
    let ctx = ToolContext::default().with_cancel(token);
    // Through `Tool::execute`, which also watches the token: the SPEC's text still wins.
    let r = agent.tools()[0].execute(json!({"task": "long"}), ctx).await;
    assert_eq!(r.output, "A2A task long canceled");
    assert!(r.is_error);
    assert_eq!(meta(&r)["state"], "canceled");
    let polls = meta(&r)["polls"].as_u64().unwrap();
    peer.wait_for("CancelTask", 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let gets = peer.methods().iter().filter(|m| *m == "GetTask").count() as u64;
    assert_eq!(gets, polls, "no GetTask after the cancellation");
}

#[tokio::test]
async fn a_dropped_call_still_cancels_the_remote_task() {
    let script = by_text(vec![("dropped", vec![json!({"status": {"state": "working"}})])]);
    let peer = Peer::start(spec_card(json!([{"id": "s"}])), script).await;
    let agent = Agent::resolve(peer.card_url(), fast()).await.unwrap();
    let call = agent.send("dropped", ToolContext::default());
    assert!(
        tokio::time::timeout(Duration::from_millis(150), call)
            .await
            .is_err()
    );
    peer.wait_for("CancelTask", 1).await;
    assert_eq!(
        peer.seen().last().unwrap().body["params"],
        json!({"id": "dropped"})
    );

    // A context deadline shorter than the agent's budget is the budget.
    let ctx = ToolContext::default().with_timeout(Duration::from_millis(120));
    let r = agent.send("dropped", ctx).await;
    assert_eq!(r.output, "A2A task dropped timed out after 120ms (state=working)");
    peer.wait_for("CancelTask", 2).await;
}

#[tokio::test]
async fn the_v1_dialect_when_the_card_lists_a_jsonrpc_1_0_interface() {
    let card = json!({
        "name": "sdk agent", "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "{origin}/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "{rpc}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes"}]
    });
    let polls = Arc::new(Mutex::new(0));
    let script: Script = Arc::new(move |_, b| match b["method"].as_str() {
        Some("SendMessage") => ok(
            b,
            json!({"task": {"id": "v1-task", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
        ),
        _ => {
            let mut n = polls.lock().unwrap();
            *n += 1;
            if *n == 1 {
                ok(
                    b,
                    json!({"id": "v1-task", "status": {"state": "TASK_STATE_WORKING"}}),
                )
            } else {
                ok(
                    b,
                    json!({"id": "v1-task", "status": {"state": "TASK_STATE_COMPLETED"},
                    "artifacts": [{"artifactId": "x", "parts": [{"text": "echo: hi"}]}]}),
                )
            }
        }
    });
    let peer = Peer::start(card, script).await;
    let agent = Agent::resolve(peer.card_url(), fast()).await.unwrap();
    assert_eq!(agent.dialect(), Dialect::V1);
    assert_eq!(agent.tools()[0].name(), "sdk_agent_echo");
    let r = agent.tools()[0]
        .execute(json!({"task": "hi"}), ToolContext::default())
        .await;
    assert_eq!((r.output.as_str(), r.is_error), ("echo: hi", false));
    assert_eq!(
        meta(&r),
        json!({"agent": "sdk agent", "taskId": "v1-task", "state": "completed", "polls": 2, "ms": "<ms>"})
    );
    let seen = peer.seen();
    assert_eq!(
        canonical(seen[0].body.clone()),
        r#"{"jsonrpc":"2.0","id":"<uuid>","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"<uuid>","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}"#
    );
    for s in &seen {
        assert_eq!(s.headers["a2a-version"], "1.0");
    }
    assert_eq!(peer.card_headers()[0]["a2a-version"], "1.0");
}

#[tokio::test]
async fn an_agent_that_answers_with_a_message_completes_at_once() {
    let script: Script = Arc::new(|_, b| {
        ok(
            b,
            json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "right away"}]}}),
        )
    });
    let card = json!({"name": "quick", "supportedInterfaces": [{"url": "{rpc}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}], "skills": [{"id": "q"}]});
    let peer = Peer::start(card, script).await;
    let agent = Agent::resolve(peer.card_url(), fast()).await.unwrap();
    let r = agent.send("now", ToolContext::default()).await;
    assert_eq!((r.output.as_str(), r.is_error), ("right away", false));
    assert_eq!(
        meta(&r),
        json!({"agent": "quick", "taskId": "", "state": "completed", "polls": 0, "ms": "<ms>"})
    );
}

/// Records every tracing event's fields, to check that no header value is ever logged.
struct Recorder(Arc<Mutex<String>>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        span.record(&mut Visit(self.0.clone()));
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Visit(self.0.clone()));
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        event.record(&mut Visit(self.0.clone()));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

struct Visit(Arc<Mutex<String>>);

impl tracing::field::Visit for Visit {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let mut log = self.0.lock().unwrap();
        log.push_str(&format!("{}={value:?}\n", field.name()));
    }
}

#[tokio::test]
async fn failures_are_error_results_that_never_show_a_header_value() {
    let log = Arc::new(Mutex::new(String::new()));
    let _guard = tracing::subscriber::set_default(Recorder(log.clone()));
    // SAFETY: set before any thread reads the environment in this test.
    unsafe { std::env::set_var("A2A_OUTBOUND_SECRET", "hunter2-secret") };
    let secret = "hunter2-secret";
    let script: Script = Arc::new(|_, b| {
        let text = b.pointer("/params/message/parts/0/text").and_then(Value::as_str);
        match (b["method"].as_str(), text) {
            (Some("SendMessage"), Some("http500")) => (StatusCode::INTERNAL_SERVER_ERROR, "boom".into()),
            (Some("SendMessage"), Some("rpcerr")) => (
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": b["id"], "error": {"code": -32602, "message": "bad params"}}).to_string(),
            ),
            (Some("SendMessage"), Some("notjson")) => (StatusCode::OK, "<html>".into()),
            (Some("SendMessage"), Some("noid")) => ok(b, json!({"status": {"state": "submitted"}})),
            (Some("SendMessage"), _) => ok(b, json!({"id": "lost", "status": {"state": "submitted"}})),
            (Some("GetTask"), _) => (
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": b["id"], "error": {"code": -32001, "message": "Task not found"}}).to_string(),
            ),
            _ => ok(b, json!({"id": "lost", "status": {"state": "canceled"}})),
        }
    });
    let peer = Peer::start(spec_card(json!([{"id": "s"}])), script).await;
    let options = fast().header("X-Api-Key", "${A2A_OUTBOUND_SECRET}");
    let agent = Agent::resolve(peer.card_url(), options.clone()).await.unwrap();
    let mut outputs = Vec::new();
    for (task, want) in [
        ("http500", "HTTP 500: boom"),
        ("rpcerr", "A2A SendMessage: bad params (JSON-RPC error -32602)"),
        (
            "notjson",
            "A2A SendMessage: the agent's answer is not JSON: expected value at line 1 column 1",
        ),
        ("noid", "A2A SendMessage: the agent answered without a task id"),
        ("gone", "A2A GetTask: Task not found (JSON-RPC error -32001)"),
    ] {
        let r = agent.send(task, ToolContext::default()).await;
        assert_eq!((r.output.as_str(), r.is_error), (want, true), "{task}");
        outputs.push(r.to_json());
    }
    // The task that failed mid-poll is cancelled on the agent.
    peer.wait_for("CancelTask", 1).await;
    assert!(peer.seen().iter().all(|s| s.headers["x-api-key"] == secret));

    // An endpoint that refuses connections.
    let dead_card = json!({"name": "dead", "url": "http://127.0.0.1:1/", "skills": [{"id": "s"}]});
    let dead = Peer::start(dead_card, Arc::new(|_, b| ok(b, json!({})))).await;
    let agent = Agent::resolve(dead.card_url(), options.clone()).await.unwrap();
    let r = agent.send("x", ToolContext::default()).await;
    assert!(
        r.output
            .starts_with("A2A SendMessage to http://127.0.0.1:1/ failed: "),
        "{}",
        r.output
    );
    assert!(r.output.contains("Connection refused"), "{}", r.output);
    outputs.push(r.to_json());
    outputs.push(format!("{agent:?} {options:?}"));

    for text in outputs.iter().chain([&*log.lock().unwrap()]) {
        assert!(!text.contains(secret), "a header value leaked: {text}");
    }
    assert!(
        log.lock().unwrap().contains("A2A CancelTask"),
        "the cancel is logged (without headers)"
    );
}

#[tokio::test]
async fn resolve_failures_say_what_is_wrong() {
    let peer = Peer::start(spec_card(json!([])), Arc::new(|_, b| ok(b, json!({})))).await;
    let err = Agent::resolve(peer.card_url(), AgentOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err, ResolveError::NoSkills { url: peer.card_url() });
    assert_eq!(
        err.to_string(),
        format!("agent card {} lists no skills", peer.card_url())
    );

    let missing = format!("http://{}/nope.json", peer.addr);
    let err = Agent::resolve(&missing, AgentOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), format!("agent card {missing}: HTTP 404: "));

    let not_card = format!("http://{}/rpc", peer.addr); // POST-only: 405 to a GET
    let err = Agent::resolve(&not_card, AgentOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ResolveError::Status { status: 405, .. }), "{err}");

    let grpc = json!({"name": "g", "supportedInterfaces": [{"url": "{origin}", "protocolBinding": "GRPC", "protocolVersion": "1.0"}], "skills": [{"id": "s"}]});
    let peer = Peer::start(grpc, Arc::new(|_, b| ok(b, json!({})))).await;
    let err = Agent::resolve(peer.card_url(), AgentOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "agent card {}: the agent card offers no JSON-RPC interface",
            peer.card_url()
        )
    );

    let peer = Peer::start(json!("a card is an object"), Arc::new(|_, b| ok(b, json!({})))).await;
    let err = Agent::resolve(peer.card_url(), AgentOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "agent card {}: not a JSON agent card: invalid type: string \"a card is an object\", expected struct AgentCard at line 1 column 21",
            peer.card_url()
        )
    );

    let err = Agent::resolve(
        "http://127.0.0.1:1/.well-known/agent-card.json",
        AgentOptions::default(),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("cannot fetch agent card http://127.0.0.1:1/.well-known/agent-card.json: "),
        "{text}"
    );
    assert!(text.contains("Connection refused"), "{text}");
}
