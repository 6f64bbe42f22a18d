//! The MCP client against the npm reference servers (`server-everything` over stdio and
//! streamable HTTP, `server-filesystem` over stdio).

mod mcp_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_support::*;
use serde_json::{Value, json};
use toolnexus::ContentPart;
use toolnexus::mcp::LoadOptions;
use toolnexus::suspend::{Answer, Request, WaitFor};

fn bin(dir: &std::path::Path, name: &str) -> Value {
    json!(dir.join(name).display().to_string())
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(dir) = npm_bin() else { return };
    let tk = toolkit_of(
        json!({"everything": {"command": [bin(&dir, "mcp-server-everything")], "timeout": 20000}}),
    )
    .await;
    assert_connected(&tk, "everything");
    for name in [
        "everything_echo",
        "everything_get-sum",
        "everything_get-tiny-image",
        "everything_get-structured-content",
    ] {
        assert!(tk.get(name).is_some(), "{name} in {:?}", tk.tool_names());
    }
    assert_eq!(
        call(&tk, "everything_echo", json!({"message": "hi"}))
            .await
            .output,
        "Echo: hi"
    );
    let r = call(&tk, "everything_get-tiny-image", json!({})).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        matches!(r.parts.as_slice(), [ContentPart::Image(m)] if m.mime_type == "image/png"),
        "{:?}",
        r.parts
    );
    let r = call(
        &tk,
        "everything_get-structured-content",
        json!({"location": "New York"}),
    )
    .await;
    let structured: Value = serde_json::from_str(&r.output).expect("structuredContent as JSON text");
    assert!(structured["temperature"].is_number(), "{}", r.output);
    // Validation errors come back as isError results.
    let r = call(&tk, "everything_get-sum", json!({"a": "x"})).await;
    assert!(r.is_error, "{r:?}");
    tk.close().await;
}

#[tokio::test]
async fn server_everything_elicitation_through_wait_for() {
    let Some(dir) = npm_bin() else { return };
    let wait_for: WaitFor = Arc::new(|request: Request| {
        Box::pin(async move {
            assert_eq!(request.kind, "input");
            assert!(
                request
                    .data
                    .as_ref()
                    .is_some_and(|d| d["schema"]["properties"].is_object())
            );
            Answer {
                id: request.id,
                ok: true,
                data: Some(json!({"name": "Muthu"})),
                reason: None,
            }
        })
    });
    let servers = json!({"ev": {"command": [bin(&dir, "mcp-server-everything")], "timeout": 20000}});
    let tk = toolkit_with(servers, LoadOptions::default().wait_for(wait_for)).await;
    let r = call(&tk, "ev_trigger-elicitation-request", json!({})).await;
    assert!(r.output.contains("- Name: Muthu"), "{}", r.output);
    tk.close().await;
}

/// `server-everything` in `mode` (`streamableHttp` or `sse`) on a free loopback port, once
/// it listens; killed on drop.
async fn everything_http(dir: &std::path::Path, mode: &str) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new(dir.join("mcp-server-everything"))
        .arg(mode)
        .env("PORT", port.to_string())
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server-everything did not listen"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, port)
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(dir) = npm_bin() else { return };
    let (mut child, port) = everything_http(&dir, "streamableHttp").await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let tk = toolkit_of(json!({"remote": {"url": url, "timeout": 20000}})).await;
    assert_connected(&tk, "remote");
    assert_eq!(
        call(&tk, "remote_echo", json!({"message": "over http"}))
            .await
            .output,
        "Echo: over http"
    );
    let r = call(&tk, "remote_get-sum", json!({"a": 2, "b": 40})).await;
    assert!(r.output.contains("42"), "{}", r.output);
    tk.close().await;
    let _ = child.kill().await;
}

#[tokio::test]
async fn server_filesystem_reads_a_real_file() {
    let Some(dir) = npm_bin() else { return };
    let root = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    std::fs::write(root_path.join("note.txt"), "hello from disk\n").unwrap();
    let servers = json!({"fs": {"command": [bin(&dir, "mcp-server-filesystem"), root_path.display().to_string()], "timeout": 20000}});
    let tk = toolkit_of(servers).await;
    assert_connected(&tk, "fs");
    assert!(tk.get("fs_read_text_file").is_some(), "{:?}", tk.tool_names());
    let r = call(
        &tk,
        "fs_read_text_file",
        json!({"path": root_path.join("note.txt")}),
    )
    .await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.output.contains("hello from disk"), "{}", r.output);
    // Outside the allowed root: an isError result the model can act on.
    let r = call(&tk, "fs_read_text_file", json!({"path": "/etc/hostname"})).await;
    assert!(r.is_error, "{r:?}");
    let schema = serde_json::to_string(tk.get("fs_read_text_file").unwrap().input_schema()).unwrap();
    // The server's `$schema` passes through verbatim (SPEC §2).
    assert!(schema.contains(r#""$schema":"#), "{schema}");
    tk.close().await;
}

/// A 1×1 PNG, 70 bytes.
const DOT_PNG: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\x9c\x63\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99\x3d\x1d\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

#[tokio::test]
async fn server_filesystem_media_reaches_the_model_once() {
    let Some(dir) = npm_bin() else { return };
    let root = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    std::fs::write(root_path.join("dot.png"), DOT_PNG).unwrap();
    let servers = json!({"fs": {"command": [bin(&dir, "mcp-server-filesystem"), root_path.display().to_string()], "timeout": 20000}});
    let tk = toolkit_of(servers).await;
    assert_connected(&tk, "fs");
    let r = call(
        &tk,
        "fs_read_media_file",
        json!({"path": root_path.join("dot.png")}),
    )
    .await;
    // The server sends the image as a content part and again inside structuredContent: the
    // part stays, and the JSON text names it instead of repeating its base64.
    assert_eq!(
        r.output,
        r#"{"content":[{"type":"image","data":"image (image/png, 70 bytes)","mimeType":"image/png"}]}"#
    );
    assert_eq!(r.parts, [ContentPart::image_bytes(DOT_PNG, "image/png")]);
    tk.close().await;
}

#[tokio::test]
async fn server_everything_resources_as_tools_and_annotations_on_tools() {
    let Some(dir) = npm_bin() else { return };
    let servers = json!({"ev": {"command": [bin(&dir, "mcp-server-everything")], "timeout": 20000}});
    let plain = toolkit_of(servers.clone()).await;
    assert!(plain.get("ev_list_resources").is_none(), "resources are opt-in");
    plain.close().await;

    let tk = toolkit_with(servers, LoadOptions::default().resources(true)).await;
    assert_connected(&tk, "ev");
    // Annotations travel on the tool, as the server listed them.
    let echo = tk.get("ev_echo").unwrap().annotations().cloned().unwrap();
    assert_eq!(
        (
            echo.read_only_hint,
            echo.destructive_hint,
            echo.idempotent_hint,
            echo.open_world_hint
        ),
        (Some(true), Some(false), Some(true), Some(false))
    );
    let gzip = tk
        .get("ev_gzip-file-as-resource")
        .unwrap()
        .annotations()
        .cloned()
        .unwrap();
    assert_eq!(
        (gzip.read_only_hint, gzip.open_world_hint),
        (Some(false), Some(true))
    );

    let list = tk.get("ev_list_resources").expect("the resource lister");
    assert_eq!(list.annotations().unwrap().read_only_hint, Some(true));
    let r = call(&tk, "ev_list_resources", json!({})).await;
    assert!(!r.is_error, "{r:?}");
    let page: Value = serde_json::from_str(&r.output).unwrap();
    let first = &page["resources"][0];
    assert_eq!(
        first,
        &json!({"uri": "demo://resource/static/document/architecture.md", "name": "architecture.md",
            "mimeType": "text/markdown", "description": "Static document file exposed from /docs: architecture.md"})
    );
    let r = call(&tk, "ev_read_resource", json!({"uri": first["uri"]})).await;
    assert!(
        r.output.starts_with("# Everything Server – Architecture\n"),
        "{}",
        r.output
    );
    assert_eq!(r.metadata.as_ref().unwrap()["server"], "ev");
    let r = call(&tk, "ev_read_resource", json!({})).await;
    assert_eq!(r.output, "uri is required (a string)");
    let r = call(&tk, "ev_read_resource", json!({"uri": "demo://no/such/thing"})).await;
    assert!(r.is_error, "{r:?}");
    tk.close().await;
}

#[tokio::test]
async fn server_everything_over_legacy_sse_after_the_streamable_attempt() {
    let Some(dir) = npm_bin() else { return };
    let (mut child, port) = everything_http(&dir, "sse").await;
    // The server answers the streamable `initialize` POST to /sse with a 404: the signal to
    // fall back to GET /sse, whose `endpoint` event names /message for the POSTs.
    let url = format!("http://127.0.0.1:{port}/sse");
    let tk = toolkit_of(json!({"legacy": {"url": url, "timeout": 20000}})).await;
    assert_connected(&tk, "legacy");
    assert!(tk.get("legacy_get-sum").is_some(), "{:?}", tk.tool_names());
    assert_eq!(
        call(&tk, "legacy_echo", json!({"message": "over sse"}))
            .await
            .output,
        "Echo: over sse"
    );
    let r = call(&tk, "legacy_get-sum", json!({"a": 2, "b": 40})).await;
    assert!(r.output.contains("42"), "{}", r.output);
    tk.close().await;
    let _ = child.kill().await;
}
