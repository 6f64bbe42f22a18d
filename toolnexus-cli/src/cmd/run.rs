//! `toolnexus run`: drive a model with the toolkit — a REPL (a line in, the answer out) or
//! one shot with `--once`. Tool calls are shown on stderr as they happen; a suspension
//! (the `question` tool, an `input` or `authorization` request) is asked on the terminal.

use std::sync::Arc;

use clap::Args;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines, Stdin};
use tokio::sync::Mutex;
use toolnexus::client::hooks::Hooks;
use toolnexus::client::{Client, RunOptions, RunResult, RunStatus};
use toolnexus::suspend::AnswerReason;
use toolnexus::{Answer, Request, Toolkit};

use super::{ModelArgs, Signals, ToolkitArgs, print_out};
use crate::Failure;

/// Run an agent: the toolkit plus a model behind an OpenAI-, Anthropic- or Gemini-style endpoint.
/// The API key comes from the variable `--api-key-env` names, else from the provider's own
/// variable for its own https host only (OPENROUTER_API_KEY for openrouter.ai,
/// OPENAI_API_KEY for api.openai.com, ANTHROPIC_API_KEY for api.anthropic.com).
#[derive(Debug, Args)]
pub struct Run {
    #[command(flatten)]
    toolkit: ToolkitArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// A system prompt, prepended to the skills catalog.
    #[arg(long, value_name = "TEXT")]
    system: Option<String>,
    /// Answer this one prompt and exit instead of starting a REPL.
    #[arg(long, value_name = "PROMPT")]
    once: Option<String>,
    /// LLM round trips per prompt.
    #[arg(long, default_value_t = 10)]
    max_turns: u32,
}

type Input = Arc<Mutex<Lines<BufReader<Stdin>>>>;

impl Run {
    pub async fn run(self, signals: &mut Signals) -> Result<(), Failure> {
        let input: Input = Arc::new(Mutex::new(BufReader::new(tokio::io::stdin()).lines()));
        let client = self.client(input.clone())?;
        signals
            .with_toolkit(&self.toolkit, async |tk| match &self.once {
                Some(prompt) => one_shot(&client, tk, prompt).await,
                None => repl(&client, tk, &input).await,
            })
            .await
    }

    fn client(&self, input: Input) -> Result<Client, Failure> {
        let hooks = Hooks::new().before_tool(|call| async move {
            eprintln!("→ {} {}", call.name, call.args);
            None
        });
        let mut builder = self
            .model
            .builder()?
            .max_turns(self.max_turns)
            .hooks(hooks)
            .wait_for_fn(move |request| ask_on_terminal(input.clone(), request));
        if let Some(system) = &self.system {
            builder = builder.system_prompt(system);
        }
        builder.build().map_err(Failure::client)
    }
}

/// The run's options: `tk`, after `history`, with each tool's progress shown on stderr as
/// `progress: TOOL 2/3 MESSAGE` (the total and message when the tool gave them).
fn options(tk: &Toolkit, history: Vec<Value>) -> RunOptions {
    RunOptions::new(tk).history(history).on_progress(|tool, p| {
        let mut line = format!("progress: {tool} {}", p.progress);
        if let Some(total) = p.total {
            line.push_str(&format!("/{total}"));
        }
        if let Some(message) = &p.message {
            line.push(' ');
            line.push_str(message);
        }
        eprintln!("{line}");
    })
}

async fn one_shot(client: &Client, tk: &Toolkit, prompt: &str) -> Result<(), Failure> {
    let result = client
        .run_with(prompt, options(tk, Vec::new()))
        .await
        .map_err(Failure::new)?;
    print_result(&result)?;
    match result.status {
        RunStatus::Done => Ok(()),
        // Incomplete (a limit stopped it) or still waiting: the answer is not whole.
        _ => Err(Failure::new(String::new())),
    }
}

async fn repl(client: &Client, tk: &Toolkit, input: &Input) -> Result<(), Failure> {
    let mut history = Vec::new();
    loop {
        eprint!("> ");
        let line = input.lock().await.next_line().await.map_err(Failure::new)?;
        let Some(line) = line else { break };
        let line = line.trim();
        match line {
            "" => continue,
            "exit" | "quit" => break,
            _ => {}
        }
        match client.run_with(line, options(tk, history.clone())).await {
            Ok(result) => {
                print_result(&result)?;
                history = result.messages;
            }
            Err(e) => eprintln!("toolnexus: {e}"),
        }
    }
    Ok(())
}

fn print_result(result: &RunResult) -> Result<(), Failure> {
    match result.status {
        RunStatus::Done => print_out(&format!("{}\n", result.text)),
        RunStatus::Pending => print_out(&format!("(waiting on: {})\n", result.text)),
        RunStatus::Incomplete => {
            print_out(&format!("{}\n", result.text))?;
            eprintln!(
                "toolnexus: stopped by the {} limit",
                result.limit.map_or("turn", |l| l.as_str())
            );
            Ok(())
        }
    }
}

/// The terminal as the `wait_for` host: print the request, read one line. An empty line
/// or `n` declines an authorization; end of input declines anything.
async fn ask_on_terminal(input: Input, request: Request) -> Answer {
    let mut err = tokio::io::stderr();
    let mut text = format!("? {}\n", request.prompt);
    if let Some(url) = &request.url {
        text.push_str(&format!("  open: {url}\n"));
    }
    text.push_str(if request.kind == "authorization" {
        "  press Enter when done (n to decline): "
    } else {
        "  answer: "
    });
    let _ = err.write_all(text.as_bytes()).await;
    let _ = err.flush().await;
    let line = match input.lock().await.next_line().await {
        Ok(Some(line)) => line.trim().to_owned(),
        _ => return Answer::declined(request.id, AnswerReason::Cancelled),
    };
    match request.kind.as_str() {
        "authorization" if line.eq_ignore_ascii_case("n") => {
            Answer::declined(request.id, AnswerReason::Declined)
        }
        "authorization" => Answer {
            id: request.id,
            ok: true,
            data: None,
            reason: None,
        },
        // The recommended §10 shape: one entry per question, in order.
        "question" => Answer {
            id: request.id,
            ok: true,
            data: Some(json!({ "answers": [line] })),
            reason: None,
        },
        _ => Answer::output(request.id, line),
    }
}
