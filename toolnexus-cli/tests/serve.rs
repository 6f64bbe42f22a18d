//! `toolnexus serve --mcp ADDR`: the CLI as an MCP gateway, called by the library's client.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::mcp::{LoadOptions, McpConfig, McpStatus, load};
use toolnexus::{ToolContext, Toolkit};

#[tokio::test]
async fn serve_exposes_the_toolkit_over_mcp_until_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let note = dir.path().join("note.txt");
    std::fs::write(&note, "gateway content\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args([
            "serve",
            "--mcp",
            "127.0.0.1:0",
            "--expose",
            "read",
            "--expose",
            "glob",
            "--name",
            "gw",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first stdout line is the URL (the child prints it once bound, or exits).
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    let cfg = McpConfig::from_value(&json!({"mcpServers": {"gw": {"url": url, "timeout": 10000}}})).unwrap();
    let source = load(&cfg, LoadOptions::default()).await.unwrap();
    assert_eq!(source.status()["gw"], McpStatus::Connected);
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    assert_eq!(tk.tool_names(), ["gw_glob", "gw_read"]);
    let r = tk
        .execute(
            "gw_read",
            json!({"path": note.display().to_string()}),
            ToolContext::default(),
        )
        .await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.output.contains("gateway content"), "{}", r.output);
    // The file tools are confined to the server's working directory.
    let r = tk
        .execute(
            "gw_read",
            json!({"path": "/etc/hostname"}),
            ToolContext::default(),
        )
        .await;
    assert!(r.is_error);
    assert!(
        r.output
            .starts_with("read: /etc/hostname resolves outside baseDir "),
        "{}",
        r.output
    );
    tk.close().await;

    let start = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_on_a_taken_port_is_a_one_line_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["serve", "--mcp", &addr, "--no-builtins"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("toolnexus: cannot serve on {addr}: ")),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
