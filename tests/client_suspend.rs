//! Suspension (SPEC §10): `wait_for` resolution, the durable halt, resume across client
//! instances with serialized state, relay tools.

mod client_mock;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use client_mock::{Mock, Reply, stream_events};
use serde_json::{Value, json};
use toolnexus::client::Style;
use toolnexus::client::hooks::Hooks;
use toolnexus::client::transport::{HttpResponse, from_fn};
use toolnexus::client::{
    Client, ClientError, FileStore, MetricEvent, RelayResult, RunOptions, RunResult, RunStatus, StreamEvent,
    relay_answer, relay_tool,
};
use toolnexus::suspend::AnswerReason;
use toolnexus::{Answer, Request, Tool, ToolContext, ToolResult, Toolkit};

/// Suspends with an `input` request until it is retried with an answer.
fn ask_city() -> Tool {
    Tool::new("ask_city", |_: Value, ctx: ToolContext| async move {
        match ctx.answer {
            Some(a) => ToolResult::success(a.data.as_ref().and_then(|d| d["output"].as_str()).unwrap_or("")),
            None => ToolResult::suspend(Request::new("input", "Which city?")),
        }
    })
    .with_description("which city")
}

fn always_suspends() -> Tool {
    Tool::new("approve", |_: Value, _: ToolContext| async move {
        ToolResult::suspend(Request::new("approval", "Approve the refund?"))
    })
}

/// Two suspending tools: `ask_city` (answerable) and `approve` (never resolved).
fn ask_city_and_approve() -> Toolkit {
    Toolkit::new([ask_city(), always_suspends()])
}

/// The seed document's example 2, in Rust: an injected HTTP function and a `wait_for`
/// hook resolving the suspension inline.
#[tokio::test]
async fn seed_answer_output_inside_wait_for() {
    let script = [
        client_mock::openai_calls(&[("c1", "ask_city", "{}")]),
        client_mock::openai_text("The weather in Chennai is sunny."),
    ];
    let n = Arc::new(AtomicUsize::new(0));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let (n2, b2) = (n.clone(), bodies.clone());
    let http = from_fn(move |req| {
        let i = n2.fetch_add(1, Ordering::SeqCst);
        b2.lock().unwrap().push(req.json());
        let resp = script[i].clone();
        async move { Ok(HttpResponse::json(&resp)) }
    });
    let llm = Client::builder()
        .base_url("http://mock.local")
        .style(Style::OpenAi)
        .model("gpt-4o-mini")
        .api_key("k")
        .transport(http)
        .wait_for_fn(|request: Request| async move { Answer::output(request.id, "Chennai") })
        .build()
        .unwrap();
    let rr = llm
        .run(
            "Which city should I check the weather for?",
            &Toolkit::new([ask_city()]),
        )
        .await
        .unwrap();
    assert_eq!(rr.status, RunStatus::Done);
    assert_eq!(rr.text, "The weather in Chennai is sunny.");
    let second = &bodies.lock().unwrap()[1];
    assert_eq!(
        second["messages"][2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "Chennai"})
    );
}

fn scripted(script: Vec<Value>) -> Arc<dyn toolnexus::client::HttpTransport> {
    let n = Arc::new(AtomicUsize::new(0));
    from_fn(move |_| {
        let resp = script[n.fetch_add(1, Ordering::SeqCst).min(script.len() - 1)].clone();
        async move { Ok(HttpResponse::json(&resp)) }
    })
}

fn builder(http: Arc<dyn toolnexus::client::HttpTransport>) -> toolnexus::client::ClientBuilder {
    Client::builder()
        .base_url("http://mock.local")
        .style(Style::OpenAi)
        .model("m")
        .api_key("k")
        .transport(http)
}

#[tokio::test]
async fn declined_answer_and_second_suspension_feed_back_errors() {
    let script = vec![
        client_mock::openai_calls(&[("c1", "ask_city", "{}"), ("c2", "approve", "{}")]),
        client_mock::openai_text("ok"),
    ];
    let asked = Arc::new(Mutex::new(Vec::new()));
    let asked2 = asked.clone();
    let client = builder(scripted(script))
        .wait_for_fn(move |r: Request| {
            asked2.lock().unwrap().push(r.prompt.clone());
            async move {
                if r.kind == "input" {
                    Answer::declined(r.id, AnswerReason::Declined)
                } else {
                    Answer::output(r.id, "yes")
                }
            }
        })
        .build()
        .unwrap();
    let r = client.run("go", &ask_city_and_approve()).await.unwrap();
    assert_eq!(r.status, RunStatus::Done);
    assert_eq!(*asked.lock().unwrap(), ["Which city?", "Approve the refund?"]);
    assert_eq!(
        r.tool_calls
            .iter()
            .map(|c| (c.output.as_str(), c.is_error))
            .collect::<Vec<_>>(),
        [
            ("declined/expired: Which city?", true),
            ("unresolved: Approve the refund?", true)
        ]
    );
}

#[tokio::test]
async fn without_wait_for_the_run_halts_on_the_first_suspension_in_call_order() {
    let mock = Mock::json([client_mock::openai_calls(&[
        ("c1", "ask_city", "{}"),
        ("c2", "approve", "{}"),
    ])])
    .await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev2 = events.clone();
    let after_tool_calls = Arc::new(AtomicUsize::new(0));
    let a2 = after_tool_calls.clone();
    let client = client_mock::client("openai", &mock.base)
        .on_metric(move |e| ev2.lock().unwrap().push(e.clone()))
        .hooks(Hooks::new().after_tool(move |_| {
            a2.fetch_add(1, Ordering::SeqCst);
            async { None }
        }))
        .build()
        .unwrap();
    let r = client.run("go", &ask_city_and_approve()).await.unwrap();
    assert_eq!(r.status, RunStatus::Pending);
    let pending = r.pending.clone().unwrap();
    assert_eq!(
        (pending.kind.as_str(), pending.prompt.as_str()),
        ("input", "Which city?")
    );
    assert_eq!(r.text, "Which city?");
    // Only the first halted call's placeholder enters the transcript.
    assert_eq!(
        r.messages.last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "c1", "content": "Which city?"})
    );
    assert_eq!(r.messages.len(), 3);
    assert_eq!(r.tool_call_count, 1);
    assert_eq!(mock.requests().len(), 1);
    // A suspension is never a tool error, and after_tool never sees it.
    assert_eq!(after_tool_calls.load(Ordering::SeqCst), 0);
    let tools: Vec<(bool, bool)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            MetricEvent::Tool {
                is_error, pending, ..
            } => Some((*is_error, *pending)),
            _ => None,
        })
        .collect();
    assert_eq!(tools, [(false, true), (false, true)]);
    assert!(client.metrics().contains(r#"is_error="false",pending="true"} 1"#));
}

/// A halted run crosses a process boundary as JSON; a fresh client and toolkit resume it.
#[tokio::test]
async fn durable_resume_across_two_client_instances_openai() {
    let mock_a = Mock::json([client_mock::openai_calls(&[
        ("c1", "ask_city", "{}"),
        ("c2", "add", r#"{"a":2,"b":3}"#),
    ])])
    .await;
    let tk = || {
        let mut tk = client_mock::toolkit(None);
        tk.add_tools([ask_city()]);
        tk
    };
    let a = client_mock::client("openai", &mock_a.base).build().unwrap();
    let halted = a.run("weather?", &tk()).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let persisted = serde_json::to_string(&halted).unwrap();
    drop(a);

    let restored: RunResult = serde_json::from_str(&persisted).unwrap();
    let pending = restored.pending.clone().unwrap();
    let mock_b = Mock::json([client_mock::openai_text("Sunny in Chennai; 5.")]).await;
    let b = client_mock::client("openai", &mock_b.base).build().unwrap();
    let wrong = toolnexus::client::relay_answer("other-id", &[]);
    let err = b
        .run_with_answer(
            &pending,
            &wrong,
            RunOptions::new(&tk()).history(restored.messages.clone()),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Resume(_)), "{err}");
    assert_eq!(mock_b.requests().len(), 0);

    let r = b
        .run_with_answer(
            &pending,
            &Answer::output(&pending.id, "Chennai"),
            RunOptions::new(&tk()).history(restored.messages),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.text.as_str()),
        (RunStatus::Done, "Sunny in Chennai; 5.")
    );
    // The placeholder is replaced, the never-recorded slot filled, no new user turn.
    assert_eq!(
        mock_b.bodies()[0],
        r#"{"model":"gpt-test","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ask_city","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]},{"role":"tool","tool_call_id":"c1","content":"Chennai"},{"role":"tool","tool_call_id":"c2","content":"5"}],"tools":[{"type":"function","function":{"name":"add","description":"Add two numbers","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}},{"type":"function","function":{"name":"ask_city","description":"which city","parameters":{"type":"object"}}},{"type":"function","function":{"name":"echo","description":"Echo text","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}}],"tool_choice":"auto"}"#
    );
}

#[tokio::test]
async fn durable_resume_through_a_file_store_anthropic() {
    let dir = tempfile::tempdir().unwrap();
    let mock_a = Mock::json([client_mock::anthropic_calls(&[("t1", "ask_city", json!({}))])]).await;
    let a = client_mock::client("anthropic", &mock_a.base)
        .store(Arc::new(FileStore::new(dir.path())))
        .build()
        .unwrap();
    let tk = Toolkit::new([ask_city()]);
    let halted = a.ask("weather?", "thread-1", RunOptions::new(&tk)).await.unwrap();
    let pending = halted.pending.unwrap();
    assert_eq!(
        serde_json::to_string(halted.messages.last().unwrap()).unwrap(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Which city?","is_error":true}]}"#
    );

    let mock_b = Mock::json([client_mock::anthropic_text("Sunny.")]).await;
    let b = client_mock::client("anthropic", &mock_b.base)
        .store(Arc::new(FileStore::new(dir.path())))
        .build()
        .unwrap();
    let r = b
        .run_with_answer(
            &pending,
            &Answer::output(&pending.id, "Chennai"),
            RunOptions::new(&tk).conversation("thread-1"),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "Sunny.");
    let sent = mock_b.json_body(0);
    assert_eq!(
        sent["messages"][2],
        json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Chennai","is_error":false}]})
    );
    assert_eq!(sent["messages"].as_array().unwrap().len(), 3);
    let stored = b.store().get("thread-1").await.unwrap().unwrap();
    assert_eq!(stored.len(), 4);
}

#[tokio::test]
async fn relay_calls_of_one_turn_ride_one_request_and_resume_with_results() {
    let mock = Mock::json([
        client_mock::openai_calls(&[
            ("c1", "lookup", r#"{"q":"a"}"#),
            ("c2", "lookup", r#"{"q": "b"}"#),
        ]),
        client_mock::openai_text("both found"),
    ])
    .await;
    let tk = Toolkit::new([relay_tool("lookup", "Look up", json!({"type":"object"}))]);
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let halted = client.run("find a and b", &tk).await.unwrap();
    let pending = halted.pending.clone().unwrap();
    assert_eq!(pending.kind, "tool_call");
    assert_eq!(
        serde_json::to_string(&pending.data).unwrap(),
        r#"{"calls":[{"id":"c1","name":"lookup","input":{"q":"a"},"arguments":"{\"q\":\"a\"}"},{"id":"c2","name":"lookup","input":{"q":"b"},"arguments":"{\"q\": \"b\"}"}]}"#
    );
    let answer = relay_answer(
        &pending.id,
        &[
            RelayResult {
                id: "c1".into(),
                output: "A".into(),
                is_error: false,
            },
            RelayResult {
                id: "c2".into(),
                output: "no such b".into(),
                is_error: true,
            },
        ],
    );
    let r = client
        .run_with_answer(&pending, &answer, RunOptions::new(&tk).history(halted.messages))
        .await
        .unwrap();
    assert_eq!(r.text, "both found");
    let sent = mock.json_body(1);
    assert_eq!(
        sent["messages"][2],
        json!({"role":"tool","tool_call_id":"c1","content":"A"})
    );
    assert_eq!(
        sent["messages"][3],
        json!({"role":"tool","tool_call_id":"c2","content":"no such b"})
    );
    assert_eq!(
        r.tool_calls.iter().map(|c| c.is_error).collect::<Vec<_>>(),
        [false, true]
    );
}

#[tokio::test]
async fn relay_tool_named_like_a_builtin_fails_the_run_before_any_request() {
    let mock = Mock::start(vec![]).await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let tk = Toolkit::new([relay_tool("read", "shadow", json!({}))]);
    let err = client.run("x", &tk).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::RelayCollision(names) if names == &["read"]),
        "{err}"
    );
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn stream_surfaces_pending_before_wait_for_and_when_halting() {
    let sse_calls = Reply::openai_sse([
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"ask_city","arguments":"{}"}}]}}]}),
    ]);
    let mock = Mock::start(vec![sse_calls]).await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let tk = Toolkit::new([ask_city()]);
    let events = stream_events(&client, "go", &tk).await;
    assert!(matches!(&events[1], StreamEvent::Pending { request } if request.prompt == "Which city?"));
    let StreamEvent::Done { result } = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(result.status, RunStatus::Pending);
}

#[tokio::test]
async fn stream_with_wait_for_emits_pending_then_the_resolved_result() {
    let mock = Mock::start(vec![
        Reply::openai_sse([
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"ask_city","arguments":"{}"}}]}}]}),
        ]),
        Reply::openai_sse([json!({"choices":[{"index":0,"delta":{"content":"Chennai it is."}}]})]),
    ])
    .await;
    let client = client_mock::client("openai", &mock.base)
        .wait_for_fn(|r: Request| async move { Answer::output(r.id, "Chennai") })
        .build()
        .unwrap();
    let tk = Toolkit::new([ask_city()]);
    let events = stream_events(&client, "go", &tk).await;
    assert!(matches!(&events[0], StreamEvent::ToolCall { id, .. } if id == "c1"));
    assert!(matches!(&events[1], StreamEvent::Pending { request } if request.kind == "input"));
    assert_eq!(
        events[2],
        StreamEvent::ToolResult {
            id: "c1".into(),
            name: "ask_city".into(),
            output: "Chennai".into(),
            is_error: false
        }
    );
    assert_eq!(
        events[3],
        StreamEvent::Text {
            delta: "Chennai it is.".into()
        }
    );
    let StreamEvent::Done { result } = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(
        (result.status, result.text.as_str()),
        (RunStatus::Done, "Chennai it is.")
    );
}

#[tokio::test]
async fn relay_with_wait_for_asks_once_per_turn_for_all_calls() {
    let script = vec![
        client_mock::openai_calls(&[("c1", "lookup", r#"{"q":"a"}"#), ("c2", "lookup", r#"{"q":"b"}"#)]),
        client_mock::openai_text("done"),
    ];
    let asked = Arc::new(Mutex::new(Vec::new()));
    let a2 = asked.clone();
    let client = builder(scripted(script))
        .wait_for_fn(move |r: Request| {
            let ids: Vec<String> = r.data.as_ref().unwrap()["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_owned())
                .collect();
            a2.lock().unwrap().push(ids.clone());
            async move {
                let results: Vec<RelayResult> = ids
                    .iter()
                    .map(|id| RelayResult {
                        id: id.clone(),
                        output: format!("result {id}"),
                        is_error: false,
                    })
                    .collect();
                relay_answer(r.id, &results)
            }
        })
        .build()
        .unwrap();
    let tk = Toolkit::new([relay_tool("lookup", "Look up", json!({"type":"object"}))]);
    let r = client.run("find", &tk).await.unwrap();
    assert_eq!(r.status, RunStatus::Done);
    assert_eq!(*asked.lock().unwrap(), [vec!["c1".to_owned(), "c2".to_owned()]]);
    assert_eq!(
        r.tool_calls.iter().map(|c| c.output.as_str()).collect::<Vec<_>>(),
        ["result c1", "result c2"]
    );
}
