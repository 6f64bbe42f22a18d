//! The cross-port benchmark: framework overhead of one fixed agent scenario, printed as one
//! JSON line so it can be compared side by side with the other toolnexus ports.
//!
//! ```sh
//! cargo run --release --example bench -- --mode mcp --runs 200 --warmup 20
//! cargo run --release --example bench -- --mode full --mock http://127.0.0.1:8900 --mcp-cmd "python3 mcp_server.py"
//! ```
//!
//! The model at `--mock` (OpenAI-compatible; default: the embedded `toolnexus-mock` in its
//! bench scenario) answers turn 1 with two parallel tool calls, `get_weather` and `add`
//! (matched by suffix against the advertised names), and turn 2 with a final answer.
//! `--mode native` takes both tools from `#[tool]` functions; `mcp` from the stdio MCP server
//! `--mcp-cmd` starts (default: this binary re-executed as the workspace's bench server);
//! `full` adds the skills under `examples/skills` and the built-in tools to `mcp`.
//! `init_ms` is the toolkit build (MCP spawn, initialize and listing included) plus the client;
//! the per-request figures are each one whole `run`. It runs on tokio's current-thread
//! runtime (one thread, like the Python and JS ports' event loops); `--runtime multi` runs it
//! on the multi-thread runtime instead, where each hop between tasks can be a thread wake-up.
//!
//! Output: `{"name","init_ms","tool_count","p50_ms","p95_ms","mean_ms","n","final_ok"}`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::{Value, json};
use toolnexus::client::Client;
use toolnexus::client::Style;
use toolnexus::{Toolkit, ToolkitOptions, tool, toolkit};
use toolnexus_mock::{BENCH_ANSWER, MockModel, Scenario};

const SERVE_MCP: &str = "--serve-mcp";
const QUESTION: &str = "What's the weather in Paris and what is 2+2?";

/// Get the current weather for a city.
#[tool]
fn get_weather(city: String) -> String {
    format!("The weather in {city} is Sunny, 22C.")
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

struct Args {
    mode: String,
    mock: Option<String>,
    mcp_cmd: Option<String>,
    runs: usize,
    warmup: usize,
    multi_thread: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        mode: "native".into(),
        mock: None,
        mcp_cmd: None,
        runs: 100,
        warmup: 10,
        multi_thread: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--mode" => args.mode = value()?,
            "--mock" => args.mock = Some(value()?),
            "--mcp-cmd" => args.mcp_cmd = Some(value()?),
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--warmup" => args.warmup = value()?.parse().map_err(|e| format!("--warmup: {e}"))?,
            "--runtime" => {
                args.multi_thread = match value()?.as_str() {
                    "current" => false,
                    "multi" => true,
                    other => return Err(format!("--runtime must be current or multi, not {other}")),
                }
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if !matches!(args.mode.as_str(), "native" | "mcp" | "full") {
        return Err(format!("--mode must be native, mcp or full, not {}", args.mode));
    }
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(SERVE_MCP) {
        toolnexus_testserver::bench::serve_stdio();
        return ExitCode::SUCCESS;
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bench: {e}");
            return ExitCode::from(2);
        }
    };
    let mut builder = if args.multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let rt = builder.enable_all().build().expect("a runtime");
    // The runs go in a spawned task, where an agent's work runs in a server (a request handler,
    // a job). On the multi-thread runtime that puts them on a worker, beside hyper's connection
    // tasks, rather than on the `block_on` thread that every wake-up would have to cross to.
    let work = async {
        tokio::spawn(bench(args))
            .await
            .map_err(Into::into)
            .and_then(|r| r)
    };
    match rt.block_on(work) {
        Ok(line) => {
            println!("{line}");
            // The line is printed either way; a wrong answer still fails the run.
            if line["final_ok"] == true {
                ExitCode::SUCCESS
            } else {
                eprintln!("bench: a run did not end with the expected answer and two good tool calls");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The `p`-th percentile (nearest rank) of sorted samples.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

async fn bench(args: Args) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    let _mock;
    let base_url = match &args.mock {
        Some(url) => url.clone(),
        None => {
            let mock = MockModel::start("127.0.0.1:0", Scenario::Bench).await?;
            let url = mock.base_url();
            _mock = mock;
            url
        }
    };
    let command: Vec<String> = match &args.mcp_cmd {
        Some(cmd) => cmd.split_whitespace().map(str::to_owned).collect(),
        None => vec![
            std::env::current_exe()?.display().to_string(),
            SERVE_MCP.to_owned(),
        ],
    };

    let t0 = Instant::now();
    let mut options = ToolkitOptions::default();
    options = match args.mode.as_str() {
        "native" => options
            .extra_tools(toolkit![get_weather, add].tools().cloned())
            .builtins(false),
        mode => {
            let mcp = json!({"mcpServers": {"bench": {"command": command, "timeout": 30000}}});
            let options = options.config(mcp);
            if mode == "full" {
                options.skills_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills"))
            } else {
                options.builtins(false)
            }
        }
    };
    let tk = Toolkit::build(options).await?;
    let client = Client::builder()
        .base_url(base_url)
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("sk-mock-not-a-real-key")
        .build()?;
    let init_ms = t0.elapsed().as_secs_f64() * 1e3;

    for _ in 0..args.warmup {
        client.run(QUESTION, &tk).await?;
    }
    let mut samples = Vec::with_capacity(args.runs);
    let mut final_ok = true;
    for _ in 0..args.runs {
        let t = Instant::now();
        let result = client.run(QUESTION, &tk).await?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        final_ok &= result.text == BENCH_ANSWER || args.mock.is_some() && !result.text.is_empty();
        final_ok &= result.tool_call_count == 2 && !result.tool_calls.iter().any(|c| c.is_error);
    }
    tk.close().await;
    samples.sort_by(f64::total_cmp);
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    Ok(json!({
        "name": format!("toolnexus-rust-{}", args.mode),
        "init_ms": round(init_ms),
        "tool_count": tk.len(),
        "p50_ms": round(percentile(&samples, 50.0)),
        "p95_ms": round(percentile(&samples, 95.0)),
        "mean_ms": round(mean),
        "n": samples.len(),
        "final_ok": final_ok,
    }))
}
