//! `toolnexus agent DIR`: a persona directory (SPEC §7E) as an interactive agent in the
//! terminal. The reply streams as it arrives, each tool call is one line with its result, the
//! conversation is kept in `DIR/.toolnexus/session.json` or the `--store` (the next start
//! resumes it),
//! `--max-tokens` compacts it (§7F), `--heartbeat` wakes the persona on a timer. Ctrl-C
//! interrupts the turn in progress; Ctrl-C at the prompt quits.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolnexus::Toolkit;
use toolnexus::client::hooks::Hooks;
use toolnexus::client::{Client, ConversationStore, FileStore, RunOptions, RunResult, StoreError, Style};
use toolnexus::compaction::{CompactorOptions, client_summarizer, compactor};
use toolnexus::persona::{Beat, HEARTBEAT_PROMPT, Heartbeat, Persona};
use toolnexus::store::{StoreUrl, Stores};

use super::{ModelArgs, ToolkitArgs};
use crate::Failure;

/// Run a persona directory (AGENTS.md, SOUL.md, …, MEMORY.md) as an interactive agent.
#[derive(Debug, Args)]
pub struct Agent {
    /// The persona directory.
    dir: PathBuf,
    #[command(flatten)]
    toolkit: ToolkitArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// Wake the persona on this period (e.g. 30m, 45s, 2h) to read HEARTBEAT.md.
    #[arg(long, value_name = "PERIOD", value_parser = parse_period)]
    heartbeat: Option<Duration>,
    /// Compact the conversation when its estimate passes this many tokens.
    #[arg(long, value_name = "N")]
    max_tokens: Option<usize>,
    /// LLM round trips per prompt.
    #[arg(long, default_value_t = 10)]
    max_turns: u32,
    /// Where the conversation is kept: `file:DIR`, `sqlite:PATH` or `postgres://…`
    /// (default: `file:` the persona's `.toolnexus` directory).
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// The conversation's id in the store (one store can keep several agents' sessions).
    #[arg(long, value_name = "ID", default_value = "session")]
    session: String,
}

/// `30m`, `45s`, `2h`, `500ms`: a positive period.
fn parse_period(text: &str) -> Result<Duration, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (n, unit) = text.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("\"{text}\" is not a period like 30m, 45s or 2h"))?;
    let period = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => return Err(format!("\"{text}\" is not a period like 30m, 45s or 2h")),
    };
    if period.is_zero() {
        return Err("the heartbeat period must be more than zero".into());
    }
    Ok(period)
}

/// Where the terminal's cursor is: streamed text may leave it mid-line before a tool line.
#[derive(Clone, Default)]
struct Screen {
    mid_line: Arc<AtomicBool>,
}

impl Screen {
    fn text(&self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(delta.as_bytes());
        let _ = out.flush();
        self.mid_line.store(!delta.ends_with('\n'), Ordering::Relaxed);
    }

    fn line(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        if self.mid_line.swap(false, Ordering::Relaxed) {
            let _ = out.write_all(b"\n");
        }
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn end_reply(&self) {
        if self.mid_line.swap(false, Ordering::Relaxed) {
            println!();
        }
    }

    fn prompt(&self) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"you> ");
        let _ = out.flush();
        // Whatever is printed before the user presses Enter starts on a line of its own.
        self.mid_line.store(true, Ordering::Relaxed);
    }

    /// The user pressed Enter: the terminal's echo moved the cursor to a new line.
    fn entered(&self) {
        self.mid_line.store(false, Ordering::Relaxed);
    }
}

/// One line for a tool call and its result, cut to a terminal's width.
fn tool_line(name: &str, args: &Value, output: &str, is_error: bool) -> String {
    let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mark = if is_error { "✗" } else { "→" };
    let line = format!("  ⚙ {name} {args} {mark} {first}");
    match line.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// Ctrl-C, as a stream: the handler is installed once, so a press between two waits is
/// not lost and never kills the process.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn install() -> Result<Self, Failure> {
        #[cfg(unix)]
        {
            let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                .map_err(|e| Failure::new(format!("cannot handle Ctrl-C: {e}")))?;
            Ok(Self { signal })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        self.signal.recv().await;
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The terminal's lines, read on a thread of their own: a read blocked on the terminal
/// cannot be cancelled, and on tokio's blocking pool it would hold the exit until Enter.
fn stdin_lines() -> tokio::sync::mpsc::Receiver<std::io::Result<String>> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// What the loop reads next.
enum Input {
    Line(String),
    Beat,
    Quit,
}

impl Agent {
    /// The conversation store: `--store`, else the persona's own `.toolnexus` directory.
    async fn store(&self) -> Result<Arc<dyn ConversationStore>, Failure> {
        let Some(spec) = &self.store else {
            return Ok(Arc::new(FileStore::new(self.dir.join(".toolnexus"))));
        };
        let url: StoreUrl = spec
            .parse()
            .map_err(|e| Failure::usage(format!("--store: {e}")))?;
        Ok(Stores::open(&url).await.map_err(Failure::new)?.conversations)
    }

    pub async fn run(self) -> Result<(), Failure> {
        let persona = Persona::from_dir(&self.dir).map_err(Failure::new)?;
        let style = self.model.style()?;
        let screen = Screen::default();
        let mut tk = self.toolkit.build().await?;
        tk.add_tools([persona.memory_tool()]);
        let client = self.client(&persona, style, &screen)?;
        let store = self.store().await?;
        let (mut history, mut version) = match store.load(&self.session).await.map_err(Failure::new)? {
            Some((messages, version)) => (messages, Some(version)),
            None => (Vec::new(), None),
        };
        refresh_system(&mut history, style, &persona, &tk);
        let mut interrupts = Interrupts::install()?;
        let heartbeat = match self.heartbeat {
            Some(period) => Heartbeat::every(period),
            None => Heartbeat::new(),
        };
        println!(
            "{} — {}; Ctrl-C interrupts a turn, Ctrl-C at the prompt quits",
            persona,
            match history.len() {
                0 => "new session".to_owned(),
                n => format!("resumed {n} messages"),
            }
        );
        let mut stdin = stdin_lines();
        let mut prompted = false;
        let outcome = loop {
            if !prompted {
                screen.prompt();
                prompted = true;
            }
            let input = tokio::select! {
                line = stdin.recv() => match line {
                    Some(Ok(line)) => Input::Line(line),
                    None => Input::Quit,
                    Some(Err(e)) => break Err(Failure::new(format!("reading the terminal: {e}"))),
                },
                () = heartbeat.ticks().take() => Input::Beat,
                () = interrupts.next() => Input::Quit,
            };
            let (prompt, beat) = match input {
                Input::Quit => break Ok(()),
                // The prompt stays up: a heartbeat prints only when it has something to say.
                Input::Beat => (HEARTBEAT_PROMPT.to_owned(), true),
                Input::Line(line) => {
                    screen.entered();
                    prompted = false;
                    match line.trim() {
                        "" => continue,
                        "exit" | "quit" => break Ok(()),
                        text => (text.to_owned(), false),
                    }
                }
            };
            let cancel = CancellationToken::new();
            let opts = RunOptions::new(&tk)
                .history(history.clone())
                .cancel(cancel.clone())
                .on_text({
                    let screen = screen.clone();
                    move |delta| {
                        if !beat {
                            screen.text(delta)
                        }
                    }
                });
            let result = tokio::select! {
                r = client.run_with(prompt, opts) => Some(r),
                () = interrupts.next() => {
                    cancel.cancel();
                    None
                }
            };
            match result {
                // The terminal has echoed `^C` already.
                None => screen.line(" turn interrupted (Ctrl-C at the prompt quits)"),
                Some(Err(e)) => screen.line(&format!("toolnexus: {e}")),
                Some(Ok(r)) => {
                    if show(&screen, &r, beat) {
                        prompted = false;
                    }
                    history = r.messages;
                    match store.save_if(&self.session, history.clone(), version).await {
                        Ok(saved) => version = Some(saved),
                        // Another process saved this session meanwhile: its turn stays stored.
                        Err(e @ StoreError::Conflict { .. }) => screen.line(&format!(
                            "toolnexus: this turn was not saved: {e} (another process saved the session; restart to resume the stored one)"
                        )),
                        Err(e) => screen.line(&format!("toolnexus: the session was not saved: {e}")),
                    }
                }
            }
        };
        screen.end_reply();
        println!("bye");
        tk.close().await;
        outcome
    }

    fn client(&self, persona: &Persona, style: Style, screen: &Screen) -> Result<Client, Failure> {
        let builder = || self.model.builder();
        let screen = screen.clone();
        let mut hooks = Hooks::new().after_tool(move |o| {
            screen.line(&tool_line(&o.name, &o.args, &o.result.output, o.result.is_error));
            async { None }
        });
        if let Some(max_tokens) = self.max_tokens {
            // The summary is asked of the same model, without the persona's prompt or tools.
            let summarizer = builder()?.build().map_err(Failure::client)?;
            let compact = compactor(
                CompactorOptions::new(max_tokens, client_summarizer(summarizer))
                    .style(style)
                    .flush_to_memory(true),
            );
            hooks = hooks.before_llm(compact.before_llm());
        }
        builder()?
            .system_prompt(persona.soul())
            .max_turns(self.max_turns)
            .hooks(hooks)
            .build()
            .map_err(Failure::client)
    }
}

/// A resumed OpenAI transcript starts with the previous session's system prompt: this
/// session's soul replaces it (memory written last time is in it now). Anthropic sends the
/// system prompt beside the transcript, fresh every turn.
fn refresh_system(history: &mut [Value], style: Style, persona: &Persona, tk: &Toolkit) {
    if style != Style::OpenAi {
        return;
    }
    let system: Vec<&str> = [persona.soul(), tk.skills_prompt()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(first) = history.first_mut().filter(|m| m["role"] == "system") {
        *first = json!({"role": "system", "content": system.join("\n\n")});
    }
}

/// Finish a turn's output; `true` when anything was printed (so the prompt is shown again).
fn show(screen: &Screen, r: &RunResult, beat: bool) -> bool {
    if !beat {
        screen.end_reply();
        return true;
    }
    // A heartbeat is silent unless it has something to say (SPEC §7E).
    match Beat::from_reply(&r.text) {
        Beat::Silent => false,
        Beat::Report(text) => {
            screen.line(&format!("♥ {text}"));
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_read_as_a_number_and_a_unit() {
        assert_eq!(parse_period("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_period("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_period("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_period("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(
            parse_period("soon"),
            Err("\"soon\" is not a period like 30m, 45s or 2h".into())
        );
        assert_eq!(
            parse_period("5d"),
            Err("\"5d\" is not a period like 30m, 45s or 2h".into())
        );
        assert!(parse_period("0s").is_err());
    }

    #[test]
    fn a_tool_line_is_one_line_cut_at_160_characters() {
        let line = tool_line("read", &json!({"path": "a"}), "\nfirst\nsecond", false);
        assert_eq!(line, "  ⚙ read {\"path\":\"a\"} → first");
        let long = tool_line("bash", &json!({}), &"é".repeat(300), true);
        assert_eq!(long.chars().count(), 161);
        assert!(long.starts_with("  ⚙ bash {} ✗ é") && long.ends_with('…'));
    }
}
