//! The loop (SPEC §8, §10): call the model, run the tool calls of a turn concurrently,
//! feed the results back in call order, resolve or surface suspensions, repeat up to
//! `max_turns`. One implementation serves `run`, `ask`, `stream` and the durable resume;
//! only the way one LLM turn is read differs between streaming and not.

use std::future::Future;
use std::time::Instant;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::hooks::{BeforeTool, LlmOverride, LlmRequest, LlmResponse, ToolCallInfo, ToolOutcome};
use super::metrics::MetricEvent;
use super::resilience::{self, ErrorDecision, ErrorInfo};
use super::transport::{HttpRequest, HttpResponse, TransportError};
use super::wire::{self, Call, Declarations, Style, Turn, Usage};
use super::{
    ClientError, Inner, OnText, Prompt, RunOptions, RunResult, RunStatus, StreamEvent, ToolCallRecord, relay,
};
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::suspend::{Answer, Request};
use crate::tool::ToolSource;
use crate::toolkit::Toolkit;

/// Where a run's incremental events go: the `stream()` channel and/or an `on_text` callback.
/// Neither set ⇒ the run does not stream.
#[derive(Clone, Default)]
pub(crate) struct Emitter {
    pub(crate) tx: Option<mpsc::Sender<Result<StreamEvent, ClientError>>>,
    pub(crate) on_text: Option<OnText>,
}

impl Emitter {
    pub(crate) fn streaming(&self) -> bool {
        self.tx.is_some() || self.on_text.is_some()
    }

    /// A non-text event, built only when a `stream()` consumer is there to read it (the
    /// tool-call and result events copy arguments and outputs).
    pub(crate) async fn event(&self, make: impl FnOnce() -> StreamEvent) {
        if let Some(tx) = &self.tx {
            // A dropped receiver aborts the whole run (see `stream::spawn_stream`).
            let _ = tx.send(Ok(make())).await;
        }
    }

    pub(crate) async fn send(&self, event: StreamEvent) {
        if let (StreamEvent::Text { delta }, Some(f)) = (&event, &self.on_text) {
            f(delta);
        }
        self.event(|| event).await;
    }
}

/// The mutable state of one run; lives outside the guarded future so a timed-out or
/// cancelled run still reports its turns and tool calls in the `run` metric.
pub(crate) struct RunState {
    pub(crate) messages: Vec<Value>,
    tools: Declarations,
    system: String,
    tool_calls: Vec<ToolCallRecord>,
    pub(crate) usage: Usage,
    turns: u32,
    model: String,
    started: Instant,
}

enum Ending {
    Done(String),
    Pending(Request),
    Incomplete(String),
}

/// A durable resume: the halted run's request and the host's answer.
struct Resume<'a> {
    pending: &'a Request,
    answer: &'a Answer,
}

/// Why one HTTP attempt failed.
enum Failure {
    Status {
        status: u16,
        body: Vec<u8>,
        retry_after: Option<String>,
    },
    Net(TransportError),
}

impl Inner {
    fn system(&self, toolkit: Option<&Toolkit>) -> String {
        let skills = toolkit.map(Toolkit::skills_prompt).unwrap_or("");
        [self.system_prompt.as_deref().unwrap_or(""), skills]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    fn state(&self, toolkit: Option<&Toolkit>, history: Vec<Value>, prompt: Option<Prompt>) -> RunState {
        let system = self.system(toolkit);
        let mut messages = history;
        // OpenAI carries the system prompt as the first message (once, on a fresh
        // transcript); Anthropic sends it as the top-level `system` key every turn.
        if self.style == Style::OpenAi && messages.is_empty() && !system.is_empty() {
            messages.push(json!({"role": "system", "content": system}));
        }
        if let Some(p) = prompt {
            messages.push(json!({"role": "user", "content": p.into_content()}));
        }
        RunState {
            messages,
            tools: Declarations::of(toolkit, self.style),
            system,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            turns: 0,
            model: self.model.clone(),
            started: Instant::now(),
        }
    }

    /// `run`/`ask`/`stream`: one prompt, optional history.
    pub(crate) async fn run(
        &self,
        prompt: Option<Prompt>,
        opts: RunOptions,
        emitter: Option<&Emitter>,
    ) -> Result<RunResult, ClientError> {
        if let Some(tk) = &opts.toolkit {
            relay::check_collisions(tk)?;
        }
        let st = self.state(opts.toolkit.as_ref(), opts.history, prompt);
        let emitter = emitter.cloned().unwrap_or(Emitter {
            tx: None,
            on_text: opts.on_text,
        });
        let cancel = opts.cancel.unwrap_or_default();
        self.execute(st, opts.toolkit.as_ref(), &emitter, &cancel, None)
            .await
    }

    /// `run_with_answer`: validate, then fill the halted turn's slots and continue.
    pub(crate) async fn resume(
        &self,
        history: Vec<Value>,
        pending: &Request,
        answer: &Answer,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        if answer.id != pending.id {
            return Err(ClientError::Resume(format!(
                "answer id \"{}\" does not echo the pending request id \"{}\"",
                answer.id, pending.id
            )));
        }
        if history.is_empty() {
            return Err(ClientError::Resume("no transcript supplied".into()));
        }
        if relay::halted_turn(&history).is_none() {
            return Err(ClientError::Resume(
                "the transcript has no halted assistant turn with tool calls".into(),
            ));
        }
        if let Some(tk) = &opts.toolkit {
            relay::check_collisions(tk)?;
        }
        let st = self.state(opts.toolkit.as_ref(), history, None);
        let emitter = Emitter {
            tx: None,
            on_text: opts.on_text,
        };
        let cancel = opts.cancel.unwrap_or_default();
        let resume = Resume { pending, answer };
        self.execute(st, opts.toolkit.as_ref(), &emitter, &cancel, Some(resume))
            .await
    }

    /// Drive the loop under the run deadline and cancellation, then report the `run` metric.
    async fn execute(
        &self,
        mut st: RunState,
        toolkit: Option<&Toolkit>,
        emitter: &Emitter,
        cancel: &CancellationToken,
        resume: Option<Resume<'_>>,
    ) -> Result<RunResult, ClientError> {
        let outcome = {
            let work = async {
                if let Some(r) = resume {
                    self.fill_halted_turn(&mut st, toolkit, emitter, cancel, r).await;
                }
                self.drive(&mut st, toolkit, emitter, cancel).await
            };
            // Pinned here and lent to `guard`, so the run's future holds it once, not twice.
            self.guard(std::pin::pin!(work), cancel).await
        };
        let ms = st.started.elapsed().as_secs_f64() * 1000.0;
        let run_event = |error: Option<String>| MetricEvent::Run {
            model: st.model.clone(),
            turns: st.turns,
            tool_calls: st.tool_calls.len() as u32,
            total_tokens: st.usage.total_tokens,
            ms,
            error,
        };
        match outcome {
            Err(e) => {
                self.emit(run_event(Some(e.to_string())));
                Err(e)
            }
            Ok(ending) => {
                self.emit(run_event(None));
                let (text, status, limit, pending) = match ending {
                    Ending::Done(t) => (t, RunStatus::Done, None, None),
                    Ending::Pending(r) => (r.prompt.clone(), RunStatus::Pending, None, Some(r)),
                    Ending::Incomplete(t) => (t, RunStatus::Incomplete, Some("maxTurns".to_owned()), None),
                };
                Ok(RunResult {
                    text,
                    messages: st.messages,
                    tool_call_count: st.tool_calls.len(),
                    tool_calls: st.tool_calls,
                    turns: st.turns,
                    usage: st.usage,
                    model: st.model,
                    status,
                    limit,
                    pending,
                })
            }
        }
    }

    /// Race `work` against the run deadline and the cancellation token. Losing the race
    /// drops `work`, which aborts the in-flight HTTP request and any running tool.
    pub(crate) async fn guard<T>(
        &self,
        work: impl Future<Output = Result<T, ClientError>>,
        cancel: &CancellationToken,
    ) -> Result<T, ClientError> {
        let deadline = async {
            match self.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(ClientError::Cancelled),
            () = deadline => Err(ClientError::Timeout(self.timeout.map_or(0, |t| t.as_millis()))),
            r = work => r,
        }
    }

    async fn drive(
        &self,
        st: &mut RunState,
        toolkit: Option<&Toolkit>,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<Ending, ClientError> {
        for turn in 0..self.max_turns {
            st.turns += 1;
            let mut model = self.model.clone();
            if let Some(hook) = &self.hooks.before_llm {
                let request = LlmRequest {
                    messages: st.messages.clone(),
                    tools: st.tools.to_values(),
                    model: self.model.clone(),
                    turn,
                };
                if let Some(LlmOverride {
                    messages,
                    tools,
                    model: m,
                }) = hook(request).await.map_err(ClientError::Hook)?
                {
                    if let Some(messages) = messages {
                        st.messages = messages;
                    }
                    if let Some(tools) = tools {
                        st.tools = Declarations::Listed(tools);
                    }
                    if let Some(m) = m.filter(|m| !m.is_empty()) {
                        model = m;
                    }
                }
            }
            st.model = model.clone();
            let wire_messages = self.encoder.wire_messages(self.style, &st.messages)?;
            let body = self.encode(&wire::Body::new(
                self.style,
                &model,
                &st.system,
                wire_messages,
                &st.tools,
                emitter.streaming(),
            ));
            let (parsed, raw) = if emitter.streaming() {
                let t = self.stream_turn(body, &model, emitter).await?;
                st.usage.add(t.usage);
                let raw = json!({"streamed": true, "usage": st.usage});
                (t, raw)
            } else {
                let mut raw = self.call_json(body, &model).await?;
                let keep = self.hooks.after_llm.is_some();
                let t = wire::parse_response(self.style, &mut raw, keep).map_err(ClientError::Decode)?;
                st.usage.add(t.usage);
                (t, raw)
            };
            if let Some(hook) = &self.hooks.after_llm {
                hook(LlmResponse {
                    response: raw,
                    model: model.clone(),
                    turn,
                })
                .await;
            }
            let Turn {
                message, text, calls, ..
            } = parsed;
            st.messages.push(message);
            if calls.is_empty() {
                return Ok(Ending::Done(text));
            }
            for c in &calls {
                emitter
                    .event(|| StreamEvent::ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        args: c.args_or_empty(),
                    })
                    .await;
            }
            let mut outcomes =
                futures::future::join_all(calls.iter().map(|c| self.run_tool(toolkit, c, turn, cancel)))
                    .await;
            relay::stamp_and_merge(&calls, &mut outcomes);
            if let Some(halted) = self
                .record_turn(st, toolkit, emitter, cancel, turn, &calls, outcomes)
                .await
            {
                return Ok(Ending::Pending(halted));
            }
        }
        Ok(Ending::Incomplete(last_text(&st.messages)))
    }

    /// Append a turn's results in call order, resolving suspensions; returns the request
    /// the run halts on (the first suspension in call order when there is no `wait_for`).
    #[allow(clippy::too_many_arguments)]
    async fn record_turn(
        &self,
        st: &mut RunState,
        toolkit: Option<&Toolkit>,
        emitter: &Emitter,
        cancel: &CancellationToken,
        turn: u32,
        calls: &[Call],
        outcomes: Vec<(Value, ToolResult)>,
    ) -> Option<Request> {
        let mut blocks = Vec::new();
        let mut relay_answer: Option<Answer> = None;
        let mut halted = None;
        for (call, (args, mut result)) in calls.iter().zip(outcomes) {
            if let Some(request) = result.pending() {
                emitter
                    .event(|| StreamEvent::Pending {
                        request: request.clone(),
                    })
                    .await;
                // Boxed: a suspension is rare, and its future would otherwise make every
                // run's future kilobytes larger (and every move of it slower).
                let resolving =
                    Box::pin(self.resolve(toolkit, call, &args, request, turn, cancel, &mut relay_answer));
                match resolving.await {
                    Ok(r) => result = r,
                    Err(request) => {
                        // The halt's placeholder: the suspension's prompt, as an error result.
                        result = ToolResult::failure(&request.prompt);
                        halted = Some(request);
                    }
                }
            }
            self.push_result(st, &mut blocks, call, args, &result);
            if halted.is_some() {
                break;
            }
            emitter.event(|| result_event(call, &result)).await;
        }
        if !blocks.is_empty() {
            st.messages.push(json!({"role": "user", "content": blocks}));
        }
        halted
    }

    fn push_result(
        &self,
        st: &mut RunState,
        blocks: &mut Vec<Value>,
        call: &Call,
        args: Value,
        result: &ToolResult,
    ) {
        st.tool_calls.push(ToolCallRecord {
            name: call.name.clone(),
            args,
            output: result.output.clone(),
            is_error: result.is_error,
            metadata: result.metadata.clone(),
        });
        match self.style {
            Style::OpenAi => st.messages.push(wire::tool_message(&call.id, &call.name, result)),
            Style::Anthropic => blocks.push(wire::tool_result_block(&call.id, result)),
        }
    }

    /// One tool call through `before_tool`/`after_tool`, emitting its `tool` metric.
    async fn run_tool(
        &self,
        toolkit: Option<&Toolkit>,
        call: &Call,
        turn: u32,
        cancel: &CancellationToken,
    ) -> (Value, ToolResult) {
        let started = Instant::now();
        let source = source_of(toolkit, &call.name);
        let mut args = match &call.args {
            Ok(a) => a.clone(),
            Err(msg) => {
                let r = ToolResult::failure(msg);
                self.emit_tool(&call.name, source, &r, started);
                return (json!({}), r);
            }
        };
        let Some(tk) = toolkit else {
            let r = ToolResult::failure(format!("unknown tool: {}", call.name));
            self.emit_tool(&call.name, source, &r, started);
            return (args, r);
        };
        if let Some(hook) = &self.hooks.before_tool {
            let info = ToolCallInfo {
                name: call.name.clone(),
                args: args.clone(),
                id: call.id.clone(),
                turn,
            };
            match hook(info).await {
                Some(BeforeTool::Result(r)) => {
                    self.emit_tool(&call.name, source, &r, started);
                    return (args, r);
                }
                Some(BeforeTool::Args(a)) => args = a,
                None => {}
            }
        }
        let ctx = ToolContext::default()
            .with_cancel(cancel.child_token())
            .with_call_id(&call.id);
        let result = tk.execute(&call.name, args.clone(), ctx).await;
        // A suspension is not a real result: after_tool only sees the resolved one.
        let result = if result.is_pending() {
            result
        } else {
            self.after_tool(call, &args, result, turn).await
        };
        self.emit_tool(&call.name, source, &result, started);
        (args, result)
    }

    async fn after_tool(&self, call: &Call, args: &Value, result: ToolResult, turn: u32) -> ToolResult {
        match &self.hooks.after_tool {
            Some(hook) => {
                let outcome = ToolOutcome {
                    name: call.name.clone(),
                    args: args.clone(),
                    result: result.clone(),
                    id: call.id.clone(),
                    turn,
                };
                hook(outcome).await.unwrap_or(result)
            }
            None => result,
        }
    }

    fn emit_tool(&self, name: &str, source: ToolSource, result: &ToolResult, started: Instant) {
        let pending = result.is_pending();
        self.emit(MetricEvent::Tool {
            tool: name.to_owned(),
            source,
            is_error: !pending && result.is_error,
            pending,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        });
    }

    /// SPEC §10 rule 1/2. `Err(request)` ⇒ halt (no `wait_for`). All relay calls of a turn
    /// ride one request, so the turn's first relay answer serves the later relay calls too.
    #[allow(clippy::too_many_arguments)]
    async fn resolve(
        &self,
        toolkit: Option<&Toolkit>,
        call: &Call,
        args: &Value,
        request: Request,
        turn: u32,
        cancel: &CancellationToken,
        relay_answer: &mut Option<Answer>,
    ) -> Result<ToolResult, Request> {
        let is_relay = request.kind == relay::RELAY_KIND;
        let answer = match relay_answer.as_ref().filter(|_| is_relay) {
            Some(a) => a.clone(),
            None => {
                let Some(wait_for) = &self.wait_for else {
                    return Err(request);
                };
                let a = wait_for(request.clone()).await;
                if is_relay {
                    *relay_answer = Some(a.clone());
                }
                a
            }
        };
        Ok(self
            .retry_with_answer(toolkit, call, args, &request.prompt, answer, turn, cancel)
            .await)
    }

    /// Re-execute a suspended call once with the answer: `!ok` ⇒ `declined/expired`, a
    /// second suspension ⇒ `unresolved` (never loop on the same request).
    #[allow(clippy::too_many_arguments)]
    async fn retry_with_answer(
        &self,
        toolkit: Option<&Toolkit>,
        call: &Call,
        args: &Value,
        prompt: &str,
        answer: Answer,
        turn: u32,
        cancel: &CancellationToken,
    ) -> ToolResult {
        if !answer.ok {
            return ToolResult::failure(format!("declined/expired: {prompt}"));
        }
        let Some(tk) = toolkit else {
            return ToolResult::failure(format!("unknown tool: {}", call.name));
        };
        let started = Instant::now();
        let ctx = ToolContext::default()
            .with_cancel(cancel.child_token())
            .with_call_id(&call.id)
            .with_answer(answer);
        let result = tk.execute(&call.name, args.clone(), ctx).await;
        let result = if result.is_pending() {
            result
        } else {
            self.after_tool(call, args, result, turn).await
        };
        self.emit_tool(&call.name, source_of(toolkit, &call.name), &result, started);
        if result.is_pending() {
            ToolResult::failure(format!("unresolved: {prompt}"))
        } else {
            result
        }
    }

    /// Durable resume: rebuild the halted turn so every tool call has exactly one result.
    /// The halted call (whose placeholder is the last result the halt wrote) re-executes
    /// with the answer, replacing its placeholder; results recorded before the halt are
    /// kept; calls that never got a slot re-run (relay calls read their result off the
    /// answer's `data.results`).
    async fn fill_halted_turn(
        &self,
        st: &mut RunState,
        toolkit: Option<&Toolkit>,
        emitter: &Emitter,
        cancel: &CancellationToken,
        resume: Resume<'_>,
    ) {
        let Some((idx, calls)) = relay::halted_turn(&st.messages) else {
            return;
        };
        let recorded = relay::recorded_results(&st.messages[idx + 1..]);
        let halted_id = recorded.last().map(|(id, _)| id.clone());
        st.messages.truncate(idx + 1);
        let turn = st.turns;
        let mut blocks = Vec::new();
        for call in &calls {
            let args = call.args_or_empty();
            let is_halted = halted_id.as_deref() == Some(call.id.as_str());
            if !is_halted && let Some((_, kept)) = recorded.iter().find(|(id, _)| *id == call.id) {
                match self.style {
                    Style::OpenAi => st.messages.push(kept.clone()),
                    Style::Anthropic => blocks.push(kept.clone()),
                }
                continue;
            }
            let relay_call = source_of(toolkit, &call.name) == ToolSource::Relay;
            let result = if is_halted || relay_call {
                self.retry_with_answer(
                    toolkit,
                    call,
                    &args,
                    &resume.pending.prompt,
                    resume.answer.clone(),
                    turn,
                    cancel,
                )
                .await
            } else {
                let (_, r) = self.run_tool(toolkit, call, turn, cancel).await;
                match r.pending() {
                    Some(req) => ToolResult::failure(format!("unresolved: {}", req.prompt)),
                    None => r,
                }
            };
            self.push_result(st, &mut blocks, call, args, &result);
            emitter.event(|| result_event(call, &result)).await;
        }
        if !blocks.is_empty() {
            st.messages.push(json!({"role": "user", "content": blocks}));
        }
    }

    /// The bytes to send. Gap 1: `request_params` shallow-merged (they win), then
    /// `body_transform` — both work on a `Value`, so only a client that sets them pays for
    /// building one; every other body is serialized straight from the transcript.
    fn encode(&self, body: &impl Serialize) -> Bytes {
        if self.request_params.is_empty() && self.body_transform.is_none() {
            return serde_json::to_vec(body).unwrap_or_default().into();
        }
        let mut body = serde_json::to_value(body).unwrap_or_default();
        if let Value::Object(map) = &mut body {
            for (k, v) in &self.request_params {
                map.insert(k.clone(), v.clone());
            }
        }
        if let Some(f) = &self.body_transform {
            body = f(body);
        }
        serde_json::to_vec(&body).unwrap_or_default().into()
    }

    /// `send` for `translate`: shape the body, one call with retries, under the deadline.
    pub(crate) async fn send_guarded(
        &self,
        body: Value,
        cancel: Option<&CancellationToken>,
    ) -> Result<Value, ClientError> {
        let model = body["model"].as_str().unwrap_or(&self.model).to_owned();
        let body = self.encode(&body);
        let token = cancel.cloned().unwrap_or_default();
        self.guard(self.call_json(body, &model), &token).await
    }

    /// One non-streaming call with retries, emitting the `llm` metric.
    async fn call_json(&self, body: Bytes, model: &str) -> Result<Value, ClientError> {
        let started = Instant::now();
        let result = async {
            let resp = self.post_retrying(body, true).await?;
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| ClientError::Transport(e.message))?;
            serde_json::from_slice::<Value>(&bytes).map_err(|e| {
                ClientError::Decode(format!(
                    "{e}: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                ))
            })
        }
        .await;
        let usage = result
            .as_ref()
            .ok()
            .and_then(|v| v.get("usage"))
            .map(|u| Usage::from_raw(self.style, u))
            .unwrap_or_default();
        self.emit_llm(model, result.is_ok(), usage, started);
        result
    }

    pub(crate) fn emit_llm(&self, model: &str, ok: bool, usage: Usage, started: Instant) {
        self.emit(MetricEvent::Llm {
            model: model.to_owned(),
            ok,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            prompt_tokens: if ok { usage.prompt_tokens } else { 0 },
            completion_tokens: if ok { usage.completion_tokens } else { 0 },
        });
    }

    /// POST with retries on 429/5xx/network (or whatever `on_error` says, bounded by
    /// `retries`). `whole` reads the body inside the attempt, so a broken body retries too
    /// (the response then carries it in memory).
    pub(crate) async fn post_retrying(&self, body: Bytes, whole: bool) -> Result<HttpResponse, ClientError> {
        let request = HttpRequest {
            url: self.endpoint.clone(),
            headers: self.headers.clone(),
            body,
        };
        let mut attempt = 0;
        loop {
            let failure = match self.attempt(request.clone(), whole).await {
                Ok(reply) => return Ok(reply),
                Err(f) => f,
            };
            let (info, error, wait) = match failure {
                Failure::Status {
                    status,
                    body,
                    retry_after,
                } => {
                    let wait = retry_after
                        .as_deref()
                        .and_then(resilience::parse_retry_after)
                        .unwrap_or_else(|| resilience::backoff(self.retry_base, attempt));
                    let info = ErrorInfo {
                        status: Some(status),
                        error: None,
                        attempt,
                        retryable: resilience::is_retryable_status(status),
                    };
                    let error = ClientError::Provider {
                        status,
                        message: wire::provider_message(&body, &self.api_key),
                        retry_after,
                    };
                    (info, error, wait)
                }
                Failure::Net(e) => {
                    let info = ErrorInfo {
                        status: None,
                        error: Some(e.message.clone()),
                        attempt,
                        retryable: e.retryable,
                    };
                    (
                        info,
                        ClientError::Transport(e.message),
                        resilience::backoff(self.retry_base, attempt),
                    )
                }
            };
            let decision = match &self.on_error {
                Some(f) => f(&info),
                None => resilience::default_decision(&info),
            };
            if decision == ErrorDecision::Fail || attempt >= self.retries {
                return Err(error);
            }
            tracing::debug!(attempt, status = info.status, "LLM request failed; retrying");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn attempt(&self, request: HttpRequest, whole: bool) -> Result<HttpResponse, Failure> {
        let resp = self.transport.post(request).await.map_err(Failure::Net)?;
        if (200..300).contains(&resp.status) {
            if !whole {
                return Ok(resp);
            }
            let (status, headers) = (resp.status, resp.headers.clone());
            let body = resp.bytes().await.map_err(Failure::Net)?;
            return Ok(HttpResponse::new(status, headers, body));
        }
        let status = resp.status;
        let retry_after = resp.header("retry-after").map(str::to_owned);
        let body = resp.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
        Err(Failure::Status {
            status,
            body,
            retry_after,
        })
    }
}

fn source_of(toolkit: Option<&Toolkit>, name: &str) -> ToolSource {
    toolkit
        .and_then(|tk| tk.get(name))
        .map(|t| t.source())
        .unwrap_or_default()
}

/// The last assistant text in a transcript (either style).
fn last_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "assistant")
        .find_map(|m| match &m["content"] {
            Value::String(s) => Some(s.clone()),
            Value::Array(blocks) => {
                let t: String = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                (!t.is_empty()).then_some(t)
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// The `tool_result` stream event for a call that ran.
fn result_event(call: &Call, result: &ToolResult) -> StreamEvent {
    StreamEvent::ToolResult {
        id: call.id.clone(),
        name: call.name.clone(),
        output: result.output.clone(),
        is_error: result.is_error,
    }
}
