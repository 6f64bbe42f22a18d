//! Issue 14, "a bad MCP server entry is a typed error or a `failed: <reason>` status, never a
//! silent drop", its timeouts (`1e308`, `-1`), and issue 20's `{"foo": 1}`: each through
//! `Toolkit::build` on a real config file, so every message names the file.

mod mcp_support;

use mcp_support::TESTSERVER;
use serde_json::{Value, json};
use toolnexus::mcp::{McpError, McpStatus};
use toolnexus::{BuildError, Toolkit, ToolkitOptions};

/// A config file holding `doc` (verbatim when a string), and the build's error.
async fn build_error(doc: Value) -> (String, BuildError) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    let text = doc.as_str().map_or_else(|| doc.to_string(), str::to_owned);
    std::fs::write(&path, text).unwrap();
    let err = Toolkit::build(ToolkitOptions::default().config(path.as_path()))
        .await
        .expect_err("the build fails");
    (path.display().to_string(), err)
}

#[tokio::test]
async fn a_bad_server_entry_is_an_error_naming_file_server_and_field() {
    let cases = [
        (
            json!({"timeout": 1e308, "command": ["x"]}),
            "\"timeout\" must be a positive number of milliseconds (at most 86400000), got 1e+308",
        ),
        (
            json!({"timeout": -1, "command": ["x"]}),
            "\"timeout\" must be a positive number of milliseconds (at most 86400000), got -1",
        ),
        (
            json!({"url": "ftp://files.example/mcp"}),
            "\"url\" must be an http:// or https:// URL, not ftp://",
        ),
        (
            json!({"url": "http://exa mple/mcp"}),
            "\"url\" is not a valid URL: invalid international domain name",
        ),
        (
            json!({"url": "http://h/mcp", "headers": {"X Token": "v"}}),
            "\"headers\": \"X Token\" is not a valid header name",
        ),
        (
            json!({"url": "http://h/mcp", "headers": {"X-Token": "v\nX-Injected: 1"}}),
            "\"headers\".\"X-Token\": the value holds a control character (such as a newline)",
        ),
        (
            json!({"type": "sse", "url": "http://h/sse"}),
            "\"type\": \"sse\" (the legacy HTTP+SSE transport) is not supported; point \"url\" at the server's streamable-HTTP endpoint with \"type\": \"remote\"",
        ),
    ];
    for (entry, want) in cases {
        let (file, err) = build_error(json!({"mcpServers": {"api": entry}})).await;
        assert!(matches!(err, BuildError::Mcp(McpError::Server { .. })), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("MCP config {file}: server \"api\": {want}")
        );
    }
}

#[tokio::test]
async fn a_duplicate_key_is_an_error_not_a_silent_drop() {
    let text = "{\"mcpServers\": {\n  \"fs\": {\"command\": [\"a\"]},\n  \"fs\": {\"command\": [\"b\"]}\n}}";
    let (file, err) = build_error(json!(text)).await;
    assert!(matches!(err, BuildError::ConfigParse { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("malformed config {file}: duplicate key \"fs\" at line 3 column 6")
    );
    let text = r#"{"mcpServers": {"fs": {"command": ["a"], "command": ["b"]}}}"#;
    let (file, err) = build_error(json!(text)).await;
    assert_eq!(
        err.to_string(),
        format!("malformed config {file}: duplicate key \"command\" at line 1 column 50")
    );
}

/// Issue 20: `{"foo": 1}` said `server "foo": the entry must be an object`.
#[tokio::test]
async fn a_config_without_a_server_map_says_the_key_is_missing() {
    let (file, err) = build_error(json!({"foo": 1})).await;
    assert_eq!(
        err.to_string(),
        format!(
            "malformed MCP config {file}: no \"mcpServers\" key (nor \"servers\" or \"mcp\"), and the top-level key \"foo\" is not a server entry (an object)"
        )
    );
    let (file, err) = build_error(json!({"mcpServers": {}, "servers": {"a": {"command": ["x"]}}})).await;
    assert_eq!(
        err.to_string(),
        format!(
            "malformed MCP config {file}: both \"mcpServers\" and \"servers\" are present; keep the servers under one of them"
        )
    );
}

/// A `cwd` that is not there fails that server with a reason that says so (the spawn error
/// blamed the program), and the rest of the toolkit is built.
#[tokio::test]
async fn a_missing_cwd_fails_that_server_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    std::fs::write(&file, "").unwrap();
    let missing = dir.path().join("nope");
    let doc = json!({"mcpServers": {
        "gone": {"command": [TESTSERVER, "stdio"], "cwd": missing, "timeout": 5000},
        "notdir": {"command": [TESTSERVER, "stdio"], "cwd": file, "timeout": 5000},
        "ok": {"command": [TESTSERVER, "stdio"], "cwd": dir.path(), "timeout": 10000},
    }});
    let tk = Toolkit::build(ToolkitOptions::default().config(doc))
        .await
        .unwrap();
    let status = tk.mcp_status();
    assert_eq!(
        status["gone"],
        McpStatus::Failed {
            reason: format!("cwd {} does not exist", missing.display())
        }
    );
    assert_eq!(
        status["notdir"],
        McpStatus::Failed {
            reason: format!("cwd {} is not a directory", file.display())
        }
    );
    assert_eq!(status["ok"], McpStatus::Connected);
    assert!(tk.tool_names().iter().any(|n| n.starts_with("ok_")));
    tk.close().await;
}
