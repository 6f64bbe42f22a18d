//! Who may call `serve`, and how much any caller may hold: the Origin and Host checks, the
//! bearer token, the refusal to serve the network unauthenticated, the dangerous tools left
//! out, the connection cap and timeouts, the body limit, one listener for MCP and A2A, and
//! the one log line per request. Everything over real HTTP on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolnexus::client::{Client, Generation};
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::serve::{A2aProfile, AuthToken, Limits, RequestEvent, ServeHandle, ServeOptions, serve};
use toolnexus::{Tool, ToolResult, Toolkit, a2a::A2aConfig};

/// How long any single wait in these tests may take before the test fails.
const BOUND: Duration = Duration::from_secs(20);

fn toolkit() -> Toolkit {
    Toolkit::new([
        Tool::new("echo", |args: Value, _| async move {
            ToolResult::success(args["text"].as_str().unwrap_or_default())
        }),
        Tool::new("nope", |_, _| async { ToolResult::failure("no such row") }),
    ])
}

fn echo_client() -> Client {
    Client::in_process("echo", |_| async { Ok(Generation::text("done")) })
        .build()
        .unwrap()
}

/// Both profiles on one listener, with `options` for the rest.
async fn both(options: ServeOptions) -> ServeHandle {
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        a2a: Some(A2aProfile::new(
            echo_client(),
            A2aConfig {
                name: Some("guarded".into()),
                ..A2aConfig::default()
            },
        )),
        ..options
    };
    serve(&toolkit(), "127.0.0.1:0", options).await.unwrap()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// One HTTP/1.1 request written by hand (so any `Host` can be sent), answered and closed:
/// the status, the headers (lower-cased names) and the body.
async fn raw(addr: SocketAddr, head: &str, body: &str) -> (u16, Vec<(String, String)>, String) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(BOUND, tcp.read_to_end(&mut reply))
        .await
        .expect("the server answered in time")
        .unwrap();
    let reply = String::from_utf8(reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// `POST path` with JSON, on the server's own Host, plus `extra` header lines.
async fn post(
    handle: &ServeHandle,
    path: &str,
    extra: &str,
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let addr = handle.addr();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
    );
    if !extra.is_empty() {
        head.push_str("\r\n");
        head.push_str(extra);
    }
    raw(addr, &head, body).await
}

/// The JSON-RPC reply in an MCP answer: the body itself, or the event of a stateful
/// session's event stream that carries it.
fn rpc_reply(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC reply in {body:?}"))
    })
}

/// Open an MCP session (`initialize`, then `notifications/initialized`) with `extra` header
/// lines, and return the header line that names it.
async fn mcp_session(handle: &ServeHandle, extra: &str) -> String {
    let (status, headers, body) = post(handle, "/mcp", extra, INITIALIZE).await;
    assert_eq!(status, 200, "{body}");
    let id = header(&headers, "mcp-session-id").expect("a session id");
    let session = format!("Mcp-Session-Id: {id}");
    let both = if extra.is_empty() {
        session.clone()
    } else {
        format!("{extra}\r\n{session}")
    };
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(handle, "/mcp", &both, initialized).await.0, 202);
    both
}

const SEND: &str = r#"{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}"#;

#[tokio::test]
async fn a_foreign_origin_is_refused_on_every_profile() {
    let handle = both(ServeOptions {
        allowed_origins: vec!["http://localhost:6274".into()],
        ..ServeOptions::default()
    })
    .await;
    let evil = "Origin: http://evil.example";
    let (status, _, body) = post(&handle, "/mcp", evil, INITIALIZE).await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        r#"forbidden: Origin "http://evil.example" is not allowed (allow it with allowed_origins)"#
    );
    let (status, _, body) = post(&handle, "/", evil, SEND).await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        r#"forbidden: Origin "http://evil.example" is not allowed (allow it with allowed_origins)"#
    );
    // The task was never submitted: the A2A profile did not run.
    assert_eq!(handle.a2a().unwrap().running(), 0);
    let (status, _, _) = post(&handle, "/", "Origin: null", SEND).await;
    assert_eq!(status, 403);

    // No Origin (a non-browser client), the server's own origin, a configured one: served.
    let (status, _, body) = post(&handle, "/mcp", "", INITIALIZE).await;
    assert_eq!(status, 200, "{body}");
    let own = format!("Origin: http://{}", handle.addr());
    assert_eq!(post(&handle, "/mcp", &own, INITIALIZE).await.0, 200);
    let inspector = "Origin: http://localhost:6274";
    assert_eq!(post(&handle, "/mcp", inspector, INITIALIZE).await.0, 200);
    let (status, _, body) = post(&handle, "/", inspector, SEND).await;
    assert_eq!(status, 200);
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["result"]["status"]["state"], "submitted");
    handle.stop().await;
}

#[tokio::test]
async fn a_host_that_is_not_this_server_is_refused() {
    let handle = both(ServeOptions {
        allowed_hosts: vec!["agents.internal".into()],
        ..ServeOptions::default()
    })
    .await;
    let addr = handle.addr();
    let head = |host: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
        )
    };
    let (status, _, body) = raw(addr, &head("evil.example"), INITIALIZE).await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        r#"forbidden: Host "evil.example" is not a name of this server (allow it with allowed_hosts)"#
    );
    // The card too: every route is guarded.
    let (status, _, _) = raw(
        addr,
        "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: rebind.evil.example:80",
        "",
    )
    .await;
    assert_eq!(status, 403);
    for host in [
        "agents.internal:9000".to_owned(),
        "localhost".to_owned(),
        addr.to_string(),
        "10.0.0.7:8080".to_owned(),
    ] {
        let (status, _, body) = raw(addr, &head(&host), INITIALIZE).await;
        assert_eq!(status, 200, "{host}: {body}");
    }
    handle.stop().await;
}

#[tokio::test]
async fn a_bearer_token_guards_every_route() {
    let handle = both(ServeOptions {
        auth_token: Some(AuthToken::new("correct horse battery staple")),
        ..ServeOptions::default()
    })
    .await;
    let (status, headers, body) = post(&handle, "/mcp", "", INITIALIZE).await;
    assert_eq!(status, 401);
    assert_eq!(header(&headers, "www-authenticate"), Some("Bearer"));
    assert_eq!(
        body,
        "unauthorized: this server needs an Authorization: Bearer <token> header"
    );
    let wrong = "Authorization: Bearer correct horse battery stapler";
    let (status, headers, body) = post(&handle, "/", wrong, SEND).await;
    assert_eq!(status, 401);
    assert_eq!(
        header(&headers, "www-authenticate"),
        Some(r#"Bearer error="invalid_token""#)
    );
    assert_eq!(body, "unauthorized: the bearer token is not valid");
    let (status, _, _) = raw(
        handle.addr(),
        &format!(
            "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {}\r\nAuthorization: Basic dXNlcjpwdw==",
            handle.addr()
        ),
        "",
    )
    .await;
    assert_eq!(status, 401);

    let right = "Authorization: bearer correct horse battery staple";
    let (status, _, body) = post(&handle, "/mcp", right, INITIALIZE).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(rpc_reply(&body)["result"]["serverInfo"]["name"], "toolnexus");
    let (status, _, card) = raw(
        handle.addr(),
        &format!(
            "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {}\r\n{right}",
            handle.addr()
        ),
        "",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&card).unwrap()["name"], "guarded");
    handle.stop().await;
}

#[tokio::test]
async fn the_network_is_not_served_without_a_token_unless_asked() {
    let err = serve(&toolkit(), "0.0.0.0:0", ServeOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "refusing to serve on 0.0.0.0:0 without authentication: a non-loopback address is reachable from other machines; set an auth token, or set insecure_no_auth to serve without one"
    );
    let err = serve(
        &toolkit(),
        "127.0.0.1:0",
        ServeOptions {
            auth_token: Some(AuthToken::new("")),
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the auth token is empty: a server needs a secret no one can guess"
    );
    let err = serve(
        &toolkit(),
        "127.0.0.1:0",
        ServeOptions {
            allowed_origins: vec!["app.example".into()],
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"serve options: allowed origin "app.example" is not scheme://host[:port]"#
    );

    // With a token, or the explicit opt-out, it starts (and loopback still reaches it).
    for options in [
        ServeOptions {
            auth_token: Some(AuthToken::new("t0ken")),
            mcp: Some(McpServeConfig::default()),
            ..ServeOptions::default()
        },
        ServeOptions {
            insecure_no_auth: true,
            mcp: Some(McpServeConfig::default()),
            ..ServeOptions::default()
        },
    ] {
        let handle = serve(&toolkit(), "0.0.0.0:0", options).await.unwrap();
        assert!(handle.url().starts_with("http://127.0.0.1:"));
        let (status, _, _) = post(&handle, "/mcp", "Authorization: Bearer t0ken", INITIALIZE).await;
        assert_eq!(status, 200);
        handle.stop().await;
    }
}

async fn listed(handle: &ServeHandle) -> Vec<String> {
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let session = mcp_session(handle, "").await;
    let (status, _, body) = post(handle, "/mcp", &session, list).await;
    assert_eq!(status, 200);
    let reply = rpc_reply(&body);
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tools_that_run_commands_or_change_files_are_served_only_on_request() {
    let tk = Toolkit::new(toolnexus::builtin::all());
    let mcp = || Some(McpServeConfig::default());
    let handle = serve(
        &tk,
        "127.0.0.1:0",
        ServeOptions {
            mcp: mcp(),
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(handle.withheld(), ["bash", "write", "edit", "apply_patch"]);
    let safe = ["glob", "grep", "question", "read", "todowrite", "webfetch"];
    assert_eq!(handle.mcp_tools(), safe);
    assert_eq!(listed(&handle).await, safe);
    // Calling one by name is an unknown tool, not a shell.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"id"}}}"#;
    let session = mcp_session(&handle, "").await;
    let (_, _, body) = post(&handle, "/mcp", &session, call).await;
    assert_eq!(rpc_reply(&body)["error"]["message"], "Unknown tool: bash");
    handle.stop().await;

    let handle = serve(
        &tk,
        "127.0.0.1:0",
        ServeOptions {
            mcp: mcp(),
            expose_dangerous: true,
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap();
    assert!(handle.withheld().is_empty());
    assert_eq!(listed(&handle).await.len(), 10);
    handle.stop().await;
}

/// A server on tight limits, MCP only.
async fn limited(limits: Limits) -> ServeHandle {
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        limits,
        ..ServeOptions::default()
    };
    serve(&toolkit(), "127.0.0.1:0", options).await.unwrap()
}

/// Whether the server closed `tcp` (EOF or reset) within `within`.
async fn closed_within(tcp: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(within, tcp.read(&mut buf)).await {
        Ok(Ok(0)) | Ok(Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

#[tokio::test]
async fn idle_sockets_do_not_starve_a_real_client() {
    // Long timeouts: only the cap's eviction of idle connections can let the client in.
    let handle = limited(Limits {
        max_connections: 8,
        idle_timeout: Duration::from_secs(120),
        header_read_timeout: Duration::from_secs(120),
        ..Limits::default()
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(handle.addr()).await.unwrap());
    }
    let reply = tokio::time::timeout(BOUND, post(&handle, "/mcp", "", INITIALIZE))
        .await
        .expect("a real client is served while 300 idle sockets are open");
    assert_eq!(reply.0, 200, "{}", reply.2);
    // All but the newest few idle sockets were closed to make room.
    let mut closed = 0;
    for tcp in &mut idle {
        if closed_within(tcp, Duration::from_millis(50)).await {
            closed += 1;
        }
    }
    assert!(closed >= 300 - 8, "only {closed} of 300 idle sockets were closed");
    handle.stop().await;
}

#[tokio::test]
async fn a_slow_header_sender_and_a_silent_socket_are_cut_off() {
    let handle = limited(Limits {
        header_read_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(600),
        ..Limits::default()
    })
    .await;
    // One header line every 100 ms: never a complete head.
    let mut slow = TcpStream::connect(handle.addr()).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\n").await.unwrap();
    let mut cut = false;
    for i in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if slow
            .write_all(format!("X-Slow-{i}: 1\r\n").as_bytes())
            .await
            .is_err()
            || closed_within(&mut slow, Duration::from_millis(1)).await
        {
            cut = true;
            break;
        }
    }
    assert!(cut, "the slow sender was still connected after 10 s");
    // A socket that never sends is closed after the idle timeout.
    let mut silent = TcpStream::connect(handle.addr()).await.unwrap();
    assert!(closed_within(&mut silent, BOUND).await);
    // And the server still serves.
    assert_eq!(post(&handle, "/mcp", "", INITIALIZE).await.0, 200);
    handle.stop().await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_and_a_stalled_body_408() {
    let handle = limited(Limits {
        max_body_bytes: 1024,
        body_read_timeout: Duration::from_millis(300),
        ..Limits::default()
    })
    .await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(2000)
    );
    let (status, _, body) = post(&handle, "/mcp", "", &big).await;
    assert_eq!(status, 413);
    assert_eq!(body, "the request body exceeds the 1024-byte limit");

    // Chunked, no declared length: cut when the limit is crossed.
    let mut tcp = TcpStream::connect(handle.addr()).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        handle.addr()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len()).as_bytes())
        .await
        .unwrap();
    let mut reply = String::new();
    tokio::time::timeout(BOUND, tcp.read_to_string(&mut reply))
        .await
        .unwrap()
        .unwrap();
    assert!(reply.starts_with("HTTP/1.1 413 "), "{reply}");

    // A declared body that never arrives.
    let mut tcp = TcpStream::connect(handle.addr()).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{\"jsonrpc\"",
        handle.addr()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut reply = String::new();
    tokio::time::timeout(BOUND, tcp.read_to_string(&mut reply))
        .await
        .unwrap()
        .unwrap();
    assert!(reply.starts_with("HTTP/1.1 408 "), "{reply}");
    assert!(
        reply.ends_with("the request body did not arrive within 300 ms"),
        "{reply}"
    );
    handle.stop().await;
}

#[tokio::test]
async fn mcp_and_a2a_share_one_port_and_an_unconfigured_profile_is_404() {
    let handle = both(ServeOptions::default()).await;
    assert_eq!(handle.mcp_url(), Some(format!("{}/mcp", handle.url())));
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", handle.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["name"], "guarded");
    assert_eq!(card["url"], format!("{}/", handle.url()));
    assert_eq!(post(&handle, "/mcp", "", INITIALIZE).await.0, 200);
    let (status, _, body) = raw(
        handle.addr(),
        &format!("GET /elsewhere HTTP/1.1\r\nHost: {}", handle.addr()),
        "",
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (404, "not found: /elsewhere (no profile serves it)")
    );
    handle.stop().await;

    let mcp_only = limited(Limits::default()).await;
    assert!(mcp_only.a2a().is_none());
    let (status, _, _) = raw(
        mcp_only.addr(),
        &format!(
            "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {}",
            mcp_only.addr()
        ),
        "",
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(post(&mcp_only, "/", "", SEND).await.0, 404);
    mcp_only.stop().await;
}

#[tokio::test]
async fn each_request_is_logged_once_without_its_arguments() {
    let events: Arc<Mutex<Vec<RequestEvent>>> = Arc::default();
    let sink = events.clone();
    let handle = both(ServeOptions {
        auth_token: Some(AuthToken::new("tok")),
        on_request: Some(Arc::new(move |e: &RequestEvent| {
            sink.lock().unwrap().push(e.clone())
        })),
        ..ServeOptions::default()
    })
    .await;
    let auth = "Authorization: Bearer tok";
    let call = |name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"{name}","arguments":{{"text":"secret argument"}}}}}}"#
        )
    };
    let session = mcp_session(&handle, auth).await;
    assert_eq!(post(&handle, "/mcp", &session, &call("echo")).await.0, 200);
    assert_eq!(post(&handle, "/mcp", &session, &call("nope")).await.0, 200);
    assert_eq!(post(&handle, "/", auth, SEND).await.0, 200);
    assert_eq!(post(&handle, "/mcp", "", &call("echo")).await.0, 401);
    handle.stop().await;

    let events = events.lock().unwrap().clone();
    let lines: Vec<String> = events
        .iter()
        .map(|e| {
            let shown = e.to_string();
            let (head, ms) = shown.rsplit_once(' ').unwrap().0.rsplit_once(' ').unwrap();
            assert!(ms.ends_with("ms") && e.ms >= 0.0, "{shown}");
            format!("{head} {}", if e.is_error { "error" } else { "ok" })
        })
        .collect();
    assert_eq!(
        lines,
        [
            "POST /mcp initialize 200 ok",
            "POST /mcp notifications/initialized 202 ok",
            "POST /mcp tools/call echo 200 ok",
            "POST /mcp tools/call nope 200 error",
            "POST / SendMessage 200 ok",
            "POST /mcp 401 error",
        ]
    );
    assert!(events.iter().all(|e| !format!("{e:?}").contains("secret")));
}

/// A request without a body (`GET`, `DELETE`) on `/mcp`, with `extra` header lines.
async fn bodiless(handle: &ServeHandle, method: &str, extra: &str) -> (u16, String) {
    let addr = handle.addr();
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n{extra}"
    );
    let (status, _, body) = raw(addr, &head, "").await;
    (status, body)
}

#[tokio::test]
async fn mcp_sessions_are_guarded_ended_by_delete_capped_and_expired() {
    let mcp = McpServeConfig {
        max_sessions: 1,
        session_idle: Duration::from_millis(300),
        ..McpServeConfig::default()
    };
    let handle = serve(
        &toolkit(),
        "127.0.0.1:0",
        ServeOptions {
            mcp: Some(mcp),
            auth_token: Some(AuthToken::new("tok")),
            allowed_origins: vec!["http://localhost:6274".into()],
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap();
    let auth = "Authorization: Bearer tok";
    let session = mcp_session(&handle, auth).await;
    let id_only = session.lines().last().unwrap().to_owned();
    // The session's stream and its end are guarded like every other request.
    for method in ["GET", "DELETE"] {
        assert_eq!(bodiless(&handle, method, &id_only).await.0, 401, "{method}");
        let evil = format!("{session}\r\nOrigin: http://evil.example");
        let (status, body) = bodiless(&handle, method, &evil).await;
        assert_eq!(status, 403, "{method}");
        assert_eq!(
            body,
            r#"forbidden: Origin "http://evil.example" is not allowed (allow it with allowed_origins)"#
        );
    }
    // One session is the cap: a second initialize is refused, and says why.
    let (status, headers, body) = post(&handle, "/mcp", auth, INITIALIZE).await;
    assert_eq!(status, 503);
    assert_eq!(header(&headers, "retry-after"), Some("5"));
    assert_eq!(
        body,
        "this MCP server has 1 sessions open, its limit (max_sessions = 1); retry later, or end an unused session with DELETE"
    );
    // Only an initialize is capped: another request without a session is rmcp's to refuse.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = post(&handle, "/mcp", auth, list).await;
    assert_eq!(status, 400, "{body}");
    // DELETE ends it: its id is then unknown, and the place is free again.
    assert_eq!(bodiless(&handle, "DELETE", &session).await.0, 204);
    assert_eq!(post(&handle, "/mcp", &session, list).await.0, 404);
    let session = mcp_session(&handle, auth).await;
    let (status, _, body) = post(&handle, "/mcp", &session, list).await;
    assert_eq!(status, 200);
    assert_eq!(rpc_reply(&body)["result"]["tools"].as_array().unwrap().len(), 2);
    // Left idle past `session_idle`, the session is dropped (bounded wait: the session ends
    // 300 ms after its last request; each probe here is a request with no session id).
    let mut expired = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (status, _, _) = post(&handle, "/mcp", auth, INITIALIZE).await;
        if status == 200 {
            expired = true;
            break;
        }
        assert_eq!(status, 503);
    }
    assert!(expired, "the idle session was never dropped");
    assert_eq!(post(&handle, "/mcp", &session, list).await.0, 404);
    handle.stop().await;
}
