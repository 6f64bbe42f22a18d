//! The CLI's log output: a `tracing` subscriber on stderr. `RUST_LOG` wins when set;
//! otherwise `-v` shows info and `-vv` debug. Without either only errors are logged — a
//! failed MCP server already has its own status line.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// Installs the subscriber for `verbose` (the count of `-v` flags).
pub fn install(verbose: u8) {
    let level = match verbose {
        0 => "error",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
