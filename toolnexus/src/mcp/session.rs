//! One configured server's session over its lifetime: the live connection, its restart when
//! the connection is lost, the tool list it keeps current (`notifications/tools/list_changed`),
//! and the in-flight calls' progress and cancellation.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientRequest,
    ListToolsRequest, PaginatedRequestParams, ProgressNotificationParam, ProgressToken, RequestId,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::{Map, Value, json};

use super::client::{Handler, Listed, call_result, connect, describe};
use super::config::{self, ServerConfig};
use super::schema;
use crate::child::ChildGuard;
use crate::context::{MAX_TIMEOUT, OnElicit, OnProgress, Progress, ToolContext};
use crate::result::ToolResult;
use crate::suspend::WaitFor;

/// A runaway `nextCursor` chain stops here.
const MAX_LIST_PAGES: usize = 1_000;
/// Bound on shutting one connection down (a remote's `DELETE`, a child's transport close).
const CLOSE_BOUND: Duration = Duration::from_secs(3);
/// The pause before each attempt to restart a server whose connection was lost; after the
/// last failed attempt the server is `failed`.
const RECONNECT_DELAYS: [Duration; 3] = [Duration::ZERO, Duration::from_millis(250), Duration::from_secs(1)];

/// One live connection: the protocol engine and, for stdio, the child's process tree.
pub(super) struct Conn {
    pub(super) peer: Peer<RoleClient>,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    child: Mutex<Option<ChildGuard>>,
    /// Set when a call saw the connection fail, before the protocol loop may have noticed.
    lost: AtomicBool,
}

impl Conn {
    pub(super) fn new(running: RunningService<RoleClient, Handler>, child: Option<ChildGuard>) -> Self {
        Conn {
            peer: running.peer().clone(),
            running: tokio::sync::Mutex::new(Some(running)),
            child: Mutex::new(child),
            lost: AtomicBool::new(false),
        }
    }

    /// `true` once the connection cannot carry a request: a call saw it fail, the protocol
    /// loop ended, or (stdio) the server process exited — the last checked first-hand, so a
    /// call right after a crash restarts the server instead of writing into a dead pipe.
    fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
            || self.peer.is_transport_closed()
            || lock(&self.child).as_mut().is_some_and(ChildGuard::has_exited)
    }

    fn is_stdio(&self) -> bool {
        lock(&self.child).is_some()
    }

    pub(super) async fn close(&self, limit: Duration) {
        if let Some(running) = self.running.lock().await.take() {
            // Cancelling closes the transport: stdin EOF for a child, DELETE for HTTP.
            let _ = tokio::time::timeout(limit.min(CLOSE_BOUND), running.cancel()).await;
        }
        let child = lock(&self.child).take();
        if let Some(child) = child {
            child.shutdown().await;
        }
    }

    /// Every page of `tools/list`, each request bounded by `limit`.
    pub(super) async fn list_tools(&self, server: &str, limit: Duration) -> Result<Vec<Listed>, String> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let options = PeerRequestOptions::with_timeout(limit);
            let page = match self.request(request, options).await {
                Ok(ServerResult::ListToolsResult(page)) => page,
                Ok(_) => return Err("tools/list: unexpected result".into()),
                Err(e) => return Err(format!("tools/list failed: {}", describe(server, &e))),
            };
            for tool in &page.tools {
                let wire = serde_json::to_value(tool).unwrap_or_default();
                out.push(Listed {
                    name: tool.name.to_string(),
                    description: tool.description.as_deref().unwrap_or("").to_owned(),
                    input_schema: schema::input_schema(&wire["inputSchema"]),
                    listed_schema: wire["inputSchema"].clone(),
                    // Hints a server got wrong are dropped, never a failed listing.
                    annotations: serde_json::from_value(wire["annotations"].clone()).ok(),
                    output_schema: wire.get("outputSchema").filter(|s| s.is_object()).cloned(),
                });
            }
            match page.next_cursor {
                None => return Ok(out),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(format!("tools/list returned duplicate cursor: {next}"));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(format!("tools/list exceeded {MAX_LIST_PAGES} pages"))
    }

    async fn request(
        &self,
        request: ClientRequest,
        options: PeerRequestOptions,
    ) -> Result<ServerResult, ServiceError> {
        self.peer
            .send_request_with_option(request, options)
            .await?
            .await_response()
            .await
    }
}

/// What a connection's handler passes back to its session: the in-flight calls' progress
/// callbacks by token, and the session to re-list when the server's tools change.
#[derive(Default)]
pub(super) struct Notices {
    progress: Mutex<HashMap<ProgressToken, OnProgress>>,
    /// The in-flight calls whose caller asks elicitations itself, by request id.
    elicits: Mutex<HashMap<RequestId, OnElicit>>,
    session: OnceLock<Weak<Session>>,
}

impl Notices {
    /// Whose caller an `elicitation/create` goes to: the call whose response stream it came
    /// on (`origin`, streamable HTTP), else the one call in flight that relays (stdio has
    /// no stream to tell by); `None` when no call, or more than one, could have made it.
    pub(super) fn elicit_relay(&self, origin: Option<&RequestId>) -> Option<OnElicit> {
        let elicits = lock(&self.elicits);
        match origin {
            Some(id) => elicits.get(id).cloned(),
            None if elicits.len() == 1 => elicits.values().next().cloned(),
            None => None,
        }
    }

    pub(super) fn progress(&self, p: ProgressNotificationParam) {
        let sink = lock(&self.progress).get(&p.progress_token).cloned();
        if let Some(sink) = sink {
            sink.report(Progress {
                progress: p.progress,
                total: p.total,
                message: p.message,
            });
        }
    }

    /// `notifications/tools/list_changed`: re-list in the background (a request sent from
    /// inside the notification handler would wait on the loop that runs the handler).
    pub(super) fn tools_changed(&self) {
        if let Some(session) = self.session.get().and_then(Weak::upgrade) {
            tokio::spawn(async move { session.relist().await });
        }
    }
}

/// The server's current tool list and what the toolkits need to apply it.
#[derive(Default)]
struct Listing {
    tools: Vec<Listed>,
    /// Bumped on every re-list, so a toolkit knows whether it is behind.
    generation: u64,
    /// Every toolkit name this server ever offered: a refresh removes the ones now gone.
    ever: BTreeSet<String>,
}

/// A configured server for as long as the toolkit lives, across reconnects.
pub(super) struct Session {
    pub(super) config: ServerConfig,
    wait_for: Option<WaitFor>,
    notices: Arc<Notices>,
    conn: Mutex<Option<Arc<Conn>>>,
    /// One reconnect at a time; the others wait for its outcome.
    reconnecting: tokio::sync::Mutex<()>,
    /// Why the server is `failed` after its reconnect budget ran out.
    failed: Mutex<Option<String>>,
    listing: Mutex<Listing>,
    /// The listing's generation, for whoever follows the server's tool changes (a gateway).
    listed: tokio::sync::watch::Sender<u64>,
    closed: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every guarded value here stays consistent even if a holder panicked.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Session {
    /// Connect, initialize and list (each phase bounded by the server's timeout).
    pub(super) async fn open(
        config: &ServerConfig,
        wait_for: Option<WaitFor>,
    ) -> Result<(Arc<Session>, Vec<Listed>), String> {
        let notices = Arc::new(Notices::default());
        let (conn, listed) = connect(config, wait_for.clone(), &notices).await?;
        let session = Arc::new(Session {
            config: config.clone(),
            wait_for,
            notices: Arc::clone(&notices),
            conn: Mutex::new(Some(Arc::new(conn))),
            reconnecting: tokio::sync::Mutex::new(()),
            failed: Mutex::new(None),
            listing: Mutex::new(Listing::default()),
            listed: tokio::sync::watch::channel(0).0,
            closed: AtomicBool::new(false),
        });
        let _ = notices.session.set(Arc::downgrade(&session));
        session.set_listing(listed.clone());
        Ok((session, listed))
    }

    pub(super) fn name(&self) -> &str {
        &self.config.name
    }

    /// Why the server is `failed`, once its reconnect budget ran out.
    pub(super) fn failure_reason(&self) -> Option<String> {
        lock(&self.failed).clone()
    }

    /// Shut the connection down and kill the child tree; no reconnect after this. Idempotent.
    pub(super) async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let conn = lock(&self.conn).take();
        if let Some(conn) = conn {
            conn.close(self.config.timeout).await;
        }
    }

    /// The listed tools allowed by the server's `tools` filter, the listing's generation,
    /// and every name this server ever offered.
    pub(super) fn tools(&self) -> (Vec<Listed>, u64, BTreeSet<String>) {
        let listing = lock(&self.listing);
        let allowed = listing
            .tools
            .iter()
            .filter(|t| config::tool_allowed(self.config.tools.as_ref(), &t.name))
            .cloned()
            .collect();
        (allowed, listing.generation, listing.ever.clone())
    }

    fn set_listing(&self, tools: Vec<Listed>) {
        let mut listing = lock(&self.listing);
        let prefix = crate::tool::sanitize(self.name());
        listing.ever.extend(
            tools
                .iter()
                .map(|t| format!("{prefix}_{}", crate::tool::sanitize(&t.name))),
        );
        listing.tools = tools;
        listing.generation += 1;
        self.listed.send_replace(listing.generation);
    }

    /// Changes whenever the server's tools are listed anew (after `tools/list_changed` or a
    /// restart).
    #[cfg(feature = "serve")]
    pub(super) fn listing_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.listed.subscribe()
    }

    async fn relist(self: Arc<Self>) {
        let Some(conn) = lock(&self.conn).clone() else {
            return;
        };
        let limit = self.config.timeout;
        match tokio::time::timeout(limit, conn.list_tools(self.name(), limit)).await {
            Ok(Ok(listed)) => {
                tracing::info!(
                    "[toolnexus] MCP server \"{}\" changed its tools: now {} listed",
                    self.name(),
                    listed.len()
                );
                self.set_listing(listed);
            }
            Ok(Err(reason)) => tracing::warn!(
                "[toolnexus] MCP server \"{}\": re-list failed: {reason}",
                self.name()
            ),
            Err(_) => tracing::warn!(
                "[toolnexus] MCP server \"{}\": re-list timed out after {}ms",
                self.name(),
                limit.as_millis()
            ),
        }
    }

    /// The live connection; a lost one is restarted first (see [`Self::reconnect`]).
    async fn live(&self) -> Result<Arc<Conn>, String> {
        if let Some(reason) = self.failure_reason() {
            return Err(format!("MCP server \"{}\" failed: {reason}", self.name()));
        }
        match lock(&self.conn).clone() {
            Some(conn) if !conn.is_lost() => return Ok(conn),
            _ if self.closed.load(Ordering::SeqCst) => {
                return Err(format!("MCP server \"{}\" is closed", self.name()));
            }
            _ => {}
        }
        self.reconnect().await
    }

    /// Restart a server whose connection was lost: up to [`RECONNECT_DELAYS`] attempts, each
    /// a fresh spawn (or HTTP connect), `initialize` and `tools/list` bounded by the timeout.
    /// After the last failed attempt the server is `failed` for good.
    async fn reconnect(&self) -> Result<Arc<Conn>, String> {
        let _one = self.reconnecting.lock().await;
        // Another call may have reconnected, or given up, while this one waited.
        if let Some(reason) = self.failure_reason() {
            return Err(format!("MCP server \"{}\" failed: {reason}", self.name()));
        }
        let dead = match lock(&self.conn).clone() {
            Some(conn) if !conn.is_lost() => return Ok(conn),
            other => other,
        };
        if let Some(dead) = dead {
            // What is left of the old connection: the transport, the child's process group.
            dead.close(self.config.timeout).await;
        }
        tracing::warn!(
            "[toolnexus] MCP server \"{}\" lost its connection; reconnecting",
            self.name()
        );
        let started = Instant::now();
        let mut reason = String::new();
        for (attempt, delay) in RECONNECT_DELAYS.iter().enumerate() {
            tokio::time::sleep(*delay).await;
            if self.closed.load(Ordering::SeqCst) {
                return Err(format!("MCP server \"{}\" is closed", self.name()));
            }
            match connect(&self.config, self.wait_for.clone(), &self.notices).await {
                Ok((conn, listed)) => {
                    let conn = Arc::new(conn);
                    *lock(&self.conn) = Some(Arc::clone(&conn));
                    self.set_listing(listed);
                    // A close that raced the reconnect must not leave the new child running.
                    if self.closed.load(Ordering::SeqCst) {
                        self.close().await;
                        return Err(format!("MCP server \"{}\" is closed", self.name()));
                    }
                    tracing::info!(
                        "[toolnexus] MCP server \"{}\" reconnected in {}ms",
                        self.name(),
                        started.elapsed().as_millis()
                    );
                    return Ok(conn);
                }
                Err(e) => {
                    tracing::warn!(
                        "[toolnexus] MCP server \"{}\": reconnect attempt {} failed: {e}",
                        self.name(),
                        attempt + 1
                    );
                    reason = e;
                }
            }
        }
        tracing::warn!("[toolnexus] MCP server \"{}\" failed: {reason}", self.name());
        *lock(&self.failed) = Some(reason.clone());
        Err(format!("MCP server \"{}\" failed: {reason}", self.name()))
    }

    pub(super) async fn call(&self, tool: &str, args: Value, ctx: &ToolContext) -> ToolResult {
        let arguments = match args {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => return self.failure("tool arguments must be a JSON object"),
        };
        let limit = ctx.timeout.unwrap_or(self.config.timeout);
        let mut outcome = self.call_once(tool, &arguments, limit, ctx).await;
        if let Err(CallError::Undelivered) = &outcome {
            // The request never reached the server (the write to its stdin failed): safe
            // to send again on a restarted server.
            outcome = self.call_once(tool, &arguments, limit, ctx).await;
        }
        match outcome {
            Ok(ServerResult::CallToolResult(result)) => match serde_json::to_value(&result) {
                Ok(wire) => call_result(self.name(), &wire),
                Err(e) => self.failure(format!("unreadable tools/call result: {e}")),
            },
            Ok(_) => self.failure("the server answered tools/call with an unexpected result"),
            Err(CallError::Unavailable(reason)) => self.failure(reason),
            Err(CallError::Service(ServiceError::Timeout { .. })) => self.failure(format!(
                "MCP server \"{}\" did not answer tools/call \"{tool}\" within {}ms",
                self.name(),
                limit.as_millis()
            )),
            // The call may have run: it is not repeated. The next call restarts the server.
            Err(CallError::Lost(e)) => self.failure(format!(
                "MCP server \"{}\" closed the connection during tools/call \"{tool}\" ({e}); the next call \
                 restarts it",
                self.name()
            )),
            Err(CallError::Undelivered) => self.failure(format!(
                "MCP server \"{}\" closed its input before tools/call \"{tool}\" could be sent, twice",
                self.name()
            )),
            Err(CallError::Service(e)) => self.failure(describe(self.name(), &e)),
        }
    }

    /// One `tools/call` on the live connection (restarted first if it was lost).
    async fn call_once(
        &self,
        tool: &str,
        arguments: &Map<String, Value>,
        limit: Duration,
        ctx: &ToolContext,
    ) -> Result<ServerResult, CallError> {
        let conn = self.live().await.map_err(CallError::Unavailable)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments.clone());
        // Progress restarts the idle timeout; a server reporting progress forever is still
        // stopped after the longest timeout there is.
        let options = PeerRequestOptions::with_timeout(limit)
            .reset_timeout_on_progress()
            .with_max_total_timeout(MAX_TIMEOUT);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let lost = |e: ServiceError| {
            conn.lost.store(true, Ordering::SeqCst);
            match e {
                ServiceError::TransportSend(_) if conn.is_stdio() => CallError::Undelivered,
                e => CallError::Lost(e),
            }
        };
        let handle = match conn.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => return Err(lost(e)),
            Err(e) => return Err(CallError::Service(e)),
        };
        let mut in_flight = InFlight {
            peer: conn.peer.clone(),
            id: handle.id.clone(),
            token: handle.progress_token.clone(),
            notices: Arc::clone(&self.notices),
            answered: false,
        };
        if let Some(sink) = &ctx.on_progress {
            lock(&self.notices.progress).insert(in_flight.token.clone(), sink.clone());
        }
        if let Some(relay) = &ctx.on_elicit {
            lock(&self.notices.elicits).insert(in_flight.id.clone(), relay.clone());
        }
        let outcome = handle.await_response().await;
        // Answered, timed out (rmcp sent the cancel) or lost: nothing left to cancel.
        in_flight.answered = true;
        match outcome {
            Ok(result) => Ok(result),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => Err(lost(e)),
            Err(e) => Err(CallError::Service(e)),
        }
    }

    /// One request other than `tools/call` (a resource listing or read) on the live
    /// connection, bounded by the server's timeout; its result as wire JSON.
    pub(super) async fn request(&self, request: ClientRequest, what: &str) -> Result<Value, String> {
        let conn = self.live().await?;
        let limit = self.config.timeout;
        match conn
            .request(request, PeerRequestOptions::with_timeout(limit))
            .await
        {
            Ok(result) => serde_json::to_value(&result).map_err(|e| format!("unreadable {what} result: {e}")),
            Err(ServiceError::Timeout { .. }) => Err(format!(
                "MCP server \"{}\" did not answer {what} within {}ms",
                self.name(),
                limit.as_millis()
            )),
            Err(e) => {
                if matches!(e, ServiceError::TransportClosed | ServiceError::TransportSend(_)) {
                    conn.lost.store(true, Ordering::SeqCst);
                }
                Err(describe(self.name(), &e))
            }
        }
    }

    /// Whether the server declared the `resources` capability when it was initialized.
    pub(super) fn offers_resources(&self) -> bool {
        lock(&self.conn)
            .as_ref()
            .and_then(|c| c.peer.peer_info())
            .is_some_and(|info| info.capabilities.resources.is_some())
    }

    pub(super) fn failure(&self, message: impl std::fmt::Display) -> ToolResult {
        ToolResult::failure(message).with_meta("server", json!(self.name()))
    }
}

/// Why one `tools/call` attempt got no result.
enum CallError {
    /// The server is failed or closed (the message says which).
    Unavailable(String),
    /// The connection dropped after the request may have reached the server.
    Lost(ServiceError),
    /// Writing the request to the server's stdin failed: it never arrived.
    Undelivered,
    /// Any other protocol error (a timeout, the server's JSON-RPC error).
    Service(ServiceError),
}

/// A `tools/call` awaiting its answer. Dropped before the answer — the caller's token was
/// cancelled, its deadline passed, or its future was dropped — it tells the server with
/// `notifications/cancelled`, so the server can stop the work.
struct InFlight {
    peer: Peer<RoleClient>,
    id: RequestId,
    token: ProgressToken,
    notices: Arc<Notices>,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.notices.progress).remove(&self.token);
        lock(&self.notices.elicits).remove(&self.id);
        if self.answered {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the caller cancelled the call".to_owned()),
        ));
        runtime.spawn(async move {
            let _ = tokio::time::timeout(CLOSE_BOUND, peer.send_notification(notification.into())).await;
        });
    }
}
