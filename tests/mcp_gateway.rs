//! `serve` as a gateway over a real MCP server: the Python `mcp` 2.x SDK server
//! (`tests/peers/mcp/server.py`) upstream, the Python `mcp` SDK client
//! (`tests/peers/mcp/gateway_client.py`: 1.x, and 2.x for elicitation) and our own client
//! downstream, on stateful sessions. Progress flows up to the caller, cancellation down to the server;
//! the server's own elicitation goes up to the calling client and its answer back down.

mod mcp_support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_support::*;
use serde_json::{Value, json};
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::serve::{ServeHandle, ServeOptions, serve};
use toolnexus::{Progress, ToolContext, Toolkit};

/// The Python server as the toolkit's `py` source, served over MCP.
async fn gateway(python: &str, log: &Path) -> (Toolkit, ServeHandle) {
    let tk = toolkit_of(json!({"py": {"command": py_server_command(python, log), "timeout": 20000}})).await;
    assert_connected(&tk, "py");
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        ..ServeOptions::default()
    };
    let handle = serve(&tk, "127.0.0.1:0", options).await.unwrap();
    (tk, handle)
}

/// Run `gateway_client.py URL MODE` with the 1.x SDK and parse what it printed.
async fn python_client(python: String, url: String, mode: &'static str) -> Value {
    let script =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp/gateway_client.py");
    let out = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(python)
                .arg(script)
                .args([&url, mode])
                .output()
        }),
    )
    .await
    .expect("the python client finished in time")
    .unwrap()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python failed: {stderr}");
    // Leaving, the SDK ends its session with DELETE and warns unless that is a 200 or 204.
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Wait (bounded) until the server logged a cancelled `slow` call.
async fn upstream_cancelled(log: &Path) -> bool {
    for _ in 0..200 {
        if py_events(log)
            .iter()
            .any(|e| e["event"] == "cancelled" && e["tool"] == "slow")
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_python_client_gets_the_upstream_servers_progress_through_the_gateway() {
    let (Some(server_python), Some(client_python)) = (python_mcp2(), python_mcp1()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (tk, handle) = gateway(&server_python, &dir.path().join("events.jsonl")).await;
    let mut got = python_client(client_python, handle.mcp_url().unwrap(), "progress").await;
    // The upstream server's last report races its answer into our client (rmcp hands
    // notifications to the handler on tasks of their own; a report after the answer is
    // dropped): the first two are certain, the third is the last step when present.
    let progress = got["progress"].as_array_mut().unwrap();
    assert!(
        progress.len() == 2 || progress[2] == json!([3.0, 3.0, "step 3"]),
        "{progress:?}"
    );
    progress.truncate(2);
    assert_eq!(
        got,
        json!({
            "progress": [[1.0, 3.0, "step 1"], [2.0, 3.0, "step 2"]],
            // The tool has an output schema: its text is the structured result's JSON.
            "result": [r#"{"result":"done after 3 steps"}"#],
            "isError": false,
            "session": true
        })
    );
    handle.stop().await;
    tk.close().await;
}

#[tokio::test]
async fn a_python_clients_cancel_reaches_the_upstream_server() {
    let (Some(server_python), Some(client_python)) = (python_mcp2(), python_mcp1()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let (tk, handle) = gateway(&server_python, &log).await;
    let got = python_client(client_python, handle.mcp_url().unwrap(), "cancel").await;
    assert_eq!(
        got,
        json!({"progress_before_cancel": [[1.0, 100.0, "step 1"]], "session": true})
    );
    assert!(upstream_cancelled(&log).await, "{:?}", py_events(&log));
    handle.stop().await;
    tk.close().await;
}

#[tokio::test]
async fn an_upstream_tool_change_reaches_a_python_client_as_list_changed() {
    let (Some(server_python), Some(client_python)) = (python_mcp2(), python_mcp1()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (tk, handle) = gateway(&server_python, &dir.path().join("events.jsonl")).await;
    let upstream = [
        "add_tool",
        "ask_city",
        "backend_down",
        "dot",
        "echo",
        "pid",
        "session",
        "slow",
    ];
    let served = |extra: &[&str]| {
        let mut names: Vec<String> = upstream.iter().chain(extra).map(|n| format!("py_{n}")).collect();
        names.sort();
        names
    };
    assert_eq!(handle.mcp_tools(), served(&[]));
    let got = python_client(client_python, handle.mcp_url().unwrap(), "list_changed").await;
    assert_eq!(
        got,
        json!({
            "fresh_before": false,
            "added": [r#"{"result":"added fresh"}"#],
            "new_tools": ["py_fresh"],
            "fresh": [r#"{"result":"I am fresh"}"#],
            "session": true
        })
    );
    // The handle reports what the gateway serves since the change, not its startup list.
    assert_eq!(handle.mcp_tools(), served(&["fresh"]));
    handle.stop().await;
    tk.close().await;
}

/// The `question` built-in served alone, as a Python client calls it in `mode`: with the 1.x
/// SDK, then with the 2.x SDK (whose transport does not tell the session id: `null`).
async fn ask_question(mode: &'static str) -> Vec<Value> {
    let (Some(v1), Some(v2)) = (python_mcp1(), python_mcp2()) else {
        return Vec::new();
    };
    let tk = Toolkit::new(
        toolnexus::builtin::all()
            .into_iter()
            .filter(|t| t.name() == "question"),
    );
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        ..ServeOptions::default()
    };
    let handle = serve(&tk, "127.0.0.1:0", options).await.unwrap();
    let mut got = Vec::new();
    for (python, session) in [(v1, json!(true)), (v2, Value::Null)] {
        let mut out = python_client(python, handle.mcp_url().unwrap(), mode).await;
        assert_eq!(out["session"], session, "{out}");
        out.as_object_mut().unwrap().remove("session");
        got.push(out);
    }
    handle.stop().await;
    got
}

const CITY_FORM: &str = r#"{"message": "Which city? (options: Chennai, Oslo)", "schema": {
    "type": "object",
    "properties": {"answer_1": {"type": "string", "title": "Which city?", "enum": ["Chennai", "Oslo"]}},
    "required": ["answer_1"]}}"#;

#[tokio::test]
async fn a_suspended_tool_asks_the_client_by_elicitation_and_resumes_with_the_answer() {
    let form: Value = serde_json::from_str(CITY_FORM).unwrap();
    for got in ask_question("accept").await {
        assert_eq!(
            got,
            json!({"asked": [form], "result": [r#"{"answers":["Oslo"]}"#], "isError": false})
        );
    }
}

#[tokio::test]
async fn a_declined_elicitation_is_an_error_result_that_says_so() {
    let form: Value = serde_json::from_str(CITY_FORM).unwrap();
    for got in ask_question("decline").await {
        assert_eq!(
            got,
            json!({
                "asked": [form],
                "result": ["the client declined the request: Which city? (options: Chennai, Oslo)"],
                "isError": true
            })
        );
    }
}

#[tokio::test]
async fn without_the_capability_a_suspension_stays_an_error_result() {
    for got in ask_question("plain").await {
        assert_eq!(
            got,
            json!({"asked": [], "result": ["Which city? (options: Chennai, Oslo)"], "isError": true})
        );
    }
}

#[tokio::test]
async fn our_client_through_the_gateway_gets_progress_and_cancels_upstream() {
    let Some(server_python) = python_mcp2() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let (tk, handle) = gateway(&server_python, &log).await;
    let client = toolkit_of(json!({"gw": {"url": handle.mcp_url().unwrap(), "timeout": 20000}})).await;
    assert_connected(&client, "gw");

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let ctx = ToolContext::default().with_progress(move |p| sink.lock().unwrap().push(p));
    let r = client
        .execute("gw_py_slow", json!({"steps": 3, "delay_ms": 50}), ctx)
        .await;
    assert_eq!(r.output, r#"{"result":"done after 3 steps"}"#, "{r:?}");
    let mut seen: Vec<(f64, Option<f64>, Option<String>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    // As above, the last report may lose its race with the answer, on either hop.
    assert!(
        seen.len() == 2 || seen[2] == (3.0, Some(3.0), Some("step 3".into())),
        "{seen:?}"
    );
    seen.truncate(2);
    assert_eq!(
        seen,
        [
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into()))
        ]
    );

    // Cancelling the caller's context, once the call runs upstream, cancels it there.
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    let ctx = ToolContext::default()
        .with_cancel(cancel)
        .with_progress(move |_| trigger.cancel());
    let r = client
        .execute("gw_py_slow", json!({"steps": 100, "delay_ms": 100}), ctx)
        .await;
    assert!(r.is_error, "{r:?}");
    assert!(upstream_cancelled(&log).await, "{:?}", py_events(&log));
    client.close().await;
    handle.stop().await;
    tk.close().await;
}

/// `py_ask_city` called through a gateway whose toolkit answers elicitations itself with
/// "Chennai" (its `wait_for`), by a Python 1.x client in `mode`.
async fn ask_city_through_the_gateway(mode: &'static str) -> Option<Value> {
    let (Some(server_python), Some(client_python)) = (python_mcp2(), python_mcp1()) else {
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let own: toolnexus::suspend::WaitFor = Arc::new(|request: toolnexus::Request| {
        Box::pin(async move {
            toolnexus::Answer {
                id: request.id,
                ok: true,
                data: Some(json!({"city": "Chennai"})),
                reason: None,
            }
        })
    });
    let servers = json!({"py": {"command": py_server_command(&server_python, &log), "timeout": 20000}});
    let tk = toolkit_with(servers, toolnexus::mcp::LoadOptions::default().wait_for(own)).await;
    assert_connected(&tk, "py");
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        ..ServeOptions::default()
    };
    let handle = serve(&tk, "127.0.0.1:0", options).await.unwrap();
    let mut got = python_client(client_python, handle.mcp_url().unwrap(), mode).await;
    assert_eq!(got["session"], true, "{got}");
    got.as_object_mut().unwrap().remove("session");
    handle.stop().await;
    tk.close().await;
    Some(got)
}

/// What the upstream Python server asks with `ctx.elicit("Which city?", City)`.
fn city_form() -> Value {
    json!({"message": "Which city?", "schema": {
        "type": "object", "title": "City",
        "properties": {"city": {"type": "string", "title": "City"}},
        "required": ["city"]}})
}

#[tokio::test]
async fn an_upstream_servers_elicitation_is_relayed_to_the_calling_client_and_its_answer_back() {
    let Some(got) = ask_city_through_the_gateway("city_accept").await else {
        return;
    };
    assert_eq!(
        got,
        json!({"asked": [city_form()], "result": [r#"{"result":"city: Oslo"}"#], "isError": false})
    );
}

#[tokio::test]
async fn a_calling_clients_decline_of_an_upstream_elicitation_reaches_the_server() {
    let Some(got) = ask_city_through_the_gateway("city_decline").await else {
        return;
    };
    assert_eq!(
        got,
        json!({"asked": [city_form()], "result": [r#"{"result":"no city (decline)"}"#], "isError": false})
    );
}

#[tokio::test]
async fn without_the_capability_an_upstream_elicitation_is_the_toolkits_own() {
    let Some(got) = ask_city_through_the_gateway("city_plain").await else {
        return;
    };
    // Nothing was asked of the client; the toolkit's `wait_for` answered "Chennai".
    assert_eq!(
        got,
        json!({"asked": [], "result": [r#"{"result":"city: Chennai"}"#], "isError": false})
    );
}
