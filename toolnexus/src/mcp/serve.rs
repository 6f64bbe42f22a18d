//! A toolkit served as an MCP server (SPEC §7C): streamable HTTP at `/mcp`,
//! `tools/list` + `tools/call` straight onto [`Tool::execute`](crate::Tool::execute).
//!
//! Sessions are stateful unless [`McpServeConfig::stateless`]: `initialize` answers with an `Mcp-Session-Id`, a `GET` opens the
//! session's event stream, a `DELETE` ends it. At most [`McpServeConfig::max_sessions`]
//! live at once (one more `initialize` is refused with 503), a `DELETE` is answered 204, and a session idle for
//! [`McpServeConfig::session_idle`] is dropped. A `tools/call` that carries a
//! `progressToken` has its tool's progress (an upstream MCP server's too, when the toolkit
//! is a gateway) sent back as `notifications/progress`; the client's
//! `notifications/cancelled` cancels the call's [`ToolContext`] (and so the upstream call).
//!
//! This module is the profile — what `/mcp` answers; [`crate::serve::serve`] mounts it on a
//! guarded listener (Host and Origin checks, bearer token, limits), beside the A2A profile.
//!
//! ```
//! use toolnexus::mcp::serve::McpServeConfig;
//! use toolnexus::serve::{ServeOptions, serve};
//! use toolnexus::{Tool, ToolResult, Toolkit};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let tk = Toolkit::new([Tool::new("ping", |_, _| async { ToolResult::success("pong") })]);
//! let mcp = McpServeConfig { name: Some("pinger".into()), ..McpServeConfig::default() };
//! let handle = serve(&tk, "127.0.0.1:0", ServeOptions { mcp: Some(mcp), ..ServeOptions::default() })
//!     .await
//!     .unwrap();
//! assert!(handle.mcp_url().unwrap().ends_with("/mcp"));
//! assert_eq!(handle.mcp_tools(), ["ping"]);
//! handle.stop().await;
//! # });
//! ```

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::elicitation;
use crate::content::{ContentPart, MediaSource};
use crate::context::{Progress, ToolContext};
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource};
use crate::toolkit::Toolkit;

/// Default `serverInfo.name`.
pub const DEFAULT_NAME: &str = "toolnexus";
/// Default `serverInfo.version`.
pub const DEFAULT_VERSION: &str = "0.1.0";
/// Default [`McpServeConfig::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Default [`McpServeConfig::session_idle`]: five minutes, rmcp's own default.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);
/// How many progress reports of one call may wait to be sent; past that, reports are
/// dropped (the next one says as much), so a tool that reports faster than the client
/// reads cannot grow memory.
const PROGRESS_BACKLOG: usize = 64;
/// How long one session may take to accept a `tools/list_changed` notice.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
const NOTICE_BOUND: Duration = Duration::from_secs(5);

/// One inbound `tools/call`, reported to [`McpServeConfig::on_call`] after it finished.
#[derive(Clone, Debug, PartialEq)]
pub struct CallEvent {
    /// The tool name as called.
    pub name: String,
    /// The tool's provenance.
    pub source: ToolSource,
    /// Wall time of the execution in milliseconds.
    pub ms: f64,
    /// Whether the result was a failure.
    pub is_error: bool,
}

/// The per-call callback; a panic inside it is contained.
pub type OnCall = Arc<dyn Fn(&CallEvent) + Send + Sync>;

/// The MCP serve profile (SPEC §7C `MCPServeConfig`) plus the `on_call` hook and the
/// session bounds.
#[derive(Clone)]
pub struct McpServeConfig {
    /// `serverInfo.name`; `"toolnexus"` when `None`.
    pub name: Option<String>,
    /// `serverInfo.version`; `"0.1.0"` when `None`.
    pub version: Option<String>,
    /// Expose only these tool names (unknown names are ignored); `None` ⇒ every tool.
    pub tools: Option<Vec<String>>,
    /// Called once per `tools/call` with its outcome.
    pub on_call: Option<OnCall>,
    /// The most sessions alive at once; an `initialize` past it is refused with
    /// `503 Service Unavailable` until one ends (`DELETE`) or expires.
    pub max_sessions: usize,
    /// A session that sees no request for this long is dropped; its id then answers 404,
    /// which tells a client to initialize again.
    pub session_idle: Duration,
    /// Serve without sessions: every POST stands alone and is answered with plain JSON (for
    /// replicas behind a balancer that does not pin a client to one). The server then
    /// cannot reach a client outside a call's answer: no `tools/list_changed`, no progress,
    /// no elicitation (a suspension stays an error result).
    pub stateless: bool,
}

impl Default for McpServeConfig {
    fn default() -> Self {
        Self {
            name: None,
            version: None,
            tools: None,
            on_call: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: DEFAULT_SESSION_IDLE,
            stateless: false,
        }
    }
}

impl fmt::Debug for McpServeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServeConfig")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("tools", &self.tools)
            .field("on_call", &self.on_call.is_some())
            .field("max_sessions", &self.max_sessions)
            .field("session_idle", &self.session_idle)
            .field("stateless", &self.stateless)
            .finish()
    }
}

/// The `/mcp` route, and a view of the tools it serves now. The Host check is the
/// listener's (every route, every bind address), so rmcp's own, which covers `/mcp` alone,
/// is off.
pub(crate) fn router(
    toolkit: &Toolkit,
    options: McpServeConfig,
    cancel: CancellationToken,
) -> (axum::Router, ServedTools) {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle);
    let sessions = Arc::new(sessions);
    let stateless = options.stateless;
    let cap = SessionCap {
        sessions: sessions.clone(),
        max: options.max_sessions,
        admitting: Arc::new(tokio::sync::Mutex::new(())),
    };
    #[cfg(feature = "mcp")]
    let gateway = {
        let changes = crate::mcp::tool_list_changes(toolkit);
        let gateway = Gateway::new(toolkit, options, !changes.is_empty());
        if !changes.is_empty() {
            tokio::spawn(gateway.clone().follow(toolkit.clone(), changes, cancel.clone()));
        }
        gateway
    };
    #[cfg(not(feature = "mcp"))]
    let gateway = Gateway::new(toolkit, options, false);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless)
        .with_cancellation_token(cancel)
        .disable_allowed_hosts();
    let served = ServedTools(gateway.clone());
    let service: StreamableHttpService<Gateway, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(gateway.clone()), sessions, config);
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(move |request, next| {
            cap.clone().admit(request, next)
        }));
    (router, served)
}

/// The tools `/mcp` serves at this moment: those of startup, then each upstream
/// `tools/list_changed` as the gateway applied it.
#[derive(Clone)]
pub(crate) struct ServedTools(Gateway);

impl ServedTools {
    /// The served tool names, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = read(&self.0.0.exposed).by_name.keys().cloned().collect();
        names.sort_unstable();
        names
    }
}

/// The bound on live sessions, checked before rmcp creates one; and a session's end
/// answered as the SDK clients expect.
#[derive(Clone)]
struct SessionCap {
    sessions: Arc<LocalSessionManager>,
    max: usize,
    /// Held while one `initialize` is handled, so two of them cannot both see the last free
    /// place (other requests, those of a session-less protocol revision included, never wait
    /// on it).
    admitting: Arc<tokio::sync::Mutex<()>>,
}

impl SessionCap {
    async fn admit(self, request: Request, next: Next) -> Response {
        if request.method() == Method::DELETE {
            // rmcp answers an ended session with 202; the MCP SDK clients expect 200 or 204
            // (and warn "Session termination failed: 202").
            let mut response = next.run(request).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return response;
        }
        let opens_session = request.method() == Method::POST
            && crate::serve::log::rpc_method(request.extensions()).as_deref() == Some("initialize");
        if !opens_session {
            return next.run(request).await;
        }
        let _admitting = self.admitting.lock().await;
        let live = self.sessions.sessions.read().await.len();
        if live >= self.max {
            let message = format!(
                "this MCP server has {live} sessions open, its limit (max_sessions = {}); \
                 retry later, or end an unused session with DELETE",
                self.max
            );
            return (StatusCode::SERVICE_UNAVAILABLE, [("retry-after", "5")], message).into_response();
        }
        next.run(request).await
    }
}

#[derive(Clone)]
struct Gateway(Arc<GatewayInner>);

struct GatewayInner {
    info: ServerConfig,
    /// [`McpServeConfig::tools`], applied again when an upstream server's tools change.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    filter: Option<Vec<String>>,
    exposed: RwLock<Exposed>,
    on_call: Option<OnCall>,
    /// The initialized sessions, told when the tools change (closed ones are dropped then).
    sessions: Mutex<Vec<Peer<RoleServer>>>,
}

/// The tools served, as listed and by name.
struct Exposed {
    listed: Vec<rmcp::model::Tool>,
    by_name: HashMap<String, Tool>,
}

impl Exposed {
    fn of(toolkit: &Toolkit, filter: Option<&Vec<String>>) -> Self {
        let exposed: Vec<Tool> = toolkit
            .tools()
            .filter(|t| filter.is_none_or(|names| names.iter().any(|n| n == t.name())))
            .cloned()
            .collect();
        Self {
            listed: exposed.iter().filter_map(listing).collect(),
            by_name: exposed.into_iter().map(|t| (t.name().to_owned(), t)).collect(),
        }
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // The guarded values are replaced whole, so a panicked holder leaves them consistent.
    lock.read().unwrap_or_else(|e| e.into_inner())
}

impl Gateway {
    /// `follows_changes`: the toolkit has MCP servers whose tool changes are passed on.
    fn new(toolkit: &Toolkit, options: McpServeConfig, follows_changes: bool) -> Self {
        let server = Implementation::new(
            options.name.unwrap_or_else(|| DEFAULT_NAME.into()),
            options.version.unwrap_or_else(|| DEFAULT_VERSION.into()),
        );
        let capabilities = if follows_changes {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        Self(Arc::new(GatewayInner {
            info: ServerConfig::new(capabilities).with_server_info(server),
            exposed: RwLock::new(Exposed::of(toolkit, options.tools.as_ref())),
            filter: options.tools,
            on_call: options.on_call,
            sessions: Mutex::new(Vec::new()),
        }))
    }

    #[cfg(feature = "mcp")]
    /// Follow the upstream servers' tool changes until `stop`: apply each to the served
    /// tools, then send `notifications/tools/list_changed` to every session.
    async fn follow(
        self,
        mut toolkit: Toolkit,
        mut changes: Vec<tokio::sync::watch::Receiver<u64>>,
        stop: CancellationToken,
    ) {
        while !changes.is_empty() {
            let (changed, index) = {
                let next = futures::future::select_all(changes.iter_mut().map(|rx| Box::pin(rx.changed())));
                tokio::select! {
                    () = stop.cancelled() => return,
                    (changed, index, _) = next => (changed, index),
                }
            };
            if changed.is_err() {
                // That server's session is gone (the toolkit was closed).
                changes.swap_remove(index);
                continue;
            }
            if toolkit.refresh_mcp_tools().is_empty() {
                continue;
            }
            let exposed = Exposed::of(&toolkit, self.0.filter.as_ref());
            *self.0.exposed.write().unwrap_or_else(|e| e.into_inner()) = exposed;
            let peers = {
                let mut sessions = self.0.sessions.lock().unwrap_or_else(|e| e.into_inner());
                sessions.retain(|p| !p.is_transport_closed());
                sessions.clone()
            };
            for peer in peers {
                // A session that does not take the notice in time misses it, not the others.
                let _ = tokio::time::timeout(NOTICE_BOUND, peer.notify_tool_list_changed()).await;
            }
        }
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        self.0.info.clone()
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut sessions = self.0.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|p| !p.is_transport_closed());
        sessions.push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            read(&self.0.exposed).listed.clone(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = read(&self.0.exposed).by_name.get(request.name.as_ref()).cloned();
        let Some(tool) = tool else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let started = Instant::now();
        let mut ctx = ToolContext::default().with_cancel(context.ct.clone());
        let relay = context
            .meta
            .get_progress_token()
            .map(|token| ProgressRelay::start(context.peer.clone(), token));
        if let Some(relay) = &relay {
            ctx = relay.attach(ctx);
        }
        if elicitation::supported(&context.peer) {
            ctx.on_elicit = Some(elicitation::relay(context.peer.clone()));
        }
        // `execute` contains panics and honours the request's cancellation.
        let mut result = tool.execute(args.clone(), ctx.clone()).await;
        if elicitation::supported(&context.peer) {
            // A suspension is asked of the client, and the tool run again with its answer.
            for _ in 0..elicitation::MAX_ROUNDS {
                let Some(request) = result.pending().cloned() else {
                    break;
                };
                let asked = tokio::select! {
                    outcome = elicitation::ask(&context.peer, &request) => outcome,
                    () = context.ct.cancelled() => break,
                };
                match asked {
                    elicitation::Outcome::Answer(answer) => {
                        let mut retry = ctx.clone();
                        retry.answer = Some(answer);
                        result = tool.execute(args.clone(), retry).await;
                    }
                    elicitation::Outcome::Result(r) => {
                        result = r;
                        break;
                    }
                }
            }
        }
        if let Some(relay) = relay {
            // Every report goes out before the result does.
            relay.finish().await;
        }
        if result.is_error
            && let Some(http) = context.extensions.get::<axum::http::request::Parts>()
        {
            crate::serve::log::note_failed(&http.extensions);
        }
        if let Some(on_call) = &self.0.on_call {
            let event = CallEvent {
                name: tool.name().to_owned(),
                source: tool.source(),
                ms: started.elapsed().as_secs_f64() * 1000.0,
                is_error: result.is_error,
            };
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| on_call(&event)));
        }
        Ok(to_call_result(&tool, &result).into())
    }
}

/// Sends a call's progress to the client as `notifications/progress` under the client's
/// token, in order, from one task (the tool's callback is synchronous).
struct ProgressRelay {
    tx: tokio::sync::mpsc::Sender<Progress>,
    done: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl ProgressRelay {
    fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Progress>(PROGRESS_BACKLOG);
        let done = CancellationToken::new();
        let finished = done.clone();
        let task = tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    biased;
                    p = rx.recv() => p,
                    // The call is over: send what is queued, then stop, even if the tool
                    // left a clone of its context (and so of the sender) behind.
                    () = finished.cancelled() => rx.try_recv().ok(),
                };
                let Some(p) = next else { break };
                let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                param.total = p.total;
                param.message = p.message;
                // A client that went away cannot be told; the call still finishes.
                let _ = peer.notify_progress(param).await;
            }
        });
        Self { tx, done, task }
    }

    fn attach(&self, ctx: ToolContext) -> ToolContext {
        let tx = self.tx.clone();
        ctx.with_progress(move |p| {
            let _ = tx.try_send(p);
        })
    }

    async fn finish(self) {
        self.done.cancel();
        let _ = self.task.await;
    }
}

/// One tool as `tools/list` shows it: its schema as its source listed it, and what an MCP source listed with it
/// (`outputSchema`, `annotations`), so a gateway keeps what it relays.
fn listing(t: &Tool) -> Option<rmcp::model::Tool> {
    let schema = match t.listed_schema() {
        Value::Object(_) => t.listed_schema().clone(),
        _ => json!({"type": "object"}),
    };
    let mut wire = json!({"name": t.name(), "description": t.description(), "inputSchema": schema});
    if let Some(output) = t.output_schema() {
        wire["outputSchema"] = output.clone();
    }
    if let Some(annotations) = t.annotations() {
        wire["annotations"] = serde_json::to_value(annotations).ok()?;
    }
    serde_json::from_value(wire).ok()
}

/// `output` as a text part, then the parts as the MCP content types they are; `isError`
/// propagates. A tool with an output schema answers with its output as `structuredContent`
/// too (its text part is that JSON, as MCP asks). The text part is left out when `output`
/// only summarizes the parts (what an MCP source says for a result of images alone).
fn to_call_result(tool: &Tool, result: &ToolResult) -> CallToolResult {
    let summary = result
        .parts
        .iter()
        .map(ContentPart::summary)
        .collect::<Vec<_>>()
        .join("\n");
    let mut content = Vec::with_capacity(result.parts.len() + 1);
    if result.parts.is_empty() || result.output != summary {
        content.push(ContentBlock::text(result.output.clone()));
    }
    content.extend(result.parts.iter().filter_map(part_block));
    let structured = tool
        .output_schema()
        .filter(|_| !result.is_error)
        .and_then(|_| serde_json::from_str::<Value>(&result.output).ok())
        .filter(Value::is_object);
    let mut call = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    call.structured_content = structured;
    call
}

fn part_block(part: &ContentPart) -> Option<ContentBlock> {
    let wire = match part {
        ContentPart::Text { text } => json!({"type": "text", "text": text}),
        ContentPart::Image(m) | ContentPart::Audio(m) => match &m.source {
            MediaSource::Data(data) => {
                json!({"type": part.kind_str(), "data": data, "mimeType": m.mime_type})
            }
            MediaSource::Url(url) => {
                json!({"type": "resource_link", "uri": url, "name": m.name.as_deref().unwrap_or(url), "mimeType": m.mime_type})
            }
        },
        ContentPart::File(m) => {
            let name = m.name.clone().unwrap_or_else(|| "part".into());
            match &m.source {
                MediaSource::Data(blob) => {
                    json!({"type": "resource", "resource": {"uri": format!("file:///{name}"), "mimeType": m.mime_type, "blob": blob}})
                }
                MediaSource::Url(url) => {
                    json!({"type": "resource_link", "uri": url, "name": name, "mimeType": m.mime_type})
                }
            }
        }
    };
    serde_json::from_value(wire).ok()
}
