//! Quickstart: a real agent, end to end, with nothing configured.
//!
//! ```sh
//! cargo run --example quickstart
//! ```
//!
//! One toolkit gathers every kind of tool — two `#[tool]` functions, the built-in tools, the
//! `hello-world` skill under `examples/skills`, and a local MCP server over stdio (this very
//! binary, re-executed as the server) — and the unified client drives a model with it over
//! the real OpenAI wire (streaming SSE), printing each turn: tool calls, results, the answer
//! and the token usage.
//!
//! The model is the embedded default: a deterministic scripted model (`toolnexus-mock`)
//! served on 127.0.0.1, which plans its tool calls from the prompt and the advertised tools.
//! To talk to a real provider instead, set `TOOLNEXUS_BASE_URL`, `TOOLNEXUS_MODEL`, optionally
//! `TOOLNEXUS_STYLE` (`openai` | `anthropic` | `gemini`) and an API key: the provider's own variable
//! (`OPENROUTER_API_KEY` for openrouter.ai, `OPENAI_API_KEY` for api.openai.com,
//! `ANTHROPIC_API_KEY` for api.anthropic.com — each is sent only to its own host), or for any
//! other host (a gateway, a local server) `TOOLNEXUS_API_KEY_ENV` naming the variable that
//! holds the key.

use std::path::Path;
use std::process::ExitCode;

use futures::StreamExt as _;
use serde_json::json;
use toolnexus::assembly::ToolkitOptions;
use toolnexus::client::{Client, ClientError, RunOptions, RunStatus, StreamEvent, Style};
use toolnexus::{Toolkit, tool, toolkit};
use toolnexus_mock::{MockModel, Scenario};

/// The flag this binary is re-executed with to be the MCP server.
const SERVE_MCP: &str = "--serve-mcp";

/// Current weather for a city.
#[tool]
async fn get_weather(
    /// The city to report on.
    city: String,
) -> String {
    format!("{city}: 31°C, humid, a sea breeze in the evening")
}

/// Convert an amount of money between currencies (demo rates).
#[tool]
fn convert(
    /// How much money.
    amount: f64,
    /// ISO code of the source currency.
    from: String,
    /// ISO code of the target currency.
    to: String,
) -> Result<String, String> {
    let per_usd = |code: &str| match code {
        "USD" => Some(1.0),
        "EUR" => Some(0.92),
        "INR" => Some(83.0),
        _ => None,
    };
    match (per_usd(&from), per_usd(&to)) {
        (Some(f), Some(t)) => Ok(format!("{amount} {from} = {:.2} {to}", amount / f * t)),
        _ => Err(format!("unknown currency in {from}->{to}; use USD, EUR or INR")),
    }
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(SERVE_MCP) {
        toolnexus_testserver::bench::serve_stdio();
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quickstart: {e}");
            if let Some(hint) = e.downcast_ref::<ClientError>().and_then(hint) {
                eprintln!("quickstart: {hint}");
            }
            ExitCode::FAILURE
        }
    }
}

/// What to do about a provider's refusal a newcomer is likely to meet.
fn hint(e: &ClientError) -> Option<&'static str> {
    match e {
        ClientError::Provider {
            status: 401 | 403, ..
        } => Some(
            "the provider refused the API key: check that the variable TOOLNEXUS_API_KEY_ENV names \
             (or the provider's own OPENROUTER_API_KEY / OPENAI_API_KEY / ANTHROPIC_API_KEY) holds \
             the key for TOOLNEXUS_BASE_URL",
        ),
        ClientError::Provider { status: 404, .. } => {
            Some("not found: check TOOLNEXUS_BASE_URL (usually ends in /v1) and TOOLNEXUS_MODEL")
        }
        _ => None,
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let me = std::env::current_exe()?;

    // The model: a real provider when configured, else the embedded scripted one.
    let real = std::env::var("TOOLNEXUS_BASE_URL").ok();
    let _mock; // keeps the embedded model serving until the end
    let mut builder = Client::builder();
    let banner = match &real {
        Some(url) => {
            let model = std::env::var("TOOLNEXUS_MODEL")
                .map_err(|_| "TOOLNEXUS_BASE_URL is set: set TOOLNEXUS_MODEL too")?;
            let style: Style = std::env::var("TOOLNEXUS_STYLE")
                .unwrap_or_else(|_| "openai".into())
                .parse()?;
            let banner = format!("model: {model} at {url}");
            builder = builder.base_url(url).style(style).model(model);
            // A host that is not a provider's own gets a key only when told which one.
            if let Ok(var) = std::env::var("TOOLNEXUS_API_KEY_ENV") {
                builder = builder.api_key_env(var);
            }
            banner
        }
        None => {
            let mock = MockModel::start("127.0.0.1:0", Scenario::Planner).await?;
            builder = builder
                .base_url(mock.base_url())
                .style(Style::OpenAi)
                .model("toolnexus-mock")
                .api_key("not-needed-for-the-embedded-model");
            let banner = format!(
                "model: the embedded scripted mock (toolnexus-mock) at {}; for a real provider \
                 set TOOLNEXUS_BASE_URL and TOOLNEXUS_MODEL (and its API key)",
                mock.base_url()
            );
            _mock = mock;
            banner
        }
    };
    let client = builder
        .system_prompt("You are a concise assistant. Use the tools you are given.")
        .build()?;
    println!("{banner}");

    // The toolkit: MCP server (stdio child) + skill + built-ins + our own functions.
    let mcp = json!({"mcpServers": {"weather": {"command": [me.display().to_string(), SERVE_MCP]}}});
    let native: Toolkit = toolkit![get_weather, convert];
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .config(mcp)
            .skills_dir(root.join("examples/skills"))
            .extra_tools(native.tools().cloned()),
    )
    .await?;
    println!("toolkit: {} tools", tk.len());
    for t in tk.tools() {
        println!("  {:<22} {}", t.name(), t.source());
    }
    for (server, status) in tk.mcp_status() {
        println!("  mcp server {server}: {status}");
    }

    let greet = root.join("examples/skills/hello-world/scripts/greet.sh");
    let prompt = match &real {
        Some(_) => {
            "Load the hello-world skill and follow it to greet 'Rustacean'. Then tell me the weather in \
                    Chennai, add 2 and 3 with the weather server's add tool, and convert 100 EUR to INR."
                .to_owned()
        }
        // The scripted model calls the tools the prompt names, step by step ("then").
        None => format!(
            r#"Load the skill {{"name":"hello-world"}} then run bash {{"command":"bash {} Rustacean"}} and get_weather {{"city":"Chennai"}} then weather_add {{"a":2,"b":3}} and convert {{"amount":100,"from":"EUR","to":"INR"}}"#,
            greet.display()
        ),
    };
    println!("\nuser: {prompt}\n");

    let mut events = std::pin::pin!(client.stream(prompt.as_str(), RunOptions::new(&tk)));
    // A turn starts with the first call of a batch, or with the first answer text.
    let mut turn = 0;
    let mut last_was_call = false;
    let mut answering = false;
    let mut result = None;
    while let Some(event) = events.next().await {
        let event = event?;
        let is_call = matches!(event, StreamEvent::ToolCall { .. });
        match event {
            StreamEvent::ToolCall { name, args, .. } => {
                if !last_was_call {
                    turn += 1;
                    println!("turn {turn}: the model calls tools");
                }
                println!("  -> {name} {args}");
            }
            StreamEvent::ToolResult {
                name,
                output,
                is_error,
                ..
            } => {
                let mark = if is_error { "error" } else { "ok" };
                println!("  <- {name} [{mark}] {}", summary(&output));
            }
            StreamEvent::Text { delta } => {
                if !answering {
                    turn += 1;
                    println!("turn {turn}: the model answers");
                    answering = true;
                }
                print!("{delta}");
            }
            StreamEvent::Pending { request } => println!("  .. waiting on: {}", request.prompt),
            StreamEvent::Usage { .. } | StreamEvent::Progress { .. } => {}
            StreamEvent::Done { result: r } => result = Some(*r),
        }
        last_was_call = is_call;
    }
    let result = result.ok_or("the stream ended without a result")?;
    println!(
        "\n\nstatus: {:?}, {} turns, {} tool calls, usage: {} prompt + {} completion = {} tokens",
        result.status,
        result.turns,
        result.tool_call_count,
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
        result.usage.total_tokens
    );
    tk.close().await;
    if result.status != RunStatus::Done {
        return Err(format!("the run ended {:?}", result.status).into());
    }
    let failed = result.tool_calls.iter().filter(|c| c.is_error).count();
    match (&real, failed) {
        (_, 0) => Ok(()),
        // A real model may misuse a tool and recover: it saw each error as a tool result.
        (Some(_), n) => {
            println!("({n} of the tool calls failed; the model was shown each error)");
            Ok(())
        }
        // The embedded model's plan is deterministic: every call must succeed.
        (None, _) => Err("a tool call failed".into()),
    }
}

/// One line per tool result, except a loaded skill: the steps it gave the model and the files it
/// brought, which is what loading a skill changes.
fn summary(output: &str) -> String {
    let lines = || output.lines().map(str::trim).filter(|l| !l.is_empty());
    if !output.starts_with("<skill_content") {
        return lines().next().unwrap_or("").to_owned();
    }
    let title = lines()
        .find(|l| l.starts_with("# Skill: "))
        .unwrap_or("# Skill: ?");
    let mut out = format!(
        "{} loaded, {} lines for the model:",
        &title[9..],
        output.lines().count()
    );
    let numbered = |l: &&str| l.split_once(". ").is_some_and(|(n, _)| n.parse::<u32>().is_ok());
    for step in lines().filter(numbered) {
        out.push_str("\n       ");
        out.push_str(step);
    }
    for file in lines().filter_map(|l| l.strip_prefix("<file>")?.strip_suffix("</file>")) {
        let name = file.rsplit('/').next().unwrap_or(file);
        out.push_str("\n       file: ");
        out.push_str(name);
    }
    out
}
