//! `toolnexus serve --mcp ADDR` / `--a2a ADDR`: serve the toolkit the flags describe as one
//! MCP server (streamable HTTP at `/mcp`) — any mcp.json + skills + built-ins behind one
//! gateway — and/or as an A2A agent (card at `/.well-known/agent-card.json`, JSON-RPC at
//! `POST /`) whose tasks a model fulfils. Both flags on one address serve both there.

use std::net::SocketAddr;
use std::time::Duration;

use axum::serve::ListenerExt;
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolnexus::a2a::{A2aConfig, A2aServer};
use toolnexus::client::Client;
use toolnexus::mcp::serve::{ServeOptions, router, serve};

use super::ToolkitArgs;
use crate::Failure;

/// How long running A2A tasks may finish after Ctrl-C/SIGTERM before they are recorded failed.
const A2A_GRACE: Duration = Duration::from_secs(10);

/// Serve the toolkit over MCP and/or A2A until interrupted.
#[derive(Debug, Args)]
pub struct Serve {
    #[command(flatten)]
    toolkit: ToolkitArgs,
    /// Serve MCP at `ADDR/mcp`, e.g. `127.0.0.1:8765` (port 0 picks a free one).
    #[arg(long = "mcp", value_name = "ADDR")]
    mcp: Option<String>,
    /// Serve an A2A agent at ADDR (the same ADDR as `--mcp` serves both on one listener);
    /// needs `--base-url` and `--model`, the model that fulfils its tasks.
    #[arg(long = "a2a", value_name = "ADDR")]
    a2a: Option<String>,
    /// Expose only this tool over MCP (repeatable; unknown names are ignored).
    #[arg(long = "expose", value_name = "NAME")]
    expose: Vec<String>,
    /// MCP `serverInfo.name` (default `toolnexus`).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// MCP `serverInfo.version` (default `0.1.0`).
    #[arg(long = "server-version", value_name = "VERSION")]
    server_version: Option<String>,
    #[command(flatten)]
    agent: AgentArgs,
}

/// The A2A profile: the model that fulfils tasks (the flags of `run`) and the card.
#[derive(Debug, Args)]
struct AgentArgs {
    /// The provider base URL, e.g. https://openrouter.ai/api/v1 (with `--a2a`).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Wire style: openai | anthropic | gemini.
    #[arg(long, default_value = "openai")]
    style: String,
    /// The model id, sent verbatim (with `--a2a`). The API key comes from the variable
    /// `--api-key-env` names, else from the provider's own variable for its own https host.
    #[arg(long)]
    model: Option<String>,
    /// The environment variable holding the API key (for a host that is not a provider's own).
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// A system prompt, prepended to the skills catalog.
    #[arg(long, value_name = "TEXT")]
    system: Option<String>,
    /// LLM round trips per task.
    #[arg(long, default_value_t = 10)]
    max_turns: u32,
    /// The agent card's `name` (default: the config's `a2a.name`, else `toolnexus-agent`).
    #[arg(long, value_name = "NAME")]
    agent_name: Option<String>,
    /// The agent card's `description`.
    #[arg(long, value_name = "TEXT")]
    agent_description: Option<String>,
    /// Advertise only this skill on the card (repeatable; default: every skill).
    #[arg(long = "agent-skill", value_name = "SKILL")]
    agent_skills: Vec<String>,
    /// Where tasks live: `memory` (default) or `file:DIR` (one JSON file per task).
    #[arg(long, value_name = "STORE")]
    a2a_store: Option<String>,
    /// Tasks running at once; more are refused with a JSON-RPC error (default 64).
    #[arg(long, value_name = "N")]
    max_running: Option<usize>,
}

impl Serve {
    pub async fn run(self) -> Result<(), Failure> {
        let Some(a2a_addr) = self.a2a.clone() else {
            if self.mcp.is_none() {
                return Err(Failure::usage("serve needs --mcp ADDR, --a2a ADDR, or both"));
            }
            return self.mcp_only().await;
        };
        if let Some(mcp) = self.mcp.as_ref().filter(|m| **m != a2a_addr) {
            return Err(Failure::usage(format!(
                "--mcp {mcp} and --a2a {a2a_addr} must be the same address: one listener serves both"
            )));
        }
        let client = self.agent.client()?;
        let config = self.a2a_config()?;
        let tk = self.toolkit.build().await?;
        let listener = match tokio::net::TcpListener::bind(&a2a_addr).await {
            Ok(l) => l,
            Err(e) => {
                tk.close().await;
                return Err(Failure::new(format!("cannot serve on {a2a_addr}: {e}")));
            }
        };
        let local = listener.local_addr().map_err(Failure::new)?;
        let base = base_url(local);
        let agent = A2aServer::new(&tk, client, config, &base);
        let stop = CancellationToken::new();
        let mut app = agent.router();
        let mut lines = Vec::new();
        if self.mcp.is_some() {
            app = app.merge(router(
                &tk,
                self.mcp_options(),
                stop.clone(),
                local.ip().is_loopback(),
            ));
            lines.push(format!("{base}/mcp"));
        }
        lines.push(base.clone());
        let shutdown = stop.clone();
        let server = tokio::spawn(async move {
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await;
        });
        // The URLs alone on stdout (MCP first), so a script can read where to connect.
        println!("{}", lines.join("\n"));
        let skills = agent.card().skills.len();
        eprintln!(
            "toolnexus: serving an A2A agent ({skills} skills on its card) at {base}/{}; Ctrl-C to stop",
            if self.mcp.is_some() {
                " and MCP at /mcp"
            } else {
                ""
            }
        );
        shutdown_signal().await;
        agent.shutdown(A2A_GRACE).await;
        stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
        tk.close().await;
        Ok(())
    }

    async fn mcp_only(self) -> Result<(), Failure> {
        let addr = self.mcp.clone().unwrap_or_default();
        let tk = self.toolkit.build().await?;
        let handle = match serve(&tk, &addr, self.mcp_options()).await {
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

    fn mcp_options(&self) -> ServeOptions {
        ServeOptions {
            name: self.name.clone(),
            version: self.server_version.clone(),
            tools: (!self.expose.is_empty()).then(|| self.expose.clone()),
            on_call: None,
        }
    }

    /// The config file's `a2a` block, then the flags over it.
    fn a2a_config(&self) -> Result<A2aConfig, Failure> {
        let mut config = A2aConfig::default();
        if let Some(path) = &self.toolkit.config {
            let doc: serde_json::Value = std::fs::read_to_string(path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default();
            if let Some(block) = doc.get("a2a") {
                config = A2aConfig::from_value(block, &path.display().to_string()).map_err(Failure::new)?;
            }
        }
        let flags = &self.agent;
        if flags.agent_name.is_some() {
            config.name = flags.agent_name.clone();
        }
        if flags.agent_description.is_some() {
            config.description = flags.agent_description.clone();
        }
        if !flags.agent_skills.is_empty() {
            config.skills = Some(flags.agent_skills.clone());
        }
        if let Some(spec) = &flags.a2a_store {
            let store = toolnexus::a2a::store::resolve_store(spec)
                .map_err(|e| Failure::usage(format!("--a2a-store: {e}")))?;
            config.store = Some(store);
        }
        if let Some(n) = flags.max_running {
            config.max_running = n.max(1);
        }
        Ok(config)
    }
}

impl AgentArgs {
    fn client(&self) -> Result<Client, Failure> {
        let (Some(base_url), Some(model)) = (&self.base_url, &self.model) else {
            return Err(Failure::usage(
                "--a2a needs --base-url and --model: the model that fulfils the agent's tasks",
            ));
        };
        let mut builder = Client::builder()
            .base_url(base_url)
            .style(super::parse_style(&self.style)?)
            .model(model)
            .max_turns(self.max_turns);
        if let Some(system) = &self.system {
            builder = builder.system_prompt(system);
        }
        if let Some(var) = &self.api_key_env {
            builder = builder.api_key_env(var);
        }
        builder.build().map_err(Failure::client)
    }
}

/// `http://HOST:PORT` as a client reaches it (a wildcard bind is reached on loopback).
fn base_url(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) if a.ip().is_unspecified() => format!("http://127.0.0.1:{}", a.port()),
        SocketAddr::V6(a) if a.ip().is_unspecified() => format!("http://[::1]:{}", a.port()),
        other => format!("http://{other}"),
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
