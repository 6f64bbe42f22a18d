//! MCP servers as tool sources (SPEC §2): connect over stdio or streamable HTTP, list the
//! tools (paginated), and turn each into a [`Tool`]. Every phase and every call is bounded;
//! one bad server is a [`McpStatus::Failed`], never an error for the whole load.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, ProgressNotificationParam,
};
use rmcp::service::{
    ClientInitializeError, InboundStreamOrigin, NotificationContext, RequestContext, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::config::{self, McpConfig, ServerConfig, Transport, expand_env};
use super::resources;
use super::session::{Conn, Notices, Session};
use super::sse;
use super::wire::Wire;
use super::{McpError, McpStatus, McpStatuses};
use crate::child::{self, ChildGuard};
use crate::content::{ContentPart, Media, MediaSource};
use crate::result::ToolResult;
use crate::suspend::{Answer, AnswerReason, Request, WaitFor, new_request_id};
use crate::tool::{Tool, ToolAnnotations, ToolSource, sanitize};
use crate::toolkit::{Closeable, Toolkit};

/// The newest revision with an `initialize` handshake: what every peer in the wild speaks.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// What a load needs besides the config, set with the chaining methods.
#[derive(Clone, Default)]
pub struct LoadOptions {
    wait_for: Option<WaitFor>,
    cancel: CancellationToken,
    resources: bool,
}

impl LoadOptions {
    /// Advertise elicitation and answer a server's `elicitation/create` through `wait_for`
    /// (SPEC §2 "Elicitation bridge"). Without one the client does not advertise it, so
    /// compliant servers never elicit.
    pub fn wait_for(mut self, wait_for: WaitFor) -> Self {
        self.wait_for = Some(wait_for);
        self
    }

    /// Offer each server's MCP resources as two more tools, `<server>_list_resources` and
    /// `<server>_read_resource` (only for servers that declare the `resources` capability;
    /// a listed tool of the same name wins). Off by default: the tool set stays the SPEC's.
    pub fn resources(mut self, on: bool) -> Self {
        self.resources = on;
        self
    }

    /// Cancelling `token` aborts the whole load: everything connected so far is shut down
    /// and [`load`] returns [`McpError::Cancelled`].
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }
}

impl fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadOptions")
            .field("wait_for", &self.wait_for.is_some())
            .field("cancel", &self.cancel.is_cancelled())
            .field("resources", &self.resources)
            .finish()
    }
}

/// The loaded MCP tools, each server's status, and the sessions behind them.
///
/// Closing it (directly, or through the toolkit it was [installed](Self::install) in) shuts
/// every session and kills every stdio child's process group. Dropping it kills the
/// children too.
pub struct McpSource {
    tools: Vec<Tool>,
    status: McpStatuses,
    sessions: Vec<Arc<Session>>,
}

impl McpSource {
    /// The tools, named `sanitize(server)_sanitize(tool)`, in server then listing order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// `connected | disabled | failed` per configured server, in config order.
    pub fn status(&self) -> &McpStatuses {
        &self.status
    }

    /// Put the tools and statuses into `toolkit` and hand it the sessions to close.
    pub fn install(self, toolkit: &mut Toolkit) {
        let tools = self.hand_over(toolkit);
        toolkit.add_tools(tools);
    }

    /// Record the statuses on `toolkit` (after those it has) and hand it the sessions to
    /// close; the tools come back for the caller to place (assembly orders every source's).
    pub(crate) fn hand_over(self, toolkit: &mut Toolkit) -> Vec<Tool> {
        let mut status = toolkit.extension::<McpStatuses>().cloned().unwrap_or_default();
        status.extend(self.status.iter().map(|(k, v)| (k.clone(), v.clone())));
        toolkit.insert_extension(status);
        let mut live = toolkit.extension::<McpLive>().cloned().unwrap_or_default();
        live.sessions
            .extend(self.sessions.iter().map(|s| (Arc::clone(s), s.tools().1)));
        toolkit.insert_extension(live);
        let tools = self.tools.clone();
        toolkit.attach(Arc::new(self));
        tools
    }

    /// Shut every session down and kill every stdio child tree. Idempotent.
    pub async fn close(&self) {
        futures::future::join_all(self.sessions.iter().map(|s| s.close())).await;
    }
}

impl Closeable for McpSource {
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(McpSource::close(self))
    }
}

impl fmt::Debug for McpSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpSource")
            .field("tools", &self.tools.iter().map(Tool::name).collect::<Vec<_>>())
            .field("status", &self.status)
            .finish()
    }
}

/// The sessions a toolkit's MCP tools run on, each with the listing generation the toolkit
/// holds (see [`Toolkit::refresh_mcp_tools`]).
#[derive(Clone, Default)]
struct McpLive {
    sessions: Vec<(Arc<Session>, u64)>,
}

impl Toolkit {
    /// Bring the toolkit's MCP tools up to date with what the servers list now: a server that
    /// sent `notifications/tools/list_changed`, or was restarted, is re-listed in the
    /// background, and this applies the new lists (tools gone are removed, new ones added,
    /// the server's `tools` filter applied). Returns the servers whose tools were replaced.
    ///
    /// A run in progress keeps the tools it started with; call this between runs, or from a
    /// host's own loop.
    ///
    /// ```
    /// let mut tk = toolnexus::Toolkit::default();
    /// assert!(tk.refresh_mcp_tools().is_empty(), "no MCP servers, nothing to refresh");
    /// ```
    pub fn refresh_mcp_tools(&mut self) -> Vec<String> {
        let Some(mut live) = self.extension::<McpLive>().cloned() else {
            return Vec::new();
        };
        let mut changed = Vec::new();
        for (session, applied) in &mut live.sessions {
            let (listed, generation, ever) = session.tools();
            if generation == *applied {
                continue;
            }
            let stale: Vec<String> = self
                .tools()
                .filter(|t| t.source() == ToolSource::Mcp && ever.contains(t.name()))
                .map(|t| t.name().to_owned())
                .collect();
            for name in stale {
                self.remove(&name);
            }
            self.add_tools(listed.into_iter().map(|t| mcp_tool(session, t)));
            *applied = generation;
            changed.push(session.name().to_owned());
        }
        self.insert_extension(live);
        changed
    }
}

/// One receiver per MCP server of `toolkit`, changed whenever that server's tools are listed
/// anew; [`Toolkit::refresh_mcp_tools`] then applies the change. Only a served gateway watches.
#[cfg(feature = "serve")]
pub(crate) fn tool_list_changes(toolkit: &Toolkit) -> Vec<tokio::sync::watch::Receiver<u64>> {
    toolkit
        .extension::<McpLive>()
        .map_or(&[][..], |l| &l.sessions)
        .iter()
        .map(|(session, _)| session.listing_changes())
        .collect()
}

/// The statuses recorded at load, with a server that lost its connection and could not be
/// restarted shown as `failed` with the reason.
pub(crate) fn live_status(toolkit: &Toolkit) -> McpStatuses {
    let mut status = toolkit.extension::<McpStatuses>().cloned().unwrap_or_default();
    for (session, _) in toolkit.extension::<McpLive>().map_or(&[][..], |l| &l.sessions) {
        if let Some(reason) = session.failure_reason() {
            status.insert(session.name().to_owned(), McpStatus::Failed { reason });
        }
    }
    status
}

/// One listed tool definition under its original name (SPEC §2 Gap 6).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// The server's own name for the tool.
    pub name: String,
    /// Its description (`""` when absent).
    pub description: String,
    /// Its input schema, made provider-safe like a loaded tool's.
    pub input_schema: Value,
    /// Its behaviour hints (`readOnlyHint`, `destructiveHint`, …), when the server gave any.
    pub annotations: Option<ToolAnnotations>,
}

/// The result of [`list_mcp_tools`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpInventory {
    /// Server → every listed tool, unfiltered by the server's `tools` filter.
    pub tools: BTreeMap<String, Vec<ToolInfo>>,
    /// `connected | disabled | failed` per server, in config order.
    pub status: McpStatuses,
}

/// Connect to every enabled server (concurrently), list and convert its tools.
///
/// A server that cannot be spawned, reached, initialized or listed within its `timeout` (per
/// phase) is marked [`McpStatus::Failed`] and the rest load normally. Only a cancellation
/// through [`LoadOptions::cancel`] fails the call.
///
/// ```
/// use toolnexus::mcp::{LoadOptions, McpConfig, McpStatus, load};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let cfg = McpConfig::from_json_str(r#"{"mcpServers": {
///     "ghost": {"command": ["/nonexistent/mcp-server"], "timeout": 2000},
///     "off": {"command": ["x"], "disabled": true}
/// }}"#).unwrap();
/// let source = load(&cfg, LoadOptions::default()).await.unwrap();
/// assert!(source.tools().is_empty());
/// assert_eq!(source.status()["off"], McpStatus::Disabled);
/// assert_eq!(source.status()["ghost"].as_str(), "failed");
/// assert!(source.status()["ghost"].reason().unwrap().starts_with("cannot start \"/nonexistent/mcp-server\""));
/// source.close().await;
/// # });
/// ```
pub async fn load(config: &McpConfig, opts: LoadOptions) -> Result<McpSource, McpError> {
    let connects = config.servers().iter().filter(|s| s.enabled).map(|server| {
        let wait_for = opts.wait_for.clone();
        async move { (server, Session::open(server, wait_for).await) }
    });
    let outcomes = tokio::select! {
        biased;
        () = opts.cancel.cancelled() => return Err(McpError::Cancelled),
        outcomes = futures::future::join_all(connects) => outcomes,
    };
    let mut source = McpSource {
        tools: Vec::new(),
        status: McpStatuses::default(),
        sessions: Vec::new(),
    };
    let mut loaded = HashMap::new();
    for (server, outcome) in outcomes {
        match outcome {
            Ok((session, listed)) => {
                config::warn_unknown_filter_names(server, listed.iter().map(|t| t.name.as_str()));
                let first = source.tools.len();
                source.tools.extend(
                    listed
                        .into_iter()
                        .filter(|t| config::tool_allowed(server.tools.as_ref(), &t.name))
                        .map(|t| mcp_tool(&session, t)),
                );
                if opts.resources && session.offers_resources() {
                    let resource_tools = resources::resource_tools(&session)
                        .into_iter()
                        .filter(|r| !source.tools[first..].iter().any(|t| t.name() == r.name()))
                        .collect::<Vec<_>>();
                    source.tools.extend(resource_tools);
                }
                source.sessions.push(session);
                loaded.insert(server.name.as_str(), McpStatus::Connected);
            }
            Err(reason) => {
                loaded.insert(server.name.as_str(), failed(server, reason));
            }
        }
    }
    source.status = in_config_order(config, loaded);
    // A cancel that raced the last connect still aborts the load (the source drops here,
    // killing its children).
    if opts.cancel.is_cancelled() {
        source.close().await;
        return Err(McpError::Cancelled);
    }
    Ok(source)
}

/// Connect to every enabled server, list its tools unfiltered, and disconnect before
/// returning: nothing is left running (SPEC §2 Gap 6).
pub async fn list_mcp_tools(config: &McpConfig, cancel: CancellationToken) -> Result<McpInventory, McpError> {
    let lists = config
        .servers()
        .iter()
        .filter(|s| s.enabled)
        .map(|server| async move {
            let outcome = match Session::open(server, None).await {
                Ok((session, listed)) => {
                    session.close().await;
                    Ok(listed)
                }
                Err(reason) => Err(reason),
            };
            (server, outcome)
        });
    let outcomes = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(McpError::Cancelled),
        outcomes = futures::future::join_all(lists) => outcomes,
    };
    let mut inventory = McpInventory::default();
    let mut loaded = HashMap::new();
    for (server, outcome) in outcomes {
        match outcome {
            Ok(listed) => {
                let infos = listed
                    .into_iter()
                    .map(|t| ToolInfo {
                        name: t.name,
                        description: t.description,
                        input_schema: t.input_schema,
                        annotations: t.annotations,
                    })
                    .collect();
                inventory.tools.insert(server.name.clone(), infos);
                loaded.insert(server.name.as_str(), McpStatus::Connected);
            }
            Err(reason) => {
                loaded.insert(server.name.as_str(), failed(server, reason));
            }
        }
    }
    inventory.status = in_config_order(config, loaded);
    Ok(inventory)
}

/// Every server's status in config order, like the other ports: the loaded ones' from
/// `loaded`, `disabled` for the rest (only disabled servers are not loaded).
fn in_config_order(config: &McpConfig, mut loaded: HashMap<&str, McpStatus>) -> McpStatuses {
    config
        .servers()
        .iter()
        .map(|s| {
            let status = loaded.remove(s.name.as_str()).unwrap_or(McpStatus::Disabled);
            (s.name.clone(), status)
        })
        .collect()
}

fn failed(server: &ServerConfig, reason: String) -> McpStatus {
    tracing::warn!("[toolnexus] MCP server \"{}\" failed: {reason}", server.name);
    McpStatus::Failed { reason }
}

/// A listed tool, schema already made provider-safe.
#[derive(Clone)]
pub(super) struct Listed {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) input_schema: Value,
    /// The server's `inputSchema`, verbatim (what a gateway serves).
    pub(super) listed_schema: Value,
    pub(super) annotations: Option<ToolAnnotations>,
    /// The server's `outputSchema`, verbatim.
    pub(super) output_schema: Option<Value>,
}

pub(super) fn describe(server: &str, e: &ServiceError) -> String {
    match e {
        // The server's own message, as the other ports give it: the JSON-RPC code is noise
        // to the model.
        ServiceError::McpError(data) => data.message.to_string(),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            format!("MCP server \"{server}\" is not connected ({e})")
        }
        other => other.to_string(),
    }
}

fn mcp_tool(session: &Arc<Session>, listed: Listed) -> Tool {
    let name = format!("{}_{}", sanitize(session.name()), sanitize(&listed.name));
    let session = Arc::clone(session);
    let original = Arc::<str>::from(listed.name);
    let tool = Tool::new(name, move |args, ctx| {
        let session = Arc::clone(&session);
        let original = Arc::clone(&original);
        async move { session.call(&original, args, &ctx).await }
    })
    .with_description(listed.description)
    .with_schema(listed.input_schema)
    .with_listed_schema(listed.listed_schema)
    .with_source(ToolSource::Mcp);
    let tool = match listed.annotations {
        Some(annotations) => tool.with_annotations(annotations),
        None => tool,
    };
    match listed.output_schema {
        Some(schema) => tool.with_output_schema(schema),
        None => tool,
    }
}

/// Map a `CallToolResult` (as wire JSON) to a [`ToolResult`] like every port: `isError` ⇒
/// failure with the joined text; `structuredContent` ⇒ its compact JSON; else the joined
/// text parts. Non-text content becomes parts on every branch.
pub(super) fn call_result(server: &str, wire: &Value) -> ToolResult {
    let content = wire["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let texts = || {
        content
            .iter()
            .filter(|c| c["type"] == "text")
            .filter_map(|c| c["text"].as_str())
    };
    let parts = collect_parts(content);
    let meta = json!(server);
    if wire["isError"] == true {
        let joined: Vec<&str> = texts().filter(|t| !t.trim().is_empty()).collect();
        let output = if joined.is_empty() {
            "MCP tool returned an error".to_owned()
        } else {
            joined.join("\n\n")
        };
        return ToolResult::failure(output)
            .with_meta("server", meta)
            .with_parts(parts);
    }
    let output = match wire.get("structuredContent") {
        Some(structured) if !structured.is_null() => without_part_payloads(structured, &parts).to_string(),
        _ => {
            // An embedded resource carrying text is text the server meant the model to read.
            let embedded = content
                .iter()
                .filter(|c| c["type"] == "resource")
                .filter_map(|c| c["resource"]["text"].as_str());
            let joined = texts().chain(embedded).collect::<Vec<_>>().join("\n");
            if joined.is_empty() && !parts.is_empty() {
                parts
                    .iter()
                    .map(ContentPart::summary)
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                joined
            }
        }
    };
    ToolResult::success(output)
        .with_meta("server", meta)
        .with_parts(parts)
}

/// `structured` with every string that is the base64 payload of one of `parts` replaced by
/// that part's summary (`image (image/png, 70 bytes)`): servers such as `server-filesystem`
/// repeat an image inside `structuredContent`, and the model must not get the bytes twice,
/// the second time as ~1.33 characters of text per byte.
fn without_part_payloads(structured: &Value, parts: &[ContentPart]) -> Value {
    let payloads: HashMap<&str, String> = parts
        .iter()
        .filter_map(|p| match p.as_media() {
            Some((
                _,
                Media {
                    source: MediaSource::Data(data),
                    ..
                },
            )) => Some((data.as_str(), p.summary())),
            _ => None,
        })
        .collect();
    if payloads.is_empty() {
        return structured.clone();
    }
    fn walk(value: &Value, payloads: &HashMap<&str, String>) -> Value {
        match value {
            Value::String(s) => match payloads.get(s.as_str()) {
                Some(summary) => Value::String(summary.clone()),
                None => value.clone(),
            },
            Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, payloads)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), walk(v, payloads))).collect())
            }
            other => other.clone(),
        }
    }
    walk(structured, &payloads)
}

fn collect_parts(content: &[Value]) -> Vec<ContentPart> {
    let media = |mime: Option<&str>, source: MediaSource, name: Option<String>| Media {
        mime_type: mime.unwrap_or("application/octet-stream").to_owned(),
        source,
        name,
    };
    content
        .iter()
        .filter_map(|c| match c["type"].as_str()? {
            kind @ ("image" | "audio") => {
                let m = media(
                    c["mimeType"].as_str(),
                    MediaSource::Data(c["data"].as_str()?.to_owned()),
                    None,
                );
                Some(if kind == "image" {
                    ContentPart::Image(m)
                } else {
                    ContentPart::Audio(m)
                })
            }
            "resource_link" => {
                let name = c["name"].as_str().filter(|n| !n.is_empty()).map(str::to_owned);
                let url = MediaSource::Url(c["uri"].as_str()?.to_owned());
                Some(ContentPart::File(media(c["mimeType"].as_str(), url, name)))
            }
            "resource" => {
                let r = &c["resource"];
                let data = MediaSource::Data(r["blob"].as_str()?.to_owned());
                let name = r["uri"].as_str().map(str::to_owned);
                Some(ContentPart::File(media(r["mimeType"].as_str(), data, name)))
            }
            _ => None,
        })
        .collect()
}

/// Spawn or reach one server, initialize, and list its tools — each phase bounded by the
/// server's timeout. On failure everything started is torn down before returning.
///
/// Its helpers are kept out of line and its awaits boxed: inlined, their locals made this
/// poll's frame 70 KB, under which rmcp's handshake then ran, and the deepest stack a process
/// reaches stays resident.
pub(super) async fn connect(
    server: &ServerConfig,
    wait_for: Option<WaitFor>,
    notices: &Arc<Notices>,
) -> Result<(Conn, Vec<Listed>), String> {
    let limit = server.timeout;
    let ms = limit.as_millis();
    let handler = Handler::new(wait_for.clone(), Arc::clone(notices));
    let conn = match &server.transport {
        Transport::Local { command, env, cwd } => {
            let (child, stdout, stdin) = spawn(command, env.iter(), cwd.as_deref())?;
            let wire = Wire::Stdio(super::stdio::Stdio::new(stdout, stdin));
            Conn::new(initialize(handler, wire, limit).await?, Some(child))
        }
        Transport::Remote { url, headers } => {
            let (client, headers) = http_client(headers.iter(), limit)?;
            let streamable = streamable_transport(client.clone(), url, &headers, limit);
            match initialize(handler, Wire::Streamable(streamable), limit).await {
                Ok(running) => Conn::new(running, None),
                Err(failed) => {
                    let handler = Handler::new(wait_for.clone(), Arc::clone(notices));
                    let fallback: BoxFuture<'_, Result<Conn, String>> =
                        Box::pin(sse_fallback(failed, client, url, headers, limit, handler));
                    fallback.await?
                }
            }
        }
    };
    // Boxed behind `dyn` like the handshake: a frame of its own, not a part of this one.
    let listing: BoxFuture<'_, Result<Vec<Listed>, String>> = Box::pin(conn.list_tools(&server.name, limit));
    match tokio::time::timeout(limit, listing).await {
        Ok(Ok(listed)) => Ok((conn, listed)),
        Ok(Err(reason)) => {
            conn.close(limit).await;
            Err(reason)
        }
        Err(_) => {
            conn.close(limit).await;
            Err(format!("tools/list timed out after {ms}ms"))
        }
    }
}

#[inline(never)] // see `connect`
fn spawn<'a>(
    command: &[String],
    env: impl Iterator<Item = (&'a str, &'a str)>,
    cwd: Option<&std::path::Path>,
) -> Result<
    (
        ChildGuard,
        tokio::process::ChildStdout,
        tokio::process::ChildStdin,
    ),
    String,
> {
    let program = &command[0];
    // Checked here, or the spawn error would blame the program ("No such file or directory").
    if let Some(dir) = cwd
        && !dir.is_dir()
    {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(format!("cwd {} {what}", dir.display()));
    }
    let spawned = child::spawn(program, &command[1..], env, cwd, Stdio::inherit())
        .map_err(|e| format!("cannot start \"{program}\": {e}"))?;
    Ok((spawned.child, spawned.stdout, spawned.stdin))
}

/// After streamable HTTP failed with `failed`: the legacy HTTP+SSE transport, when the server
/// gives the MCP specification's signal for it (a 4xx answer to the `initialize` POST);
/// otherwise `failed` stands.
async fn sse_fallback(
    failed: String,
    client: reqwest::Client,
    url: &str,
    headers: HeaderMap,
    limit: Duration,
    handler: Handler,
) -> Result<Conn, String> {
    if !sse::legacy_signal(&client, url, &headers, limit).await {
        return Err(failed);
    }
    let transport = sse::Sse::connect(client, url, headers, limit)
        .await
        .map_err(|e| format!("{failed}; SSE fallback: {e}"))?;
    initialize(handler, Wire::Sse(transport), limit)
        .await
        .map(|running| Conn::new(running, None))
        .map_err(|reason| format!("{failed}; SSE fallback: {reason}"))
}

/// The MCP handshake over `wire`, bounded by `limit`. Boxed: rmcp's handshake future is
/// large, and its temporaries would otherwise sit in every caller's stack frame (the deepest
/// stack a process reaches stays resident).
fn initialize(
    handler: Handler,
    wire: Wire,
    limit: Duration,
) -> BoxFuture<'static, Result<RunningService<RoleClient, Handler>, String>> {
    Box::pin(async move {
        // Behind `dyn` too, so that its poll is a frame of its own rather than inlined here.
        let serve: BoxFuture<'static, Result<RunningService<RoleClient, Handler>, ClientInitializeError>> =
            Box::pin(handler.serve(wire));
        match tokio::time::timeout(limit, serve).await {
            Ok(Ok(running)) => Ok(running),
            Ok(Err(e)) => Err(format!("initialize failed: {e}")),
            Err(_) => Err(format!("initialize timed out after {}ms", limit.as_millis())),
        }
    })
}

/// The HTTP client and the configured headers (values expanded and marked sensitive) one
/// remote server's transports use.
#[inline(never)] // see `connect`
fn http_client<'a>(
    headers: impl Iterator<Item = (&'a str, &'a str)>,
    limit: Duration,
) -> Result<(reqwest::Client, HeaderMap), String> {
    let mut custom = HeaderMap::new();
    for (name, template) in headers {
        let header = HeaderName::try_from(name).map_err(|_| format!("invalid header name \"{name}\""))?;
        // The expanded value is a secret: it goes into the request and nowhere else.
        let mut value = HeaderValue::try_from(expand_env(template))
            .map_err(|_| format!("invalid value for header \"{name}\""))?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    // Our own client: reqwest's default has no connect timeout.
    let client = crate::net::client_builder()
        .connect_timeout(limit)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| format!("cannot build HTTP client: {e}"))?;
    Ok((client, custom))
}

#[inline(never)] // see `connect`
fn streamable_transport(
    client: reqwest::Client,
    url: &str,
    headers: &HeaderMap,
    limit: Duration,
) -> StreamableHttpClientTransport<reqwest::Client> {
    let custom = headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(custom)
        // An expired session (404) replays the handshake once and retries the request.
        .reinit_on_expired_session(true)
        .session_recovery_timeout(limit);
    StreamableHttpClientTransport::with_client(client, config)
}

/// Our side of the session: the client identity, the elicitation bridge, and the
/// notifications the session acts on (progress, tool-list changes).
pub(super) struct Handler {
    info: ClientConfig,
    wait_for: Option<WaitFor>,
    notices: Arc<Notices>,
}

impl Handler {
    #[inline(never)] // see `connect`
    fn new(wait_for: Option<WaitFor>, notices: Arc<Notices>) -> Self {
        let capabilities = if wait_for.is_some() {
            json!({"elicitation": {"form": {}, "url": {}}})
        } else {
            json!({})
        };
        let info = serde_json::from_value(json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": capabilities,
            "clientInfo": {"name": "toolnexus", "version": env!("CARGO_PKG_VERSION")}
        }))
        .expect("a well-formed initialize request");
        Self {
            info,
            wait_for,
            notices,
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let wire = serde_json::to_value(&request).unwrap_or_default();
        let origin = match context.extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => Some(id),
            _ => None,
        };
        // The call's own caller (a gateway's client) answers first; the toolkit's
        // `wait_for` when it cannot.
        if let Some(relay) = self.notices.elicit_relay(origin)
            && let Some(reply) = relay.ask(wire.clone()).await
            && let Ok(result) = serde_json::from_value::<ElicitResult>(reply)
        {
            return Ok(result);
        }
        let Some(wait_for) = &self.wait_for else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let answer = wait_for(elicitation_to_request(&wire)).await;
        Ok(answer_to_elicit_result(answer))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.notices.progress(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notices.tools_changed();
    }
}

/// An `elicitation/create` (wire params) as a §10 request: URL mode ⇒ `authorization` with
/// the `url`; form mode ⇒ `input` with `data.schema`.
fn elicitation_to_request(params: &Value) -> Request {
    let is_url = params["mode"] == "url";
    let id = new_request_id();
    let mut request = Request {
        id: format!("elc-{}", id.strip_prefix("pnd-").unwrap_or(&id)),
        kind: if is_url { "authorization" } else { "input" }.to_owned(),
        prompt: params["message"].as_str().unwrap_or_default().to_owned(),
        url: None,
        data: None,
        expires_at: None,
    };
    if is_url {
        request.url = params["url"]
            .as_str()
            .filter(|u| !u.is_empty())
            .map(str::to_owned);
    } else if let Some(schema) = params.get("requestedSchema").filter(|s| !s.is_null()) {
        request.data = Some(Map::from_iter([("schema".to_owned(), schema.clone())]));
    }
    request
}

/// ok ⇒ accept (with the answer's data, `{}` when none); declined ⇒ decline; else cancel.
fn answer_to_elicit_result(answer: Answer) -> ElicitResult {
    if answer.ok {
        ElicitResult::new(ElicitationAction::Accept).with_content(answer.data.unwrap_or_else(|| json!({})))
    } else if answer.reason == Some(AnswerReason::Declined) {
        ElicitResult::new(ElicitationAction::Decline)
    } else {
        ElicitResult::new(ElicitationAction::Cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_results_map_like_every_port() {
        let r = call_result(
            "s",
            &json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert_eq!(
            r.to_json(),
            r#"{"output":"a\nb","isError":false,"metadata":{"server":"s"}}"#
        );

        let r = call_result(
            "s",
            &json!({"isError": true, "content": [
            {"type": "text", "text": "bad"}, {"type": "text", "text": "  "}, {"type": "text", "text": "worse"}]}),
        );
        assert_eq!(r.output, "bad\n\nworse");
        assert!(r.is_error);
        let r = call_result("s", &json!({"isError": true, "content": []}));
        assert_eq!(r.output, "MCP tool returned an error");

        let r = call_result(
            "s",
            &json!({"content": [{"type": "text", "text": "ignored"}],
            "structuredContent": {"b": 1, "a": [true, null]}}),
        );
        assert_eq!(r.output, r#"{"b":1,"a":[true,null]}"#);

        let r = call_result(
            "s",
            &json!({"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}),
        );
        assert_eq!(r.output, "image (image/png, 8 bytes)");
        assert_eq!(
            r.parts,
            [ContentPart::image_bytes(b"\x89PNG\r\n\x1a\n", "image/png")]
        );

        let r = call_result(
            "s",
            &json!({"content": [
            {"type": "text", "text": "see"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inline text"}},
            {"type": "resource_link", "uri": "https://x/y.pdf", "name": "y.pdf", "mimeType": "application/pdf"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]}),
        );
        assert_eq!(r.output, "see\ninline text");
        assert_eq!(r.parts.len(), 2);
        assert_eq!(r.parts[0].summary(), "file (application/pdf, 0 bytes)");
        assert_eq!(r.parts[1].summary(), "audio (audio/wav, 3 bytes)");
    }

    #[test]
    fn an_image_in_structured_content_is_not_sent_twice() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
        let r = call_result(
            "fs",
            &json!({"content": [{"type": "image", "data": png, "mimeType": "image/png"}],
            "structuredContent": {"content": [{"type": "image", "data": png, "mimeType": "image/png"}],
                "note": "kept", "other": "AAAA"}}),
        );
        assert_eq!(
            r.output,
            r#"{"content":[{"type":"image","data":"image (image/png, 70 bytes)","mimeType":"image/png"}],"note":"kept","other":"AAAA"}"#
        );
        assert_eq!(r.parts.len(), 1);
    }

    #[test]
    fn elicitation_maps_both_modes() {
        let form = elicitation_to_request(&json!({"mode": "form", "message": "Which city?",
            "requestedSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}));
        assert_eq!(form.kind, "input");
        assert_eq!(form.prompt, "Which city?");
        assert!(form.id.starts_with("elc-"));
        assert_eq!(
            form.data.unwrap()["schema"]["properties"]["city"]["type"],
            "string"
        );
        let url = elicitation_to_request(
            &json!({"mode": "url", "message": "Log in", "url": "https://login/x", "elicitationId": "e1"}),
        );
        assert_eq!(
            (url.kind.as_str(), url.url.as_deref(), url.data),
            ("authorization", Some("https://login/x"), None)
        );

        let accept = answer_to_elicit_result(Answer::output("x", "Chennai"));
        assert_eq!(
            serde_json::to_value(&accept).unwrap(),
            json!({"action": "accept", "content": {"output": "Chennai"}})
        );
        let declined = answer_to_elicit_result(Answer::declined("x", AnswerReason::Declined));
        assert_eq!(
            serde_json::to_value(&declined).unwrap(),
            json!({"action": "decline"})
        );
        let expired = answer_to_elicit_result(Answer::declined("x", AnswerReason::Expired));
        assert_eq!(
            serde_json::to_value(&expired).unwrap(),
            json!({"action": "cancel"})
        );
    }
}
