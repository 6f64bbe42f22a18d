//! MCP servers as tool sources (SPEC §2): connect over stdio or streamable HTTP, list the
//! tools (paginated), and turn each into a [`Tool`]. Every phase and every call is bounded;
//! one bad server is a [`McpStatus::Failed`], never an error for the whole load.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientConfig, ClientRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, ListToolsRequest, PaginatedRequestParams, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::config::{self, McpConfig, ServerConfig, Transport, expand_env};
use super::schema;
use super::{McpError, McpStatus, McpStatuses};
use crate::child::{self, ChildGuard};
use crate::content::{ContentPart, Media, MediaSource};
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::suspend::{Answer, AnswerReason, Request, WaitFor, new_request_id};
use crate::tool::{Tool, ToolSource, sanitize};
use crate::toolkit::{Closeable, Toolkit};

/// A runaway `nextCursor` chain stops here.
const MAX_LIST_PAGES: usize = 1_000;
/// Bound on shutting one session down (a remote's `DELETE`, a child's transport close).
const CLOSE_BOUND: Duration = Duration::from_secs(3);
/// The newest revision with an `initialize` handshake: what every peer in the wild speaks.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// What a load needs besides the config, set with the chaining methods.
#[derive(Clone, Default)]
pub struct LoadOptions {
    wait_for: Option<WaitFor>,
    cancel: CancellationToken,
}

impl LoadOptions {
    /// Advertise elicitation and answer a server's `elicitation/create` through `wait_for`
    /// (SPEC §2 "Elicitation bridge"). Without one the client does not advertise it, so
    /// compliant servers never elicit.
    pub fn wait_for(mut self, wait_for: WaitFor) -> Self {
        self.wait_for = Some(wait_for);
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

/// One listed tool definition under its original name (SPEC §2 Gap 6).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// The server's own name for the tool.
    pub name: String,
    /// Its description (`""` when absent).
    pub description: String,
    /// Its input schema, made provider-safe like a loaded tool's.
    pub input_schema: Value,
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
        async move { (server, connect(server, wait_for).await) }
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
                source.tools.extend(
                    listed
                        .into_iter()
                        .filter(|t| config::tool_allowed(server.tools.as_ref(), &t.name))
                        .map(|t| mcp_tool(&session, t)),
                );
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
            let outcome = match connect(server, None).await {
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
struct Listed {
    name: String,
    description: String,
    input_schema: Value,
}

/// A live connection to one server.
struct Session {
    server: String,
    timeout: Duration,
    peer: Peer<RoleClient>,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    child: Mutex<Option<ChildGuard>>,
}

impl Session {
    async fn close(&self) {
        if let Some(running) = self.running.lock().await.take() {
            // Cancelling closes the transport: stdin EOF for a child, DELETE for HTTP.
            let _ = tokio::time::timeout(self.timeout.min(CLOSE_BOUND), running.cancel()).await;
        }
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(child) = child {
            child.shutdown().await;
        }
    }

    async fn call(&self, tool: &str, args: Value, ctx: &ToolContext) -> ToolResult {
        let arguments = match args {
            Value::Object(m) => Some(m),
            Value::Null => Some(Map::new()),
            _ => return self.failure("tool arguments must be a JSON object"),
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let limit = ctx.timeout.unwrap_or(self.timeout);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match self.request(request, limit).await {
            Ok(ServerResult::CallToolResult(result)) => match serde_json::to_value(&result) {
                Ok(wire) => call_result(&self.server, &wire),
                Err(e) => self.failure(format!("unreadable tools/call result: {e}")),
            },
            Ok(_) => self.failure("the server answered tools/call with an unexpected result"),
            Err(ServiceError::Timeout { .. }) => self.failure(format!(
                "MCP server \"{}\" did not answer tools/call \"{tool}\" within {}ms",
                self.server,
                limit.as_millis()
            )),
            Err(e) => self.failure(describe(&self.server, &e)),
        }
    }

    async fn request(&self, request: ClientRequest, limit: Duration) -> Result<ServerResult, ServiceError> {
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(limit))
            .await?;
        handle.await_response().await
    }

    fn failure(&self, message: impl fmt::Display) -> ToolResult {
        ToolResult::failure(message).with_meta("server", json!(self.server))
    }

    async fn list_tools(&self) -> Result<Vec<Listed>, String> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let page = match self.request(request, self.timeout).await {
                Ok(ServerResult::ListToolsResult(page)) => page,
                Ok(_) => return Err("tools/list: unexpected result".into()),
                Err(e) => return Err(format!("tools/list failed: {}", describe(&self.server, &e))),
            };
            for tool in &page.tools {
                let wire = serde_json::to_value(tool).unwrap_or_default();
                out.push(Listed {
                    name: tool.name.to_string(),
                    description: tool.description.as_deref().unwrap_or("").to_owned(),
                    input_schema: schema::input_schema(&wire["inputSchema"]),
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
}

fn describe(server: &str, e: &ServiceError) -> String {
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
    let name = format!("{}_{}", sanitize(&session.server), sanitize(&listed.name));
    let session = Arc::clone(session);
    let original = Arc::<str>::from(listed.name);
    Tool::new(name, move |args, ctx| {
        let session = Arc::clone(&session);
        let original = Arc::clone(&original);
        async move { session.call(&original, args, &ctx).await }
    })
    .with_description(listed.description)
    .with_schema(listed.input_schema)
    .with_source(ToolSource::Mcp)
}

/// Map a `CallToolResult` (as wire JSON) to a [`ToolResult`] like every port: `isError` ⇒
/// failure with the joined text; `structuredContent` ⇒ its compact JSON; else the joined
/// text parts. Non-text content becomes parts on every branch.
fn call_result(server: &str, wire: &Value) -> ToolResult {
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
async fn connect(
    server: &ServerConfig,
    wait_for: Option<WaitFor>,
) -> Result<(Arc<Session>, Vec<Listed>), String> {
    let limit = server.timeout;
    let handler = Handler::new(wait_for);
    let ms = limit.as_millis();
    let (running, child) = match &server.transport {
        Transport::Local { command, env, cwd } => {
            let (child, stdout, stdin) = spawn(command, env.iter(), cwd.as_deref())?;
            match tokio::time::timeout(limit, handler.serve(super::stdio::Stdio::new(stdout, stdin))).await {
                Ok(Ok(running)) => (running, Some(child)),
                Ok(Err(e)) => return Err(format!("initialize failed: {e}")),
                Err(_) => return Err(format!("initialize timed out after {ms}ms")),
            }
        }
        Transport::Remote { url, headers } => {
            let transport = http_transport(url, headers.iter(), limit)?;
            match tokio::time::timeout(limit, handler.serve(transport)).await {
                Ok(Ok(running)) => (running, None),
                Ok(Err(e)) => return Err(format!("initialize failed: {e}")),
                Err(_) => return Err(format!("initialize timed out after {ms}ms")),
            }
        }
    };
    let session = Arc::new(Session {
        server: server.name.clone(),
        timeout: limit,
        peer: running.peer().clone(),
        running: tokio::sync::Mutex::new(Some(running)),
        child: Mutex::new(child),
    });
    let listed = match tokio::time::timeout(limit, session.list_tools()).await {
        Ok(Ok(listed)) => listed,
        Ok(Err(reason)) => {
            session.close().await;
            return Err(reason);
        }
        Err(_) => {
            session.close().await;
            return Err(format!("tools/list timed out after {ms}ms"));
        }
    };
    Ok((session, listed))
}

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

fn http_transport<'a>(
    url: &str,
    headers: impl Iterator<Item = (&'a str, &'a str)>,
    limit: Duration,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut custom = std::collections::HashMap::new();
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
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(custom)
        // An expired session (404) fails the call instead of replaying the handshake.
        .reinit_on_expired_session(false);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// Our side of the session: the client identity, and the elicitation bridge.
struct Handler {
    info: ClientConfig,
    wait_for: Option<WaitFor>,
}

impl Handler {
    fn new(wait_for: Option<WaitFor>) -> Self {
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
        Self { info, wait_for }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(wait_for) = &self.wait_for else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let wire = serde_json::to_value(&request).unwrap_or_default();
        let answer = wait_for(elicitation_to_request(&wire)).await;
        Ok(answer_to_elicit_result(answer))
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
