//! Calibrated judgments: the contract for a *judgment*, as [`Tool`](crate::Tool) is the
//! contract for an *action*. A state plus typed questions go in ([`Question`]: noul, choice,
//! score); calibrated answers come out ([`Decision`]), never free text. A classifier is never
//! part of the tool loop and never a model for `run`.
//!
//! A classifier interprets; it never authorises. A decision can be confidently wrong, and
//! "schema-valid" only means the value is one the question allowed: limits, permissions and
//! allowlists stay in code.
//!
//! Four styles ([`ClassifierStyle`]) answer the same questions:
//! - [`Classifier::system_one`] — the hosted System One wire: one `POST {base}/systemone`
//!   of the canonical request, with the client's retry policy, a per-request timeout and the
//!   client's metric sink;
//! - [`Classifier::llm`] — asks any [`Client`] model and parses its
//!   JSON (`calibrated: false`: the numbers are the model's self-report);
//! - [`Classifier::custom`] — your function;
//! - [`Classifier::recorded`] — recorded decisions, for tests and offline replays.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::classifier::{Classifier, Question, Questions, RecordedDecision};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let questions = Questions::from([(
//!     "complaint".to_string(),
//!     Question::noul("Is `message` a complaint?"),
//! )]);
//! let state = json!({"message": "my order never came"});
//! let classifier = Classifier::recorded([RecordedDecision::new(
//!     state.clone(),
//!     questions.clone(),
//!     json!({"model": "jev-1.13.0", "answers": {"complaint": {"type": "noul", "noul": 0.93}}}),
//! )])
//! .build()
//! .unwrap();
//! let decision = classifier.evaluate(&state, &questions).await.unwrap();
//! assert_eq!(decision.noul("complaint").unwrap().noul, 0.93);
//! assert!(decision.calibrated);
//! # });
//! ```

mod answer;
mod canonical;
mod error;
mod question;
mod style;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

pub use answer::{
    ChoiceAnswer, ClassifierUsage, Decision, DecisionAnswer, NEAR_UNIFORM_TOLERANCE, NoulAnswer, ScoreAnswer,
    near_uniform,
};
pub use canonical::canonical_json;
pub use error::{BoxError, ClassifierError};
pub use question::{
    ChoiceQuestion, MAX_CHOICE_OPTIONS, MAX_SCORE_LEVELS, MIN_SCORE_LEVELS, NoulCriteria, NoulQuestion,
    Question, Questions, ScoreQuestion, questions_wire,
};

use crate::client::{Client, ErrorDecision, ErrorInfo, HttpTransport, MetricEvent, OnError, OnMetric};

/// The System One endpoint base (TypeSafe's).
pub const DEFAULT_BASE_URL: &str = "https://api.typesafe.ai/v1";
/// The floating model alias; pin one (`jev-1.13.0`) once thresholds are tuned.
pub const DEFAULT_MODEL: &str = "jev-latest";
/// The name of the environment variable holding the credential (never the value).
pub const DEFAULT_API_KEY_ENV: &str = "TYPESAFE_API_KEY";
/// Bounds one request (a classifier has no loop to bound).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Retries per request by default (the client's default).
pub const DEFAULT_RETRIES: u32 = 2;
/// Backoff base by default (the client's default).
pub const DEFAULT_RETRY_BASE: Duration = Duration::from_millis(500);
/// Concurrent evaluations of [`Classifier::evaluate_batch`] by default.
pub const DEFAULT_BATCH_CONCURRENCY: usize = 16;

/// Which style answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClassifierStyle {
    /// The hosted System One wire.
    SystemOne,
    /// Any client model, asked for JSON.
    Llm,
    /// A host function.
    Custom,
    /// Recorded decisions.
    Static,
}

impl ClassifierStyle {
    /// The port-wide spelling: `systemone`, `llm`, `custom`, `static`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClassifierStyle::SystemOne => "systemone",
            ClassifierStyle::Llm => "llm",
            ClassifierStyle::Custom => "custom",
            ClassifierStyle::Static => "static",
        }
    }
}

impl fmt::Display for ClassifierStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the System One wire is served. A backend sets base URL, model and key variable as
/// a unit (an explicit setter still wins), so TypeSafe's alias never meets OpenRouter's URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// `https://api.typesafe.ai/v1`, `jev-latest`, `TYPESAFE_API_KEY`.
    TypeSafe,
    /// `https://openrouter.ai/api/v1`, `typesafe/jev-1.13`, `OPENROUTER_API_KEY`.
    OpenRouter,
}

impl Backend {
    fn preset(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Backend::TypeSafe => (DEFAULT_BASE_URL, DEFAULT_MODEL, DEFAULT_API_KEY_ENV),
            Backend::OpenRouter => (
                "https://openrouter.ai/api/v1",
                "typesafe/jev-1.13",
                "OPENROUTER_API_KEY",
            ),
        }
    }
}

/// A `custom` style's function: the state and questions in, a decision out. An error that
/// is a [`ClassifierError`] passes through unchanged; any other becomes
/// [`ClassifierError::Custom`].
pub type EvaluateFn =
    Arc<dyn Fn(Value, Questions) -> BoxFuture<'static, Result<Decision, BoxError>> + Send + Sync>;

/// Rewrites the assembled System One body just before it is sent.
pub type BodyTransform = Arc<dyn Fn(Value) -> Value + Send + Sync>;

/// One entry of a static classifier: the recorded response for a request and state. Keyed
/// on both, because several recordings legitimately share one set of questions.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedDecision {
    /// The state as it will be evaluated.
    pub state: Value,
    /// The questions as they will be asked.
    pub questions: Questions,
    /// The backend's response body, verbatim.
    pub response: Value,
}

impl RecordedDecision {
    /// A recording.
    pub fn new(state: Value, questions: Questions, response: Value) -> Self {
        Self {
            state,
            questions,
            response,
        }
    }
}

/// The canonical bytes the byte-identity claim covers: `model` and `questions`. The state is
/// not part of it (numbers do not canonicalise across languages); it is sent as given.
///
/// ```
/// use toolnexus::classifier::{Question, Questions, canonical_request};
///
/// let qs = Questions::from([("s".to_string(), Question::score("Rate it", ["low", "high"]))]);
/// assert_eq!(
///     String::from_utf8(canonical_request("jev-latest", &qs)).unwrap(),
///     r#"{"model":"jev-latest","questions":{"s":{"criteria":["low","high"],"instructions":"Rate it","type":"score"}}}"#
/// );
/// ```
pub fn canonical_request(model: &str, questions: &Questions) -> Vec<u8> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("questions".into(), questions_wire(questions));
    canonical_json(&Value::Object(body))
}

fn static_key(model: &str, state: &Value, questions: &Questions) -> Vec<u8> {
    let mut key = canonical_request(model, questions);
    key.push(0);
    key.extend(canonical_json(state));
    key
}

enum Engine {
    SystemOne(Box<style::SystemOne>),
    Llm(Client),
    Custom(EvaluateFn),
    Static(HashMap<Vec<u8>, Decision>),
}

struct Inner {
    engine: Engine,
    model: String,
    on_metric: Option<OnMetric>,
    /// Question keys already warned about, so a per-turn judge does not flood the sink.
    warned: Mutex<HashSet<String>>,
}

/// One verb, [`evaluate`](Classifier::evaluate). Cheap to clone; safe to share.
#[derive(Clone)]
pub struct Classifier {
    inner: Arc<Inner>,
}

impl fmt::Debug for Classifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Classifier")
            .field("style", &self.style())
            .field("model", &self.inner.model)
            .finish_non_exhaustive()
    }
}

enum Spec {
    SystemOne,
    Llm(Client),
    Custom(EvaluateFn),
    Static(Vec<RecordedDecision>),
}

/// Builds a [`Classifier`]; start from [`Classifier::system_one`], [`Classifier::llm`],
/// [`Classifier::custom`] or [`Classifier::recorded`]. The HTTP settings matter only to
/// System One; `model` and `on_metric` to every style.
pub struct ClassifierBuilder {
    spec: Spec,
    backend: Option<Backend>,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    headers: Vec<(String, String)>,
    timeout: Option<Duration>,
    transport: Option<Arc<dyn HttpTransport>>,
    retries: Option<u32>,
    retry_base: Option<Duration>,
    retryable_statuses: Vec<u16>,
    on_error: Option<OnError>,
    request_params: Map<String, Value>,
    body_transform: Option<BodyTransform>,
    on_metric: Option<OnMetric>,
}

impl fmt::Debug for ClassifierBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassifierBuilder")
            .field("backend", &self.backend)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ClassifierBuilder {
    fn new(spec: Spec) -> Self {
        Self {
            spec,
            backend: None,
            base_url: None,
            model: None,
            api_key_env: None,
            headers: Vec::new(),
            timeout: None,
            transport: None,
            retries: None,
            retry_base: None,
            retryable_statuses: Vec::new(),
            on_error: None,
            request_params: Map::new(),
            body_transform: None,
            on_metric: None,
        }
    }

    /// Base URL, model and key variable as a unit.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }
    /// The endpoint base; requests go to `{base}/systemone`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }
    /// The model alias sent (default `jev-latest`); part of a static recording's key.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
    /// The *name* of the variable holding the key, read at call time (default
    /// `TYPESAFE_API_KEY`).
    pub fn api_key_env(mut self, name: impl Into<String>) -> Self {
        self.api_key_env = Some(name.into());
        self
    }
    /// An extra header; `${VAR}` references expand at call time and are never logged.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    /// Bounds one request attempt (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// The HTTP transport (default: reqwest) — the client's seam, for proxies and replays.
    pub fn transport(mut self, transport: Arc<dyn HttpTransport>) -> Self {
        self.transport = Some(transport);
        self
    }
    /// Retries per request (default 2), as the client counts them.
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = Some(n);
        self
    }
    /// Backoff base (default 500 ms); a `Retry-After` in seconds wins.
    pub fn retry_base(mut self, base: Duration) -> Self {
        self.retry_base = Some(base);
        self
    }
    /// Statuses retried in addition to the client's set (plus 408); it only widens.
    pub fn retryable_statuses(mut self, statuses: impl IntoIterator<Item = u16>) -> Self {
        self.retryable_statuses.extend(statuses);
        self
    }
    /// Classify each failed attempt as retry or fail (still bounded by `retries`).
    pub fn on_error(mut self, f: impl Fn(&ErrorInfo) -> ErrorDecision + Send + Sync + 'static) -> Self {
        self.on_error = Some(Arc::new(f));
        self
    }
    /// Top-level keys merged into every body (they win on collision).
    pub fn request_params(mut self, params: Map<String, Value>) -> Self {
        self.request_params = params;
        self
    }
    /// Rewrite every assembled body just before it is sent.
    pub fn body_transform(mut self, f: impl Fn(Value) -> Value + Send + Sync + 'static) -> Self {
        self.body_transform = Some(Arc::new(f));
        self
    }
    /// The metric sink — pass the client's to see `classifier.evaluate` and
    /// `classifier.warning` next to its own events.
    pub fn on_metric(mut self, f: impl Fn(&MetricEvent) + Send + Sync + 'static) -> Self {
        self.on_metric = Some(Arc::new(f));
        self
    }
    /// The metric sink as an already shared function.
    pub fn on_metric_shared(mut self, f: OnMetric) -> Self {
        self.on_metric = Some(f);
        self
    }

    /// Apply the defaults and validate. A TypeSafe-only model pointed at openrouter.ai and a
    /// recorded decision that does not decode fail here, before any call.
    pub fn build(self) -> Result<Classifier, ClassifierError> {
        let preset = self.backend.map(Backend::preset);
        let base_url = self
            .base_url
            .or_else(|| preset.map(|p| p.0.to_owned()))
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let model = self
            .model
            .filter(|m| !m.is_empty())
            .or_else(|| preset.map(|p| p.1.to_owned()))
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        let api_key_env = self
            .api_key_env
            .or_else(|| preset.map(|p| p.2.to_owned()))
            .unwrap_or_else(|| DEFAULT_API_KEY_ENV.to_owned());
        if base_url.contains("openrouter.ai") && model == DEFAULT_MODEL {
            return Err(ClassifierError::BackendMismatch { model });
        }
        let engine = match self.spec {
            Spec::SystemOne => Engine::SystemOne(Box::new(style::SystemOne {
                endpoint: format!("{}/systemone", base_url.trim_end_matches('/')),
                api_key_env,
                headers: self.headers,
                timeout: self.timeout.filter(|t| !t.is_zero()).unwrap_or(DEFAULT_TIMEOUT),
                transport: self.transport.unwrap_or_else(|| {
                    Arc::new(crate::client::ReqwestTransport::new(Duration::from_secs(10)))
                }),
                retries: self.retries.unwrap_or(DEFAULT_RETRIES),
                retry_base: self.retry_base.unwrap_or(DEFAULT_RETRY_BASE),
                retryable_statuses: self.retryable_statuses,
                on_error: self.on_error,
                request_params: self.request_params,
                body_transform: self.body_transform,
            })),
            Spec::Llm(client) => Engine::Llm(client),
            Spec::Custom(f) => Engine::Custom(f),
            Spec::Static(records) => {
                let mut table = HashMap::new();
                for (index, rec) in records.into_iter().enumerate() {
                    let decision = Decision::from_wire(&rec.response).map_err(|e| {
                        ClassifierError::RecordedDecision {
                            index,
                            source: Box::new(e),
                        }
                    })?;
                    table.insert(static_key(&model, &rec.state, &rec.questions), decision);
                }
                Engine::Static(table)
            }
        };
        Ok(Classifier {
            inner: Arc::new(Inner {
                engine,
                model,
                on_metric: self.on_metric,
                warned: Mutex::default(),
            }),
        })
    }
}

impl Classifier {
    /// The hosted System One wire (`POST {base}/systemone`, key from `TYPESAFE_API_KEY`).
    pub fn system_one() -> ClassifierBuilder {
        ClassifierBuilder::new(Spec::SystemOne)
    }

    /// Ask `client`'s model, one structured-output call per evaluation, and parse its JSON.
    /// Decisions report `calibrated: false`.
    pub fn llm(client: Client) -> ClassifierBuilder {
        ClassifierBuilder::new(Spec::Llm(client))
    }

    /// Answer with `f`.
    ///
    /// ```
    /// use toolnexus::classifier::{Classifier, Decision, DecisionAnswer, NoulAnswer, Question, Questions};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let always_yes = Classifier::custom(|_state, questions| async move {
    ///     let answers = questions.keys().map(|k| (k.clone(), DecisionAnswer::Noul(NoulAnswer { noul: 1.0 })));
    ///     Ok(Decision { answers: answers.collect(), ..Decision::default() })
    /// })
    /// .build()
    /// .unwrap();
    /// let qs = Questions::from([("ok".to_string(), Question::noul("Is it ok?"))]);
    /// let d = always_yes.evaluate(&serde_json::json!({}), &qs).await.unwrap();
    /// assert_eq!(d.noul("ok").unwrap().noul, 1.0);
    /// # });
    /// ```
    pub fn custom<F, Fut>(f: F) -> ClassifierBuilder
    where
        F: Fn(Value, Questions) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Decision, BoxError>> + Send + 'static,
    {
        ClassifierBuilder::new(Spec::Custom(Arc::new(move |s, q| Box::pin(f(s, q)))))
    }

    /// Answer from recordings. A request with no recording is an error, never the nearest
    /// recording.
    pub fn recorded(decisions: impl IntoIterator<Item = RecordedDecision>) -> ClassifierBuilder {
        ClassifierBuilder::new(Spec::Static(decisions.into_iter().collect()))
    }

    /// The style.
    pub fn style(&self) -> ClassifierStyle {
        match &self.inner.engine {
            Engine::SystemOne(_) => ClassifierStyle::SystemOne,
            Engine::Llm(_) => ClassifierStyle::Llm,
            Engine::Custom(_) => ClassifierStyle::Custom,
            Engine::Static(_) => ClassifierStyle::Static,
        }
    }

    /// The configured model alias.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// A state plus typed questions in, a [`Decision`] out. Questions are independent: one
    /// answer is never context for another. Limits are checked first (keys in order, so the
    /// same bad set always names the same key); a `classifier.evaluate` event reports every
    /// outcome.
    pub async fn evaluate(&self, state: &Value, questions: &Questions) -> Result<Decision, ClassifierError> {
        let started = Instant::now();
        let result = self.evaluate_inner(state, questions).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        self.emit(match &result {
            Ok(d) => MetricEvent::ClassifierEvaluate {
                model: if d.model.is_empty() {
                    self.inner.model.clone()
                } else {
                    d.model.clone()
                },
                ok: true,
                ms,
                prompt_tokens: d.usage.input_tokens,
                completion_tokens: d.usage.output_tokens,
                error: None,
            },
            Err(e) => MetricEvent::ClassifierEvaluate {
                model: self.inner.model.clone(),
                ok: false,
                ms,
                prompt_tokens: 0,
                completion_tokens: 0,
                error: Some(e.to_string()),
            },
        });
        result
    }

    async fn evaluate_inner(
        &self,
        state: &Value,
        questions: &Questions,
    ) -> Result<Decision, ClassifierError> {
        if questions.is_empty() {
            return Err(ClassifierError::NoQuestions);
        }
        for (key, q) in questions {
            q.validate(key)?;
        }
        self.report_degenerate(questions);
        match &self.inner.engine {
            Engine::SystemOne(s) => s.evaluate(&self.inner.model, state, questions).await,
            Engine::Llm(client) => style::llm(client, &self.inner.model, state, questions).await,
            Engine::Custom(f) => f(state.clone(), questions.clone()).await.map_err(|e| match e
                .downcast::<ClassifierError>()
            {
                Ok(own) => *own,
                Err(other) => ClassifierError::Custom(other),
            }),
            Engine::Static(table) => table
                .get(&static_key(&self.inner.model, state, questions))
                .cloned()
                .ok_or(ClassifierError::NoRecordedDecision),
        }
    }

    /// The same questions over many states, at most `concurrency` in flight (0 ⇒ 16),
    /// decisions in state order. Fails closed: the first failing state's index is named and
    /// no decisions are returned. No states is an error and sends nothing.
    pub async fn evaluate_batch(
        &self,
        states: &[Value],
        questions: &Questions,
        concurrency: usize,
    ) -> Result<Vec<Decision>, ClassifierError> {
        if states.is_empty() {
            return Err(ClassifierError::NoStates);
        }
        let limit = if concurrency == 0 {
            DEFAULT_BATCH_CONCURRENCY
        } else {
            concurrency
        };
        let results: Vec<_> = futures::stream::iter(states.iter().map(|s| self.evaluate(s, questions)))
            .buffered(limit)
            .collect()
            .await;
        results
            .into_iter()
            .enumerate()
            .map(|(index, r)| {
                r.map_err(|e| ClassifierError::Batch {
                    index,
                    source: Box::new(e),
                })
            })
            .collect()
    }

    /// One warning per degenerate choice key per classifier; the request is not changed
    /// (repairing would invent descriptions the caller did not write).
    fn report_degenerate(&self, questions: &Questions) {
        for (key, q) in questions {
            let Some(reason) = q.degenerate() else {
                continue;
            };
            let first = self
                .inner
                .warned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key.clone());
            if first {
                self.emit(MetricEvent::ClassifierWarning {
                    question: key.clone(),
                    warning: format!(
                        "classifier: question '{key}' has degenerate criteria ({reason}) — every option \
                         reads the same to the model and the answer ranks at chance; describe what \
                         picking each option would MEAN (SPEC.md §8B)"
                    ),
                });
            }
        }
    }

    fn emit(&self, event: MetricEvent) {
        if let Some(f) = &self.inner.on_metric {
            f(&event);
        }
    }
}
