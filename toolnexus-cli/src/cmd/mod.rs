//! One module per subcommand; [`ToolkitArgs`] are the flags every toolkit-building
//! subcommand shares, [`Stop`] the signals that end one early, [`print_out`] its output.

pub mod agent;
pub mod call;
pub mod prompt;
pub mod run;
pub mod serve;
pub mod tools;

/// A `--style` flag's value: a usage error when it names no style.
pub fn parse_style(text: &str) -> Result<Style, Failure> {
    text.parse().map_err(|e: UnknownStyle| Failure::usage(e))
}

/// The model a command drives: the flags `run` and `agent` share. The API key comes from the
/// variable `--api-key-env` names, else from the provider's own variable for its own https host
/// only (OPENROUTER_API_KEY for openrouter.ai, OPENAI_API_KEY for api.openai.com,
/// ANTHROPIC_API_KEY for api.anthropic.com, GEMINI_API_KEY for generativelanguage.googleapis.com).
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// The provider base URL, e.g. https://openrouter.ai/api/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: String,
    /// Wire style: openai | anthropic | gemini.
    #[arg(long, default_value = "openai")]
    pub style: String,
    /// The model id, sent verbatim.
    #[arg(long)]
    pub model: String,
    /// The environment variable holding the API key: how a key reaches a host that is not
    /// a provider's own (a gateway, a local server).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Whole-run deadline per prompt, in seconds (default: the client's, 600).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,
    /// Retries per LLM request on 429/5xx/network errors (default: the client's, 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub retries: Option<u32>,
}

/// A client builder for a model at `base_url` speaking `style`, its key from `api_key_env` when
/// given (else the provider's own variable, for its own host only).
pub fn model_builder(
    base_url: &str,
    style: &str,
    model: &str,
    api_key_env: Option<&str>,
) -> Result<ClientBuilder, Failure> {
    let builder = Client::builder()
        .base_url(base_url)
        .style(parse_style(style)?)
        .model(model);
    Ok(match api_key_env {
        Some(var) => builder.api_key_env(var),
        None => builder,
    })
}

impl ModelArgs {
    /// The parsed `--style`.
    pub fn style(&self) -> Result<Style, Failure> {
        parse_style(&self.style)
    }

    /// A client builder for this model: URL, style, model id, key variable, deadline, retries.
    pub fn builder(&self) -> Result<ClientBuilder, Failure> {
        let mut builder = model_builder(
            &self.base_url,
            &self.style,
            &self.model,
            self.api_key_env.as_deref(),
        )?;
        if let Some(secs) = self.timeout {
            builder = builder.timeout(std::time::Duration::from_secs(secs));
        }
        if let Some(n) = self.retries {
            builder = builder.retries(n);
        }
        Ok(builder)
    }
}

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;
use toolnexus::client::{Client, ClientBuilder, Style, UnknownStyle};
use toolnexus::mcp::McpStatus;
use toolnexus::{Toolkit, ToolkitOptions};

use crate::Failure;

/// How to assemble the toolkit.
#[derive(Debug, Clone, Args)]
pub struct ToolkitArgs {
    /// MCP config file (`mcpServers` | `servers` | `mcp`, optional top-level `builtins`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub skills: SkillsArgs,
    /// Leave the ten built-in tools out.
    #[arg(long)]
    pub no_builtins: bool,
}

/// Where skills come from.
#[derive(Debug, Clone, Args)]
pub struct SkillsArgs {
    /// A skills root searched for `**/SKILL.md` (repeatable).
    #[arg(long = "skills", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

impl SkillsArgs {
    fn apply(&self, mut options: ToolkitOptions) -> Result<ToolkitOptions, Failure> {
        for dir in &self.dirs {
            // The library only warns about a missing root; on the command line it is a typo.
            if !dir.is_dir() {
                return Err(Failure::new(format!("skills dir not found: {}", dir.display())));
            }
            options = options.skills_dir(dir);
        }
        Ok(options)
    }
}

impl ToolkitArgs {
    /// Builds the toolkit these flags describe, and says on stderr which MCP servers failed
    /// (`mcp server NAME: failed: REASON`, in config order): their tools are missing.
    pub async fn build(&self) -> Result<Toolkit, Failure> {
        self.build_with(ToolkitOptions::default()).await
    }

    /// Builds the toolkit these flags describe on top of a subcommand's own `options`.
    pub async fn build_with(&self, options: ToolkitOptions) -> Result<Toolkit, Failure> {
        let mut options = self.skills.apply(options)?;
        if let Some(config) = &self.config {
            options = options.config(config.clone());
        }
        if self.no_builtins {
            options = options.builtins(false);
        }
        let tk = Toolkit::build(options).await.map_err(Failure::new)?;
        for (name, status) in tk.mcp_status() {
            if let McpStatus::Failed { reason } = status {
                eprintln!("mcp server {name}: failed: {reason}");
            }
        }
        Ok(tk)
    }
}

/// A signal that ends a command early. Either one stops the MCP servers the command
/// started (their process groups) before the exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (how service managers and `kill` stop a process).
    Terminate,
}

impl Stop {
    /// The failure to exit with: 128 + the signal's number, as a shell reports a command
    /// the signal killed.
    pub fn failure(self) -> Failure {
        let (name, code) = match self {
            Stop::Interrupt => ("SIGINT", 130),
            Stop::Terminate => ("SIGTERM", 143),
        };
        Failure {
            message: format!("stopped by {name}"),
            code,
        }
    }
}

/// SIGINT and SIGTERM, listened for from the moment it is made, so a signal that arrives
/// while a toolkit is being built is not lost.
pub struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening; must run inside the runtime.
    pub fn listen() -> Result<Self, Failure> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind| signal(kind).map_err(|e| Failure::new(format!("cannot handle signals: {e}")));
            Ok(Signals {
                interrupt: listen(SignalKind::interrupt())?,
                terminate: listen(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The next SIGINT or SIGTERM.
    pub async fn recv(&mut self) -> Stop {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => Stop::Interrupt,
                _ = self.terminate.recv() => Stop::Terminate,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Stop::Interrupt
        }
    }

    /// `work`'s outcome, or the signal's failure when one comes first (`work` is dropped:
    /// whatever it spawned is killed with its process group).
    pub async fn unless_stopped<T>(
        &mut self,
        work: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, Failure> {
        tokio::select! {
            outcome = work => outcome,
            stop = self.recv() => Err(stop.failure()),
        }
    }

    /// Builds the toolkit `args` describe, runs `work` on it unless a signal comes first,
    /// then closes the toolkit (stopping its MCP servers) either way.
    pub async fn with_toolkit<T>(
        &mut self,
        args: &ToolkitArgs,
        work: impl AsyncFnOnce(&Toolkit) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let tk = self.unless_stopped(args.build()).await?;
        let outcome = self.unless_stopped(work(&tk)).await;
        tk.close().await;
        outcome
    }
}

/// Writes `text` to stdout. A reader that went away (`toolnexus tools | head -1`) ends the
/// output quietly instead of a panic; any other write error is a failure.
pub fn print_out(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(format!("cannot write to stdout: {e}"))),
    }
}
