//! One `serve` for every profile (SPEC §7B, §7C): a toolkit on one HTTP listener as an MCP
//! server (`POST`/`GET`/`DELETE /mcp`) and/or an A2A agent (card at
//! `GET /.well-known/agent-card.json`, JSON-RPC at `POST /`). A profile not configured
//! mounts nothing: its paths answer 404.
//!
//! Whoever can reach the listener can run the toolkit's tools, so every route of every
//! profile is guarded, in this order:
//!
//! 1. **Host and Origin** (the [guard](ServeOptions::allowed_hosts)): a request must name
//!    this server, and a browser request must come from an allowed origin — HTTP 403
//!    otherwise. This stops web pages and DNS rebinding from driving a local server.
//! 2. **Bearer token** ([`ServeOptions::auth_token`]): compared in constant time; HTTP 401
//!    with `WWW-Authenticate: Bearer` otherwise. `serve` refuses a non-loopback address
//!    without a token unless [`ServeOptions::insecure_no_auth`] says so.
//! 3. **Limits** ([`Limits`]): a connection cap that closes the longest-idle connection
//!    for a newcomer, header-read, body-read and idle timeouts, a request body limit
//!    (HTTP 413).
//!
//! The tools that run commands or change files — [`DANGEROUS_TOOLS`] — are served only with
//! [`ServeOptions::expose_dangerous`]; the A2A profile's model does not get them either.
//! Each request is logged in one line ([`RequestEvent`]), never with its arguments or
//! headers.
//!
//! ```
//! use toolnexus::mcp::serve::McpServeConfig;
//! use toolnexus::serve::{AuthToken, ServeOptions, serve};
//! use toolnexus::{Tool, ToolResult, Toolkit};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let tk = Toolkit::new([Tool::new("ping", |_, _| async { ToolResult::success("pong") })]);
//! let options = ServeOptions {
//!     mcp: Some(McpServeConfig::default()),
//!     auth_token: Some(AuthToken::new("s3cret")),
//!     ..ServeOptions::default()
//! };
//! let handle = serve(&tk, "127.0.0.1:0", options).await.unwrap();
//! let url = handle.mcp_url().unwrap();
//! assert_eq!(url, format!("http://{}/mcp", handle.addr()));
//!
//! let denied = reqwest::Client::new().post(&url).send().await.unwrap();
//! assert_eq!(denied.status(), 401);
//! assert_eq!(denied.headers()["www-authenticate"], "Bearer");
//!
//! // Reachable from other machines, a server needs a token (or an explicit opt-out).
//! let err = serve(&tk, "0.0.0.0:0", ServeOptions::default()).await.unwrap_err();
//! assert!(err.to_string().starts_with("refusing to serve on 0.0.0.0:0 without authentication"));
//! handle.stop().await;
//! # });
//! ```

mod auth;
mod conn;
mod guard;
mod limits;
pub(crate) mod log;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

pub use auth::AuthToken;
pub use limits::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, Limits,
};
pub use log::{OnRequest, RequestEvent};

#[cfg(all(feature = "a2a", feature = "client"))]
use crate::a2a::{A2aConfig, A2aServer};
#[cfg(all(feature = "a2a", feature = "client"))]
use crate::client::Client;
use crate::mcp::serve::McpServeConfig;
use crate::toolkit::Toolkit;

/// The built-in tools that run commands or change files. `serve` leaves them out unless
/// [`ServeOptions::expose_dangerous`] is set.
pub const DANGEROUS_TOOLS: [&str; 4] = ["bash", "write", "edit", "apply_patch"];

/// How long [`ServeHandle::stop`] lets running A2A tasks and in-flight requests finish.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The A2A profile: the client whose loop fulfils each task, and the card and limits.
#[cfg(all(feature = "a2a", feature = "client"))]
#[derive(Clone)]
pub struct A2aProfile {
    /// The model loop behind every task.
    pub client: Client,
    /// The card, the task store and the A2A limits.
    pub config: A2aConfig,
}

#[cfg(all(feature = "a2a", feature = "client"))]
impl A2aProfile {
    /// A profile of `client` and `config`.
    pub fn new(client: Client, config: A2aConfig) -> Self {
        Self { client, config }
    }
}

#[cfg(all(feature = "a2a", feature = "client"))]
impl fmt::Debug for A2aProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("A2aProfile")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What [`serve`] mounts and how it guards it. The default mounts nothing, allows loopback
/// hosts and same-origin browsers, needs no token on loopback, and withholds
/// [`DANGEROUS_TOOLS`].
#[derive(Clone, Default)]
pub struct ServeOptions {
    /// The MCP profile (SPEC §7C) at `/mcp`; `None` mounts no `/mcp`.
    pub mcp: Option<McpServeConfig>,
    /// The A2A profile (SPEC §7B) at `/` and the card path; `None` mounts neither.
    #[cfg(all(feature = "a2a", feature = "client"))]
    pub a2a: Option<A2aProfile>,
    /// The bearer token every request must carry; `None` ⇒ no authentication, which a
    /// non-loopback address refuses unless [`insecure_no_auth`](Self::insecure_no_auth).
    pub auth_token: Option<AuthToken>,
    /// Serve a non-loopback address without a token (a trusted network, a proxy in front
    /// that authenticates).
    pub insecure_no_auth: bool,
    /// Serve [`DANGEROUS_TOOLS`] too.
    pub expose_dangerous: bool,
    /// Host names (optionally `name:port`) requests may address besides IP literals and
    /// `localhost` — the server's DNS name when it is reached by one.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed besides the server's own: `scheme://host[:port]` (no port
    /// means the scheme's default), `scheme://host:*` (any port), or `null`.
    pub allowed_origins: Vec<String>,
    /// Connection, time and body bounds.
    pub limits: Limits,
    /// Called once per request after it was answered.
    pub on_request: Option<OnRequest>,
}

impl fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ServeOptions");
        d.field("mcp", &self.mcp);
        #[cfg(all(feature = "a2a", feature = "client"))]
        d.field("a2a", &self.a2a);
        d.field("auth_token", &self.auth_token)
            .field("insecure_no_auth", &self.insecure_no_auth)
            .field("expose_dangerous", &self.expose_dangerous)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("limits", &self.limits)
            .field("on_request", &self.on_request.is_some())
            .finish()
    }
}

/// Why [`serve`] did not start.
#[derive(thiserror::Error)]
pub enum ServeError {
    /// The address could not be resolved or bound.
    #[error("cannot serve on {addr}: {source}")]
    Bind {
        /// The requested address.
        addr: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A non-loopback address without a token and without the explicit opt-out.
    #[error(
        "refusing to serve on {addr} without authentication: a non-loopback address is reachable from other machines; set an auth token, or set insecure_no_auth to serve without one"
    )]
    Unauthenticated {
        /// The requested address.
        addr: String,
    },
    /// The auth token is the empty string.
    #[error("the auth token is empty: a server needs a secret no one can guess")]
    EmptyToken,
    /// An allowed host or origin is malformed.
    #[error("serve options: {message}")]
    Options {
        /// Which entry, and what is wrong with it.
        message: String,
    },
}

crate::debug_as_display!(ServeError);

/// A running server.
///
/// Dropping the handle stops the server without waiting; [`stop`](Self::stop) waits.
pub struct ServeHandle {
    url: String,
    addr: SocketAddr,
    mcp_tools: Option<crate::mcp::serve::ServedTools>,
    withheld: Vec<String>,
    #[cfg(all(feature = "a2a", feature = "client"))]
    a2a: Option<A2aServer>,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl fmt::Debug for ServeHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeHandle")
            .field("url", &self.url)
            .field("mcp_tools", &self.mcp_tools.as_ref().map(|t| t.names()))
            .field("withheld", &self.withheld)
            .finish_non_exhaustive()
    }
}

impl ServeHandle {
    /// `http://HOST:PORT`, the base every profile's paths hang off (a wildcard bind is
    /// reported on loopback).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bound address (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT/mcp` when the MCP profile is mounted.
    pub fn mcp_url(&self) -> Option<String> {
        self.mcp_tools.as_ref().map(|_| format!("{}/mcp", self.url))
    }

    /// The tool names served over MCP now, sorted (empty when the profile is not mounted).
    /// A gateway's list follows its upstream servers: after one sends
    /// `notifications/tools/list_changed`, this is the list the gateway serves since.
    pub fn mcp_tools(&self) -> Vec<String> {
        self.mcp_tools.as_ref().map(|t| t.names()).unwrap_or_default()
    }

    /// The [`DANGEROUS_TOOLS`] the toolkit has but this server leaves out.
    pub fn withheld(&self) -> &[String] {
        &self.withheld
    }

    /// The A2A agent, when that profile is mounted: its card, task store, running count
    /// and [`shutdown`](A2aServer::shutdown).
    #[cfg(all(feature = "a2a", feature = "client"))]
    pub fn a2a(&self) -> Option<&A2aServer> {
        self.a2a.as_ref()
    }

    /// Stops taking connections and tasks, lets running A2A tasks and in-flight requests
    /// finish for a few seconds, then drops the rest (A2A tasks are recorded `failed`).
    pub async fn stop(mut self) {
        #[cfg(all(feature = "a2a", feature = "client"))]
        if let Some(agent) = &self.a2a {
            agent.shutdown(STOP_GRACE).await;
        }
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(STOP_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
    }

    /// Runs until the server stops.
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ServeHandle {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Binds `addr` and serves `toolkit` under `options` until the handle stops. The toolkit
/// is snapshotted: tools added later are not served.
///
/// Errors before anything is bound: a non-loopback address without a token (unless
/// [`insecure_no_auth`](ServeOptions::insecure_no_auth)), an empty token, a malformed
/// allowed host or origin.
pub async fn serve(toolkit: &Toolkit, addr: &str, options: ServeOptions) -> Result<ServeHandle, ServeError> {
    if options.auth_token.as_ref().is_some_and(AuthToken::is_empty) {
        return Err(ServeError::EmptyToken);
    }
    let guard = guard::Guard::new(&options.allowed_hosts, &options.allowed_origins)
        .map_err(|message| ServeError::Options { message })?;
    let bind_error = |source| ServeError::Bind {
        addr: addr.to_owned(),
        source,
    };
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host(addr).await.map_err(bind_error)?.collect();
    let exposed = resolved.iter().any(|a| !a.ip().is_loopback());
    if exposed && options.auth_token.is_none() && !options.insecure_no_auth {
        return Err(ServeError::Unauthenticated {
            addr: addr.to_owned(),
        });
    }
    if exposed && options.auth_token.is_none() {
        tracing::warn!(target: "toolnexus::serve", "serving {addr} to the network without authentication (insecure_no_auth)");
    }
    let listener = tokio::net::TcpListener::bind(&resolved[..])
        .await
        .map_err(bind_error)?;
    let local = listener.local_addr().map_err(bind_error)?;
    let url = base_url(local);

    let (served, withheld) = without_dangerous(toolkit, options.expose_dangerous);
    if !withheld.is_empty() {
        tracing::info!(
            target: "toolnexus::serve",
            "not serving {} (they run commands or change files); set expose_dangerous to serve them",
            withheld.join(", ")
        );
    }
    let stop = CancellationToken::new();
    let mut app = Router::new();
    let mut mcp_tools = None;
    if let Some(mcp) = options.mcp {
        let (router, tools) = crate::mcp::serve::router(&served, mcp, stop.child_token());
        mcp_tools = Some(tools);
        app = app.merge(router);
    }
    #[cfg(all(feature = "a2a", feature = "client"))]
    let a2a = options.a2a.map(|profile| {
        let agent = A2aServer::new(&served, profile.client, profile.config, &url);
        app = std::mem::take(&mut app).merge(agent.router());
        agent
    });

    let limits = Arc::new(options.limits);
    // Layers run outermost-last: log, then guard, then auth, then the body limit.
    let mut app = app
        .fallback(not_found)
        .layer(from_fn_with_state(limits.clone(), limits::read_body));
    if let Some(token) = options.auth_token {
        app = app.layer(from_fn_with_state(token, auth::check));
    }
    let app = app
        .layer(from_fn_with_state(Arc::new(guard), guard::check))
        .layer(from_fn_with_state(options.on_request, log::log_request));
    let task = tokio::spawn(conn::accept_loop(listener, app, limits, stop.clone()));
    Ok(ServeHandle {
        url,
        addr: local,
        mcp_tools,
        withheld,
        #[cfg(all(feature = "a2a", feature = "client"))]
        a2a,
        stop,
        task: Some(task),
    })
}

/// `toolkit` minus the [`DANGEROUS_TOOLS`] unless `expose`, and the names left out.
fn without_dangerous(toolkit: &Toolkit, expose: bool) -> (Toolkit, Vec<String>) {
    let mut served = toolkit.clone();
    if expose {
        return (served, Vec::new());
    }
    let withheld = DANGEROUS_TOOLS
        .iter()
        .filter(|name| served.remove(name).is_some())
        .map(|name| (*name).to_owned())
        .collect();
    (served, withheld)
}

/// `http://HOST:PORT` as a client reaches it (a wildcard bind is reached on loopback).
fn base_url(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) if a.ip().is_unspecified() => format!("http://127.0.0.1:{}", a.port()),
        SocketAddr::V6(a) if a.ip().is_unspecified() => format!("http://[::1]:{}", a.port()),
        other => format!("http://{other}"),
    }
}

/// A one-line plain-text answer.
fn plain(status: StatusCode, message: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message,
    )
        .into_response()
}

async fn not_found(uri: axum::http::Uri) -> Response {
    plain(
        StatusCode::NOT_FOUND,
        format!("not found: {} (no profile serves it)", uri.path()),
    )
}
