//! The MCP client against a server written with the Python `mcp` 2.x SDK
//! (`tests/peers/mcp/server.py`): protocol errors, a server that dies, a tool list that
//! changes, progress and cancellation.

mod mcp_support;

use mcp_support::*;
use serde_json::{Value, json};
use toolnexus::Toolkit;

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
