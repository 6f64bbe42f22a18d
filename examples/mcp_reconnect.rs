//! What a reconnect costs: a stdio MCP server is killed (SIGKILL) between calls, and the time
//! from the kill to the next successful call through the toolkit is measured — the
//! toolkit notices the lost connection, restarts the server, initializes and lists it again.
//!
//! ```sh
//! cargo run --release --example mcp_reconnect -- --runs 20
//! ```
//!
//! The server is this binary re-executed as the workspace's bench MCP server; it writes its
//! pid to the file named by `TOOLNEXUS_RECONNECT_PID` so the example can kill it.
//!
//! Output, one JSON line: `{"name","n","p50_ms","min_ms","max_ms","failed_calls"}`, where
//! `failed_calls` counts calls that failed on the way (expected 0: the example waits until
//! the killed process has exited, as a crash long before the next call would have). Exits
//! non-zero unless every run ended with a successful call on a new server process.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::mcp::{LoadOptions, McpConfig, load};
use toolnexus::{ToolContext, Toolkit};

const SERVE_MCP: &str = "--serve-mcp";
const PID_FILE: &str = "TOOLNEXUS_RECONNECT_PID";

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(SERVE_MCP) {
        if let Some(file) = std::env::var_os(PID_FILE) {
            std::fs::write(file, std::process::id().to_string()).expect("write the pid file");
        }
        toolnexus_testserver::bench::serve_stdio();
        return ExitCode::SUCCESS;
    }
    let runs = match std::env::args().skip_while(|a| a != "--runs").nth(1) {
        None => 10,
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("mcp_reconnect: --runs must be a positive number, not {n}");
                return ExitCode::from(2);
            }
        },
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match rt.block_on(bench(runs)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_reconnect: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn bench(runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("toolnexus-reconnect-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let pid_file = dir.join("server.pid");
    let exe = std::env::current_exe()?.display().to_string();
    let cfg = McpConfig::from_value(&json!({"mcpServers": {"bench": {
        "command": [exe, SERVE_MCP],
        "environment": {PID_FILE: pid_file.display().to_string()},
        "timeout": 10000
    }}}))?;
    let source = load(&cfg, LoadOptions::default()).await?;
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    let outcome = measure(&tk, &pid_file, runs).await;
    tk.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    let (mut ms, failed_calls) = outcome?;
    ms.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({
            "name": "rust-mcp-reconnect",
            "n": ms.len(),
            "p50_ms": round(ms[ms.len() / 2]),
            "min_ms": round(ms[0]),
            "max_ms": round(ms[ms.len() - 1]),
            "failed_calls": failed_calls,
        })
    );
    Ok(())
}

/// Kill the server `runs` times; the milliseconds from each kill to the next successful call,
/// and how many calls failed on the way.
async fn measure(tk: &Toolkit, pid_file: &Path, runs: usize) -> Result<(Vec<f64>, usize), String> {
    let mut ms = Vec::with_capacity(runs);
    let mut failed_calls = 0;
    for _ in 0..runs {
        let pid = read_pid(pid_file)?;
        let killed = Instant::now();
        let status = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .map_err(|e| format!("kill: {e}"))?;
        if !status.success() {
            return Err(format!("kill -9 {pid} failed"));
        }
        // A crash is usually over before the next call: wait (bounded) for the process to
        // have exited, as the kernel reports it, so the figure is the restart alone.
        for _ in 0..1000 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            if state.is_none_or(|s| s.starts_with(['Z', 'X'])) {
                break;
            }
            tokio::time::sleep(Duration::from_micros(100)).await;
        }
        // Bounded: three failed calls in a row mean the restart does not work.
        let mut attempts = 0;
        loop {
            let r = tk
                .execute("bench_add", json!({"a": 2, "b": 2}), ToolContext::default())
                .await;
            if !r.is_error && r.output == "4" {
                break;
            }
            failed_calls += 1;
            attempts += 1;
            if attempts == 3 {
                return Err(format!("no successful call after the kill: {}", r.output));
            }
        }
        ms.push(killed.elapsed().as_secs_f64() * 1000.0);
        if read_pid(pid_file)? == pid {
            return Err("the call succeeded on the killed server".into());
        }
        // Let the dead process be reaped before the next round.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok((ms, failed_calls))
}

fn read_pid(file: &Path) -> Result<String, String> {
    std::fs::read_to_string(file)
        .map(|p| p.trim().to_owned())
        .map_err(|e| format!("read {}: {e}", file.display()))
}

fn round(ms: f64) -> f64 {
    (ms * 100.0).round() / 100.0
}
