//! `toolnexus-mock`: serve the scripted model on loopback until killed.
//!
//! Prints `listening on http://ADDR/v1` as its first line, so a script can read the URL.

use clap::{Parser, ValueEnum};
use toolnexus_mock::{MockModel, Scenario};

#[derive(Parser)]
#[command(about = "A deterministic OpenAI/Anthropic-compatible model on 127.0.0.1")]
struct Args {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8900")]
    addr: String,
    /// Which script to follow.
    #[arg(long, value_enum, default_value_t = Mode::Planner)]
    scenario: Mode,
    /// Refuse requests that do not carry this API key (Bearer or x-api-key), as a provider
    /// would. Also read from `TOOLNEXUS_MOCK_API_KEY`, which keeps it out of `ps`.
    #[arg(long, env = "TOOLNEXUS_MOCK_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    Planner,
    Bench,
    Persona,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    let scenario = match args.scenario {
        Mode::Planner => Scenario::Planner,
        Mode::Bench => Scenario::Bench,
        Mode::Persona => Scenario::Persona,
    };
    let started = match &args.api_key {
        Some(key) => MockModel::start_with_api_key(&args.addr, scenario, key).await,
        None => MockModel::start(&args.addr, scenario).await,
    };
    let model = match started {
        Ok(m) => m,
        Err(e) => {
            eprintln!("toolnexus-mock: cannot listen on {}: {e}", args.addr);
            std::process::exit(2);
        }
    };
    println!("listening on {}", model.base_url());
    // Serve until the process is killed.
    std::future::pending::<()>().await;
}
