//! A toolkit served as an A2A agent (SPEC §7B): the Agent Card at
//! `GET /.well-known/agent-card.json` and JSON-RPC at `POST /` — `SendMessage` submits a
//! task that [`Client::run`] (or [`Client::ask`] with the message's `contextId`) fulfils in
//! the background, `GetTask` reads it, `CancelTask` stops it.
//!
//! [`A2aServer`] is the profile; [`crate::serve::serve`] mounts it on a guarded listener
//! (Host and Origin checks, bearer token, connection limits) beside the MCP profile at
//! `/mcp`. Bounded everywhere: at most [`max_running`](A2aConfig::max_running) tasks run at
//! once (more is a JSON-RPC error, never a queue), request bodies stop at
//! [`max_body_bytes`](A2aConfig::max_body_bytes), and [`A2aServer::shutdown`] gives running
//! tasks a deadline, then records the rest as `failed`.
//!
//! ```
//! use toolnexus::a2a::A2aConfig;
//! use toolnexus::client::{Client, Generation};
//! use toolnexus::serve::{A2aProfile, ServeOptions, serve};
//! use toolnexus::Toolkit;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let client = Client::in_process("echo", |req| async move {
//!     Ok(Generation::text(format!("you said: {}", req.messages.last().unwrap()["content"])))
//! })
//! .build()
//! .unwrap();
//! let config = A2aConfig { name: Some("echo-agent".into()), ..A2aConfig::default() };
//! let options = ServeOptions { a2a: Some(A2aProfile::new(client, config)), ..ServeOptions::default() };
//! let handle = serve(&Toolkit::default(), "127.0.0.1:0", options).await.unwrap();
//! let agent = handle.a2a().unwrap();
//! assert_eq!(agent.card().name, "echo-agent");
//! assert_eq!(agent.card().url.as_deref(), Some(format!("{}/", handle.url()).as_str()));
//! handle.stop().await;
//! # });
//! ```

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::FutureExt as _;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::card::{
    AgentCard, AgentInterface, AgentSkill, CARD_PATH, Capabilities, JSONRPC_BINDING, PROTOCOL_VERSION,
    Provider,
};
use super::config::ConfigError;
use super::store::{Lease, MemoryTaskStore, TaskStore, now_ms, resolve_store};
use super::wire::{
    Artifact, Dialect, Message, Part, Task, TaskState, V1_VERSION, VERSION_HEADER, join_text, new_id,
};
use crate::client::{Client, ClientError, RunOptions, RunResult, RunStatus};
use crate::toolkit::Toolkit;

/// The card's `name` when none is configured.
pub const DEFAULT_NAME: &str = "toolnexus-agent";
/// The card's `version` when none is configured.
pub const DEFAULT_VERSION: &str = "0.1.0";
/// Tasks running at once unless configured.
pub const DEFAULT_MAX_RUNNING: usize = 64;
/// The request body limit unless configured (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// How long a replica's hold on a task lasts unless configured; it renews it every third of
/// that while the run goes on.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// How long [`A2aServer::shutdown`] waits for cancelled tasks to record `failed`.
const FINAL_WRITES: Duration = Duration::from_secs(5);
/// How long `CancelTask` waits for the task to record `canceled` before answering.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// JSON-RPC: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad `params`.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the server failed (the task store).
pub const INTERNAL_ERROR: i64 = -32603;
/// The server is at its running-task limit or shutting down.
pub const SERVER_BUSY: i64 = -32000;
/// A2A: no task with that id.
pub const TASK_NOT_FOUND: i64 = -32001;
/// A2A: the task already ended.
pub const TASK_NOT_CANCELABLE: i64 = -32002;

/// What [`A2aConfig::on_task`] hears when a task ends.
#[derive(Clone, Debug)]
pub struct TaskEvent {
    /// The task id.
    pub id: String,
    /// The caller's `contextId`, when given.
    pub context_id: Option<String>,
    /// The task text the caller sent.
    pub text: String,
    /// `completed`, `failed`, `canceled` or `input-required`.
    pub state: TaskState,
    /// The task as stored.
    pub task: Task,
    /// The run behind it (usage, `tool_call_count`, `turns`), when it returned.
    pub result: Option<RunResult>,
    /// Wall time from submit to end, in milliseconds.
    pub ms: f64,
}

/// The per-task callback; a panic inside it is contained.
pub type OnTask = Arc<dyn Fn(&TaskEvent) + Send + Sync>;

/// The A2A serve profile (SPEC §7B `A2AConfig`) and its limits.
#[derive(Clone)]
pub struct A2aConfig {
    /// The card's `name` ([`DEFAULT_NAME`] when `None`).
    pub name: Option<String>,
    /// The card's `description` (`""` when `None`).
    pub description: Option<String>,
    /// The card's `version` ([`DEFAULT_VERSION`] when `None`).
    pub version: Option<String>,
    /// The card's `provider`, present only when set.
    pub provider: Option<Provider>,
    /// Advertise only these skills (by name); `None` ⇒ every skill of the toolkit.
    pub skills: Option<Vec<String>>,
    /// Where tasks live; `None` ⇒ a fresh [`MemoryTaskStore`].
    pub store: Option<Arc<dyn TaskStore>>,
    /// Tasks running at once; a `SendMessage` over it is refused with [`SERVER_BUSY`].
    pub max_running: usize,
    /// The largest request body accepted; larger is HTTP 413.
    pub max_body_bytes: usize,
    /// Called once per ended task.
    pub on_task: Option<OnTask>,
    /// How long this replica's hold on a running task lasts without renewal. A task whose
    /// lease runs out (its replica was killed) is marked `failed` by the first replica
    /// sharing the store that notices. Default [`DEFAULT_LEASE`].
    pub lease: Duration,
    /// How often a running task's lease is renewed and expired leases are swept; `None` ⇒ a
    /// third of [`lease`](Self::lease). Kept below the lease so one late renewal is harmless.
    pub renew_every: Option<Duration>,
    /// This replica's id as a lease owner; `None` ⇒ a fresh UUID per server.
    pub replica_id: Option<String>,
}

impl Default for A2aConfig {
    fn default() -> Self {
        Self {
            name: None,
            description: None,
            version: None,
            provider: None,
            skills: None,
            store: None,
            max_running: DEFAULT_MAX_RUNNING,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            on_task: None,
            lease: DEFAULT_LEASE,
            renew_every: None,
            replica_id: None,
        }
    }
}

impl fmt::Debug for A2aConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("A2aConfig")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("version", &self.version)
            .field("provider", &self.provider)
            .field("skills", &self.skills)
            .field("store", &self.store.is_some())
            .field("max_running", &self.max_running)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("on_task", &self.on_task.is_some())
            .field("lease", &self.lease)
            .field("renew_every", &self.renew_every)
            .field("replica_id", &self.replica_id)
            .finish()
    }
}

impl A2aConfig {
    /// Reads a config document's top-level `a2a` block: `name`, `description`, `version`,
    /// `provider {organization, url}`, `skills [..]`, `store` (`"memory"` | `"file:<dir>"` | `"sqlite:<path>"` | `"postgres://…"`),
    /// the limits `maxRunning`, `maxBodyBytes`, and the lease timing `leaseMs`,
    /// `renewEveryMs` (milliseconds). `origin` names the document in errors.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::a2a::A2aConfig;
    ///
    /// let cfg = A2aConfig::from_value(&json!({"name": "helper", "skills": ["pdf"], "maxRunning": 8}), "cfg.json").unwrap();
    /// assert_eq!((cfg.name.as_deref(), cfg.max_running), (Some("helper"), 8));
    /// let err = A2aConfig::from_value(&json!({"store": "redis:x"}), "cfg.json").unwrap_err();
    /// assert_eq!(err.to_string(),
    ///     r#"malformed config cfg.json: a2a.store: task store: unknown store "redis:x" (expected memory, file:<dir>, sqlite:<path> or postgres://...)"#);
    /// ```
    pub fn from_value(block: &Value, origin: &str) -> Result<Self, ConfigError> {
        let error = |place: &str, message: String| ConfigError {
            origin: origin.to_owned(),
            place: format!("a2a{place}"),
            message,
        };
        let Value::Object(fields) = block else {
            return Err(error("", "must be an object".into()));
        };
        let text = |key: &str| match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(error(&format!(".{key}"), "must be a string".into())),
        };
        let count = |key: &str, default: usize| match fields.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| *n > 0)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| error(&format!(".{key}"), "must be a positive integer".into())),
        };
        let millis = |key: &str| match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n > 0)
                .map(|n| Some(Duration::from_millis(n)))
                .ok_or_else(|| {
                    error(
                        &format!(".{key}"),
                        "must be a positive number of milliseconds".into(),
                    )
                }),
        };
        let provider = match fields.get("provider") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<Provider>(v.clone())
                    .map_err(|e| error(".provider", format!("must be {{organization, url}}: {e}")))?,
            ),
        };
        let skills = match fields.get("skills") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<Vec<String>>(v.clone())
                    .map_err(|_| error(".skills", "must be a list of skill names".into()))?,
            ),
        };
        let store = match text("store")? {
            None => None,
            Some(spec) => Some(resolve_store(&spec).map_err(|e| error(".store", e.to_string()))?),
        };
        Ok(Self {
            name: text("name")?,
            description: text("description")?,
            version: text("version")?,
            provider,
            skills,
            store,
            max_running: count("maxRunning", DEFAULT_MAX_RUNNING)?,
            max_body_bytes: count("maxBodyBytes", DEFAULT_MAX_BODY_BYTES)?,
            on_task: None,
            lease: millis("leaseMs")?.unwrap_or(DEFAULT_LEASE),
            renew_every: millis("renewEveryMs")?,
            replica_id: None,
        })
    }
}

/// A toolkit served as an A2A agent. Cheap to clone; every clone is the same server.
#[derive(Clone)]
pub struct A2aServer {
    inner: Arc<Inner>,
}

struct Inner {
    toolkit: Toolkit,
    client: Client,
    card: AgentCard,
    card_json: Bytes,
    store: Arc<dyn TaskStore>,
    permits: Arc<Semaphore>,
    max_running: usize,
    max_body_bytes: usize,
    on_task: Option<OnTask>,
    /// The fulfilments in flight, by task id.
    running: Mutex<HashMap<String, Running>>,
    /// Set by `shutdown`: no new tasks.
    closing: AtomicBool,
    /// Cancelled when the shutdown deadline passes; every task's token is its child.
    fail_rest: CancellationToken,
    /// This replica's id as a lease owner.
    replica: String,
    /// How long a lease lasts.
    lease: Duration,
    /// How often leases are renewed and swept.
    renew_every: Duration,
    /// Stops the lease sweeper.
    stop_sweeping: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop_sweeping.cancel();
    }
}

struct Running {
    cancel: CancellationToken,
    finished: CancellationToken,
}

impl fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("A2aServer")
            .field("card", &self.inner.card.name)
            .field("running", &self.running())
            .field("max_running", &self.inner.max_running)
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// Serves `toolkit` through `client` under `config`. `base_url` is where the listener
    /// is reached (`http://127.0.0.1:8080`); the card's `url` is it plus `/`.
    pub(crate) fn new(toolkit: &Toolkit, client: Client, config: A2aConfig, base_url: &str) -> Self {
        let card = build_card(toolkit, &config, base_url);
        let card_json = Bytes::from(serde_json::to_vec(&card).unwrap_or_default());
        let max_running = config.max_running.clamp(1, Semaphore::MAX_PERMITS);
        let lease = config.lease.max(Duration::from_millis(1));
        let renew_every = config
            .renew_every
            .unwrap_or(lease / 3)
            .clamp(Duration::from_millis(1), lease);
        let server = Self {
            inner: Arc::new(Inner {
                toolkit: toolkit.clone(),
                client,
                card,
                card_json,
                store: config.store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
                permits: Arc::new(Semaphore::new(max_running)),
                max_running,
                max_body_bytes: config.max_body_bytes,
                on_task: config.on_task,
                running: Mutex::new(HashMap::new()),
                closing: AtomicBool::new(false),
                fail_rest: CancellationToken::new(),
                replica: config.replica_id.unwrap_or_else(new_id),
                lease,
                renew_every,
                stop_sweeping: CancellationToken::new(),
            }),
        };
        // Without a runtime (a server built outside one) nobody sweeps; `serve` always has one.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(sweep(
                Arc::downgrade(&server.inner),
                renew_every,
                server.inner.stop_sweeping.clone(),
            ));
        }
        server
    }

    /// The card served at `/.well-known/agent-card.json`.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The task store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.inner.store
    }

    /// This replica's id: the owner of the leases it holds.
    pub fn replica_id(&self) -> &str {
        &self.inner.replica
    }

    /// How many tasks are running now.
    pub fn running(&self) -> usize {
        self.inner.max_running - self.inner.permits.available_permits()
    }

    /// The A2A routes: `GET /.well-known/agent-card.json` and `POST /`.
    pub(crate) fn router(&self) -> Router {
        Router::new()
            .route(CARD_PATH, get(serve_card))
            .route("/", post(serve_rpc))
            .layer(DefaultBodyLimit::max(self.inner.max_body_bytes))
            .with_state(self.inner.clone())
    }

    /// Stops taking tasks (`SendMessage` is refused with [`SERVER_BUSY`]), lets running
    /// tasks finish for up to `grace`, then cancels the rest, which are recorded `failed`
    /// with the reason. Returns once every task has been recorded (bounded).
    pub async fn shutdown(&self, grace: Duration) {
        let inner = &self.inner;
        inner.closing.store(true, Ordering::SeqCst);
        inner.stop_sweeping.cancel();
        // Every permit back means every fulfilment has ended.
        let all = inner.max_running as u32;
        if tokio::time::timeout(grace, inner.permits.acquire_many(all))
            .await
            .is_ok()
        {
            return;
        }
        inner.fail_rest.cancel();
        if tokio::time::timeout(FINAL_WRITES, inner.permits.acquire_many(all))
            .await
            .is_err()
        {
            tracing::warn!("A2A shutdown: some tasks did not record their end in time");
        }
    }
}

/// The card of a served toolkit (SPEC §7B), plus the 1.0 interface the SDKs look for.
fn build_card(toolkit: &Toolkit, config: &A2aConfig, base_url: &str) -> AgentCard {
    let url = format!("{}/", base_url.trim_end_matches('/'));
    AgentCard {
        name: config.name.clone().unwrap_or_else(|| DEFAULT_NAME.into()),
        description: config.description.clone().unwrap_or_default(),
        version: config.version.clone().unwrap_or_else(|| DEFAULT_VERSION.into()),
        protocol_version: Some(PROTOCOL_VERSION.into()),
        capabilities: Capabilities::default(),
        default_input_modes: vec!["text".into()],
        default_output_modes: vec!["text".into()],
        skills: card_skills(toolkit, config.skills.as_deref()),
        url: Some(url.clone()),
        provider: config.provider.clone(),
        supported_interfaces: vec![AgentInterface {
            url,
            protocol_binding: JSONRPC_BINDING.into(),
            protocol_version: V1_VERSION.into(),
        }],
    }
}

/// The toolkit's skills (never its raw tools), filtered to `wanted` when given.
#[cfg(feature = "skills")]
fn card_skills(toolkit: &Toolkit, wanted: Option<&[String]>) -> Vec<AgentSkill> {
    toolkit
        .skills()
        .iter()
        .filter(|s| wanted.is_none_or(|w| w.contains(&s.name)))
        .map(|s| AgentSkill {
            id: s.name.clone(),
            name: s.name.clone(),
            description: s.description.clone().unwrap_or_default(),
            ..AgentSkill::default()
        })
        .collect()
}

#[cfg(not(feature = "skills"))]
fn card_skills(_: &Toolkit, _: Option<&[String]>) -> Vec<AgentSkill> {
    Vec::new()
}

async fn serve_card(State(inner): State<Arc<Inner>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        inner.card_json.clone(),
    )
        .into_response()
}

async fn serve_rpc(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let message = format!("the request body exceeds the {}-byte limit", inner.max_body_bytes);
            let mut response = rpc_error(&Value::Null, INVALID_REQUEST, &message);
            *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            return response;
        }
        Err(rejection) => return rpc_error(&Value::Null, INVALID_REQUEST, &rejection.body_text()),
    };
    // JSON only: a web page can send a form or plain text cross-site without asking first,
    // never `application/json`.
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| {
            let t = t.trim().to_ascii_lowercase();
            t == "application/json" || (t.starts_with("application/") && t.ends_with("+json"))
        });
    if !json {
        let mut response = rpc_error(
            &Value::Null,
            INVALID_REQUEST,
            "the request must be JSON (Content-Type: application/json)",
        );
        *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
        return response;
    }
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return rpc_error(&Value::Null, PARSE_ERROR, &format!("Parse error: {e}")),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return rpc_error(
            &id,
            INVALID_REQUEST,
            "Invalid Request: expected {\"jsonrpc\":\"2.0\",\"method\":…}",
        );
    };
    let dialect = Dialect::from_version_header(headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok()));
    let params = request.get("params").unwrap_or(&Value::Null);
    let outcome = match method {
        "SendMessage" => send_message(&inner, params, dialect).await,
        "GetTask" => get_task(&inner, params, dialect).await,
        "CancelTask" => cancel_task(&inner, params, dialect).await,
        other => Err((METHOD_NOT_FOUND, format!("Method not found: {other}"))),
    };
    match outcome {
        Ok(result) => json_response(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        Err((code, message)) => rpc_error(&id, code, &message),
    }
}

type RpcResult = Result<Value, (i64, String)>;

fn json_response(body: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Response {
    json_response(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn internal(e: impl fmt::Display) -> (i64, String) {
    (INTERNAL_ERROR, format!("Internal error: {e}"))
}

async fn send_message(inner: &Arc<Inner>, params: &Value, dialect: Dialect) -> RpcResult {
    let invalid = || {
        (
            INVALID_PARAMS,
            "Invalid params: SendMessage needs params.message with a text part".to_owned(),
        )
    };
    let message: Message = params
        .get("message")
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .ok_or_else(invalid)?;
    if !message.parts.iter().any(|p| p.text().is_some()) {
        return Err(invalid());
    }
    // The SPEC's subset returns at once unless asked to block; 1.0 blocks unless asked not to.
    let config = params.get("configuration");
    let blocking = match dialect {
        Dialect::Spec => config.and_then(|c| c.get("blocking")).and_then(Value::as_bool) == Some(true),
        Dialect::V1 => {
            config
                .and_then(|c| c.get("returnImmediately"))
                .and_then(Value::as_bool)
                != Some(true)
        }
    };
    if inner.closing.load(Ordering::SeqCst) {
        return Err((
            SERVER_BUSY,
            "the agent is shutting down and takes no new tasks".into(),
        ));
    }
    let Ok(permit) = inner.permits.clone().try_acquire_owned() else {
        let n = inner.max_running;
        let tasks = if n == 1 { "task" } else { "tasks" };
        return Err((
            SERVER_BUSY,
            format!("the agent is busy: it runs at most {n} {tasks} at once; retry later"),
        ));
    };
    let mut task = Task::new(new_id(), TaskState::Submitted);
    task.context_id = message.context_id.clone().filter(|c| !c.is_empty());
    let lease = Lease::new(inner.replica.clone(), now_ms(), inner.lease);
    inner.store.claim(&task, &lease).await.map_err(internal)?;

    let running = Running {
        cancel: inner.fail_rest.child_token(),
        finished: CancellationToken::new(),
    };
    let finished = running.finished.clone();
    let cancel = running.cancel.clone();
    lock(&inner.running).insert(task.id.clone(), running);
    let text = join_text(&message.parts, "");
    tokio::spawn(fulfil(
        inner.clone(),
        task.clone(),
        text,
        cancel,
        finished.clone(),
        permit,
    ));

    if blocking {
        finished.cancelled().await;
        task = inner
            .store
            .get(&task.id)
            .await
            .map_err(internal)?
            .ok_or_else(|| internal("the task vanished from the store"))?;
    }
    Ok(match dialect {
        Dialect::Spec => task.to_wire(dialect),
        Dialect::V1 => json!({"task": task.to_wire(dialect)}),
    })
}

fn task_id(params: &Value) -> Result<&str, (i64, String)> {
    params
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            (
                INVALID_PARAMS,
                "Invalid params: expected {\"id\": \"<task id>\"}".to_owned(),
            )
        })
}

async fn get_task(inner: &Inner, params: &Value, dialect: Dialect) -> RpcResult {
    let id = task_id(params)?;
    match inner.store.get(id).await.map_err(internal)? {
        Some(task) => Ok(task.to_wire(dialect)),
        None => Err((TASK_NOT_FOUND, format!("Task not found: {id}"))),
    }
}

async fn cancel_task(inner: &Inner, params: &Value, dialect: Dialect) -> RpcResult {
    let id = task_id(params)?;
    let running = lock(&inner.running)
        .get(id)
        .map(|r| (r.cancel.clone(), r.finished.clone()));
    let was_running = running.is_some();
    if let Some((cancel, finished)) = running {
        cancel.cancel();
        // The fulfilment records `canceled` itself; answer with what it recorded.
        let _ = tokio::time::timeout(CANCEL_WAIT, finished.cancelled()).await;
    }
    let not_found = || (TASK_NOT_FOUND, format!("Task not found: {id}"));
    let not_cancelable = |task: &Task| {
        (
            TASK_NOT_CANCELABLE,
            format!("Task cannot be canceled: it is {}", task.status.state),
        )
    };
    let task = inner
        .store
        .get(id)
        .await
        .map_err(internal)?
        .ok_or_else(not_found)?;
    if was_running {
        return Ok(task.to_wire(dialect));
    }
    if task.status.state.is_terminal() {
        return Err(not_cancelable(&task));
    }
    // Run by another replica (it sees the change at its next renewal and stops the run), or
    // left unfinished by an earlier process: the store marks it, atomically.
    let task = inner
        .store
        .cancel(id, CANCELED)
        .await
        .map_err(internal)?
        .ok_or_else(not_found)?;
    if task.status.state != TaskState::Canceled {
        return Err(not_cancelable(&task));
    }
    Ok(task.to_wire(dialect))
}

/// How a fulfilment ended.
enum Outcome {
    Returned(Box<RunResult>),
    Failed(String),
    Canceled,
    ShutDown,
    /// The store says this replica no longer holds the task: canceled on another replica,
    /// or failed by a sweeper after the lease ran out.
    Lost,
}

/// The status message of a task canceled by `CancelTask`.
const CANCELED: &str = "canceled by the caller";

/// The background half of `SendMessage`: `working`, the run, then the end state — the
/// only writer of the task after submission, so no two writes race.
async fn fulfil(
    inner: Arc<Inner>,
    mut task: Task,
    text: String,
    cancel: CancellationToken,
    finished: CancellationToken,
    _permit: OwnedSemaphorePermit,
) {
    let started = Instant::now();
    task.status.state = TaskState::Working;
    let owned = write(&inner, &task).await;

    // Not held any more (canceled on another replica before it started): do not run.
    let outcome = if owned {
        run(&inner, &task, &text, &cancel).await
    } else {
        Outcome::Lost
    };
    let outcome = match outcome {
        Outcome::Canceled if inner.fail_rest.is_cancelled() => Outcome::ShutDown,
        other => other,
    };
    let mut result = None;
    match outcome {
        Outcome::Returned(run) => {
            if let (RunStatus::Pending, Some(pending)) = (run.status, &run.pending) {
                // A tool suspended the run (SPEC §10): the caller must answer first.
                task.status.state = TaskState::InputRequired;
                task.status.message = Some(Message::agent_text(pending.prompt.clone()));
            } else {
                task.status.state = TaskState::Completed;
                task.artifacts = vec![Artifact {
                    artifact_id: new_id(),
                    name: None,
                    parts: vec![Part::Text(run.text.clone())],
                }];
            }
            result = Some(*run);
        }
        Outcome::Failed(error) => {
            task.status.state = TaskState::Failed;
            task.status.message = Some(Message::agent_text(error));
        }
        Outcome::Canceled => {
            task.status.state = TaskState::Canceled;
            task.status.message = Some(Message::agent_text(CANCELED));
        }
        Outcome::ShutDown => {
            task.status.state = TaskState::Failed;
            task.status.message = Some(Message::agent_text(
                "the agent shut down before the task finished",
            ));
        }
        Outcome::Lost => {}
    }
    if !write(&inner, &task).await {
        // Another replica ended it: report what the store holds.
        if let Ok(Some(stored)) = inner.store.get(&task.id).await {
            task = stored;
        }
    }
    lock(&inner.running).remove(&task.id);
    finished.cancel();
    if let Some(on_task) = &inner.on_task {
        let event = TaskEvent {
            id: task.id.clone(),
            context_id: task.context_id.clone(),
            text,
            state: task.status.state.clone(),
            task,
            result,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        };
        if std::panic::catch_unwind(AssertUnwindSafe(|| on_task(&event))).is_err() {
            tracing::warn!(task = %event.id, "A2A on_task callback panicked");
        }
    }
}

/// Runs the task while holding its lease: ends when the run returns, the caller cancels,
/// or the store says this replica lost the task.
async fn run(inner: &Inner, task: &Task, text: &str, cancel: &CancellationToken) -> Outcome {
    let opts = RunOptions::new(&inner.toolkit).cancel(cancel.clone());
    let run = async {
        match &task.context_id {
            // A peer's turns in one context are one conversation (SPEC §8 memory).
            Some(context) => inner.client.ask(text, context, opts).await,
            None => inner.client.run_with(text, opts).await,
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Outcome::Canceled,
        () = hold(inner, &task.id) => Outcome::Lost,
        ran = AssertUnwindSafe(run).catch_unwind() => match ran {
            Ok(Ok(result)) => Outcome::Returned(Box::new(result)),
            Ok(Err(ClientError::Cancelled)) => Outcome::Canceled,
            Ok(Err(e)) => Outcome::Failed(e.to_string()),
            Err(panic) => Outcome::Failed(format!("the run panicked: {}", crate::tool::panic_message(&*panic))),
        },
    }
}

/// Writes `task` if this replica still holds it; `false` when it does not (the task was
/// canceled or failed elsewhere). A failed write is logged, not fatal — the fulfilment still
/// ends and frees its slot, and counts as still held so the run goes on.
async fn write(inner: &Inner, task: &Task) -> bool {
    match inner.store.update_owned(task, &inner.replica).await {
        Ok(held) => held,
        Err(e) => {
            tracing::warn!(task = %task.id, state = %task.status.state, "A2A task not saved: {e}");
            true
        }
    }
}

/// Renews the lease on task `id` every `renew_every`; returns once the store says this
/// replica no longer holds it. A failed renewal is retried at the next period: if the store
/// stays away past the lease, a sweeper fails the task and the next renewal returns.
async fn hold(inner: &Inner, id: &str) {
    loop {
        tokio::time::sleep(inner.renew_every).await;
        let lease = Lease::new(inner.replica.clone(), now_ms(), inner.lease);
        match inner.store.renew(id, &lease).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => tracing::warn!(task = %id, "A2A lease not renewed: {e}"),
        }
    }
}

/// Every `every`, fails the tasks whose lease ran out (their replica was lost), until `stop`
/// or the server is gone.
async fn sweep(server: Weak<Inner>, every: Duration, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let Some(inner) = server.upgrade() else { return };
        match inner.store.expire(now_ms()).await {
            Ok(failed) => {
                for task in failed {
                    tracing::warn!(task = %task.id, "A2A task failed: its replica was lost");
                }
            }
            Err(e) => tracing::warn!("A2A lease sweep failed: {e}"),
        }
    }
}

fn lock(running: &Mutex<HashMap<String, Running>>) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
    // The map holds tokens only; a panic elsewhere cannot leave it half-updated.
    running.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
