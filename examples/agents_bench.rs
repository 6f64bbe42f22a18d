//! The agent runtime's own cost (SPEC §7D), against the embedded mock model on 127.0.0.1,
//! printed as JSON lines:
//!
//! - `task_overhead`: one agent run through the runtime (spawn → wake → wait, two model
//!   turns and one tool call) against the same run on a bare client; the difference of the
//!   p50s is what the runtime adds per delegated task.
//! - `fanout`: a coordinator delegating 100 `task` calls in one turn under `max_concurrent =
//!   8` (202 model calls): wall time. Run it under `/usr/bin/time -v` for the peak RSS.
//!
//! ```sh
//! cargo run --release --example agents_bench -- --runs 300 [--mock http://127.0.0.1:PORT/v1]
//! ```
//!
//! `--mock` points at a model server of its own process (`toolnexus-mock --addr …`), the
//! set-up `benches/agents/py_port.py` runs the Python port's runtime against.

use std::time::Instant;

use serde_json::json;
use toolnexus::agents::{AgentRuntime, Budget, TaskStatus};
use toolnexus::client::{Client, Style};
use toolnexus::{agents, tool, toolkit};
use toolnexus_mock::{MockModel, Scenario};

/// Look a term up.
#[tool]
fn lookup(q: String) -> String {
    format!("docs({q})")
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flag = |name: &str| std::env::args().skip_while(|a| a != name).nth(1);
    let runs: usize = flag("--runs").map_or(Ok(300), |n| n.parse())?;
    // Kept alive for the whole run when embedded.
    let embedded = match flag("--mock") {
        Some(_) => None,
        None => Some(MockModel::start("127.0.0.1:0", Scenario::Planner).await?),
    };
    let base_url =
        flag("--mock").unwrap_or_else(|| embedded.as_ref().map(MockModel::base_url).unwrap_or_default());
    let registry = || {
        agents! {
            tools: [lookup];
            coordinator { does: "delegates", team: [explore],
                          budget: Budget::new().max_concurrent(8).max_children(100).max_turns(3) },
            explore { does: "research", uses: [lookup] },
        }
    };
    let rt = AgentRuntime::builder(
        Client::builder()
            .base_url(&base_url)
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("k"),
    )
    .build(registry()?)?;
    let client = Client::builder()
        .base_url(&base_url)
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("k")
        .build()?;
    let tk = toolkit![lookup];
    let prompt = r#"lookup {"q":"cache"}"#;
    let (mut bare, mut agent) = (Vec::new(), Vec::new());
    for i in 0..runs + 20 {
        let t = Instant::now();
        let r = client.run(prompt, &tk).await?;
        let bare_ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(r.text, "Here is what the tools returned:\n- lookup: docs(cache)");
        let t = Instant::now();
        let h = rt.spawn(&rt.root(), "explore", None)?;
        rt.wake(&h, Some(prompt.to_owned()))?;
        let r = rt.wait(&h, None).await;
        rt.close(&h).await;
        let agent_ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(
            (r.status, r.text.as_str()),
            (
                TaskStatus::Done,
                "Here is what the tools returned:\n- lookup: docs(cache)"
            )
        );
        if i >= 20 {
            bare.push(bare_ms);
            agent.push(agent_ms);
        }
    }
    let (b, a) = (p50(bare), p50(agent));
    println!(
        "{}",
        json!({"name": "task_overhead", "n": runs, "bare_client_p50_ms": b, "agent_run_p50_ms": a, "overhead_p50_ms": a - b})
    );

    let rt = AgentRuntime::builder(
        Client::builder()
            .base_url(&base_url)
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("k"),
    )
    .build(registry()?)?;
    let calls: Vec<String> = (0..100)
        .map(|i| format!(r#"task {{"agent":"explore","prompt":"lookup {{\"q\":\"{i}\"}}"}}"#))
        .collect();
    let t = Instant::now();
    let r = rt.run("coordinator", &calls.join(" ")).await?;
    let wall = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(r.status, TaskStatus::Done, "{r:?}");
    assert_eq!(rt.list().len(), 101);
    assert_eq!(
        r.text.matches("- task: Here is what the tools returned:").count(),
        100
    );
    rt.close(&rt.root()).await;
    assert!(rt.is_quiescent());
    println!(
        "{}",
        json!({"name": "fanout", "children": 100, "max_concurrent": 8, "model_calls": 202, "wall_ms": wall, "total_tokens": r.total_tokens})
    );
    Ok(())
}
