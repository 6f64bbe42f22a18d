//! MCP client overhead, printed as one JSON object (`cargo bench --bench mcp`).
//!
//! Each figure is compared with a minimal hand-written JSON-RPC client doing the same
//! protocol work against the same server binary, so what is left is our overhead:
//! - build: `load` of one stdio server (spawn + initialize + paginated list) vs the raw client;
//! - call: one `tools/call` round trip over stdio vs the raw client;
//! - http: per-call latency over streamable HTTP, early calls vs late calls (flatness);
//! - gateway: one `tools/call` to a toolkit served by `serve`, on a stateful session vs
//!   stateless (our client both times; the served tool answers at once).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::mcp::{LoadOptions, McpConfig, load};
use toolnexus::serve::{ServeOptions, serve};
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-testserver");
const BUILDS: usize = 30;
const CALLS: usize = 2_000;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn us(d: Duration) -> f64 {
    (d.as_nanos() as f64 / 1000.0 * 10.0).round() / 10.0
}

/// The raw client: line-delimited JSON-RPC over the child's stdio.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Raw {
    fn spawn() -> Self {
        let mut child = Command::new(SERVER)
            .arg("stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            id: 0,
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}).to_string();
        writeln!(self.stdin, "{line}").unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap()
    }

    fn handshake_and_list(&mut self) {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        );
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let page = self.request("tools/list", params);
            match page["result"]["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn bench_build(cfg: &McpConfig) -> (Duration, Duration) {
    let mut ours = Vec::new();
    let mut raw = Vec::new();
    for _ in 0..BUILDS {
        let t = Instant::now();
        let source = load(cfg, LoadOptions::default()).await.unwrap();
        ours.push(t.elapsed());
        assert_eq!(source.tools().len(), 15);
        source.close().await;

        let t = Instant::now();
        let mut r = Raw::spawn();
        r.handshake_and_list();
        raw.push(t.elapsed());
    }
    (median(ours), median(raw))
}

async fn bench_calls(tk: &Toolkit, name: &str) -> Vec<Duration> {
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let t = Instant::now();
        let r = tk
            .execute(name, json!({"text": i.to_string()}), ToolContext::default())
            .await;
        times.push(t.elapsed());
        assert!(!r.is_error, "{r:?}");
    }
    times
}

fn raw_calls() -> Duration {
    let mut r = Raw::spawn();
    r.handshake_and_list();
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let t = Instant::now();
        let reply = r.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": i.to_string()}}),
        );
        times.push(t.elapsed());
        assert!(reply["result"].is_object());
    }
    median(times)
}

/// The median `tools/call` round trip to an echo tool served with `mcp`, through our client.
async fn served_calls(mcp: McpServeConfig) -> Duration {
    let served = Toolkit::new([Tool::new("echo", |args: Value, _| async move {
        ToolResult::success(args["text"].as_str().unwrap_or_default())
    })]);
    let options = ServeOptions {
        mcp: Some(mcp),
        ..ServeOptions::default()
    };
    let handle = serve(&served, "127.0.0.1:0", options).await.unwrap();
    let cfg =
        McpConfig::from_value(&json!({"mcpServers": {"g": {"url": handle.mcp_url().unwrap()}}})).unwrap();
    let source = load(&cfg, LoadOptions::default()).await.unwrap();
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    let times = bench_calls(&tk, "g_echo").await;
    tk.close().await;
    handle.stop().await;
    median(times)
}

#[tokio::main]
async fn main() {
    let cfg = McpConfig::from_value(&json!({"mcpServers": {"b": {"command": [SERVER, "stdio"]}}})).unwrap();
    let (build_ours, build_raw) = bench_build(&cfg).await;

    let source = load(&cfg, LoadOptions::default()).await.unwrap();
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    let call_ours = median(bench_calls(&tk, "b_echo").await);
    let call_raw = raw_calls();
    tk.close().await;

    let mut http = Command::new(SERVER)
        .args(["http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(http.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().trim_start_matches("listening ").to_owned();
    let cfg = McpConfig::from_value(&json!({"mcpServers": {"h": {"url": url}}})).unwrap();
    let source = load(&cfg, LoadOptions::default()).await.unwrap();
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    let times = bench_calls(&tk, "h_echo").await;
    tk.close().await;
    let _ = http.kill();
    let _ = http.wait();
    let early = median(times[..200].to_vec());
    let late = median(times[times.len() - 200..].to_vec());

    // Alternated, so drift on this shared machine hits both alike.
    let (mut stateful, mut stateless) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        stateful.push(served_calls(McpServeConfig::default()).await);
        stateless.push(
            served_calls(McpServeConfig {
                stateless: true,
                ..McpServeConfig::default()
            })
            .await,
        );
    }
    let (stateful, stateless) = (median(stateful), median(stateless));

    let report = json!({
        "build_stdio_median_us": us(build_ours),
        "build_raw_client_median_us": us(build_raw),
        "build_overhead_us": us(build_ours.saturating_sub(build_raw)),
        "call_stdio_median_us": us(call_ours),
        "call_raw_client_median_us": us(call_raw),
        "call_overhead_us": us(call_ours.saturating_sub(call_raw)),
        "http_call_first200_median_us": us(early),
        "http_call_last200_median_us": us(late),
        "http_calls": CALLS,
        "gateway_call_stateful_median_us": us(stateful),
        "gateway_call_stateless_median_us": us(stateless),
        "gateway_session_cost_us": ((us(stateful) - us(stateless)) * 10.0).round() / 10.0,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
