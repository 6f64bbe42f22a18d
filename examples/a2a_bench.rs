//! A load generator for any A2A server that speaks the SPEC's subset (§7B): ours
//! (`toolnexus serve --a2a`) or another port's. Each task is one `SendMessage` then a
//! `GetTask` every `--poll-ms` until the task ends; `--concurrency` tasks are in flight at
//! once. Prints one JSON line.
//!
//! ```sh
//! cargo run --release --example a2a_bench -- --url http://127.0.0.1:8766 --tasks 1000 --concurrency 32
//! ```
//!
//! `--url` may list several servers, comma-separated (replicas sharing one store): task `n`
//! goes to the `n % len`-th.
//!
//! `--blocking` asks `SendMessage` to answer once the task ends (`configuration.blocking`,
//! which our server honours; a server that answers `submitted` anyway is polled as usual).
//!
//! Output: `{"name","tasks","concurrency","poll_ms","p50_ms","p95_ms","throughput_per_s","failed","first_text"}`,
//! where a task's time runs from sending `SendMessage` to reading `completed`. It exits
//! non-zero when any task does not complete, or when `--expect` is given and a result
//! differs from it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Args {
    urls: Vec<String>,
    name: String,
    tasks: usize,
    concurrency: usize,
    warmup: usize,
    poll: Duration,
    prompt: String,
    expect: Option<String>,
    blocking: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        urls: Vec::new(),
        name: "a2a".into(),
        tasks: 200,
        concurrency: 1,
        warmup: 20,
        poll: Duration::from_millis(1),
        prompt: "hello agent".into(),
        expect: None,
        blocking: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--url" => {
                args.urls = value()?
                    .split(',')
                    .map(|u| u.trim().trim_end_matches('/').to_owned())
                    .filter(|u| !u.is_empty())
                    .collect();
            }
            "--name" => args.name = value()?,
            "--tasks" => args.tasks = number(value()?)?,
            "--concurrency" => args.concurrency = number(value()?)?.max(1),
            "--warmup" => args.warmup = number(value()?)?,
            "--poll-ms" => args.poll = Duration::from_millis(number(value()?)? as u64),
            "--prompt" => args.prompt = value()?,
            "--expect" => args.expect = Some(value()?),
            "--blocking" => args.blocking = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.urls.is_empty() {
        return Err("--url is required (the A2A server's base URL)".into());
    }
    Ok(args)
}

/// One task, submit to completion: its wall time and its result text.
async fn one_task(http: &reqwest::Client, args: &Args, n: usize) -> Result<(Duration, String), String> {
    let started = Instant::now();
    let url = &args.urls[n % args.urls.len()];
    let rpc = |method: &'static str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params});
        async move {
            let reply: Value = http
                .post(format!("{url}/"))
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?
                .json()
                .await
                .map_err(|e| e.to_string())?;
            match reply.get("result") {
                Some(result) => Ok(result.clone()),
                None => Err(format!("{method}: {}", reply["error"])),
            }
        }
    };
    let message = json!({"message": {"role": "user", "messageId": format!("m{n}"),
        "parts": [{"kind": "text", "text": args.prompt}]}, "configuration": {"blocking": args.blocking}});
    let sent = rpc("SendMessage", message).await?;
    if args.blocking && sent["status"]["state"] == "completed" {
        let text = sent["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        return Ok((started.elapsed(), text.to_owned()));
    }
    let id = sent["id"].as_str().ok_or("SendMessage: no task id")?.to_owned();
    // Bounded: a task that has not ended after 60 s counts as failed.
    while started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(args.poll).await;
        let task = rpc("GetTask", json!({"id": id})).await?;
        match task["status"]["state"].as_str() {
            Some("completed") => {
                let text = task["artifacts"][0]["parts"][0]["text"]
                    .as_str()
                    .unwrap_or_default();
                return Ok((started.elapsed(), text.to_owned()));
            }
            Some("failed" | "canceled" | "rejected") => return Err(format!("task {id}: {}", task["status"])),
            _ => {}
        }
    }
    Err(format!("task {id} did not end within 60 s"))
}

/// `count` tasks, `concurrency` at a time; the times of the completed ones and the failures.
async fn load(
    http: &reqwest::Client,
    args: &Arc<Args>,
    count: usize,
) -> (Vec<Duration>, Vec<String>, Duration) {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..args.concurrency.min(count.max(1)))
        .map(|_| {
            let (http, args, next) = (http.clone(), args.clone(), next.clone());
            tokio::spawn(async move {
                let mut times = Vec::new();
                let mut failures = Vec::new();
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if n >= count {
                        break;
                    }
                    match one_task(&http, &args, n).await {
                        Ok((took, text)) => match &args.expect {
                            Some(want) if *want != text => failures.push(format!("task {n}: got {text:?}")),
                            _ => times.push(took),
                        },
                        Err(e) => failures.push(e),
                    }
                }
                (times, failures)
            })
        })
        .collect();
    let mut times = Vec::new();
    let mut failures = Vec::new();
    for w in workers {
        let (t, f) = w.await.unwrap_or_default();
        times.extend(t);
        failures.extend(f);
    }
    (times, failures, started.elapsed())
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => Arc::new(a),
        Err(e) => {
            eprintln!("a2a_bench: {e}");
            return ExitCode::from(2);
        }
    };
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency)
        .build()
        .expect("an HTTP client");
    let first = one_task(&http, &args, usize::MAX).await;
    let first_text = match first {
        Ok((_, text)) => text,
        Err(e) => {
            eprintln!("a2a_bench: the first task failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    load(&http, &args, args.warmup).await;
    let (mut times, failures, wall) = load(&http, &args, args.tasks).await;
    times.sort();
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .map(ms)
    };
    println!(
        "{}",
        json!({
            "name": args.name, "tasks": args.tasks, "concurrency": args.concurrency,
            "poll_ms": args.poll.as_millis() as u64, "p50_ms": pct(0.5), "p95_ms": pct(0.95),
            "throughput_per_s": (times.len() as f64 / wall.as_secs_f64() * 10.0).round() / 10.0,
            "failed": failures.len(), "first_text": first_text,
        })
    );
    for f in failures.iter().take(3) {
        eprintln!("a2a_bench: {f}");
    }
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
