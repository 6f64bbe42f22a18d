//! `toolnexus serve --mcp ADDR`: serve the toolkit the flags describe as one MCP server
//! (streamable HTTP at `/mcp`) — any mcp.json + skills + built-ins behind one gateway.

use clap::Args;
use toolnexus::mcp::serve::{ServeOptions, serve};

use super::ToolkitArgs;
use crate::Failure;

/// Serve the toolkit over MCP until interrupted.
#[derive(Debug, Args)]
pub struct Serve {
    #[command(flatten)]
    toolkit: ToolkitArgs,
    /// Address to listen on, e.g. `127.0.0.1:8765` (port 0 picks a free one).
    #[arg(long = "mcp", value_name = "ADDR")]
    mcp: String,
    /// Expose only this tool (repeatable; unknown names are ignored).
    #[arg(long = "expose", value_name = "NAME")]
    expose: Vec<String>,
    /// `serverInfo.name` (default `toolnexus`).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// `serverInfo.version` (default `0.1.0`).
    #[arg(long = "server-version", value_name = "VERSION")]
    server_version: Option<String>,
}

impl Serve {
    pub async fn run(self) -> Result<(), Failure> {
        let tk = self.toolkit.build().await?;
        let options = ServeOptions {
            name: self.name,
            version: self.server_version,
            tools: (!self.expose.is_empty()).then_some(self.expose),
            on_call: None,
        };
        let handle = match serve(&tk, &self.mcp, options).await {
            Ok(handle) => handle,
            Err(e) => {
                tk.close().await;
                return Err(Failure::new(e));
            }
        };
        // The URL alone on stdout, so a script can read where to connect.
        println!("{}", handle.url());
        eprintln!("toolnexus: serving {} tools over MCP; Ctrl-C to stop", tk.len());
        shutdown_signal().await;
        handle.stop().await;
        tk.close().await;
        Ok(())
    }
}

/// Ctrl-C, or SIGTERM on Unix (how service managers and tests stop a server).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
