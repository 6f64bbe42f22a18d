//! `toolnexus`: list, call and inspect the tools of a toolkit from the shell.
//!
//! Every failure — an unreadable or malformed config, bad arguments — is one line on stderr
//! and a non-zero exit (2 for usage errors, 1 for everything else); a bad flag shows clap's
//! whole message (what is missing, the accepted values, the usage line). SIGINT / SIGTERM
//! stop the MCP servers a command started and exit 130 / 143, like a shell reports them.

mod cmd;
mod logging;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// One uniform set of tools for any LLM: MCP servers, skills, built-ins and your own.
#[derive(Debug, Parser)]
#[command(name = "toolnexus", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// More log output on stderr: -v info, -vv debug (`RUST_LOG` takes precedence).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
}

#[derive(Debug, Subcommand)]
enum Command {
    Tools(cmd::tools::Tools),
    Call(cmd::call::Call),
    Prompt(cmd::prompt::Prompt),
    Run(cmd::run::Run),
    Serve(Box<cmd::serve::Serve>),
    Agent(cmd::agent::Agent),
}

/// A command's failure: the one line to print, and the exit code.
pub struct Failure {
    message: String,
    code: u8,
}

impl Failure {
    /// A runtime failure (exit code 1).
    pub fn new(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 1,
        }
    }

    /// A client that cannot be built: a missing API key is a runtime failure, a bad
    /// `--model` / `--base-url` a usage error.
    pub fn client(e: toolnexus::client::ConfigError) -> Self {
        // main prefixes every failure with "toolnexus: " already.
        let message = e.to_string().trim_start_matches("toolnexus: ").to_owned();
        match e {
            toolnexus::client::ConfigError::MissingApiKey { .. } => Self::new(message),
            _ => Self::usage(message),
        }
    }

    /// A usage failure (exit code 2): flags that do not fit together.
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 2,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help / --version: print as clap renders it, success.
            print!("{e}");
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprintln!(
                "toolnexus: missing command (tools | call | prompt | run | serve); see `toolnexus --help`"
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            // The whole message: its first line alone would drop which argument is missing
            // or which values are accepted.
            let message = e.to_string();
            eprint!("toolnexus: {}", message.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    logging::install(cli.verbose);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolnexus: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        // Listening from the start (serve waits for its own shutdown signal).
        let mut signals = cmd::Signals::listen()?;
        match cli.command {
            Command::Tools(c) => c.run(&mut signals).await,
            Command::Call(c) => c.run(&mut signals).await,
            Command::Prompt(c) => signals.unless_stopped(c.run()).await,
            Command::Run(c) => c.run(&mut signals).await,
            Command::Serve(c) => c.run().await,
            Command::Agent(c) => c.run().await,
        }
    });
    // A REPL's stdin read may still be blocked on its thread: don't wait for a line.
    runtime.shutdown_timeout(std::time::Duration::from_millis(250));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure { message, code }) => {
            if !message.is_empty() {
                eprintln!("toolnexus: {}", message.replace('\n', " "));
            }
            ExitCode::from(code)
        }
    }
}
