//! A toolkit served as an MCP server, called by our own client, by raw JSON-RPC over HTTP,
//! and by the Python `mcp` SDK.

mod mcp_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_support::*;
use serde_json::{Value, json};
use toolnexus::mcp::serve::{CallEvent, McpServeConfig};
use toolnexus::serve::{ServeHandle, ServeOptions, serve};
use toolnexus::{ContentPart, Tool, ToolResult, ToolSource, Toolkit};

fn gateway_toolkit() -> Toolkit {
    Toolkit::new([
        Tool::new("echo", |args: Value, _| async move {
            ToolResult::success(args["text"].as_str().unwrap_or_default())
        })
        .with_description("Echo the text")
        .with_schema(
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )
        .with_source(ToolSource::Native),
        Tool::new("nope", |_, _| async { ToolResult::failure("no such row") }),
        Tool::new("boom", |_, _| async { panic!("kaboom") }),
        Tool::new("pic", |_, _| async {
            ToolResult::success("a picture").with_parts([ContentPart::image_bytes(b"\x89PNG", "image/png")])
        }),
    ])
}

/// The toolkit served over MCP alone, on loopback.
async fn serve_mcp(tk: &Toolkit, mcp: McpServeConfig) -> ServeHandle {
    let options = ServeOptions {
        mcp: Some(mcp),
        ..ServeOptions::default()
    };
    serve(tk, "127.0.0.1:0", options).await.unwrap()
}

/// One JSON-RPC request on the MCP session `session` (none for `initialize`): its reply (the
/// event of the answer's event stream that carries it) and the response's session id.
async fn rpc(url: &str, session: Option<&str>, body: Value) -> (Value, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let resp = request.body(body.to_string()).send().await.unwrap();
    let status = resp.status();
    let id = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = resp.text().await.unwrap();
    if status == 202 {
        return (Value::Null, id);
    }
    assert_eq!(status, 200, "{text}");
    // A stateless server answers with the JSON itself, a session with an event stream.
    let reply = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("a JSON-RPC reply event, got {text}"))
    });
    (reply, id)
}

#[tokio::test]
async fn wire_initialize_list_call_and_unknown_tool() {
    let handle = serve_mcp(&gateway_toolkit(), McpServeConfig::default()).await;
    let url = handle.mcp_url().unwrap();
    let (init, session) = rpc(
        &url,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    let session = session.expect("initialize opens a session");
    let rpc = |body: Value| {
        let (url, session) = (url.clone(), session.clone());
        async move { rpc(&url, Some(&session), body).await.0 }
    };
    rpc(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(
        init["result"]["serverInfo"],
        json!({"name": "toolnexus", "version": "0.1.0"})
    );
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");

    let list = rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["boom", "echo", "nope", "pic"]);
    assert_eq!(
        tools[1],
        json!({"name": "echo", "description": "Echo the text",
               "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}})
    );

    let call = |id: u32, name: &str, args: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
    let r = rpc(call(3, "echo", json!({"text": "hi"}))).await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
    );
    let r = rpc(call(4, "nope", json!({}))).await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "no such row"}], "isError": true})
    );
    let r = rpc(call(5, "ghost", json!({}))).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Unknown tool: ghost");
    // A panicking tool is an isError result, and the server keeps serving.
    let r = rpc(call(6, "boom", json!({}))).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        r["result"]["content"][0]["text"],
        "tool \"boom\" panicked: kaboom"
    );
    let r = rpc(call(7, "pic", json!({}))).await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "a picture"}, {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}])
    );
    let r = rpc(call(8, "echo", json!({"text": "still up"}))).await;
    assert_eq!(r["result"]["content"][0]["text"], "still up");
    handle.stop().await;
}

#[tokio::test]
async fn stateless_serving_answers_each_post_alone_with_json() {
    let mcp = McpServeConfig {
        stateless: true,
        ..McpServeConfig::default()
    };
    let handle = serve_mcp(&gateway_toolkit(), mcp).await;
    let url = handle.mcp_url().unwrap();
    let (init, session) = rpc(
        &url,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    assert_eq!(session, None, "no session is opened");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
    // A call with no session and no handshake before it on this connection.
    let (reply, _) = rpc(
        &url,
        None,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "alone"}}}),
    )
    .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "alone"}], "isError": false}})
    );
    // Our client works the same against it.
    let tk = toolkit_of(json!({"gw": {"url": url, "timeout": 5000}})).await;
    assert_eq!(call(&tk, "gw_echo", json!({"text": "x"})).await.output, "x");
    tk.close().await;
    handle.stop().await;
}

#[tokio::test]
async fn our_client_round_trips_through_the_gateway_with_filter_and_on_call() {
    let events: Arc<Mutex<Vec<CallEvent>>> = Arc::default();
    let sink = events.clone();
    let options = McpServeConfig {
        name: Some("gw".into()),
        version: Some("9.9.9".into()),
        tools: Some(vec!["echo".into(), "nope".into(), "unknown-is-ignored".into()]),
        on_call: Some(Arc::new(move |e: &CallEvent| {
            sink.lock().unwrap().push(e.clone());
            panic!("a panicking on_call is contained");
        })),
        ..McpServeConfig::default()
    };
    let handle = serve_mcp(&gateway_toolkit(), options).await;
    let tk = toolkit_of(json!({"gw": {"url": handle.mcp_url().unwrap(), "timeout": 5000}})).await;
    assert_connected(&tk, "gw");
    assert_eq!(tk.tool_names(), ["gw_echo", "gw_nope"]);
    let r = call(&tk, "gw_echo", json!({"text": "round trip"})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"round trip","isError":false,"metadata":{"server":"gw"}}"#
    );
    let r = call(&tk, "gw_nope", json!({})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"no such row","isError":true,"metadata":{"server":"gw"}}"#
    );
    // Flat latency: many sequential calls on one session all succeed.
    for i in 0..50 {
        assert_eq!(
            call(&tk, "gw_echo", json!({"text": i.to_string()})).await.output,
            i.to_string()
        );
    }
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 52);
    assert_eq!(
        (events[0].name.as_str(), events[0].source, events[0].is_error),
        ("echo", ToolSource::Native, false)
    );
    assert_eq!(
        (events[1].name.as_str(), events[1].source, events[1].is_error),
        ("nope", ToolSource::Custom, true)
    );
    assert!(events.iter().all(|e| e.ms >= 0.0 && e.ms < 5000.0));
    tk.close().await;
    handle.stop().await;
}

#[tokio::test]
async fn python_mcp_sdk_client_lists_and_calls() {
    let python = std::env::var("TOOLNEXUS_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        peer_missing(&format!(
            "`{python}` cannot import the `mcp` SDK (set TOOLNEXUS_PYTHON to a venv python with `pip install mcp==1.30.0`)"
        ));
        return;
    }
    let handle = serve_mcp(&gateway_toolkit(), McpServeConfig::default()).await;
    let script = r#"
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main(url):
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            ok = await session.call_tool("echo", {"text": "from python"})
            bad = await session.call_tool("nope", {})
            print(json.dumps({
                "server": [init.serverInfo.name, init.serverInfo.version],
                "tools": [t.name for t in tools.tools],
                "ok": [ok.isError, [c.text for c in ok.content]],
                "bad": [bad.isError, [c.text for c in bad.content]],
            }))

asyncio.run(main(sys.argv[1]))
"#;
    let url = handle.mcp_url().unwrap();
    let py = python.clone();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(py).args(["-c", script, &url]).output()
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
            "server": ["toolnexus", "0.1.0"],
            "tools": ["boom", "echo", "nope", "pic"],
            "ok": [false, ["from python"]],
            "bad": [true, ["no such row"]]
        })
    );
    handle.stop().await;
}

#[tokio::test]
async fn bind_failure_is_a_typed_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let err = serve(&Toolkit::default(), &addr, ServeOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with(&format!("cannot serve on {addr}: ")),
        "{err}"
    );
}
