//! The MCP client against a server written with the Python `mcp` 2.x SDK
//! (`tests/peers/mcp/server.py`): protocol errors, a server that dies, a tool list that
//! changes, progress and cancellation.

mod client_mock;
mod mcp_support;

use std::time::Duration;

use mcp_support::*;
use serde_json::{Value, json};
use toolnexus::client::StreamEvent;
use toolnexus::mcp::McpStatus;
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::serve::{ServeOptions, serve};
use toolnexus::{Progress, ToolContext, Toolkit};

/// A toolkit over one Python SDK server called `py` that logs its events to `log`.
async fn py_toolkit(python: &str, log: &std::path::Path, extra: Value) -> Toolkit {
    let mut entry = json!({"command": py_server_command(python, log), "timeout": 20000});
    if let (Value::Object(e), Value::Object(x)) = (&mut entry, extra) {
        e.extend(x);
    }
    let tk = toolkit_of(json!({ "py": entry })).await;
    assert_connected(&tk, "py");
    tk
}

#[tokio::test]
async fn a_protocol_error_is_the_servers_message_alone() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let tk = py_toolkit(&python, &dir.path().join("events.jsonl"), json!({})).await;
    // The server answers with a JSON-RPC error (-32603): the model reads the server's
    // message, as from the other ports, without an `MCP error -32603:` prefix.
    let r = call(&tk, "py_backend_down", json!({})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"the backend is down","isError":true,"metadata":{"server":"py"}}"#
    );
    assert_eq!(
        call(&tk, "py_echo", json!({"text": "still up"})).await.output,
        r#"{"result":"still up"}"#
    );
    tk.close().await;
}

/// The server process's id, from its `pid` tool.
async fn server_pid(tk: &Toolkit) -> u32 {
    let r = call(tk, "py_pid", json!({})).await;
    let out: Value = serde_json::from_str(&r.output).unwrap_or_else(|_| panic!("{r:?}"));
    out["result"].as_u64().expect("a pid") as u32
}

/// Kill `pid` with SIGKILL while `py_slow` runs, and return that call's result: the server
/// dies mid-call, the way a crashed server does.
async fn kill_mid_call(tk: &Toolkit, pid: u32) -> toolnexus::ToolResult {
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    // The first progress report proves the call is running on the server.
    let ctx = ToolContext::default().with_progress(move |_| {
        if let Some(tx) = started_tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
    });
    let slow = tk.execute("py_slow", json!({"steps": 100, "delay_ms": 100}), ctx);
    let killer = async {
        started_rx.await.expect("the call reported progress");
        let status = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    };
    let (result, ()) = tokio::join!(slow, killer);
    assert!(
        wait_dead(pid, Duration::from_secs(10)),
        "pid {pid} survived SIGKILL"
    );
    result
}

#[tokio::test]
async fn a_killed_server_is_restarted_and_the_next_call_succeeds() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let tk = py_toolkit(&python, &log, json!({})).await;
    let first = server_pid(&tk).await;
    let r = kill_mid_call(&tk, first).await;
    // The call in flight may have had effects: it fails, and is not repeated.
    assert_eq!(
        r.to_json(),
        r#"{"output":"MCP server \"py\" closed the connection during tools/call \"slow\" (Transport closed); the next call restarts it","isError":true,"metadata":{"server":"py"}}"#
    );
    // The next call restarts the server (a new process: initialized and listed again).
    let r = call(&tk, "py_echo", json!({"text": "back"})).await;
    assert_eq!(r.output, r#"{"result":"back"}"#, "{r:?}");
    let second = server_pid(&tk).await;
    assert_ne!(first, second);
    assert_connected(&tk, "py");
    let starts: Vec<u64> = py_events(&log)
        .iter()
        .filter(|e| e["event"] == "started")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(starts, [u64::from(first), u64::from(second)]);
    tk.close().await;
    assert!(
        wait_dead(second, Duration::from_secs(10)),
        "close kills the restarted server"
    );
}

#[tokio::test]
async fn a_server_that_cannot_be_restarted_is_failed_with_the_reason() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let once = dir.path().join("started-once");
    let env = json!({"environment": {"PEER_ONCE": once.display().to_string()}});
    let tk = py_toolkit(&python, &dir.path().join("events.jsonl"), env).await;
    let pid = server_pid(&tk).await;
    kill_mid_call(&tk, pid).await;
    // Every restart exits at once: after the retry budget the server is failed, and the
    // call says so with the reason.
    let r = call(&tk, "py_echo", json!({"text": "x"})).await;
    assert!(r.is_error);
    let reason = match &tk.mcp_status()["py"] {
        McpStatus::Failed { reason } => reason.clone(),
        other => panic!("{other:?}"),
    };
    assert!(reason.starts_with("initialize failed: "), "{reason}");
    assert_eq!(r.output, format!("MCP server \"py\" failed: {reason}"));
    // Failed for good: a later call does not spawn again.
    let again = call(&tk, "py_echo", json!({"text": "x"})).await;
    assert_eq!(again.output, r.output);
    tk.close().await;
}

/// Wait (bounded) until `log` holds an event named `name`.
async fn wait_event(log: &std::path::Path, name: &str) -> Option<Value> {
    for _ in 0..200 {
        if let Some(e) = py_events(log).into_iter().find(|e| e["event"] == name) {
            return Some(e);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

#[tokio::test]
async fn progress_reaches_the_context_and_a_cancel_reaches_the_server() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let tk = py_toolkit(&python, &log, json!({})).await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let ctx = ToolContext::default();
    let (sink, cancel) = (std::sync::Arc::clone(&seen), ctx.cancel.clone());
    // The host cancels the call once it has seen two progress reports.
    let ctx = ctx.with_progress(move |p: Progress| {
        let mut seen = sink.lock().unwrap();
        seen.push(p);
        if seen.len() == 2 {
            cancel.cancel();
        }
    });
    let r = tk
        .execute("py_slow", json!({"steps": 50, "delay_ms": 100}), ctx)
        .await;
    assert_eq!(r.output, "tool \"py_slow\" was cancelled");
    let step = |n: f64| Progress {
        progress: n,
        total: Some(50.0),
        message: Some(format!("step {n}")),
    };
    assert_eq!(seen.lock().unwrap()[..2], [step(1.0), step(2.0)]);
    // The server got `notifications/cancelled` for that request and stopped the tool.
    let cancelled = wait_event(&log, "cancelled")
        .await
        .expect("the server saw the cancel");
    assert_eq!(cancelled["tool"], "slow");
    // The session is fine afterwards.
    assert_eq!(
        call(&tk, "py_echo", json!({"text": "on"})).await.output,
        r#"{"result":"on"}"#
    );
    tk.close().await;
}

#[tokio::test]
async fn progress_restarts_the_idle_timeout() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The server's 5 s timeout bounds each phase of the load (a cold Python start fits) and
    // the call's silence: 4 steps 2 s apart take 8 s, and each report restarts the timeout.
    let tk = py_toolkit(
        &python,
        &dir.path().join("events.jsonl"),
        json!({"timeout": 5000}),
    )
    .await;
    let r = call(&tk, "py_slow", json!({"steps": 4, "delay_ms": 2000})).await;
    assert_eq!(r.output, r#"{"result":"done after 4 steps"}"#, "{r:?}");
    tk.close().await;
}

#[tokio::test]
async fn a_tool_list_change_is_applied_to_the_toolkit() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut tk = py_toolkit(&python, &dir.path().join("events.jsonl"), json!({})).await;
    assert!(tk.get("py_late").is_none());
    assert!(tk.refresh_mcp_tools().is_empty(), "nothing changed yet");
    let r = call(&tk, "py_add_tool", json!({"name": "late"})).await;
    assert_eq!(r.output, r#"{"result":"added late"}"#);
    // The server announced the change; the session re-lists in the background.
    let mut changed = Vec::new();
    for _ in 0..100 {
        changed = tk.refresh_mcp_tools();
        if !changed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(changed, ["py"]);
    let late = tk.get("py_late").expect("the new tool is in the toolkit");
    assert_eq!(late.description(), "added at run time: late");
    assert_eq!(
        call(&tk, "py_late", json!({})).await.output,
        r#"{"result":"I am late"}"#
    );
    assert!(tk.get("py_echo").is_some(), "the other tools stay");
    tk.close().await;
}

/// `server.py` serving `transport` on `port` (default: a free loopback port), once it
/// listens; killed on drop.
async fn py_http(
    python: &str,
    log: &std::path::Path,
    transport: &str,
    port: Option<u16>,
) -> (tokio::process::Child, u16) {
    let port = port.unwrap_or_else(|| {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().port()
    });
    let mut argv: Vec<String> = serde_json::from_value(py_server_command(python, log)).unwrap();
    argv.extend([transport.to_owned(), port.to_string()]);
    let server = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the Python server did not listen"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (server, port)
}

#[tokio::test]
async fn a_restarted_http_server_gets_a_new_session() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let (mut server, port) = py_http(&python, &log, "streamable-http", None).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let tk = toolkit_of(json!({"py": {"url": url, "timeout": 20000}})).await;
    assert_connected(&tk, "py");
    let first = call(&tk, "py_session", json!({})).await.output;
    assert!(first.len() > 20, "a session id: {first}");
    // A redeploy: the new process knows no session, so the old id answers 404.
    server.kill().await.unwrap();
    let (mut server, _) = py_http(&python, &log, "streamable-http", Some(port)).await;
    let second = call(&tk, "py_session", json!({})).await;
    assert!(!second.is_error, "{second:?}");
    assert_ne!(second.output, first, "a new session");
    tk.close().await;
    let _ = server.kill().await;
}

#[tokio::test]
async fn progress_is_a_stream_event_between_the_call_and_its_result() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let tk = py_toolkit(&python, &dir.path().join("events.jsonl"), json!({})).await;
    let turn1 = client_mock::Reply::openai_sse([
        json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"py_slow","arguments":"{\"steps\":3,\"delay_ms\":100}"}}]}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
    ]);
    let turn2 = client_mock::Reply::openai_sse([
        json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"done"}}]}),
    ]);
    let mock = client_mock::Mock::start(vec![turn1, turn2]).await;
    let client = client_mock::client("openai", &format!("{}/v1", mock.base))
        .build()
        .unwrap();
    let events = client_mock::stream_events(&client, "run slow", &tk).await;
    let around: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall { name, .. } => Some(format!("call {name}")),
            StreamEvent::Progress { id, name, progress } => Some(format!(
                "progress {id} {name} {}/{} {}",
                progress.progress,
                progress.total.unwrap_or_default(),
                progress.message.as_deref().unwrap_or_default()
            )),
            StreamEvent::ToolResult { name, output, .. } => Some(format!("result {name} {output}")),
            _ => None,
        })
        .collect();
    // The last report races the answer (rmcp hands notifications to the handler on tasks of
    // their own), and one that comes after the answer is dropped: the first two are certain.
    let last = around.len() - 1;
    assert_eq!(
        around[..3],
        [
            "call py_slow",
            "progress c1 py_slow 1/3 step 1",
            "progress c1 py_slow 2/3 step 2",
        ]
    );
    assert!(
        around.len() == 4 || around[3] == "progress c1 py_slow 3/3 step 3",
        "{around:?}"
    );
    assert_eq!(around[last], r#"result py_slow {"result":"done after 3 steps"}"#);
    tk.close().await;
}

#[tokio::test]
async fn a_legacy_sse_server_is_reached_through_the_fallback() {
    let Some(python) = python_mcp2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = py_http(&python, &dir.path().join("events.jsonl"), "sse", None).await;
    let tk =
        toolkit_of(json!({"py": {"url": format!("http://127.0.0.1:{port}/sse"), "timeout": 20000}})).await;
    assert_connected(&tk, "py");
    assert_eq!(
        call(&tk, "py_echo", json!({"text": "sse"})).await.output,
        r#"{"result":"sse"}"#
    );
    // Progress arrives as events on the stream, like any other server message.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let ctx = ToolContext::default().with_progress(move |p: Progress| sink.lock().unwrap().push(p.progress));
    let r = tk
        .execute("py_slow", json!({"steps": 2, "delay_ms": 10}), ctx)
        .await;
    assert_eq!(r.output, r#"{"result":"done after 2 steps"}"#);
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
    tk.close().await;
    let _ = server.kill().await;
}

#[tokio::test]
async fn a_gateway_relays_output_schemas_structured_content_annotations_and_images() {
    let (Some(server_python), Some(client_python)) = (python_mcp2(), python_mcp1()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tk = py_toolkit(&server_python, &dir.path().join("events.jsonl"), json!({})).await;
    let options = ServeOptions {
        mcp: Some(McpServeConfig {
            tools: Some(vec!["py_echo".into(), "py_dot".into()]),
            ..McpServeConfig::default()
        }),
        ..ServeOptions::default()
    };
    let handle = serve(&tk, "127.0.0.1:0", options).await.unwrap();
    // The Python SDK's client validates structuredContent against the listed outputSchema.
    let script = r#"
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main(url):
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            echo = await session.call_tool("py_echo", {"text": "hi"})
            dot = await session.call_tool("py_dot", {})
            print(json.dumps({
                "echo_tool": [tools["py_echo"].inputSchema, tools["py_echo"].outputSchema, tools["py_echo"].annotations.model_dump(exclude_none=True)],
                "echo": [echo.isError, echo.structuredContent, [c.model_dump(exclude_none=True) for c in echo.content]],
                "dot": [dot.isError, dot.structuredContent, [c.model_dump(exclude_none=True) for c in dot.content]],
            }))

asyncio.run(main(sys.argv[1]))
"#;
    let url = handle.mcp_url().expect("the MCP profile is served");
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(client_python)
                .args(["-c", script, &url])
                .output()
        }),
    )
    .await
    .expect("the python client finished in time")
    .unwrap()
    .unwrap();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got,
        json!({
            "echo_tool": [
                // The upstream server's inputSchema verbatim: no `additionalProperties`
                // added by the gateway's client side.
                {"properties": {"text": {"title": "Text", "type": "string"}}, "required": ["text"],
                 "title": "echoArguments", "type": "object"},
                {"properties": {"result": {"title": "Result", "type": "string"}}, "required": ["result"],
                 "title": "echoOutput", "type": "object"},
                {"readOnlyHint": true, "destructiveHint": false}
            ],
            "echo": [false, {"result": "hi"}, [{"type": "text", "text": r#"{"result":"hi"}"#}]],
            "dot": [false, null, [{"type": "image", "mimeType": "image/png",
                "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="}]]
        })
    );
    handle.stop().await;
    tk.close().await;
}
