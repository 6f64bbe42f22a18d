//! `toolnexus serve --mcp ADDR`: the CLI as an MCP gateway, called by the library's client.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::mcp::{LoadOptions, McpConfig, McpStatus, load};
use toolnexus::{ToolContext, Toolkit};

mod python;

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

/// Kills the server if the test fails before it stops it.
struct Reaper(std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn serve_takes_its_token_from_the_environment_warns_about_exposes_and_logs_requests() {
    let token = "tok-5d1e8c0b9a";
    let child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["serve", "--mcp", "127.0.0.1:0", "--auth-token-env", "GW_TOKEN"])
        .args(["--expose", "read", "--expose", "nosuch", "--expose", "bash"])
        .env("GW_TOKEN", token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reaper(child);
    let stderr = child.0.stderr.take().unwrap();
    let log = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut url = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();

    let connect = |headers: serde_json::Value| {
        McpConfig::from_value(
            &json!({"mcpServers": {"gw": {"url": url, "timeout": 10000, "headers": headers}}}),
        )
        .unwrap()
    };
    let source = load(&connect(json!({})), LoadOptions::default()).await.unwrap();
    assert_eq!(source.status()["gw"].as_str(), "failed");
    let source = load(
        &connect(json!({"Authorization": format!("Bearer {token}")})),
        LoadOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(source.status()["gw"], McpStatus::Connected);
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    assert_eq!(tk.tool_names(), ["gw_read"]);
    tk.close().await;

    assert!(
        Command::new("kill")
            .args(["-TERM", &child.0.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let log = log.join().unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "toolnexus: --expose nosuch: no such tool; ignored",
            "toolnexus: --expose bash: left out: it runs commands or changes files (add --expose-dangerous to serve it)",
            "toolnexus: file tools are confined to the working directory (--no-confine to lift)",
            &format!("toolnexus: serving 1 tool over MCP at {url}"),
            "toolnexus: bearer token required; Ctrl-C to stop",
        ]
    );
    // One line per request: the refused one, then the authenticated session.
    assert!(lines[5].starts_with("toolnexus: POST /mcp 401 "), "{log}");
    assert!(lines[5].ends_with("ms error"), "{log}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("toolnexus: POST /mcp initialize 200 ") && l.ends_with("ms ok")),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("toolnexus: POST /mcp tools/list 200 ")),
        "{log}"
    );
    assert!(!log.contains(token), "the token leaked into the log: {log}");
}

#[test]
fn serve_refuses_the_network_without_a_token_and_a_missing_token_variable() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
            .args(args)
            .env_remove("NO_SUCH_TOKEN_VAR")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        run(&["serve", "--mcp", "0.0.0.0:0", "--no-builtins"]),
        (
            Some(2),
            "toolnexus: refusing to serve on 0.0.0.0:0 without authentication: a non-loopback address is reachable from other machines; pass --auth-token-env VAR (the token in that environment variable), or --insecure-no-auth on a trusted network\n"
                .to_owned()
        )
    );
    assert_eq!(
        run(&[
            "serve",
            "--mcp",
            "0.0.0.0:0",
            "--no-builtins",
            "--auth-token-env",
            "NO_SUCH_TOKEN_VAR"
        ]),
        (
            Some(2),
            "toolnexus: --auth-token-env NO_SUCH_TOKEN_VAR: the environment variable NO_SUCH_TOKEN_VAR is not set\n"
                .to_owned()
        )
    );
}

/// `toolnexus serve --mcp` over the Python 2.x SDK server (`py_ask_city` asks its client
/// "Which city?" by `elicitation/create`), called by the Python 1.x client in `mode`
/// (`tests/peers/mcp/gateway_client.py`): what that client printed.
fn ask_city_through_the_cli_gateway(mode: &str) -> Option<serde_json::Value> {
    let (Some(server_python), Some(client_python)) = (python::python_mcp2(), python::python_mcp1()) else {
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let config = json!({"mcpServers": {"py": {
        "command": [server_python, python::peer_script("server.py"), log.display().to_string()],
        "timeout": 20000
    }}});
    let cfg = dir.path().join("mcp.json");
    std::fs::write(&cfg, config.to_string()).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["serve", "--mcp", "127.0.0.1:0", "--no-builtins"])
        .args(["--config", cfg.to_str().unwrap()])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reaper(child);
    let mut url = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let client = Command::new(client_python)
        .arg(python::peer_script("gateway_client.py"))
        .args([url.trim(), mode])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&client.stderr);
    assert!(client.status.success(), "python failed: {stderr}");
    let mut got: serde_json::Value = serde_json::from_slice(&client.stdout).unwrap();
    got.as_object_mut().unwrap().remove("session");
    Some(got)
}

#[test]
fn serve_relays_an_upstream_servers_elicitation_to_a_client_that_can_answer() {
    let Some(got) = ask_city_through_the_cli_gateway("city_accept") else {
        return;
    };
    let form = json!({"message": "Which city?", "schema": {
        "type": "object", "title": "City",
        "properties": {"city": {"type": "string", "title": "City"}},
        "required": ["city"]}});
    assert_eq!(
        got,
        json!({"asked": [form], "result": [r#"{"result":"city: Oslo"}"#], "isError": false})
    );
}

#[test]
fn serve_declines_an_upstream_elicitation_for_a_client_without_the_capability() {
    let Some(got) = ask_city_through_the_cli_gateway("city_plain") else {
        return;
    };
    assert_eq!(
        got,
        json!({"asked": [], "result": [r#"{"result":"no city (decline)"}"#], "isError": false})
    );
}
