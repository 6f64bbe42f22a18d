//! `toolnexus serve --mcp ADDR` / `--a2a ADDR`: serve the toolkit the flags describe as one
//! MCP server (streamable HTTP at `/mcp`) — any mcp.json + skills + built-ins behind one
//! gateway — and/or as an A2A agent (card at `/.well-known/agent-card.json`, JSON-RPC at
//! `POST /`) whose tasks a model fulfils. Both flags on one address serve both on one
//! listener; on two addresses, two listeners, each guarded the same way.
//!
//! Guarded as the library's `serve` is (Host and Origin checks, limits), plus what only a
//! command line decides: the token comes from an environment variable (never from the
//! command line, where `ps` shows it), the file tools are confined to the working
//! directory, and `bash`/`write`/`edit`/`apply_patch` need `--expose-dangerous`.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use toolnexus::a2a::A2aConfig;
use toolnexus::client::Client;
use toolnexus::mcp::LoadOptions;
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::serve::{
    A2aProfile, AuthToken, DANGEROUS_TOOLS, Limits, RequestEvent, ServeError, ServeHandle, ServeOptions,
    serve,
};
use toolnexus::store::{SqlTaskStore, StoreUrl, Stores};
use toolnexus::suspend::{Answer, AnswerReason, Request, WaitFor};
use toolnexus::{Toolkit, ToolkitOptions};

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
    /// Expose only this tool over MCP (repeatable; an unknown name is warned about).
    #[arg(long = "expose", value_name = "NAME")]
    expose: Vec<String>,
    /// Also serve bash, write, edit and apply_patch (they run commands or change files).
    #[arg(long)]
    expose_dangerous: bool,
    /// Let the file tools reach outside the working directory (confined by default).
    #[arg(long)]
    no_confine: bool,
    /// Require `Authorization: Bearer <token>`, the token read from this environment
    /// variable.
    #[arg(long, value_name = "VAR")]
    auth_token_env: Option<String>,
    /// Serve a non-loopback address without a token (a trusted network only).
    #[arg(long)]
    insecure_no_auth: bool,
    /// Accept requests addressed to this host name (repeatable; IP addresses and
    /// `localhost` always are).
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Accept browser requests from this origin, e.g. `http://localhost:6274` (repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Connections open at once (default 256); at the cap the longest-idle one is closed.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
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
    /// Where state lives — conversations, suspended runs, A2A tasks: `memory` (default),
    /// `file:DIR`, `sqlite:PATH` or `postgres://USER:PASSWORD@HOST:PORT/DB` (shared by
    /// replicas). `--a2a-store` is the old name.
    #[arg(long = "store", alias = "a2a-store", value_name = "URL")]
    store: Option<String>,
    /// How long a replica's hold on a running A2A task lasts, in milliseconds (default
    /// 30000); renewed every third of it. A task whose replica stops renewing (killed) is
    /// failed by another replica sharing the store.
    #[arg(long, value_name = "MS")]
    a2a_lease_ms: Option<u64>,
    /// Tasks running at once; more are refused with a JSON-RPC error (default 64).
    #[arg(long, value_name = "N")]
    max_running: Option<usize>,
}

impl Serve {
    pub async fn run(self) -> Result<(), Failure> {
        if self.mcp.is_none() && self.a2a.is_none() {
            return Err(Failure::usage("serve needs --mcp ADDR, --a2a ADDR, or both"));
        }
        let base = self.guard_options()?;
        let store = self.store_url()?;
        let stores = match &store {
            Some(url) => Some(Stores::open(url).await.map_err(Failure::new)?),
            None => None,
        };
        let a2a = match &self.a2a {
            Some(_) => Some(A2aProfile::new(
                self.agent.client(stores.as_ref())?,
                self.a2a_config(stores.as_ref())?,
            )),
            None => None,
        };
        let tk = self.build_toolkit().await?;
        let handles = match self.start(&tk, base, a2a).await {
            Ok(handles) => handles,
            Err(failure) => {
                tk.close().await;
                return Err(failure);
            }
        };
        self.announce(&tk, &handles);
        shutdown_signal().await;
        for handle in handles {
            if let Some(agent) = handle.a2a() {
                agent.shutdown(A2A_GRACE).await;
            }
            handle.stop().await;
        }
        tk.close().await;
        Ok(())
    }

    /// The options every listener shares: the token, the guard, the limits, the log line.
    fn guard_options(&self) -> Result<ServeOptions, Failure> {
        let auth_token = match &self.auth_token_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(token) if !token.is_empty() => Some(AuthToken::new(token)),
                Ok(_) => {
                    return Err(Failure::usage(format!(
                        "--auth-token-env {var}: the environment variable {var} is empty"
                    )));
                }
                Err(_) => {
                    return Err(Failure::usage(format!(
                        "--auth-token-env {var}: the environment variable {var} is not set"
                    )));
                }
            },
        };
        let mut limits = Limits::default();
        if let Some(n) = self.max_connections {
            limits.max_connections = n.max(1);
        }
        Ok(ServeOptions {
            auth_token,
            insecure_no_auth: self.insecure_no_auth,
            expose_dangerous: self.expose_dangerous,
            allowed_hosts: self.allow_hosts.clone(),
            allowed_origins: self.allow_origins.clone(),
            limits,
            on_request: Some(Arc::new(|e: &RequestEvent| eprintln!("toolnexus: {e}"))),
            ..ServeOptions::default()
        })
    }

    /// The toolkit, its file tools confined to the working directory unless `--no-confine`.
    ///
    /// Served over MCP, its upstream servers are loaded declaring elicitation: an upstream
    /// server's `elicitation/create` then reaches the calling client when that client declared
    /// the capability, and is declined for one that did not (nobody at this process could answer).
    async fn build_toolkit(&self) -> Result<Toolkit, Failure> {
        let mut options = ToolkitOptions::default();
        if self.mcp.is_some() {
            let decline: WaitFor = Arc::new(|request: Request| {
                Box::pin(async move { Answer::declined(request.id, AnswerReason::Declined) })
            });
            options = options.mcp_load(LoadOptions::default().wait_for(decline));
        }
        if !self.no_confine {
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::new(format!("cannot read the working directory: {e}")))?;
            options = options.base_dir(cwd).confine_to_base_dir(true);
        }
        self.toolkit.build_with(options).await
    }

    /// One listener for both profiles on one address, else one per profile.
    async fn start(
        &self,
        tk: &Toolkit,
        base: ServeOptions,
        a2a: Option<A2aProfile>,
    ) -> Result<Vec<ServeHandle>, Failure> {
        let mcp = self.mcp.as_ref().map(|_| McpServeConfig {
            name: self.name.clone(),
            version: self.server_version.clone(),
            tools: (!self.expose.is_empty()).then(|| self.expose.clone()),
            ..McpServeConfig::default()
        });
        let listen = |addr: &str, mcp: Option<McpServeConfig>, a2a: Option<A2aProfile>| {
            let options = ServeOptions {
                mcp,
                a2a,
                ..base.clone()
            };
            let addr = addr.to_owned();
            async move { serve(tk, &addr, options).await.map_err(cli_error) }
        };
        match (&self.mcp, &self.a2a) {
            (Some(m), Some(a)) if m != a => {
                let mcp_handle = listen(m, mcp, None).await?;
                let a2a_handle = listen(a, None, a2a).await?;
                Ok(vec![mcp_handle, a2a_handle])
            }
            (Some(addr), _) | (None, Some(addr)) => Ok(vec![listen(addr, mcp, a2a).await?]),
            (None, None) => Ok(Vec::new()),
        }
    }

    /// What is served, and what is not, on stderr; then the URLs alone on stdout (MCP
    /// first), so a script can read where to connect.
    fn announce(&self, tk: &Toolkit, handles: &[ServeHandle]) {
        let mcp = handles.iter().find_map(|h| h.mcp_url().map(|url| (h, url)));
        let agent = handles.iter().find(|h| h.a2a().is_some());
        for name in &self.expose {
            if tk.get(name).is_none() {
                eprintln!("toolnexus: --expose {name}: no such tool; ignored");
            } else if !self.expose_dangerous && DANGEROUS_TOOLS.contains(&name.as_str()) {
                eprintln!(
                    "toolnexus: --expose {name}: left out: it runs commands or changes files (add --expose-dangerous to serve it)"
                );
            }
        }
        let withheld = handles.first().map(ServeHandle::withheld).unwrap_or_default();
        if !withheld.is_empty() && self.expose.is_empty() {
            eprintln!(
                "toolnexus: not serving {}: they run commands or change files; add --expose-dangerous to serve them",
                withheld.join(", ")
            );
        }
        if !self.no_confine && !self.toolkit.no_builtins {
            eprintln!("toolnexus: file tools are confined to the working directory (--no-confine to lift)");
        }
        if let Some((handle, url)) = &mcp {
            let n = handle.mcp_tools().len();
            let tools = if n == 1 { "tool" } else { "tools" };
            eprintln!("toolnexus: serving {n} {tools} over MCP at {url}");
        }
        if let Some(handle) = agent {
            let skills = handle.a2a().map_or(0, |a| a.card().skills.len());
            eprintln!(
                "toolnexus: serving an A2A agent ({skills} skills on its card) at {}/",
                handle.url()
            );
        }
        let auth = if self.auth_token_env.is_some() {
            "bearer token required"
        } else {
            "no authentication"
        };
        eprintln!("toolnexus: {auth}; Ctrl-C to stop");
        // Last, so a script that has read the URLs has also seen what is served.
        let mut urls: Vec<String> = mcp.iter().map(|(_, url)| url.clone()).collect();
        urls.extend(agent.map(|h| h.url().to_owned()));
        println!("{}", urls.join("\n"));
    }

    /// The config file's `a2a` block, then the flags over it.
    /// `--store`, parsed.
    fn store_url(&self) -> Result<Option<StoreUrl>, Failure> {
        let Some(spec) = &self.agent.store else {
            return Ok(None);
        };
        let url: StoreUrl = spec
            .parse()
            .map_err(|e| Failure::usage(format!("--store: {e}")))?;
        Ok(Some(url))
    }

    /// The config file's `a2a` block, then the flags over it; on an SQL `--store` the tasks
    /// share its (already open) database.
    fn a2a_config(&self, stores: Option<&Stores>) -> Result<A2aConfig, Failure> {
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
        if let Some(db) = stores.and_then(|s| s.db.clone()) {
            config.store = Some(Arc::new(SqlTaskStore::from_db(db)));
        } else if let Some(spec) = &flags.store {
            let store = toolnexus::a2a::store::resolve_store(spec)
                .map_err(|e| Failure::usage(format!("--store: {e}")))?;
            config.store = Some(store);
        }
        if let Some(ms) = flags.a2a_lease_ms {
            config.lease = Duration::from_millis(ms.max(1));
        }
        if let Some(n) = flags.max_running {
            config.max_running = n.max(1);
        }
        Ok(config)
    }
}

/// The library's refusal in the command line's words; other errors as they are.
fn cli_error(error: ServeError) -> Failure {
    match error {
        ServeError::Unauthenticated { addr } => Failure::usage(format!(
            "refusing to serve on {addr} without authentication: a non-loopback address is reachable from other machines; pass --auth-token-env VAR (the token in that environment variable), or --insecure-no-auth on a trusted network"
        )),
        ServeError::Options { .. } => Failure::usage(error),
        other => Failure::new(other),
    }
}

impl AgentArgs {
    /// The model client; with `stores`, its conversations and suspensions live there.
    fn client(&self, stores: Option<&Stores>) -> Result<Client, Failure> {
        let (Some(base_url), Some(model)) = (&self.base_url, &self.model) else {
            return Err(Failure::usage(
                "--a2a needs --base-url and --model: the model that fulfils the agent's tasks",
            ));
        };
        let mut builder = super::model_builder(base_url, &self.style, model, self.api_key_env.as_deref())?
            .max_turns(self.max_turns);
        if let Some(system) = &self.system {
            builder = builder.system_prompt(system);
        }
        if let Some(stores) = stores {
            builder = builder
                .store(stores.conversations.clone())
                .suspensions(stores.suspensions.clone());
        }
        builder.build().map_err(Failure::client)
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
