//! The latency one `ask` gains from a durable conversation store: N turns on the embedded
//! scripted model with each backend (`memory`, `file:`, `sqlite:`, and `postgres://` when
//! `TOOLNEXUS_PG_URL` is set), the backends taking turns so a busy machine slows them alike.
//! Prints one JSON line with p50 / p99 per backend and what each adds to `memory`'s.
//!
//! ```sh
//! cargo run --release --example store_bench -- --turns 2000 --warmup 100
//! ```
//!
//! Each conversation runs `--per-conversation` turns (default 5), so the figures mix the
//! first save (an insert) with later ones (a load, then a compare-and-set update of a
//! growing transcript). It exits non-zero when an answer is not the expected one.
//!
//! Output: `{"profile","turns","warmup","per_conversation","backends":[{"name","p50_ms",
//! "p99_ms","mean_ms","added_p50_ms","added_p99_ms"}]}`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::Toolkit;
use toolnexus::client::{Client, RunOptions, Style};
use toolnexus::store::{StoreUrl, Stores};
use toolnexus_mock::{MockModel, Scenario};

struct Args {
    turns: usize,
    warmup: usize,
    per_conversation: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        turns: 1000,
        warmup: 50,
        per_conversation: 5,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or(format!("{flag} needs a value"))?
            .parse::<usize>()
            .map_err(|e| format!("{flag}: {e}"))?;
        match flag.as_str() {
            "--turns" => args.turns = value.max(1),
            "--warmup" => args.warmup = value,
            "--per-conversation" => args.per_conversation = value.max(1),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

/// One backend: its name and a client whose conversations live there.
struct Backend {
    name: &'static str,
    client: Client,
    took: Vec<Duration>,
}

async fn backends(model: &MockModel, dir: &std::path::Path) -> Result<Vec<Backend>, String> {
    let mut urls = vec![
        ("memory", StoreUrl::Memory),
        ("file", StoreUrl::File(dir.join("files"))),
        ("sqlite", StoreUrl::Sqlite(dir.join("bench.db"))),
    ];
    if let Ok(pg) = std::env::var("TOOLNEXUS_PG_URL") {
        urls.push((
            "postgres",
            pg.parse().map_err(|e| format!("TOOLNEXUS_PG_URL: {e}"))?,
        ));
    }
    let mut all = Vec::new();
    for (name, url) in urls {
        let stores = Stores::open(&url).await.map_err(|e| e.to_string())?;
        let client = Client::builder()
            .base_url(model.base_url())
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("not-needed-for-the-mock")
            .store(stores.conversations)
            .build()
            .map_err(|e| e.to_string())?;
        all.push(Backend {
            name,
            client,
            took: Vec::new(),
        });
    }
    Ok(all)
}

/// The `q`-quantile (nearest rank) of sorted `xs`, in milliseconds.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

fn round3(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

async fn run(args: Args) -> Result<Value, String> {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner)
        .await
        .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut backends = backends(&model, dir.path()).await?;
    let tk = Toolkit::default();
    // Ids unique to this run: a PostgreSQL database may keep an earlier run's conversations.
    let run_id = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    for n in 0..args.warmup + args.turns {
        let conversation = format!("bench-{run_id}-{}", n / args.per_conversation);
        let text = format!("turn {}", n % args.per_conversation);
        for backend in &mut backends {
            let started = Instant::now();
            let answer = backend
                .client
                .ask(&text, &conversation, RunOptions::new(&tk))
                .await
                .map_err(|e| format!("{}: {e}", backend.name))?;
            let took = started.elapsed();
            if answer.text != format!("You said: {text}") {
                return Err(format!("{}: unexpected answer {:?}", backend.name, answer.text));
            }
            if n >= args.warmup {
                backend.took.push(took);
            }
        }
    }
    let mut rows = Vec::new();
    let mut memory = (0.0, 0.0);
    for backend in &mut backends {
        backend.took.sort_unstable();
        let (p50, p99) = (quantile_ms(&backend.took, 0.50), quantile_ms(&backend.took, 0.99));
        let mean = backend.took.iter().sum::<Duration>().as_secs_f64() * 1000.0 / backend.took.len() as f64;
        if backend.name == "memory" {
            memory = (p50, p99);
        }
        rows.push(json!({
            "name": backend.name,
            "p50_ms": round3(p50),
            "p99_ms": round3(p99),
            "mean_ms": round3(mean),
            "added_p50_ms": round3(p50 - memory.0),
            "added_p99_ms": round3(p99 - memory.1),
        }));
    }
    Ok(json!({
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "turns": args.turns,
        "warmup": args.warmup,
        "per_conversation": args.per_conversation,
        "backends": rows,
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let result = match parse_args() {
        Ok(args) => run(args).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("store_bench: {e}");
            ExitCode::FAILURE
        }
    }
}
