//! A toolkit served as an A2A agent (SPEC §7B) on 127.0.0.1, driven over real HTTP, its
//! tasks fulfilled by the embedded scripted model: the card, submit → background run →
//! poll, the JSON-RPC errors, `CancelTask`, `on_task`, the bounds (running tasks, body
//! size), graceful shutdown, conversations by `contextId`, the file store, both dialects.

mod a2a_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_support::Served;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolnexus::a2a::store::{FileTaskStore, Lease, MemoryTaskStore, lost_message, now_ms};
use toolnexus::a2a::{A2aConfig, Provider, TaskEvent, TaskState, TaskStore};
use toolnexus::client::Style;
use toolnexus::client::{Client, Generation};
use toolnexus::skill::SkillDef;
use toolnexus::{Request, Tool, ToolResult, Toolkit, ToolkitOptions};
use toolnexus_mock::{MockModel, Scenario};

/// Lets a test hold a tool call open and release it.
#[derive(Default)]
struct Gate {
    started: Notify,
    release: Notify,
    dropped: AtomicBool,
}

struct DropFlag(Arc<Gate>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

async fn toolkit(gate: Arc<Gate>) -> Toolkit {
    let lookup = Tool::new("lookup", |args: Value, _| async move {
        ToolResult::success(format!("customer {}", args["id"].as_str().unwrap_or("?")))
    });
    let gated = gate.clone();
    let hold = Tool::new("hold", move |_, _| {
        let gate = gated.clone();
        async move {
            let _flag = DropFlag(gate.clone());
            gate.started.notify_one();
            gate.release.notified().await;
            ToolResult::success("released")
        }
    });
    let ask_city = Tool::new("ask_city", |_, _| async {
        ToolResult::suspend(Request::new("input", "Which city?"))
    });
    Toolkit::build(
        ToolkitOptions::default()
            .builtins(false)
            .skill(SkillDef::new("pdf-tools", "Use pdftotext.").with_description("Read PDFs"))
            .skill(SkillDef::new("trip-planner", "Plan it.").with_description("Plan trips"))
            .extra_tools([lookup, hold, ask_city]),
    )
    .await
    .unwrap()
}

async fn mock() -> (MockModel, Client) {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let client = Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed")
        .build()
        .unwrap();
    (model, client)
}

fn events() -> (Arc<Mutex<Vec<TaskEvent>>>, A2aConfig) {
    let seen: Arc<Mutex<Vec<TaskEvent>>> = Arc::default();
    let sink = seen.clone();
    let config = A2aConfig {
        on_task: Some(Arc::new(move |e: &TaskEvent| {
            sink.lock().unwrap().push(e.clone())
        })),
        ..A2aConfig::default()
    };
    (seen, config)
}

fn send(text: &str) -> Value {
    json!({"message": {"role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": text}]},
           "configuration": {"blocking": false}})
}

fn is_uuid(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4)
}

#[tokio::test]
async fn the_card_is_the_specs_and_lists_skills_never_tools() {
    let (_model, client) = mock().await;
    let tk = toolkit(Arc::default()).await;
    let served = Served::start(&tk, client.clone(), A2aConfig::default()).await;
    let response = reqwest::get(format!("{}/.well-known/agent-card.json", served.url))
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/json");
    let u = format!("{}/", served.url);
    assert_eq!(
        response.text().await.unwrap(),
        format!(
            r#"{{"name":"toolnexus-agent","description":"","version":"0.1.0","protocolVersion":"0.3.0","capabilities":{{"streaming":false,"pushNotifications":false}},"defaultInputModes":["text"],"defaultOutputModes":["text"],"skills":[{{"id":"pdf-tools","name":"pdf-tools","description":"Read PDFs"}},{{"id":"trip-planner","name":"trip-planner","description":"Plan trips"}}],"url":"{u}","supportedInterfaces":[{{"url":"{u}","protocolBinding":"JSONRPC","protocolVersion":"1.0"}}]}}"#
        )
    );
    // Another path, or another profile's path, is not the A2A profile's.
    for path in ["/mcp", "/tasks", "/.well-known/other.json"] {
        let status = reqwest::get(format!("{}{path}", served.url))
            .await
            .unwrap()
            .status();
        assert_eq!(status, 404, "{path}");
    }

    let config = A2aConfig {
        name: Some("Helper".into()),
        description: Some("Reads PDFs for you".into()),
        version: Some("2.1.0".into()),
        provider: Some(Provider {
            organization: "Acme".into(),
            url: "https://acme.example".into(),
        }),
        skills: Some(vec!["trip-planner".into(), "not-a-skill".into()]),
        ..A2aConfig::default()
    };
    let served = Served::start(&tk, client, config).await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", served.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys: Vec<&str> = card.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "version",
            "protocolVersion",
            "capabilities",
            "defaultInputModes",
            "defaultOutputModes",
            "skills",
            "url",
            "provider",
            "supportedInterfaces"
        ]
    );
    assert_eq!(
        (&card["name"], &card["description"], &card["version"]),
        (&json!("Helper"), &json!("Reads PDFs for you"), &json!("2.1.0"))
    );
    assert_eq!(
        card["provider"],
        json!({"organization": "Acme", "url": "https://acme.example"})
    );
    assert_eq!(
        card["skills"],
        json!([{"id": "trip-planner", "name": "trip-planner", "description": "Plan trips"}])
    );
}

#[tokio::test]
async fn send_message_returns_submitted_and_the_run_completes_in_the_background() {
    let (_model, client) = mock().await;
    let gate = Arc::new(Gate::default());
    let (events, config) = events();
    let served = Served::start(&toolkit(gate.clone()).await, client, config).await;

    let answer = served.rpc("SendMessage", send("hold"), None).await;
    assert_eq!((&answer["jsonrpc"], &answer["id"]), (&json!("2.0"), &json!(7)));
    let task = &answer["result"];
    assert!(is_uuid(&task["id"]), "{answer}");
    assert_eq!(
        task.to_string(),
        format!(r#"{{"id":{},"status":{{"state":"submitted"}}}}"#, task["id"])
    );
    let id = task["id"].as_str().unwrap().to_owned();

    // While the tool call is held open the task is `working`.
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();
    let working = served.wait_state(&id, "working").await;
    assert_eq!(working, json!({"id": id, "status": {"state": "working"}}));
    gate.release.notify_one();

    let done = served.wait_state(&id, "completed").await;
    assert!(is_uuid(&done["artifacts"][0]["artifactId"]));
    assert_eq!(
        done,
        json!({"id": id, "status": {"state": "completed"}, "artifacts": [{
            "artifactId": done["artifacts"][0]["artifactId"],
            "parts": [{"kind": "text", "text": "Here is what the tools returned:\n- hold: released"}]}]})
    );

    // `on_task` heard the end, with the run's telemetry.
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(
        (e.id.as_str(), e.text.as_str(), &e.state),
        (id.as_str(), "hold", &TaskState::Completed)
    );
    let run = e.result.as_ref().unwrap();
    assert_eq!((run.turns, run.tool_call_count), (2, 1));
    assert!(run.usage.total_tokens > 0, "{:?}", run.usage);
    assert_eq!(e.task.status.state, TaskState::Completed);
    assert!(e.ms > 0.0);
}

#[tokio::test]
async fn a_failing_run_is_a_failed_task_and_the_server_keeps_serving() {
    let model = MockModel::start_with_api_key("127.0.0.1:0", Scenario::Planner, "right-key")
        .await
        .unwrap();
    let client = Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("m")
        .api_key("wrong-key")
        .retries(0)
        .build()
        .unwrap();
    let (events, config) = events();
    let served = Served::start(&toolkit(Arc::default()).await, client, config).await;
    let id = served.rpc("SendMessage", send("hello agent"), None).await["result"]["id"].clone();
    let failed = served.wait_state(id.as_str().unwrap(), "failed").await;
    assert_eq!(
        failed["status"]["message"]["parts"],
        json!([{"kind": "text", "text": "LLM 401: Incorrect API key provided."}])
    );
    assert_eq!(failed["status"]["message"]["role"], "agent");
    let e = events.lock().unwrap()[0].clone();
    assert_eq!((e.state, e.result.is_none()), (TaskState::Failed, true));
    // Still serving.
    let again = served.rpc("SendMessage", send("hello again"), None).await;
    assert_eq!(again["result"]["status"]["state"], "submitted");
}

#[tokio::test]
async fn a_panicking_run_fails_its_task_only() {
    let client = Client::in_process("boom", |_| async { panic!("the model exploded") })
        .build()
        .unwrap();
    let served = Served::start(&Toolkit::default(), client, A2aConfig::default()).await;
    let id = served.rpc("SendMessage", send("hi"), None).await["result"]["id"].clone();
    let failed = served.wait_state(id.as_str().unwrap(), "failed").await;
    assert_eq!(
        failed["status"]["message"]["parts"][0]["text"],
        "the run panicked: the model exploded"
    );
    let card = reqwest::get(format!("{}/.well-known/agent-card.json", served.url))
        .await
        .unwrap();
    assert_eq!(card.status(), 200);
    assert_eq!(served.server.running(), 0);
}

#[tokio::test]
async fn jsonrpc_errors_have_the_specs_codes() {
    let (_model, client) = mock().await;
    let served = Served::start(&Toolkit::default(), client, A2aConfig::default()).await;
    assert_eq!(
        served.rpc("GetTask", json!({"id": "nope"}), None).await,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "Task not found: nope"}})
    );
    assert_eq!(
        served.rpc("tasks/list", json!({}), None).await,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found: tasks/list"}})
    );
    let (status, parse) = served.post("{\"jsonrpc\": ".into(), None).await;
    assert_eq!(status, 200);
    assert_eq!(
        parse,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700,
            "message": "Parse error: EOF while parsing a value at line 1 column 12"}})
    );
    assert_eq!(
        served.post(r#"{"jsonrpc":"2.0","id":"x"}"#.into(), None).await.1["error"],
        json!({"code": -32600, "message": "Invalid Request: expected {\"jsonrpc\":\"2.0\",\"method\":…}"})
    );
    assert_eq!(
        served.rpc("GetTask", json!({}), None).await["error"],
        json!({"code": -32602, "message": "Invalid params: expected {\"id\": \"<task id>\"}"})
    );
    let no_text = json!({"message": {"role": "user", "parts": [{"kind": "file", "file": {"uri": "x"}}]}});
    assert_eq!(
        served.rpc("SendMessage", no_text, None).await["error"],
        json!({"code": -32602, "message": "Invalid params: SendMessage needs params.message with a text part"})
    );
    assert_eq!(
        served.rpc("CancelTask", json!({"id": "nope"}), None).await["error"]["code"],
        -32001
    );
    // What a web page can send cross-site without a preflight is refused.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = reqwest::Client::new().post(format!("{}/", served.url)).body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send("hi")}).to_string(),
        );
        if let Some(t) = content_type {
            request = request.header("content-type", t);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 415, "{content_type:?}");
        assert_eq!(
            response.json::<Value>().await.unwrap()["error"]["message"],
            "the request must be JSON (Content-Type: application/json)"
        );
    }
    assert_eq!(served.server.running(), 0);
}

#[tokio::test]
async fn cancel_task_stops_the_running_fulfilment() {
    let (_model, client) = mock().await;
    let gate = Arc::new(Gate::default());
    let (events, config) = events();
    let served = Served::start(&toolkit(gate.clone()).await, client, config).await;
    let id = served.rpc("SendMessage", send("hold"), None).await["result"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();
    let canceled = served.rpc("CancelTask", json!({"id": id}), None).await;
    assert_eq!(canceled["result"]["status"]["state"], "canceled", "{canceled}");
    assert_eq!(
        canceled["result"]["status"]["message"]["parts"],
        json!([{"kind": "text", "text": "canceled by the caller"}])
    );
    // The tool call was stopped, not left running.
    assert!(gate.dropped.load(Ordering::SeqCst));
    assert_eq!(served.server.running(), 0);
    assert_eq!(events.lock().unwrap()[0].state, TaskState::Canceled);
    assert_eq!(
        served.rpc("CancelTask", json!({"id": id}), None).await["error"],
        json!({"code": -32002, "message": "Task cannot be canceled: it is canceled"})
    );
}

#[tokio::test]
async fn over_the_running_limit_is_an_error_not_a_queue() {
    let (_model, client) = mock().await;
    let gate = Arc::new(Gate::default());
    let config = A2aConfig {
        max_running: 1,
        ..A2aConfig::default()
    };
    let served = Served::start(&toolkit(gate.clone()).await, client, config).await;
    let first = served.rpc("SendMessage", send("hold"), None).await["result"]["id"].clone();
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();
    assert_eq!(
        served.rpc("SendMessage", send("hello"), None).await["error"],
        json!({"code": -32000, "message": "the agent is busy: it runs at most 1 task at once; retry later"})
    );
    gate.release.notify_one();
    served.wait_state(first.as_str().unwrap(), "completed").await;
    for _ in 0..200 {
        if served.server.running() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let next = served.rpc("SendMessage", send("hello"), None).await;
    assert_eq!(next["result"]["status"]["state"], "submitted", "{next}");
}

#[tokio::test]
async fn request_bodies_over_the_limit_are_refused() {
    let (_model, client) = mock().await;
    let config = A2aConfig {
        max_body_bytes: 512,
        ..A2aConfig::default()
    };
    let served = Served::start(&Toolkit::default(), client, config).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send(&"x".repeat(600))});
    let (status, answer) = served.post(body.to_string(), None).await;
    assert_eq!(status, 413);
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "the request body exceeds the 512-byte limit"}})
    );
    assert_eq!(served.server.running(), 0);
}

#[tokio::test]
async fn shutdown_lets_tasks_finish_within_the_grace_and_fails_the_rest() {
    let (_model, client) = mock().await;
    let gate = Arc::new(Gate::default());
    let (events, config) = events();
    let served = Served::start(&toolkit(gate.clone()).await, client, config).await;
    let stuck = served.rpc("SendMessage", send("hold"), None).await["result"]["id"].clone();
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();

    let server = served.server.clone();
    let shutdown = tokio::spawn(async move { server.shutdown(Duration::from_millis(400)).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        served.rpc("SendMessage", send("hello"), None).await["error"],
        json!({"code": -32000, "message": "the agent is shutting down and takes no new tasks"})
    );
    tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .unwrap()
        .unwrap();
    let failed = served.rpc("GetTask", json!({"id": stuck}), None).await["result"].clone();
    assert_eq!(failed["status"]["state"], "failed");
    assert_eq!(
        failed["status"]["message"]["parts"][0]["text"],
        "the agent shut down before the task finished"
    );
    assert!(gate.dropped.load(Ordering::SeqCst));
    assert_eq!(events.lock().unwrap()[0].state, TaskState::Failed);
}

#[tokio::test]
async fn shutdown_waits_for_tasks_that_finish_in_time() {
    let (_model, client) = mock().await;
    let gate = Arc::new(Gate::default());
    let served = Served::start(&toolkit(gate.clone()).await, client, A2aConfig::default()).await;
    let id = served.rpc("SendMessage", send("hold"), None).await["result"]["id"].clone();
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();
    let server = served.server.clone();
    let shutdown = tokio::spawn(async move { server.shutdown(Duration::from_secs(20)).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!shutdown.is_finished());
    gate.release.notify_one();
    tokio::time::timeout(Duration::from_secs(10), shutdown)
        .await
        .unwrap()
        .unwrap();
    let task = served.rpc("GetTask", json!({"id": id}), None).await["result"].clone();
    assert_eq!(task["status"]["state"], "completed");
}

#[tokio::test]
async fn a_context_id_is_one_remembered_conversation() {
    let (_model, client) = mock().await;
    let served = Served::start(&Toolkit::default(), client.clone(), A2aConfig::default()).await;
    let mut ids = Vec::new();
    for text in ["first turn", "second turn"] {
        let params = json!({"message": {"role": "user", "messageId": "m", "contextId": "conv-1",
                                        "parts": [{"kind": "text", "text": text}]}});
        let task = served.rpc("SendMessage", params, None).await["result"].clone();
        assert_eq!(task["contextId"], "conv-1");
        let id = task["id"].as_str().unwrap().to_owned();
        let done = served.wait_state(&id, "completed").await;
        assert_eq!(done["contextId"], "conv-1");
        ids.push(done);
    }
    assert_eq!(
        ids[1]["artifacts"][0]["parts"][0]["text"],
        "You said: second turn"
    );
    let transcript = client.store().get("conv-1").await.unwrap().unwrap();
    let users: Vec<&str> = transcript
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["first turn", "second turn"]);
}

#[tokio::test]
async fn a_suspended_run_asks_for_input() {
    let (_model, client) = mock().await;
    let served = Served::start(&toolkit(Arc::default()).await, client, A2aConfig::default()).await;
    let id = served.rpc("SendMessage", send("ask_city"), None).await["result"]["id"].clone();
    let task = served.wait_state(id.as_str().unwrap(), "input-required").await;
    assert_eq!(task["status"]["message"]["parts"][0]["text"], "Which city?");
}

#[tokio::test]
async fn the_file_store_keeps_every_task_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn TaskStore> = Arc::new(FileTaskStore::new(dir.path()));
    let (_model, client) = mock().await;
    let config = A2aConfig {
        store: Some(store.clone()),
        ..A2aConfig::default()
    };
    let served = Served::start(&Toolkit::default(), client.clone(), config).await;
    let id = served.rpc("SendMessage", send("hello disk"), None).await["result"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    served.wait_state(&id, "completed").await;
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(format!("{id}.json"))).unwrap()).unwrap();
    assert_eq!(
        on_disk["artifacts"][0]["parts"][0]["text"],
        "You said: hello disk"
    );
    drop(served);

    // Another server on the same directory serves the old task.
    let config = A2aConfig {
        store: Some(Arc::new(FileTaskStore::new(dir.path()))),
        ..A2aConfig::default()
    };
    let again = Served::start(&Toolkit::default(), client, config).await;
    let task = again.rpc("GetTask", json!({"id": id}), None).await["result"].clone();
    assert_eq!(task, on_disk);
}

#[tokio::test]
async fn a2a_1_0_callers_get_the_1_0_shapes() {
    let (_model, client) = mock().await;
    let served = Served::start(&Toolkit::default(), client, A2aConfig::default()).await;
    let v1 = Some("1.0");
    let params = json!({"message": {"role": "ROLE_USER", "messageId": "m", "parts": [{"text": "hello v1"}]},
                        "configuration": {"returnImmediately": true}});
    let answer = served.rpc("SendMessage", params, v1).await;
    let id = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        answer["result"],
        json!({"task": {"id": id, "status": {"state": "TASK_STATE_SUBMITTED"}}})
    );
    let mut done = Value::Null;
    for _ in 0..400 {
        done = served.rpc("GetTask", json!({"id": id}), v1).await["result"].clone();
        if done["status"]["state"] == "TASK_STATE_COMPLETED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        done["artifacts"][0]["parts"],
        json!([{"text": "You said: hello v1"}])
    );

    // Without returnImmediately a 1.0 SendMessage blocks until the task ends.
    let params =
        json!({"message": {"role": "ROLE_USER", "messageId": "m2", "parts": [{"text": "wait for it"}]}});
    let answer = served.rpc("SendMessage", params, v1).await;
    assert_eq!(
        answer["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        answer["result"]["task"]["artifacts"][0]["parts"],
        json!([{"text": "You said: wait for it"}])
    );
    // And so does the SPEC form with `blocking: true`.
    let params = json!({"message": {"role": "user", "parts": [{"kind": "text", "text": "block"}]}, "configuration": {"blocking": true}});
    let answer = served.rpc("SendMessage", params, None).await;
    assert_eq!(answer["result"]["status"]["state"], "completed");
    assert_eq!(
        answer["result"]["artifacts"][0]["parts"][0]["text"],
        "You said: block"
    );
}

#[tokio::test]
async fn an_in_process_model_serves_too() {
    let client = Client::in_process("local", |req| async move {
        Ok(Generation::text(format!("{} message(s)", req.messages.len())))
    })
    .build()
    .unwrap();
    let served = Served::start(&Toolkit::default(), client, A2aConfig::default()).await;
    let id = served.rpc("SendMessage", send("hi"), None).await["result"]["id"].clone();
    let done = served.wait_state(id.as_str().unwrap(), "completed").await;
    assert_eq!(done["artifacts"][0]["parts"][0]["text"], "1 message(s)");
}

#[tokio::test]
async fn the_memory_and_file_stores_keep_the_lease_contract() {
    a2a_support::check_lease_semantics(&MemoryTaskStore::new()).await;
    let dir = tempfile::tempdir().unwrap();
    a2a_support::check_lease_semantics(&FileTaskStore::new(dir.path())).await;
}

/// Two servers ("replicas") sharing `store`, leases of `lease`, renewed every 50 ms.
async fn replicas(
    store: Arc<dyn TaskStore>,
    gate: Arc<Gate>,
    lease: Duration,
) -> (Served, Served, MockModel) {
    let (model, client) = mock().await;
    let toolkit = toolkit(gate).await;
    let config = |name: &str| A2aConfig {
        store: Some(store.clone()),
        lease,
        renew_every: Some(Duration::from_millis(50)),
        replica_id: Some(name.into()),
        ..A2aConfig::default()
    };
    let one = Served::start(&toolkit, client.clone(), config("replica-1")).await;
    let two = Served::start(&toolkit, client, config("replica-2")).await;
    (one, two, model)
}

#[tokio::test]
async fn a_task_is_read_and_canceled_on_the_replica_that_does_not_run_it() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let gate = Arc::new(Gate::default());
    let (one, two, _model) = replicas(store.clone(), gate.clone(), Duration::from_secs(30)).await;
    let id = one.rpc("SendMessage", send("hold"), None).await["result"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();
    assert_eq!(
        two.rpc("GetTask", json!({"id": id}), None).await["result"]["status"]["state"],
        "working"
    );

    let canceled = two.rpc("CancelTask", json!({"id": id}), None).await;
    assert_eq!(canceled["result"]["status"]["state"], "canceled", "{canceled}");
    assert_eq!(
        canceled["result"]["status"]["message"]["parts"],
        json!([{"kind": "text", "text": "canceled by the caller"}])
    );
    // Replica 1 sees the change at its next renewal and stops the run (bounded wait).
    for _ in 0..200 {
        if one.server.running() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(one.server.running(), 0);
    assert!(gate.dropped.load(Ordering::SeqCst), "the tool call was stopped");
    // Its end did not overwrite the cancel.
    let task = one.rpc("GetTask", json!({"id": id}), None).await["result"].clone();
    assert_eq!(task, canceled["result"]);
    assert_eq!(
        two.rpc("CancelTask", json!({"id": id}), None).await["error"],
        json!({"code": -32002, "message": "Task cannot be canceled: it is canceled"})
    );
}

#[tokio::test]
async fn a_task_whose_replica_was_lost_is_failed_by_another_and_a_live_one_is_not() {
    let store = Arc::new(MemoryTaskStore::new());
    // A task taken by a replica that died: its lease ran out a moment ago.
    let ghost = Lease::new("replica-dead", now_ms() - 1_000, Duration::from_millis(500));
    let lost = toolnexus::a2a::Task::new("lost-task", TaskState::Working);
    store.claim(&lost, &ghost).await.unwrap();

    let gate = Arc::new(Gate::default());
    let (one, two, _model) = replicas(store.clone(), gate.clone(), Duration::from_millis(400)).await;
    // A live task on replica 1 keeps its lease through many lease periods.
    let live = one.rpc("SendMessage", send("hold"), None).await["result"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::timeout(Duration::from_secs(10), gate.started.notified())
        .await
        .unwrap();

    let task = two.wait_state("lost-task", "failed").await;
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"],
        lost_message(ghost.expires_at_ms),
    );
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(
        two.rpc("GetTask", json!({"id": live}), None).await["result"]["status"]["state"],
        "working"
    );
    let held = store.lease(&live).unwrap();
    assert_eq!(held.owner, "replica-1");
    assert!(store.lease("lost-task").is_none());

    gate.release.notify_one();
    let done = two.wait_state(&live, "completed").await;
    assert_eq!(
        done["artifacts"][0]["parts"][0]["text"],
        "Here is what the tools returned:\n- hold: released"
    );
    assert!(store.lease(&live).is_none());
}
