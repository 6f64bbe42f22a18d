//! The MCP client against real peers: our test server over stdio and streamable HTTP.

mod mcp_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_support::*;
use serde_json::{Value, json};
use toolnexus::mcp::{LoadOptions, McpConfig, McpError, McpStatus, list_mcp_tools};
use toolnexus::suspend::{Answer, AnswerReason, Request, WaitFor};
use toolnexus::{CancellationToken, ContentPart, ToolContext, ToolSource, Toolkit};

#[tokio::test]
async fn stdio_lists_every_page_and_prefixes_sanitized_names() {
    // 15 fixed + 7 generated tools over pages of 4: six round trips of nextCursor.
    let tk = toolkit_of(stdio_server(
        "test.srv",
        &["--page-size", "4", "--extra", "7"],
        json!({}),
    ))
    .await;
    assert_connected(&tk, "test.srv");
    assert_eq!(tk.len(), 22);
    let names = tk.tool_names();
    assert!(names.iter().all(|n| n.starts_with("test_srv_")), "{names:?}");
    for expected in [
        "test_srv_weird_name_with_chars",
        "test_srv_extra_006",
        "test_srv_echo",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let echo = tk.get("test_srv_echo").unwrap();
    assert_eq!(echo.source(), ToolSource::Mcp);
    assert_eq!(echo.description(), "Echo the text back");
    assert_eq!(
        echo.input_schema(),
        &json!({"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false})
    );
    // `$schema` kept verbatim, `$defs` inlined before the schema reaches an adapter.
    assert_eq!(
        tk.get("test_srv_defs").unwrap().input_schema(),
        &json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                "properties": {"point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                "required": ["point"], "additionalProperties": false})
    );
    let openai = serde_json::to_string(&tk.to_openai()).unwrap();
    assert!(openai.contains(
        r#""parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","#
    ));
    assert!(!openai.contains("$defs") && !openai.contains("$ref"));
    // Gemini's subset has no `$schema`.
    assert!(
        !serde_json::to_string(&tk.to_gemini())
            .unwrap()
            .contains("$schema")
    );
    tk.close().await;
}

#[tokio::test]
async fn execute_maps_text_structured_errors_and_images() {
    let tk = toolkit_of(stdio_server("t", &[], json!({}))).await;
    let r = call(&tk, "t_echo", json!({"text": "hello"})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"hello","isError":false,"metadata":{"server":"t"}}"#
    );

    let r = call(&tk, "t_add", json!({"a": 2, "b": 3.5})).await;
    assert_eq!(r.output, r#"{"sum":5.5,"inputs":[2.0,3.5]}"#);
    assert!(!r.is_error);

    let r = call(&tk, "t_fail", json!({})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"something broke\n\ndetails: none","isError":true,"metadata":{"server":"t"}}"#
    );

    let r = call(&tk, "t_weird_name_with_chars", json!({})).await;
    assert_eq!(r.output, "weird ok");

    let r = call(&tk, "t_image", json!({})).await;
    assert_eq!(r.output, "image (image/png, 68 bytes)");
    let [ContentPart::Image(media)] = r.parts.as_slice() else {
        panic!("{:?}", r.parts)
    };
    assert_eq!(media.mime_type, "image/png");
    assert_eq!(
        media.source,
        toolnexus::content::MediaSource::Data(toolnexus_testserver::PNG_1X1.into())
    );

    let r = call(&tk, "t_echo", json!([1, 2])).await;
    assert_eq!(r.output, "tool arguments must be a JSON object");
    assert!(r.is_error);
    tk.close().await;
}

#[tokio::test]
async fn child_gets_merged_env_and_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let extra = json!({"environment": {"TNX_MCP_TEST": "forty-two"}, "cwd": dir.path()});
    let tk = toolkit_of(stdio_server("t", &[], extra)).await;
    assert_eq!(
        call(&tk, "t_env", json!({"name": "TNX_MCP_TEST"})).await.output,
        "forty-two"
    );
    // Merged, not replaced: the parent's PATH is still there.
    assert_eq!(
        call(&tk, "t_env", json!({"name": "PATH"})).await.output,
        std::env::var("PATH").unwrap()
    );
    let cwd = call(&tk, "t_cwd", json!({})).await.output;
    assert_eq!(
        std::fs::canonicalize(cwd).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    tk.close().await;
}

#[tokio::test]
async fn tools_filter_uses_original_names() {
    let allow = json!({"tools": {"weird.name/with:chars": true, "echo": true, "nope": true}});
    let tk = toolkit_of(stdio_server("a", &[], allow)).await;
    assert_eq!(tk.tool_names(), ["a_echo", "a_weird_name_with_chars"]);
    tk.close().await;

    let drop = json!({"tools": {"hang": false, "crash": false}});
    let tk = toolkit_of(stdio_server("d", &[], drop)).await;
    assert_eq!(tk.len(), 13);
    assert!(tk.get("d_hang").is_none() && tk.get("d_crash").is_none() && tk.get("d_echo").is_some());
    tk.close().await;
}

#[tokio::test]
async fn hanging_call_is_bounded_and_the_session_survives() {
    let tk = toolkit_of(stdio_server("h", &[], json!({"timeout": 800}))).await;
    let start = Instant::now();
    let r = call(&tk, "h_hang", json!({})).await;
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    assert_eq!(
        r.output,
        "MCP server \"h\" did not answer tools/call \"hang\" within 800ms"
    );
    assert!(r.is_error);
    // A per-call context timeout wins over the server's.
    let ctx = ToolContext::default().with_timeout(Duration::from_millis(300));
    let r = tk.execute("h_hang", json!({}), ctx).await;
    assert!(r.is_error, "{r:?}");
    assert_eq!(
        call(&tk, "h_echo", json!({"text": "still here"})).await.output,
        "still here"
    );
    tk.close().await;
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_that_call_and_the_next_restarts_it() {
    let tk = toolkit_of(stdio_server("c", &[], json!({"timeout": 5000}))).await;
    let pid = |tk: &Toolkit| {
        let tk = tk.clone();
        async move { call(&tk, "c_pid", json!({})).await.output }
    };
    let before = pid(&tk).await;
    let r = call(&tk, "c_crash", json!({})).await;
    assert_eq!(
        r.output,
        "MCP server \"c\" closed the connection during tools/call \"crash\" (Transport closed); the next call \
         restarts it"
    );
    let r = call(&tk, "c_echo", json!({"text": "x"})).await;
    assert!(!r.is_error, "{r:?}");
    let after = pid(&tk).await;
    assert_ne!(before, after, "a new server process");
    tk.close().await;
}

#[tokio::test]
async fn a_server_killed_between_calls_is_restarted_by_the_next_call() {
    let tk = toolkit_of(stdio_server("k", &[], json!({"timeout": 5000}))).await;
    let pid = |tk: &Toolkit| {
        let tk = tk.clone();
        async move { call(&tk, "k_pid", json!({})).await.output }
    };
    let before = pid(&tk).await;
    let status = std::process::Command::new("kill")
        .args(["-9", &before])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(wait_dead(before.parse().unwrap(), Duration::from_secs(5)));
    // No call fails: the exited process is seen before the request is written.
    let r = call(&tk, "k_echo", json!({"text": "x"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_ne!(pid(&tk).await, before);
    assert_connected(&tk, "k");
    tk.close().await;
}

async fn pids(tk: &Toolkit, server: &str) -> (u32, u32) {
    let pid = call(tk, &format!("{server}_pid"), json!({}))
        .await
        .output
        .parse()
        .unwrap();
    let grandchild = call(tk, &format!("{server}_spawn_grandchild"), json!({}))
        .await
        .output
        .parse()
        .unwrap();
    assert!(alive(pid) && alive(grandchild));
    (pid, grandchild)
}

#[tokio::test]
async fn close_kills_the_child_and_its_children() {
    let tk = toolkit_of(stdio_server("p", &[], json!({}))).await;
    let (pid, grandchild) = pids(&tk, "p").await;
    let start = Instant::now();
    tk.close().await;
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    assert!(
        wait_dead(pid, Duration::from_secs(2)),
        "server {pid} survived close()"
    );
    assert!(
        wait_dead(grandchild, Duration::from_secs(2)),
        "grandchild {grandchild} survived close()"
    );
    // Idempotent, and a closed session fails calls instead of hanging.
    tk.close().await;
    assert!(call(&tk, "p_echo", json!({"text": "x"})).await.is_error);
}

#[tokio::test]
async fn dropping_the_toolkit_kills_the_children() {
    let tk = toolkit_of(stdio_server("p", &[], json!({}))).await;
    let (pid, grandchild) = pids(&tk, "p").await;
    drop(tk);
    assert!(
        wait_dead(pid, Duration::from_secs(3)),
        "server {pid} survived drop"
    );
    assert!(
        wait_dead(grandchild, Duration::from_secs(3)),
        "grandchild {grandchild} survived drop"
    );
}

#[tokio::test]
async fn resilience_every_bad_server_is_isolated_in_bounded_time() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/mcp", silent.local_addr().unwrap());
    // Accept connections and never answer.
    let accepted = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = silent.accept().await {
            held.push(sock);
        }
    });
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut servers = stdio_server("good", &[], json!({}));
    let bad = json!({
        "badcmd": {"command": ["/nonexistent/definitely-not-here"], "timeout": 1000},
        "closed": {"url": format!("http://127.0.0.1:{closed_port}/mcp"), "timeout": 1000},
        "silent": {"url": silent_url, "timeout": 1000},
        "mute": {"command": [TESTSERVER, "hang-init"], "timeout": 1000},
        "exits": {"command": [TESTSERVER, "exit-init"], "timeout": 1000},
        "dupcursor": {"command": [TESTSERVER, "stdio", "--dup-cursor"], "timeout": 1000},
        "off": {"command": ["x"], "enabled": false}
    });
    servers
        .as_object_mut()
        .unwrap()
        .extend(bad.as_object().unwrap().clone());
    let start = Instant::now();
    let tk = toolkit_of(servers).await;
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "load took {:?}",
        start.elapsed()
    );
    let status = tk.mcp_status();
    let labels: Vec<(&str, &str)> = status.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        labels,
        // Config order, like every other port.
        [
            ("good", "connected"),
            ("badcmd", "failed"),
            ("closed", "failed"),
            ("silent", "failed"),
            ("mute", "failed"),
            ("exits", "failed"),
            ("dupcursor", "failed"),
            ("off", "disabled")
        ]
    );
    let reason = |s: &str| status[s].reason().unwrap().to_owned();
    assert!(
        reason("badcmd").starts_with("cannot start \"/nonexistent/definitely-not-here\": "),
        "{}",
        reason("badcmd")
    );
    assert!(
        reason("closed").starts_with("initialize failed: "),
        "{}",
        reason("closed")
    );
    assert_eq!(reason("silent"), "initialize timed out after 1000ms");
    assert_eq!(reason("mute"), "initialize timed out after 1000ms");
    assert!(
        reason("exits").starts_with("initialize failed: "),
        "{}",
        reason("exits")
    );
    assert_eq!(reason("dupcursor"), "tools/list returned duplicate cursor: same");
    // Every other source still built.
    assert_eq!(call(&tk, "good_echo", json!({"text": "ok"})).await.output, "ok");
    tk.close().await;
    accepted.abort();
}

#[tokio::test]
async fn malformed_mcp_json_is_a_typed_error_naming_file_and_server() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"ok": {"command": ["x"]}, "broken": {"command": 7}}}"#,
    )
    .unwrap();
    let start = Instant::now();
    let err = McpConfig::from_file(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "MCP config {}: server \"broken\": \"command\" must be an array of strings or a string",
            path.display()
        )
    );
    std::fs::write(&path, "{ not json").unwrap();
    let err = McpConfig::from_file(&path).unwrap_err();
    assert!(
        matches!(&err, McpError::Json { file, .. } if *file == path.display().to_string()),
        "{err}"
    );
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn parent_cancellation_aborts_the_whole_load() {
    let mut servers = stdio_server("good", &[], json!({}));
    servers["mute"] = json!({"command": [TESTSERVER, "hang-init"], "timeout": 30000});
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let cfg = McpConfig::from_value(&json!({ "mcpServers": servers })).unwrap();
    let start = Instant::now();
    let err = toolnexus::mcp::load(&cfg, LoadOptions::default().cancel(cancel))
        .await
        .unwrap_err();
    assert_eq!(err, McpError::Cancelled);
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
}

#[tokio::test]
async fn streamable_http_with_expanded_headers() {
    let server = HttpServer::start();
    // SAFETY: set once, read only by this test's connect.
    unsafe { std::env::set_var("TNX_MCP_TEST_TOKEN", "tok-123") };
    let servers =
        json!({"remote": {"url": server.url, "headers": {"Authorization": "Bearer ${TNX_MCP_TEST_TOKEN}"}}});
    let tk = toolkit_of(servers).await;
    assert_connected(&tk, "remote");
    assert_eq!(tk.len(), 15);
    assert_eq!(
        call(&tk, "remote_header", json!({"name": "authorization"}))
            .await
            .output,
        "Bearer tok-123"
    );
    let r = call(&tk, "remote_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(r.output, r#"{"sum":3.0,"inputs":[1.0,2.0]}"#);
    assert!(!format!("{:?}", tk.mcp_status()).contains("tok-123"));
    tk.close().await;
}

/// A loopback streamable-HTTP peer that initializes a session, lists one tool, and then
/// answers every further request with `404` (the session expired). It counts `initialize`s.
async fn expiring_server() -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let inits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&inits);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            let _ = sock.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let mut chunk = [0u8; 8192];
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    let Some(head_end) = text.find("\r\n\r\n") else {
                        continue;
                    };
                    let len = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() < head_end + 4 + len {
                        continue;
                    }
                    let body: Value =
                        serde_json::from_slice(&buf[head_end + 4..head_end + 4 + len]).unwrap_or(Value::Null);
                    let method = text.split(' ').next().unwrap_or("").to_owned();
                    buf.drain(..head_end + 4 + len);
                    let reply = |status: &str, body: &str, extra: &str| {
                        format!(
                            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    if body["method"] == "initialize" {
                        counter.fetch_add(1, Ordering::SeqCst);
                    }
                    let response = match (method.as_str(), body["method"].as_str()) {
                        ("POST", Some("initialize")) => reply(
                            "200 OK",
                            &json!({"jsonrpc": "2.0", "id": body["id"], "result": {"protocolVersion": "2025-06-18",
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "expiring", "version": "1"}}}).to_string(),
                            "mcp-session-id: s-1\r\n",
                        ),
                        ("POST", Some("tools/list")) => reply(
                            "200 OK",
                            &json!({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": [
                                {"name": "echo", "inputSchema": {"type": "object"}}]}}).to_string(),
                            "",
                        ),
                        ("POST", Some(m)) if m.starts_with("notifications/") => reply("202 Accepted", "", ""),
                        ("GET", _) => reply("405 Method Not Allowed", "", ""),
                        _ => reply("404 Not Found", "", ""),
                    };
                    if sock.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, inits)
}

#[tokio::test]
async fn an_expired_session_404_reinitializes_once_then_fails_the_call() {
    let (url, inits) = expiring_server().await;
    let tk = toolkit_of(json!({"exp": {"url": url, "timeout": 3000}})).await;
    assert_connected(&tk, "exp");
    assert_eq!(inits.load(Ordering::SeqCst), 1);
    let r = call(&tk, "exp_echo", json!({})).await;
    // A server that 404s the new session too: one re-initialize, then the call fails.
    assert!(r.is_error, "{r:?}");
    assert!(
        r.output.to_lowercase().contains("session expired"),
        "{}",
        r.output
    );
    assert_eq!(inits.load(Ordering::SeqCst), 2);
    tk.close().await;
}

#[tokio::test]
async fn elicitation_is_bridged_through_wait_for() {
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let record = seen.clone();
    let wait_for: WaitFor = Arc::new(move |request: Request| {
        record.lock().unwrap().push(request.clone());
        Box::pin(async move {
            if request.kind == "input" {
                Answer {
                    id: request.id,
                    ok: true,
                    data: Some(json!({"city": "Chennai"})),
                    reason: None,
                }
            } else {
                Answer::declined(request.id, AnswerReason::Declined)
            }
        })
    });
    let opts = LoadOptions::default().wait_for(wait_for);
    let tk = toolkit_with(stdio_server("e", &[], json!({})), opts).await;
    let r = call(&tk, "e_ask", json!({})).await;
    assert_eq!(r.output, r#"{"action":"accept","content":{"city":"Chennai"}}"#);
    let r = call(&tk, "e_login", json!({})).await;
    assert_eq!(r.output, r#"{"action":"decline"}"#);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].kind.as_str(), seen[0].prompt.as_str()),
        ("input", "Which city?")
    );
    assert_eq!(
        seen[0].data.as_ref().unwrap()["schema"],
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    );
    assert_eq!(seen[1].kind, "authorization");
    assert_eq!(seen[1].url.as_deref(), Some("https://login.example/authorize"));
    assert!(seen[1].data.is_none());
    tk.close().await;

    // Without a wait_for the capability is not advertised, so the server never elicits.
    let tk = toolkit_of(stdio_server("n", &[], json!({}))).await;
    assert_eq!(
        call(&tk, "n_ask", json!({})).await.output,
        "elicitation not advertised"
    );
    tk.close().await;
}

#[tokio::test]
async fn inventory_lists_unfiltered_and_disconnects() {
    let mut servers = stdio_server("inv", &["--page-size", "5"], json!({"tools": {"echo": true}}));
    servers["off"] = json!({"command": ["x"], "disabled": true});
    servers["bad"] = json!({"command": ["/nonexistent/x"]});
    let cfg = McpConfig::from_value(&json!({ "servers": servers })).unwrap();
    let inv = list_mcp_tools(&cfg, CancellationToken::new()).await.unwrap();
    let names: Vec<&str> = inv.tools["inv"].iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 15);
    assert!(
        names.contains(&"weird.name/with:chars") && names.contains(&"hang"),
        "{names:?}"
    );
    assert_eq!(inv.status["inv"], McpStatus::Connected);
    assert_eq!(inv.status["off"], McpStatus::Disabled);
    assert_eq!(inv.status["bad"].as_str(), "failed");
    let order: Vec<&str> = inv.status.keys().map(String::as_str).collect();
    assert_eq!(order, ["inv", "off", "bad"]);
    assert!(!inv.tools.contains_key("bad"));
}

/// `mcp-testserver bench`, the benchmarks' MCP peer: the three tools and answers of the other
/// ports' `mcp_server.py`, over stdio.
#[tokio::test]
async fn the_bench_server_answers_like_the_other_ports() {
    let tk = toolkit_of(json!({"bench": {"command": [TESTSERVER, "bench"]}})).await;
    assert_connected(&tk, "bench");
    assert_eq!(tk.tool_names(), ["bench_add", "bench_echo", "bench_get_weather"]);
    let weather = call(&tk, "bench_get_weather", json!({"city": "Paris"})).await;
    assert_eq!(weather.output, "The weather in Paris is Sunny, 22C.");
    assert_eq!(call(&tk, "bench_add", json!({"a": 2, "b": 2})).await.output, "4");
    assert_eq!(call(&tk, "bench_echo", json!({"text": "hi"})).await.output, "hi");
    tk.close().await;
}
