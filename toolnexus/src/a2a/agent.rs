//! Remote A2A agents as tools (SPEC §7A): [`Agent::resolve`] reads an Agent Card, and
//! [`Agent::tools`] makes one tool per skill whose `execute` submits the task
//! (`SendMessage`) and polls (`GetTask`) until the remote task ends.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::card::AgentCard;
use super::wire::{Dialect, Message, Task, TaskState, V1_VERSION, VERSION_HEADER, new_id};
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource, sanitize};

/// How long one task may take, submit to result, unless set (SPEC §7A: 300 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// How often a running task is polled, unless set (SPEC §7A: 1 s).
pub const DEFAULT_POLL_EVERY: Duration = Duration::from_secs(1);
/// The card fetch gives up after this long even when `timeout` is longer: a toolkit build
/// should not hang on one agent that accepts connections and never answers.
const CARD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the best-effort `CancelTask` after a timeout or cancellation may take.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest response body read from an agent.
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// How much of a non-2xx body an error message quotes.
const MAX_ERROR_BODY_CHARS: usize = 2000;

/// How to reach an agent and how long to wait for it.
///
/// ```
/// use std::time::Duration;
/// use toolnexus::a2a::AgentOptions;
///
/// let opts = AgentOptions::default()
///     .header("Authorization", "Bearer ${AGENT_TOKEN}")
///     .timeout(Duration::from_secs(60));
/// assert_eq!(opts.poll_every, Duration::from_secs(1));
/// // Header values never show, not even as templates.
/// assert!(format!("{opts:?}").contains(r#"{"Authorization": "<redacted>"}"#));
/// ```
#[derive(Clone)]
pub struct AgentOptions {
    /// Sent with every request (card, `SendMessage`, `GetTask`, `CancelTask`); `${ENV}` in
    /// a value expands from the environment at call time. Never logged, never in errors.
    pub headers: BTreeMap<String, String>,
    /// The budget of one task, from submit to result ([`DEFAULT_TIMEOUT`]).
    pub timeout: Duration,
    /// The pause between polls ([`DEFAULT_POLL_EVERY`]).
    pub poll_every: Duration,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            headers: BTreeMap::new(),
            timeout: DEFAULT_TIMEOUT,
            poll_every: DEFAULT_POLL_EVERY,
        }
    }
}

impl AgentOptions {
    /// Adds a header (`${ENV}` expands at call time).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Sets the task budget.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the poll interval.
    pub fn poll_every(mut self, every: Duration) -> Self {
        self.poll_every = every;
        self
    }
}

impl fmt::Debug for AgentOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: BTreeMap<&str, &str> = self.headers.keys().map(|k| (k.as_str(), "<redacted>")).collect();
        f.debug_struct("AgentOptions")
            .field("headers", &headers)
            .field("timeout", &self.timeout)
            .field("poll_every", &self.poll_every)
            .finish()
    }
}

/// Why an agent could not be resolved. Inside a toolkit this is not fatal: the agent is
/// isolated (no tools) and its status reads `failed: <this message>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// No response (connection refused, DNS, TLS, timeout).
    #[error("cannot fetch agent card {url}: {message}")]
    Fetch {
        /// The card URL.
        url: String,
        /// The cause.
        message: String,
    },
    /// A non-2xx answer.
    #[error("agent card {url}: HTTP {status}: {body}")]
    Status {
        /// The card URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// Not JSON, not a card, or no JSON-RPC endpoint.
    #[error("agent card {url}: {message}")]
    Card {
        /// The card URL.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// A card with no skills gives no tools.
    #[error("agent card {url} lists no skills")]
    NoSkills {
        /// The card URL.
        url: String,
    },
}

/// A resolved remote agent: its card, its endpoint and how to talk to it. Cheap to clone.
///
/// ```no_run
/// use serde_json::json;
/// use toolnexus::a2a::{Agent, AgentOptions};
/// use toolnexus::{ToolContext, Toolkit};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::resolve("http://127.0.0.1:8000/.well-known/agent-card.json", AgentOptions::default()).await?;
/// let tk = Toolkit::new(agent.tools()); // one tool per skill, e.g. `Travel_Agent_book_flight`
/// let r = tk.execute("Travel_Agent_book_flight", json!({"task": "Paris, Friday"}), ToolContext::default()).await;
/// println!("{} ({:?})", r.output, r.metadata); // metadata: agent, taskId, state, polls, ms
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Agent {
    inner: Arc<AgentInner>,
}

struct AgentInner {
    card_url: String,
    card: AgentCard,
    endpoint: String,
    dialect: Dialect,
    options: AgentOptions,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.name())
            .field("card_url", &self.inner.card_url)
            .field("endpoint", &self.inner.endpoint)
            .field("dialect", &self.inner.dialect)
            .field("options", &self.inner.options)
            .finish()
    }
}

impl Agent {
    /// Fetches the Agent Card at `card_url` (`GET`, with the option headers) and picks the
    /// JSON-RPC endpoint: a 1.0 card's JSON-RPC interface, else `card.url`, else the card
    /// URL's origin. A card without skills is an error: it would give no tools.
    pub async fn resolve(card_url: impl Into<String>, options: AgentOptions) -> Result<Agent, ResolveError> {
        let url = card_url.into();
        let headers = expanded_headers(&options.headers).map_err(|message| ResolveError::Fetch {
            url: url.clone(),
            message,
        })?;
        let request = http()
            .get(&url)
            .headers(headers)
            .header(ACCEPT, "application/json")
            // Announce 1.0 so a 1.0 server answers with its 1.0 card.
            .header(VERSION_HEADER, V1_VERSION)
            .timeout(options.timeout.min(CARD_TIMEOUT));
        let fetch_error = |e: reqwest::Error| ResolveError::Fetch {
            url: url.clone(),
            message: transport_message(e),
        };
        let response = request.send().await.map_err(fetch_error)?;
        let status = response.status().as_u16();
        let body = read_limited(response)
            .await
            .map_err(|message| ResolveError::Fetch {
                url: url.clone(),
                message,
            })?;
        if !(200..300).contains(&status) {
            return Err(ResolveError::Status {
                url,
                status,
                body: quote_body(&body),
            });
        }
        let card: AgentCard = serde_json::from_slice(&body).map_err(|e| ResolveError::Card {
            url: url.clone(),
            message: format!("not a JSON agent card: {e}"),
        })?;
        if card.skills.is_empty() {
            return Err(ResolveError::NoSkills { url });
        }
        let (endpoint, dialect) = card.endpoint(&url).map_err(|message| ResolveError::Card {
            url: url.clone(),
            message,
        })?;
        Ok(Agent {
            inner: Arc::new(AgentInner {
                card_url: url,
                card,
                endpoint,
                dialect,
                options,
            }),
        })
    }

    /// The card as fetched.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The card's `name` (`"agent"` when it has none): the tool name prefix and the
    /// `agent` of every result's metadata.
    pub fn name(&self) -> &str {
        match self.inner.card.name.as_str() {
            "" => "agent",
            name => name,
        }
    }

    /// Where the card was fetched from.
    pub fn card_url(&self) -> &str {
        &self.inner.card_url
    }

    /// The JSON-RPC endpoint.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// The JSON shape spoken at the endpoint.
    pub fn dialect(&self) -> Dialect {
        self.inner.dialect
    }

    /// One tool per card skill: named `sanitize(card.name) + "_" + sanitize(skill.id or
    /// skill.name)`, source `a2a`, input `{task: string}`, described by the skill. A skill
    /// with neither id nor name is skipped.
    pub fn tools(&self) -> Vec<Tool> {
        let prefix = sanitize(self.name());
        self.inner
            .card
            .skills
            .iter()
            .filter_map(|skill| {
                let id = [&skill.id, &skill.name].into_iter().find(|s| !s.is_empty())?;
                let description = [&skill.description, &skill.name, &skill.id]
                    .into_iter()
                    .find(|s| !s.is_empty())
                    .cloned()
                    .unwrap_or_default();
                let agent = self.clone();
                let tool = Tool::new(format!("{prefix}_{}", sanitize(id)), move |args: Value, ctx| {
                    let agent = agent.clone();
                    async move {
                        match args.get("task").and_then(Value::as_str) {
                            Some(task) => agent.send(task, ctx).await,
                            None => ToolResult::failure("missing required argument: task (a string)"),
                        }
                    }
                });
                Some(
                    tool.with_description(description)
                        .with_schema(task_schema())
                        .with_source(ToolSource::A2a),
                )
            })
            .collect()
    }

    /// Runs one task on the agent (what every tool of it does): `SendMessage`, then
    /// `GetTask` every `poll_every` until the task ends, the budget (`timeout`, or
    /// `ctx.timeout` when shorter) runs out, or `ctx.cancel` fires. On a timeout or a
    /// cancellation the agent is also sent `CancelTask`, best effort, so no remote work
    /// is left running for nothing. Never panics; every failure is an error result.
    pub async fn send(&self, task: &str, ctx: ToolContext) -> ToolResult {
        let budget = ctx
            .timeout
            .map_or(self.inner.options.timeout, |t| t.min(self.inner.options.timeout));
        let mut run = RemoteRun {
            agent: self.clone(),
            started: Instant::now(),
            deadline: tokio::time::Instant::now() + budget,
            budget,
            cancel: ctx.cancel,
            task_id: String::new(),
            state: TaskState::Submitted,
            polls: 0,
            ended: false,
        };
        run.drive(task).await
    }

    /// One JSON-RPC call; `Ok(result)` or a message a model can act on.
    async fn rpc(&self, method: &str, params: Value) -> Result<Value, String> {
        let body = json!({"jsonrpc": "2.0", "id": new_id(), "method": method, "params": params});
        let mut request = http()
            .post(&self.inner.endpoint)
            .headers(expanded_headers(&self.inner.options.headers)?)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_string());
        if self.inner.dialect == Dialect::V1 {
            request = request.header(VERSION_HEADER, V1_VERSION);
        }
        let failed = |message: String| format!("A2A {method} to {} failed: {message}", self.inner.endpoint);
        let response = request.send().await.map_err(|e| failed(transport_message(e)))?;
        let status = response.status().as_u16();
        let bytes = read_limited(response).await.map_err(failed)?;
        if !(200..300).contains(&status) {
            return Err(format!("HTTP {status}: {}", quote_body(&bytes)));
        }
        let mut reply: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("A2A {method}: the agent's answer is not JSON: {e}"))?;
        if let Some(error) = reply.get("error").filter(|e| !e.is_null()) {
            let code = error
                .get("code")
                .map(Value::to_string)
                .unwrap_or_else(|| "?".into());
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            return Err(format!("A2A {method}: {message} (JSON-RPC error {code})"));
        }
        match reply.get_mut("result").map(Value::take) {
            Some(result) if !result.is_null() => Ok(result),
            _ => Err(format!(
                "A2A {method}: the answer has neither a result nor an error"
            )),
        }
    }

    fn send_params(&self, text: &str) -> Value {
        match self.inner.dialect {
            Dialect::Spec => json!({
                "message": {"role": "user", "messageId": new_id(), "parts": [{"kind": "text", "text": text}]},
                "configuration": {"blocking": false}
            }),
            Dialect::V1 => json!({
                "message": {"role": "ROLE_USER", "messageId": new_id(), "parts": [{"text": text}]},
                "configuration": {"returnImmediately": true}
            }),
        }
    }
}

/// The input schema of every A2A tool (SPEC §7A).
fn task_schema() -> Value {
    json!({"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]})
}

/// Why a wait ended early.
enum Interrupted {
    Canceled,
    TimedOut,
}

/// One task in flight on a remote agent. Dropped before the task ended (a timeout, a
/// cancellation, an error, or the caller dropping the future), it sends `CancelTask`.
struct RemoteRun {
    agent: Agent,
    started: Instant,
    deadline: tokio::time::Instant,
    budget: Duration,
    cancel: CancellationToken,
    task_id: String,
    state: TaskState,
    polls: u32,
    /// The remote task reached a state it will not leave by itself.
    ended: bool,
}

impl RemoteRun {
    async fn drive(&mut self, text: &str) -> ToolResult {
        let params = self.agent.send_params(text);
        let sent = match self.bounded(self.agent.rpc("SendMessage", params)).await {
            Ok(Ok(result)) => result,
            Ok(Err(message)) => return self.result(ToolResult::failure(message)),
            Err(stop) => return self.stopped(stop),
        };
        let task = match submitted_task(sent) {
            Ok(task) => task,
            Err(message) => return self.result(ToolResult::failure(message)),
        };
        self.task_id = task.id.clone();
        self.state = task.status.state.clone();
        let mut task = task;
        // SPEC §7A order: abort → timeout → sleep → abort → GetTask.
        while !(self.state.is_terminal() || self.state.is_interrupted()) {
            if self.cancel.is_cancelled() {
                return self.stopped(Interrupted::Canceled);
            }
            if tokio::time::Instant::now() >= self.deadline {
                return self.stopped(Interrupted::TimedOut);
            }
            // At least 1 ms: a zero interval must not become a hot loop against the agent.
            let pause = self.agent.inner.options.poll_every.max(Duration::from_millis(1));
            if let Err(stop) = self.bounded(tokio::time::sleep(pause)).await {
                return self.stopped(stop);
            }
            if self.cancel.is_cancelled() {
                return self.stopped(Interrupted::Canceled);
            }
            let params = json!({"id": self.task_id});
            let polled = match self.bounded(self.agent.rpc("GetTask", params)).await {
                Ok(Ok(result)) => result,
                Ok(Err(message)) => return self.result(ToolResult::failure(message)),
                Err(stop) => return self.stopped(stop),
            };
            self.polls += 1;
            let polled = unwrap_task(polled);
            // A poll without a state keeps the last one known.
            let has_state = polled.pointer("/status/state").is_some_and(Value::is_string);
            match serde_json::from_value::<Task>(polled) {
                Ok(t) if has_state => {
                    self.state = t.status.state.clone();
                    task = t;
                }
                Ok(_) => {}
                Err(e) => return self.result(ToolResult::failure(format!("A2A GetTask: not a task: {e}"))),
            }
        }
        self.ended = true;
        let outcome = match self.state {
            TaskState::Completed => ToolResult::success(task.output_text()),
            _ => {
                let detail = task.status_text();
                let mut msg = format!("A2A task {} {}", self.task_id, self.state);
                if !detail.is_empty() {
                    msg.push_str(": ");
                    msg.push_str(&detail);
                }
                ToolResult::failure(msg)
            }
        };
        self.result(outcome)
    }

    /// `fut`, unless the caller cancels or the budget runs out first.
    async fn bounded<T>(&self, fut: impl Future<Output = T>) -> Result<T, Interrupted> {
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(Interrupted::Canceled),
            r = tokio::time::timeout_at(self.deadline, fut) => r.map_err(|_| Interrupted::TimedOut),
        }
    }

    fn stopped(&mut self, why: Interrupted) -> ToolResult {
        let output = match why {
            Interrupted::Canceled => {
                self.state = TaskState::Canceled;
                format!("A2A task {} canceled", self.task_id)
            }
            Interrupted::TimedOut => format!(
                "A2A task {} timed out after {}ms (state={})",
                self.task_id,
                self.budget.as_millis(),
                self.state
            ),
        };
        self.result(ToolResult::failure(output))
    }

    /// `result` with the SPEC's metadata: `{agent, taskId, state, polls, ms}`.
    fn result(&self, result: ToolResult) -> ToolResult {
        let mut meta = Map::new();
        meta.insert("agent".into(), self.agent.name().into());
        meta.insert("taskId".into(), self.task_id.clone().into());
        meta.insert("state".into(), self.state.as_str().into());
        meta.insert("polls".into(), self.polls.into());
        meta.insert("ms".into(), (self.started.elapsed().as_millis() as u64).into());
        result.with_metadata(meta)
    }
}

impl Drop for RemoteRun {
    fn drop(&mut self) {
        if self.ended || self.task_id.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let agent = self.agent.clone();
        let id = std::mem::take(&mut self.task_id);
        runtime.spawn(async move {
            let outcome =
                tokio::time::timeout(CANCEL_TIMEOUT, agent.rpc("CancelTask", json!({"id": id}))).await;
            match outcome {
                Ok(Ok(_)) => tracing::debug!(agent = agent.name(), task = %id, "A2A CancelTask sent"),
                Ok(Err(e)) => {
                    tracing::debug!(agent = agent.name(), task = %id, "A2A CancelTask refused: {e}")
                }
                Err(_) => tracing::debug!(agent = agent.name(), task = %id, "A2A CancelTask timed out"),
            }
        });
    }
}

/// The task a `SendMessage` answer carries: the task itself (SPEC), `{"task": …}` (1.0),
/// or a message in place of a task (an agent that answers at once), read as completed.
fn submitted_task(result: Value) -> Result<Task, String> {
    let is_message = result.get("message").is_some_and(Value::is_object)
        || (result.get("status").is_none() && result.get("parts").is_some());
    if is_message {
        let message_value = match result.get("message") {
            Some(m) if m.is_object() => m.clone(),
            _ => result,
        };
        let message: Message = serde_json::from_value(message_value)
            .map_err(|e| format!("A2A SendMessage: not a message: {e}"))?;
        let mut task = Task::new(message.task_id.clone().unwrap_or_default(), TaskState::Completed);
        task.history.push(message);
        return Ok(task);
    }
    let task: Task = serde_json::from_value(unwrap_task(result))
        .map_err(|e| format!("A2A SendMessage: not a task: {e}"))?;
    if task.id.is_empty() {
        return Err("A2A SendMessage: the agent answered without a task id".into());
    }
    Ok(task)
}

/// `{"task": T}` ⇒ `T`; anything else as is.
fn unwrap_task(mut v: Value) -> Value {
    match v.get_mut("task") {
        Some(t) if t.is_object() => t.take(),
        _ => v,
    }
}

/// The option headers with `${ENV}` expanded. An error names the header, never its value.
fn expanded_headers(headers: &BTreeMap<String, String>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, template) in headers {
        let key = HeaderName::try_from(name.as_str()).map_err(|_| format!("invalid header name {name:?}"))?;
        let mut value = HeaderValue::try_from(crate::mcp::expand_env(template))
            .map_err(|_| format!("header {name}: the value is not a valid header value"))?;
        value.set_sensitive(true);
        map.insert(key, value);
    }
    Ok(map)
}

fn http() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| crate::net::client_builder().build().unwrap_or_default())
}

/// A transport error's causes, without the URL (the caller names the endpoint itself).
fn transport_message(e: reqwest::Error) -> String {
    if e.is_timeout() {
        return "timed out".into();
    }
    crate::net::error_chain(&e.without_url())
}

/// The body, up to [`MAX_RESPONSE_BYTES`].
async fn read_limited(response: reqwest::Response) -> Result<Vec<u8>, String> {
    crate::net::read_capped(response, MAX_RESPONSE_BYTES)
        .await
        .map_err(|e| match e {
            crate::net::BodyError::Transport(e) => transport_message(e),
            crate::net::BodyError::TooLarge => {
                format!("the answer exceeds the {MAX_RESPONSE_BYTES}-byte limit")
            }
        })
}

/// The start of a body for an error message.
fn quote_body(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_ERROR_BODY_CHARS) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], bytes.len()),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_answers_of_every_shape() {
        let spec = submitted_task(json!({"id": "t1", "status": {"state": "submitted"}})).unwrap();
        assert_eq!(
            (spec.id.as_str(), spec.status.state),
            ("t1", TaskState::Submitted)
        );
        let v1 =
            submitted_task(json!({"task": {"id": "t2", "status": {"state": "TASK_STATE_WORKING"}}})).unwrap();
        assert_eq!((v1.id.as_str(), v1.status.state), ("t2", TaskState::Working));
        let direct = submitted_task(
            json!({"message": {"role": "ROLE_AGENT", "taskId": "t3", "parts": [{"text": "hi"}]}}),
        )
        .unwrap();
        assert_eq!((direct.id.as_str(), direct.output_text().as_str()), ("t3", "hi"));
        let bare = submitted_task(
            json!({"kind": "message", "role": "agent", "parts": [{"kind": "text", "text": "yo"}]}),
        )
        .unwrap();
        assert_eq!(
            (bare.id.as_str(), bare.status.state.clone()),
            ("", TaskState::Completed)
        );
        assert_eq!(bare.output_text(), "yo");
        assert_eq!(
            submitted_task(json!({"status": {"state": "submitted"}})).unwrap_err(),
            "A2A SendMessage: the agent answered without a task id"
        );
        assert!(
            submitted_task(json!({"id": 5}))
                .unwrap_err()
                .starts_with("A2A SendMessage: not a task: ")
        );
    }

    #[test]
    fn header_errors_name_the_header_not_the_value() {
        let mut headers = BTreeMap::new();
        headers.insert("X-Key".to_owned(), "sec\nret".to_owned());
        let err = expanded_headers(&headers).unwrap_err();
        assert_eq!(err, "header X-Key: the value is not a valid header value");
        let mut headers = BTreeMap::new();
        headers.insert("bad name".to_owned(), "secret".to_owned());
        assert_eq!(
            expanded_headers(&headers).unwrap_err(),
            r#"invalid header name "bad name""#
        );
    }

    #[test]
    fn long_bodies_are_cut() {
        assert_eq!(quote_body(b"short"), "short");
        let long = "é".repeat(MAX_ERROR_BODY_CHARS + 10);
        let quoted = quote_body(long.as_bytes());
        assert!(quoted.ends_with(&format!("… ({} bytes)", long.len())));
        assert_eq!(quoted.chars().filter(|c| *c == 'é').count(), MAX_ERROR_BODY_CHARS);
    }
}
