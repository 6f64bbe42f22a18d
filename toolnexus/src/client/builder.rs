//! [`ClientBuilder`]: every setting of a [`Client`], validated once by
//! [`build`](ClientBuilder::build).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::cache::PromptCache;
use super::hooks::Hooks;
use super::keys::{self, Redactor};
use super::metrics::{MetricEvent, MetricsRegistry, OnMetric};
use super::provider::{BodyTransform, Provider};
use super::resilience::{ErrorDecision, ErrorInfo, OnError};
use super::store::{ConversationStore, InMemoryStore};
use super::tiers::ToolTiers;
use super::transport::{HttpTransport, ReqwestTransport};
use super::wire::{self, Style};
use super::{Client, ConfigError, Inner};
use crate::suspend::{Answer, Request, WaitFor};

/// The whole-run deadline of a client built without [`ClientBuilder::timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The read timeout of a client built without [`ClientBuilder::read_timeout`].
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(180);
/// The `Retry-After` cap of a client built without [`ClientBuilder::max_retry_after`].
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Builds a [`Client`]; every setter is optional except base URL, style and model.
/// `Clone`, so one builder can be the template of many clients (the agent runtime builds
/// every handle's client from one).
#[derive(Clone, Default)]
pub struct ClientBuilder {
    base_url: Option<String>,
    style: Option<Style>,
    model: Option<String>,
    api_key: Option<String>,
    api_key_env: Option<String>,
    headers: Vec<(String, String)>,
    system_prompt: Option<String>,
    max_turns: Option<u32>,
    retries: Option<u32>,
    retry_base: Option<Duration>,
    timeout: Option<Duration>,
    read_timeout: Option<Duration>,
    max_retry_after: Option<Duration>,
    connect_timeout: Option<Duration>,
    on_error: Option<OnError>,
    hooks: Hooks,
    on_metric: Option<OnMetric>,
    wait_for: Option<WaitFor>,
    store: Option<Arc<dyn ConversationStore>>,
    suspensions: Option<Arc<dyn super::SuspensionStore>>,
    request_params: Map<String, Value>,
    body_transform: Option<BodyTransform>,
    prompt_cache: Option<PromptCache>,
    tool_tiers: Option<ToolTiers>,
    transport: Option<Arc<dyn HttpTransport>>,
    /// Set by [`Client::in_process`]: streaming is refused.
    pub(super) in_process: bool,
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

impl Client {
    /// A builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }
}

impl ClientBuilder {
    /// The provider base URL, e.g. `https://openrouter.ai/api/v1` or `https://api.anthropic.com`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }
    /// The wire dialect. From text (a CLI flag, a config file) with `str::parse`:
    /// `"anthropic".parse::<Style>()`.
    pub fn style(mut self, style: Style) -> Self {
        self.style = Some(style);
        self
    }
    /// The model id, sent verbatim on every turn.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
    /// The API key. Without it (and without [`api_key_env`](Self::api_key_env)) the key
    /// comes from the environment only for a provider's own https host:
    /// `OPENROUTER_API_KEY` for openrouter.ai, `OPENAI_API_KEY` for api.openai.com,
    /// `ANTHROPIC_API_KEY` for api.anthropic.com, `GEMINI_API_KEY` for
    /// generativelanguage.googleapis.com. Never logged.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
    /// Read the API key from the environment variable `name` — how a key reaches any host
    /// that is not a provider's own (a gateway, a local server).
    ///
    /// ```
    /// use toolnexus::client::{Client, ConfigError, Style};
    ///
    /// let build = |b: toolnexus::client::ClientBuilder| {
    ///     b.base_url("http://127.0.0.1:8080/v1").style(Style::OpenAi).model("m").build()
    /// };
    /// // A provider's environment key is never sent to another host ...
    /// let err = build(Client::builder()).unwrap_err();
    /// assert!(matches!(err, ConfigError::MissingApiKey { ref host, looked_for: None } if host == "127.0.0.1"));
    /// // ... unless the host is given it by name.
    /// let err = build(Client::builder().api_key_env("TOOLNEXUS_DOC_UNSET_KEY")).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "toolnexus: no API key for 127.0.0.1: TOOLNEXUS_DOC_UNSET_KEY is not set — set it, or set api_key or api_key_env(NAME)"
    /// );
    /// ```
    pub fn api_key_env(mut self, name: impl Into<String>) -> Self {
        self.api_key_env = Some(name.into());
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
    /// Whole-run deadline (default [`DEFAULT_TIMEOUT`], 10 minutes): when it elapses the
    /// in-flight request (or tool) is aborted and the run fails with
    /// [`ClientError::Timeout`](super::ClientError::Timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// The longest the model may stay silent — before its response starts, and between two
    /// chunks of it (default [`DEFAULT_READ_TIMEOUT`], 3 minutes). A model that accepts a
    /// request and never answers fails the attempt; after the retries the run fails with
    /// [`ClientError::ReadTimeout`](super::ClientError::ReadTimeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolnexus::client::{Client, Style};
    ///
    /// let client = Client::builder()
    ///     .base_url("https://api.openai.com/v1")
    ///     .style(Style::OpenAi)
    ///     .model("gpt-4o-mini")
    ///     .api_key("sk-…")
    ///     .timeout(Duration::from_secs(120)) // the whole run
    ///     .read_timeout(Duration::from_secs(30)) // each silence
    ///     .max_retry_after(Duration::from_secs(10)) // a longer Retry-After is not waited on
    ///     .build()
    ///     .unwrap();
    /// # let _ = client;
    /// ```
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = Some(timeout);
        self
    }
    /// The longest `Retry-After` the client waits (default [`DEFAULT_MAX_RETRY_AFTER`], 60 s).
    /// A provider asking for longer is not retried (the error carries its `retry_after`, so
    /// the host can come back later); an `on_error` that retries anyway waits the cap.
    pub fn max_retry_after(mut self, cap: Duration) -> Self {
        self.max_retry_after = Some(cap);
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
    /// Lifecycle hooks of every run (a run's own [`RunOptions::hooks`](super::RunOptions::hooks)
    /// replaces them).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }
    /// Receive every metric event (a run's own
    /// [`RunOptions::on_metric`](super::RunOptions::on_metric) replaces this sink).
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
    /// Where runs that halt with `status: pending` are recorded, so
    /// [`Client::resume_stored`](super::Client::resume_stored) can answer them by id from any
    /// process sharing the store (default: none; nothing is recorded).
    pub fn suspensions(mut self, store: Arc<dyn super::SuspensionStore>) -> Self {
        self.suspensions = Some(store);
        self
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
    /// Prompt caching (off by default; off, every body is byte-identical to a client
    /// without it): Anthropic `cache_control` breakpoints after the tools, the system prompt
    /// and the latest message; OpenAI's `prompt_cache_key` when the cache has a key. The
    /// tokens read from and written to the cache come back in
    /// [`Usage::cache_read_tokens`](super::Usage::cache_read_tokens) and
    /// [`cache_creation_tokens`](super::Usage::cache_creation_tokens).
    pub fn prompt_cache(mut self, cache: PromptCache) -> Self {
        self.prompt_cache = Some(cache);
        self
    }
    /// Tool tiers (off by default): each request declares only the `core` tools in full,
    /// plus `tool_search` — whose description lists every other tool — and `call_tool`. The
    /// model loads the schemas it needs with `tool_search` and calls a loaded tool by name
    /// or through `call_tool`, which the loop unwraps into the real call (recorded, hooked
    /// and measured under the real tool's name). The plan is built once per toolkit
    /// ([`Client::tool_plan`](super::Client::tool_plan)).
    pub fn tool_tiers(mut self, tiers: ToolTiers) -> Self {
        self.tool_tiers = Some(tiers);
        self
    }
    /// The HTTP transport for LLM requests (default: reqwest).
    pub fn transport(mut self, transport: Arc<dyn HttpTransport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Take out what the agent runtime keeps for itself from the template it builds every
    /// handle's client from: the transport (to put it behind the turn gate), the store
    /// (one for every handle), the metric sink (the runtime counts each event before
    /// forwarding it) and `wait_for` (dropped: the runtime escalates suspensions itself).
    pub(crate) fn take_agent_seams(&mut self) -> AgentSeams {
        self.wait_for = None;
        AgentSeams {
            transport: self
                .transport
                .take()
                .unwrap_or_else(|| default_transport(self.connect_timeout)),
            store: self.store.take(),
            on_metric: self.on_metric.take(),
        }
    }

    /// Validate and build.
    ///
    /// ```
    /// use toolnexus::client::{Client, ConfigError, Style};
    ///
    /// let err = Client::builder().style(Style::OpenAi).model("m").build().unwrap_err();
    /// assert!(matches!(err, ConfigError::MissingBaseUrl));
    /// // `main` returning `Box<dyn Error>` prints it with `{:?}`: the same helpful text.
    /// assert_eq!(format!("{err:?}"), "toolnexus: a base URL is required");
    /// ```
    pub fn build(self) -> Result<Client, ConfigError> {
        let style = self.style.ok_or(ConfigError::MissingStyle)?;
        let model = self
            .model
            .filter(|m| !m.is_empty())
            .ok_or(ConfigError::MissingModel)?;
        let base_url = self
            .base_url
            .filter(|u| !u.is_empty())
            .ok_or(ConfigError::MissingBaseUrl)?;
        let base = match url::Url::parse(&base_url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => u,
            Ok(u) => {
                return Err(ConfigError::InvalidBaseUrl {
                    reason: format!("scheme \"{}\" is not http or https", u.scheme()),
                    url: base_url,
                });
            }
            Err(e) => {
                return Err(ConfigError::InvalidBaseUrl {
                    reason: e.to_string(),
                    url: base_url,
                });
            }
        };
        let api_key = keys::resolve(self.api_key, self.api_key_env.as_deref(), &base, |var| {
            std::env::var(var).ok()
        })?;
        let mut request_params = self.request_params;
        request_params.retain(|k, _| {
            let reserved = matches!(k.as_str(), "messages" | "tools" | "stream");
            if reserved {
                tracing::warn!("request_params key \"{k}\" is not allowed — ignored (use body_transform)");
            }
            !reserved
        });
        let transport = self
            .transport
            .unwrap_or_else(|| default_transport(self.connect_timeout));
        Ok(Client {
            inner: Arc::new(Inner {
                provider: Provider {
                    endpoint: wire::endpoint(style, &base),
                    headers: wire::headers(style, &api_key, &self.headers),
                    redactor: Redactor::new(&api_key, &base),
                    base,
                    style,
                    transport,
                    retries: self.retries.unwrap_or(2),
                    retry_base: self.retry_base.unwrap_or(Duration::from_millis(500)),
                    read_timeout: self.read_timeout.unwrap_or(DEFAULT_READ_TIMEOUT),
                    max_retry_after: self.max_retry_after.unwrap_or(DEFAULT_MAX_RETRY_AFTER),
                    on_error: self.on_error,
                    request_params,
                    body_transform: self.body_transform,
                    prompt_cache: self.prompt_cache,
                },
                model,
                system_prompt: self.system_prompt,
                max_turns: self.max_turns.unwrap_or(10),
                timeout: Some(self.timeout.unwrap_or(DEFAULT_TIMEOUT)),
                hooks: self.hooks,
                on_metric: self.on_metric,
                wait_for: self.wait_for,
                store: self.store.unwrap_or_else(|| Arc::new(InMemoryStore::new())),
                suspensions: self.suspensions,
                registry: MetricsRegistry::new(),
                encoder: wire::PartEncoder::new(),
                in_process: self.in_process,
                tiers: self.tool_tiers,
                plans: Default::default(),
            }),
        })
    }
}

/// The transport of a builder that sets none.
fn default_transport(connect_timeout: Option<Duration>) -> Arc<dyn HttpTransport> {
    Arc::new(ReqwestTransport::new(
        connect_timeout.unwrap_or(Duration::from_secs(10)),
    ))
}

/// What [`ClientBuilder::take_agent_seams`] takes out of a template.
pub(crate) struct AgentSeams {
    pub transport: Arc<dyn HttpTransport>,
    pub store: Option<Arc<dyn ConversationStore>>,
    pub on_metric: Option<OnMetric>,
}
