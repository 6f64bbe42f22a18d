//! The unified LLM client (SPEC §8, §10, §11): a base URL, a style and a model, and a
//! [`Toolkit`] runs as an agent.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::client::transport::{from_fn, HttpResponse};
//! use toolnexus::client::{Client, RunStatus};
//! use toolnexus::{Tool, ToolResult, Toolkit};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A scripted model: first asks for `add`, then answers.
//! let turn = std::sync::atomic::AtomicUsize::new(0);
//! let http = from_fn(move |_req| {
//!     let n = turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
//!     async move {
//!         Ok(HttpResponse::json(&if n == 0 {
//!             json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
//!                 {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]}}]})
//!         } else {
//!             json!({"choices": [{"message": {"role": "assistant", "content": "2 + 3 = 5"}}]})
//!         }))
//!     }
//! });
//! let add = Tool::new("add", |args: serde_json::Value, _| async move {
//!     ToolResult::success(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))
//! });
//! let client = Client::builder()
//!     .base_url("https://openrouter.ai/api/v1")
//!     .style("openai")
//!     .model("deepseek/deepseek-chat")
//!     .api_key("sk-test")
//!     .transport(http)
//!     .build()
//!     .unwrap();
//! let result = client.run("What is 2 + 3?", &Toolkit::new([add])).await.unwrap();
//! assert_eq!(result.status, RunStatus::Done);
//! assert_eq!(result.text, "2 + 3 = 5");
//! assert_eq!(result.tool_calls[0].output, "5");
//! # });
//! ```

pub mod hooks;
mod in_process;
pub mod metrics;
mod relay;
pub mod resilience;
mod run;
pub mod store;
mod stream;
pub mod translate;
pub mod transport;
pub mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::content::{ContentPart, UnsupportedPart};
use crate::suspend::{Answer, Request, WaitFor};
use crate::toolkit::Toolkit;

pub use hooks::Hooks;
pub use in_process::{Generate, GenerateRequest, GeneratedCall, Generation};
pub use metrics::{MetricEvent, MetricsRegistry};
pub use relay::{BUILTIN_TOOL_NAMES, RelayResult, relay_answer, relay_tool};
pub use resilience::{ErrorDecision, ErrorInfo, OnError};
pub use store::{ConversationStore, FileStore, InMemoryStore, StoreError};
pub use transport::{HttpRequest, HttpResponse, HttpTransport, ReqwestTransport, TransportError};
pub use wire::{Style, Usage};

/// The `on_metric` sink.
pub type OnMetric = Arc<dyn Fn(&MetricEvent) + Send + Sync>;
/// Rewrites each fully assembled request body just before it is sent.
pub type BodyTransform = Arc<dyn Fn(Value) -> Value + Send + Sync>;
/// Receives each assistant text delta (block-style streaming).
pub type OnText = Arc<dyn Fn(&str) + Send + Sync>;

/// Everything a client can fail with: typed build errors first, then run errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// `style` is neither `openai` nor `anthropic`.
    #[error("toolnexus: unknown client style \"{0}\" (expected \"openai\" or \"anthropic\")")]
    UnknownStyle(String),
    /// No model was configured.
    #[error("toolnexus: a model is required")]
    MissingModel,
    /// No base URL was configured.
    #[error("toolnexus: a base URL is required")]
    MissingBaseUrl,
    /// The base URL does not parse as an http(s) URL.
    #[error("toolnexus: base URL \"{url}\" is not a usable http(s) URL: {reason}")]
    InvalidBaseUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// No API key was given and none is in the environment.
    #[error("toolnexus: no API key: set api_key or OPENROUTER_API_KEY / OPENAI_API_KEY / ANTHROPIC_API_KEY")]
    MissingApiKey,
    /// A relay tool is named like a built-in tool.
    #[error(
        "toolnexus: relay tool name collides with a built-in tool: {} — rename the relay tool (the guard applies even with builtins disabled)",
        .0.join(", ")
    )]
    RelayCollision(Vec<String>),
    /// The provider answered with an error status (after any retries).
    #[error("LLM {status}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Provider {
        /// HTTP status.
        status: u16,
        /// The provider's message (its `error.message` when JSON), API key redacted.
        message: String,
        /// The raw `Retry-After` header, when sent.
        retry_after: Option<String>,
    },
    /// No response arrived (after any retries).
    #[error("LLM request failed: {0}")]
    Transport(String),
    /// A 2xx response that is not the provider's JSON/SSE shape.
    #[error("LLM response could not be read: {0}")]
    Decode(String),
    /// The whole-run `timeout` elapsed; the in-flight request was aborted.
    #[error("run timeout after {0}ms (client timeout budget)")]
    Timeout(u128),
    /// The run's cancellation token fired; the in-flight request was aborted.
    #[error("run cancelled")]
    Cancelled,
    /// `before_llm` aborted the call.
    #[error("before_llm hook aborted the call: {0}")]
    Hook(String),
    /// A part attached to the prompt cannot be sent in this style.
    #[error(transparent)]
    UnsupportedPart(#[from] UnsupportedPart),
    /// A durable resume was refused (answer id mismatch, no halted turn).
    #[error("toolnexus: cannot resume — {0}")]
    Resume(String),
    /// Streaming was asked of an in-process client.
    #[error(
        "toolnexus: an in-process client does not support streaming — `generate` returns a complete answer; use run/ask"
    )]
    StreamingUnsupported,
    /// The conversation store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The model gave a final answer.
    #[default]
    Done,
    /// A tool suspended and no `wait_for` was set; see [`RunResult::pending`].
    Pending,
    /// A limit stopped the run; see [`RunResult::limit`].
    Incomplete,
}

/// One tool call the run made, with its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// Tool name.
    pub name: String,
    /// Arguments it ran with.
    pub args: Value,
    /// Its output text.
    pub output: String,
    /// Whether it failed.
    pub is_error: bool,
    /// Its metadata (MCP `server`, HTTP `status`, …).
    pub metadata: Option<Map<String, Value>>,
}

/// The outcome of a run, with telemetry. Serializable, so a halted run can be persisted and
/// resumed by another process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The final assistant text (the pending prompt when halted).
    pub text: String,
    /// The full transcript; pass it back as history to continue.
    pub messages: Vec<Value>,
    /// Every tool call and its result, in call order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// `tool_calls.len()`.
    pub tool_call_count: usize,
    /// LLM round trips.
    pub turns: u32,
    /// Token usage summed across turns.
    pub usage: Usage,
    /// The model of the last turn.
    pub model: String,
    /// How the run ended.
    pub status: RunStatus,
    /// Which limit stopped it (`"maxTurns"`), only when `status` is `incomplete`.
    pub limit: Option<String>,
    /// The unresolved suspension, only when `status` is `pending`.
    pub pending: Option<Request>,
}

/// A user prompt: plain text, or content parts in the caller's order.
#[derive(Clone, Debug, PartialEq)]
pub enum Prompt {
    /// Text (the user message content stays a plain string).
    Text(String),
    /// Text and media parts.
    Parts(Vec<ContentPart>),
}

impl From<&str> for Prompt {
    fn from(s: &str) -> Self {
        Prompt::Text(s.to_owned())
    }
}
impl From<String> for Prompt {
    fn from(s: String) -> Self {
        Prompt::Text(s)
    }
}
impl From<&String> for Prompt {
    fn from(s: &String) -> Self {
        Prompt::Text(s.clone())
    }
}
impl From<Vec<ContentPart>> for Prompt {
    fn from(p: Vec<ContentPart>) -> Self {
        Prompt::Parts(p)
    }
}

impl Prompt {
    fn into_content(self) -> Value {
        match self {
            Prompt::Text(s) => Value::String(s),
            Prompt::Parts(p) => serde_json::to_value(p).unwrap_or_default(),
        }
    }
}

/// Per-run options.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The tools (none ⇒ a plain completion: no `tools` key, no skills block).
    pub toolkit: Option<Toolkit>,
    /// A prior transcript to continue (the system prompt is not re-added).
    pub history: Vec<Value>,
    /// Cancels the run, aborting the in-flight request; never retried.
    pub cancel: Option<CancellationToken>,
    /// Receives each assistant text delta; the run then streams internally.
    pub on_text: Option<OnText>,
}

impl RunOptions {
    /// Options with a toolkit.
    pub fn new(toolkit: &Toolkit) -> Self {
        Self {
            toolkit: Some(toolkit.clone()),
            ..Self::default()
        }
    }

    /// Continue `history`.
    pub fn history(mut self, history: Vec<Value>) -> Self {
        self.history = history;
        self
    }

    /// Cancel with `token`.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Stream text deltas to `f`.
    pub fn on_text(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_text = Some(Arc::new(f));
        self
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("toolkit", &self.toolkit)
            .field("history", &self.history.len())
            .field("cancel", &self.cancel.is_some())
            .finish_non_exhaustive()
    }
}

/// One event of [`Client::stream`].
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// An assistant text delta.
    Text {
        /// The delta.
        delta: String,
    },
    /// A tool about to run.
    ToolCall {
        /// Provider call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments.
        args: Value,
    },
    /// A tool that ran.
    ToolResult {
        /// Provider call id.
        id: String,
        /// Tool name.
        name: String,
        /// Its output.
        output: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// A tool suspended (emitted before `wait_for` runs).
    Pending {
        /// The suspension.
        request: Request,
    },
    /// Token usage so far.
    Usage {
        /// Summed usage.
        usage: Usage,
    },
    /// The run ended.
    Done {
        /// The final result.
        result: Box<RunResult>,
    },
}

/// Builds a [`Client`]; every setter is optional except base URL, style and model.
#[derive(Default)]
pub struct ClientBuilder {
    base_url: Option<String>,
    style: Option<String>,
    model: Option<String>,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    system_prompt: Option<String>,
    max_turns: Option<u32>,
    retries: Option<u32>,
    retry_base: Option<Duration>,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    on_error: Option<OnError>,
    hooks: Hooks,
    on_metric: Option<OnMetric>,
    wait_for: Option<WaitFor>,
    store: Option<Arc<dyn ConversationStore>>,
    request_params: Map<String, Value>,
    body_transform: Option<BodyTransform>,
    transport: Option<Arc<dyn HttpTransport>>,
    in_process: bool,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("style", &self.style)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "«redacted»"))
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The provider base URL, e.g. `https://openrouter.ai/api/v1` or `https://api.anthropic.com`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }
    /// `"openai"` or `"anthropic"` (anything else fails at build).
    pub fn style(mut self, style: impl Into<String>) -> Self {
        self.style = Some(style.into());
        self
    }
    /// The model id, sent verbatim on every turn.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
    /// The API key (else `OPENROUTER_API_KEY`, then the style's own variable). Never logged.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
    /// An extra request header (sent after, and so overriding, the built-in ones).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    /// Prepended to the toolkit's skills prompt as the system message.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }
    /// LLM round trips per run (default 10).
    pub fn max_turns(mut self, n: u32) -> Self {
        self.max_turns = Some(n);
        self
    }
    /// Retries per LLM request (default 2).
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = Some(n);
        self
    }
    /// Backoff base (default 500 ms).
    pub fn retry_base(mut self, base: Duration) -> Self {
        self.retry_base = Some(base);
        self
    }
    /// Whole-run deadline; aborts the in-flight request when it elapses.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// Connect timeout of the default transport (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }
    /// Classify each failed attempt as retry or fail (still bounded by `retries`).
    pub fn on_error(mut self, f: impl Fn(&ErrorInfo) -> ErrorDecision + Send + Sync + 'static) -> Self {
        self.on_error = Some(Arc::new(f));
        self
    }
    /// Lifecycle hooks.
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }
    /// Receive every metric event.
    pub fn on_metric(mut self, f: impl Fn(&MetricEvent) + Send + Sync + 'static) -> Self {
        self.on_metric = Some(Arc::new(f));
        self
    }
    /// Resolve suspensions inline (SPEC §10); without it a suspension halts the run.
    pub fn wait_for(mut self, wait_for: WaitFor) -> Self {
        self.wait_for = Some(wait_for);
        self
    }
    /// [`wait_for`](Self::wait_for) from an async closure.
    pub fn wait_for_fn<F, Fut>(self, f: F) -> Self
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Answer> + Send + 'static,
    {
        self.wait_for(Arc::new(move |r| Box::pin(f(r))))
    }
    /// The conversation store `ask` uses (default: in memory).
    pub fn store(mut self, store: Arc<dyn ConversationStore>) -> Self {
        self.store = Some(store);
        self
    }
    /// Top-level keys merged into every request body (they win over the client's own,
    /// except `messages`/`tools`/`stream`, which are ignored with a warning).
    pub fn request_params(mut self, params: Map<String, Value>) -> Self {
        self.request_params = params;
        self
    }
    /// Rewrite every assembled body just before it is sent.
    pub fn body_transform(mut self, f: impl Fn(Value) -> Value + Send + Sync + 'static) -> Self {
        self.body_transform = Some(Arc::new(f));
        self
    }
    /// The HTTP transport for LLM requests (default: reqwest).
    pub fn transport(mut self, transport: Arc<dyn HttpTransport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Validate and build.
    pub fn build(self) -> Result<Client, ClientError> {
        let style: Style = self
            .style
            .as_deref()
            .unwrap_or("")
            .parse()
            .map_err(ClientError::UnknownStyle)?;
        let model = self
            .model
            .filter(|m| !m.is_empty())
            .ok_or(ClientError::MissingModel)?;
        let base_url = self
            .base_url
            .filter(|u| !u.is_empty())
            .ok_or(ClientError::MissingBaseUrl)?;
        match url::Url::parse(&base_url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => {}
            Ok(u) => {
                return Err(ClientError::InvalidBaseUrl {
                    reason: format!("scheme \"{}\" is not http or https", u.scheme()),
                    url: base_url,
                });
            }
            Err(e) => {
                return Err(ClientError::InvalidBaseUrl {
                    reason: e.to_string(),
                    url: base_url,
                });
            }
        }
        let api_key = self
            .api_key
            .filter(|k| !k.is_empty())
            .or_else(|| env_key(style))
            .ok_or(ClientError::MissingApiKey)?;
        for (k, _) in self.request_params.iter() {
            if matches!(k.as_str(), "messages" | "tools" | "stream") {
                tracing::warn!("request_params key \"{k}\" is not allowed — ignored (use body_transform)");
            }
        }
        let mut request_params = self.request_params;
        request_params.retain(|k, _| !matches!(k.as_str(), "messages" | "tools" | "stream"));
        let transport = self.transport.unwrap_or_else(|| {
            Arc::new(ReqwestTransport::new(
                self.connect_timeout.unwrap_or(Duration::from_secs(10)),
            ))
        });
        Ok(Client {
            inner: Arc::new(Inner {
                endpoint: wire::endpoint(style, &base_url),
                headers: wire::headers(style, &api_key, &self.headers),
                api_key,
                style,
                model,
                system_prompt: self.system_prompt,
                max_turns: self.max_turns.unwrap_or(10),
                retries: self.retries.unwrap_or(2),
                retry_base: self.retry_base.unwrap_or(Duration::from_millis(500)),
                timeout: self.timeout,
                on_error: self.on_error,
                hooks: self.hooks,
                on_metric: self.on_metric,
                wait_for: self.wait_for,
                store: self.store.unwrap_or_else(|| Arc::new(InMemoryStore::new())),
                request_params,
                body_transform: self.body_transform,
                transport,
                registry: MetricsRegistry::new(),
                encoder: wire::PartEncoder::new(),
                in_process: self.in_process,
            }),
        })
    }
}

fn env_key(style: Style) -> Option<String> {
    let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let own = match style {
        Style::OpenAi => "OPENAI_API_KEY",
        Style::Anthropic => "ANTHROPIC_API_KEY",
    };
    get("OPENROUTER_API_KEY")
        .or_else(|| get(own))
        .or_else(|| get("OPENAI_API_KEY"))
        .or_else(|| get("ANTHROPIC_API_KEY"))
}

pub(crate) struct Inner {
    endpoint: String,
    headers: Vec<(String, String)>,
    api_key: String,
    style: Style,
    model: String,
    system_prompt: Option<String>,
    max_turns: u32,
    retries: u32,
    retry_base: Duration,
    timeout: Option<Duration>,
    on_error: Option<OnError>,
    hooks: Hooks,
    on_metric: Option<OnMetric>,
    wait_for: Option<WaitFor>,
    store: Arc<dyn ConversationStore>,
    request_params: Map<String, Value>,
    body_transform: Option<BodyTransform>,
    transport: Arc<dyn HttpTransport>,
    registry: MetricsRegistry,
    encoder: wire::PartEncoder,
    in_process: bool,
}

/// The unified client. Cheap to clone (one `Arc`); safe to share across tasks.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.inner.endpoint)
            .field("style", &self.inner.style)
            .field("model", &self.inner.model)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client around a host `generate` function instead of a wire: OpenAI-shaped
    /// messages, no API key, failures final (retries default to 0), streaming refused.
    /// Returns the builder so every other option can still be set.
    pub fn in_process(model: impl Into<String>, generate: Generate) -> ClientBuilder {
        let mut b = Client::builder()
            .base_url(in_process::BASE_URL)
            .style("openai")
            .model(model)
            .api_key("in-process")
            .retries(0)
            .transport(in_process::transport(generate));
        b.in_process = true;
        b
    }

    /// The style this client speaks.
    pub fn style(&self) -> Style {
        self.inner.style
    }

    /// The configured model id.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// Run the agent loop on `prompt` with `toolkit`.
    pub async fn run(&self, prompt: impl Into<Prompt>, toolkit: &Toolkit) -> Result<RunResult, ClientError> {
        self.run_with(prompt, RunOptions::new(toolkit)).await
    }

    /// Run with history, cancellation, or text streaming.
    pub async fn run_with(
        &self,
        prompt: impl Into<Prompt>,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        self.inner.run(Some(prompt.into()), opts, None).await
    }

    /// The loop as a stream of events, ending with [`StreamEvent::Done`] (or an error).
    /// Dropping the stream aborts the run.
    pub fn stream(
        &self,
        prompt: impl Into<Prompt>,
        opts: RunOptions,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'static {
        stream::spawn_stream(self.inner.clone(), prompt.into(), opts, None)
    }

    /// [`stream`](Self::stream) on a stored conversation: loads `id`'s transcript as history
    /// and saves the updated one when `done` fires.
    pub fn stream_conversation(
        &self,
        prompt: impl Into<Prompt>,
        id: impl Into<String>,
        opts: RunOptions,
    ) -> impl Stream<Item = Result<StreamEvent, ClientError>> + Send + 'static {
        stream::spawn_stream(self.inner.clone(), prompt.into(), opts, Some(id.into()))
    }

    /// Stateful ask: loads `id`'s transcript from the store, runs, saves it back.
    pub async fn ask(
        &self,
        prompt: impl Into<Prompt>,
        id: &str,
        mut opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        opts.history = self.inner.store.get(id).await?.unwrap_or_default();
        let result = self.inner.run(Some(prompt.into()), opts, None).await?;
        self.inner.store.save(id, result.messages.clone()).await?;
        Ok(result)
    }

    /// Resume a run that halted with `status: pending` (SPEC §10 durable resume). `history`
    /// is the halted run's transcript, `pending` its request, `answer` the host's resolution
    /// (its id must echo `pending.id`). Every tool slot of the halted turn is filled and the
    /// loop continues with no new user turn.
    pub async fn run_with_answer(
        &self,
        history: Vec<Value>,
        pending: &Request,
        answer: &Answer,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        self.inner.resume(history, pending, answer, opts).await
    }

    /// [`run_with_answer`](Self::run_with_answer) against the stored conversation `id`.
    pub async fn ask_with_answer(
        &self,
        id: &str,
        pending: &Request,
        answer: &Answer,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        let history = self.inner.store.get(id).await?.unwrap_or_default();
        let result = self.inner.resume(history, pending, answer, opts).await?;
        self.inner.store.save(id, result.messages.clone()).await?;
        Ok(result)
    }

    /// A stateful conversation that keeps its transcript across `send`s.
    pub fn conversation(&self, toolkit: &Toolkit) -> Conversation {
        Conversation {
            client: self.clone(),
            toolkit: toolkit.clone(),
            messages: Vec::new(),
        }
    }

    /// The conversation store (the one passed in, else the default in-memory one).
    pub fn store(&self) -> Arc<dyn ConversationStore> {
        self.inner.store.clone()
    }

    /// The Prometheus text of everything this client recorded (SPEC §8).
    pub fn metrics(&self) -> String {
        self.inner.registry.render()
    }

    /// One provider call with this client's retries, request shaping, `llm` metric, timeout
    /// and `cancel` — no loop, no hooks. `body` is a complete request body for this style.
    /// The building block of `translate`.
    #[allow(dead_code)] // called by `translate` (client2's module)
    pub(crate) async fn send(
        &self,
        body: Value,
        cancel: Option<&CancellationToken>,
    ) -> Result<Value, ClientError> {
        self.inner.send_guarded(body, cancel).await
    }
}

/// A stateful conversation: each [`send`](Conversation::send) continues the transcript.
#[derive(Debug)]
pub struct Conversation {
    client: Client,
    toolkit: Toolkit,
    messages: Vec<Value>,
}

impl Conversation {
    /// Send the next user turn.
    pub async fn send(&mut self, prompt: impl Into<Prompt>) -> Result<RunResult, ClientError> {
        let opts = RunOptions::new(&self.toolkit).history(self.messages.clone());
        let result = self.client.run_with(prompt, opts).await?;
        self.messages = result.messages.clone();
        Ok(result)
    }

    /// The transcript so far.
    pub fn messages(&self) -> &[Value] {
        &self.messages
    }

    /// Forget the transcript.
    pub fn reset(&mut self) {
        self.messages.clear();
    }
}

impl Inner {
    /// Record into the registry and forward to `on_metric`.
    fn emit(&self, event: MetricEvent) {
        self.registry.record(&event);
        if let Some(f) = &self.on_metric {
            f(&event);
        }
    }
}
