//! The loop (SPEC §8, §10): call the model, run the tool calls of a turn concurrently,
//! feed the results back in call order, resolve or surface suspensions, repeat up to
//! `max_turns`. One implementation serves every entry point — `run`, `run_with`, `ask`,
//! `stream`, `Conversation::send` and the durable resume; only the way one LLM turn is
//! read differs between streaming and not (see `provider`).

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::error::{DecodeError, ResumeError};
use super::event::Emitter;
use super::hooks::{BeforeTool, Hooks, LlmResponse, ToolCallInfo, ToolOutcome};
use super::metrics::{MetricEvent, Sink};
use super::store::{StoreError, Versioned};
use super::suspensions::{Suspension, SuspensionError};
use super::wire::{self, Call, Declarations, Style, Turn, Usage};
use super::{
    Client, ClientError, Inner, Limit, Prompt, RunOptions, RunResult, RunStatus, StreamEvent, ToolCallRecord,
    gemini, relay, tiers,
};
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::suspend::{Answer, Request};
use crate::tool::ToolSource;
use crate::toolkit::Toolkit;

impl Client {
    /// Run the agent loop on `prompt` with `toolkit`:
    /// `run_with(prompt, RunOptions::new(toolkit))`.
    pub async fn run(&self, prompt: impl Into<Prompt>, toolkit: &Toolkit) -> Result<RunResult, ClientError> {
        self.run_with(prompt, RunOptions::new(toolkit)).await
    }

    /// Run the agent loop on `prompt` with `opts`: history or a stored conversation,
    /// cancellation, text deltas, this run's hooks or metric sink.
    pub async fn run_with(
        &self,
        prompt: impl Into<Prompt>,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        let emitter = Emitter::new(None, &opts);
        self.inner.start(Some(prompt.into()), None, opts, &emitter).await
    }

    /// Carry on the transcript in `opts` (its history or stored conversation) with no new
    /// user turn: the loop calls the model on the transcript as it stands. The agent
    /// runtime uses it to continue a run that stopped at `max_turns` when `on_budget`
    /// extends the limit.
    pub async fn continue_with(&self, opts: RunOptions) -> Result<RunResult, ClientError> {
        let emitter = Emitter::new(None, &opts);
        self.inner.start(None, None, opts, &emitter).await
    }

    /// A stateful ask (SPEC §8 "Conversation memory"): `run_with` on the conversation
    /// stored under `id` — its transcript is loaded as history and the new one saved back.
    pub async fn ask(
        &self,
        prompt: impl Into<Prompt>,
        id: &str,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        self.run_with(prompt, opts.conversation(id)).await
    }

    /// Resume a run that halted with `status: pending` (SPEC §10 durable resume): `pending`
    /// is its request, `answer` the host's resolution (its id must echo `pending.id`), and
    /// the halted transcript comes from `opts` — [`history`](RunOptions::history) or a
    /// stored [`conversation`](RunOptions::conversation). Every tool slot of the halted
    /// turn is filled and the loop continues with no new user turn.
    pub async fn run_with_answer(
        &self,
        pending: &Request,
        answer: &Answer,
        opts: RunOptions,
    ) -> Result<RunResult, ClientError> {
        let emitter = Emitter::new(None, &opts);
        let resume = Resume { pending, answer };
        self.inner.start(None, Some(resume), opts, &emitter).await
    }

    /// Answers a suspension recorded in this client's
    /// [`suspensions`](super::ClientBuilder::suspensions) store — by this process or any other
    /// sharing it — and resumes its run: `answer.id` names it, `opts` supplies the toolkit
    /// (the transcript is the stored one). The first answer resumes the run exactly once; a
    /// later one fails with [`SuspensionError::AlreadyAnswered`] and runs nothing. The answer
    /// is committed before the run resumes, so a resume that then fails is not retried.
    pub async fn resume_stored(&self, answer: &Answer, opts: RunOptions) -> Result<RunResult, ClientError> {
        let store = self.inner.suspensions.as_ref().ok_or(SuspensionError::NoStore)?;
        let halted = store.answer(&answer.id, answer).await?;
        let opts = match &halted.conversation {
            Some(id) => opts.conversation(id),
            None => opts.history(halted.transcript),
        };
        self.run_with_answer(&halted.request, answer, opts).await
    }
}

fn is_system(message: &Value) -> bool {
    message.get("role").and_then(Value::as_str) == Some("system")
}

/// A durable resume: the halted run's request and the host's answer.
#[derive(Clone, Copy)]
pub(crate) struct Resume<'a> {
    pending: &'a Request,
    answer: &'a Answer,
}

impl Inner {
    /// Every run's one path: the stored conversation loaded, the run (or resume) driven,
    /// the conversation saved back.
    pub(crate) async fn start(
        &self,
        prompt: Option<Prompt>,
        resume: Option<Resume<'_>>,
        opts: RunOptions,
        emitter: &Emitter,
    ) -> Result<RunResult, ClientError> {
        let RunOptions {
            toolkit,
            history,
            conversation,
            cancel,
            on_text: _,
            hooks,
            on_metric,
            on_progress: _,
        } = opts;
        // The stored transcript, and what it was when read: the save below is conditional on it.
        let (history, read) = match &conversation {
            Some(id) => match self.store.load(id).await? {
                Some((messages, version)) => (messages.clone(), Some((messages, version))),
                None => (Vec::new(), None),
            },
            None => (history, None),
        };
        if let Some(Resume { pending, answer }) = resume {
            if answer.id != pending.id {
                return Err(ResumeError::AnswerMismatch {
                    answer: answer.id.clone(),
                    pending: pending.id.clone(),
                }
                .into());
            }
            if history.is_empty() {
                return Err(ResumeError::NoTranscript.into());
            }
            if relay::halted_turn(&history).is_none() {
                return Err(ResumeError::NoHaltedTurn.into());
            }
        }
        if let Some(tk) = &toolkit {
            relay::check_collisions(tk)?;
        }
        let cancel = cancel.unwrap_or_default();
        let run = Run {
            client: self,
            toolkit: toolkit.as_ref(),
            emitter,
            cancel: &cancel,
            hooks: hooks.as_ref().unwrap_or(&self.hooks),
            metrics: Sink {
                registry: &self.registry,
                on_metric: on_metric.as_ref().or(self.on_metric.as_ref()),
            },
            turn: 0,
        };
        let result = run
            .execute(self.state(toolkit.as_ref(), history, prompt), resume)
            .await?;
        if let Some(id) = &conversation {
            self.save_turn(id, read, &result.messages).await?;
        }
        if let (Some(store), Some(request)) = (&self.suspensions, &result.pending) {
            let halted = Suspension {
                request: request.clone(),
                conversation,
                transcript: result.messages.clone(),
            };
            store.put(&halted).await?;
        }
        Ok(result)
    }

    /// Saves `messages`, the transcript a run over the stored `read` produced, under `id`. If
    /// another writer saved it meanwhile, the new messages are appended once to that winner's
    /// transcript; a second lost race is [`StoreError::Conflict`]. No turn is ever dropped
    /// silently.
    async fn save_turn(
        &self,
        id: &str,
        read: Option<Versioned>,
        messages: &[Value],
    ) -> Result<(), StoreError> {
        let (base, expected) = read.map_or((Vec::new(), None), |(m, v)| (m, Some(v)));
        match self.store.save_if(id, messages.to_vec(), expected).await {
            Err(StoreError::Conflict { .. }) => {}
            done => return done.map(drop),
        }
        // The run only appended to what it read unless compaction rewrote it; then there is
        // no turn to carry over, and the conflict stands.
        let Some(mut turn) = messages.strip_prefix(base.as_slice()) else {
            return Err(StoreError::conflict(id));
        };
        let (mut merged, version) = match self.store.load(id).await? {
            Some((m, v)) => (m, Some(v)),
            None => (Vec::new(), None),
        };
        // A fresh transcript opened with the system prompt; the winner's already has it.
        if base.is_empty() && !merged.is_empty() && turn.first().is_some_and(is_system) {
            turn = &turn[1..];
        }
        merged.extend_from_slice(turn);
        self.store.save_if(id, merged, version).await.map(drop)
    }

    fn system(&self, toolkit: Option<&Toolkit>) -> String {
        let skills = toolkit.map(Toolkit::skills_prompt).unwrap_or("");
        [self.system_prompt.as_deref().unwrap_or(""), skills]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    fn state(&self, toolkit: Option<&Toolkit>, history: Vec<Value>, prompt: Option<Prompt>) -> RunState {
        let style = self.provider.style;
        let system = self.system(toolkit);
        let mut messages = history;
        // OpenAI carries the system prompt as the first message (once, on a fresh
        // transcript); Anthropic sends it as the top-level `system` key every turn.
        if style == Style::OpenAi && messages.is_empty() && !system.is_empty() {
            messages.push(json!({"role": "system", "content": system}));
        }
        if let Some(p) = prompt {
            messages.push(match style {
                Style::Gemini => gemini::user_message(p.into_content()),
                _ => json!({"role": "user", "content": p.into_content()}),
            });
        }
        // With tiers, the plan's declarations (core + tool_search + call_tool) go instead.
        let plan = toolkit.and_then(|tk| self.tool_plan(tk));
        RunState {
            messages,
            tools: Declarations::of(plan.as_ref().map(|p| p.declared()).or(toolkit), style),
            system,
            tool_calls: Vec::new(),
            usage: Usage::default(),
            turns: 0,
            model: self.model.clone(),
            started: Instant::now(),
        }
    }
}

/// Race `work` against the deadline `timeout` and the cancellation token. Losing the race
/// drops `work`, which aborts the in-flight HTTP request and any running tool.
pub(crate) async fn guard<T>(
    timeout: Option<Duration>,
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, ClientError> {
    let deadline = async {
        match timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ClientError::Cancelled),
        () = deadline => Err(ClientError::Timeout(timeout.unwrap_or_default())),
        r = work => r,
    }
}

/// What one run works with: the client, the run's own toolkit, event sink, cancellation,
/// hooks and metric sink (its options' when set, else the client's), and the turn.
struct Run<'a> {
    client: &'a Inner,
    toolkit: Option<&'a Toolkit>,
    emitter: &'a Emitter,
    cancel: &'a CancellationToken,
    hooks: &'a Hooks,
    metrics: Sink<'a>,
    /// Zero-based index of the LLM turn in progress.
    turn: u32,
}

/// The mutable state of one run; lives outside the guarded future so a timed-out or
/// cancelled run still reports its turns and tool calls in the `run` metric.
struct RunState {
    messages: Vec<Value>,
    tools: Declarations,
    system: String,
    tool_calls: Vec<ToolCallRecord>,
    usage: Usage,
    turns: u32,
    model: String,
    started: Instant,
}

enum Ending {
    Done(String),
    Pending(Request),
    Incomplete(String),
}

/// A suspended call's second execution: the arguments it ran with, its request's prompt
/// and the answer.
struct Retry<'r> {
    args: &'r Value,
    prompt: &'r str,
    answer: Answer,
}

impl Run<'_> {
    /// Drive the loop under the run deadline and cancellation, then report the `run` metric.
    async fn execute(
        mut self,
        mut st: RunState,
        resume: Option<Resume<'_>>,
    ) -> Result<RunResult, ClientError> {
        let (timeout, cancel) = (self.client.timeout, self.cancel);
        let outcome = {
            let work = async {
                if let Some(r) = resume {
                    self.fill_halted_turn(&mut st, r).await;
                }
                self.drive(&mut st).await
            };
            // Pinned here and lent to `guard`, so the run's future holds it once, not twice.
            guard(timeout, cancel, std::pin::pin!(work)).await
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
        let ending = match outcome {
            Err(e) => {
                self.metrics.emit(run_event(Some(e.to_string())));
                return Err(e);
            }
            Ok(ending) => {
                self.metrics.emit(run_event(None));
                ending
            }
        };
        let (text, status, limit, pending) = match ending {
            Ending::Done(t) => (t, RunStatus::Done, None, None),
            Ending::Pending(r) => (r.prompt.clone(), RunStatus::Pending, None, Some(r)),
            Ending::Incomplete(t) => (t, RunStatus::Incomplete, Some(Limit::MaxTurns), None),
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

    async fn drive(&mut self, st: &mut RunState) -> Result<Ending, ClientError> {
        let client = self.client;
        let (provider, style) = (&client.provider, client.provider.style);
        for turn in 0..client.max_turns {
            self.turn = turn;
            st.turns += 1;
            let mut model = client.model.clone();
            self.hooks
                .apply_before_llm(turn, &mut st.messages, &mut st.tools, &mut model)
                .await?;
            st.model = model.clone();
            let wire_messages = client.encoder.wire_messages(style, &st.messages)?;
            let body = provider.encode(&wire::Body::new(
                style,
                &model,
                &st.system,
                wire_messages,
                &st.tools,
                self.emitter.streaming(),
            ));
            let (parsed, raw) = if self.emitter.streaming() {
                let t = provider.stream(body, &model, self.emitter, self.metrics).await?;
                st.usage.add(t.usage);
                let raw = json!({"streamed": true, "usage": st.usage});
                (t, raw)
            } else {
                let mut raw = provider.complete(body, &model, self.metrics).await?;
                let keep = self.hooks.after_llm.is_some();
                let t = wire::parse_response(style, &mut raw, keep).map_err(DecodeError::shape)?;
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
            let calls: Vec<Call> = match client.tiers {
                Some(_) => calls.into_iter().map(tiers::unwrap).collect(),
                None => calls,
            };
            st.messages.push(message);
            if calls.is_empty() {
                return Ok(Ending::Done(text));
            }
            for c in &calls {
                self.emitter
                    .event(|| StreamEvent::ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        args: c.args_or_empty(),
                    })
                    .await;
            }
            let mut outcomes = futures::future::join_all(calls.iter().map(|c| self.call_tool(c, None))).await;
            relay::stamp_and_merge(&calls, &mut outcomes);
            if let Some(halted) = self.record_turn(st, &calls, outcomes).await {
                return Ok(Ending::Pending(halted));
            }
        }
        Ok(Ending::Incomplete(last_text(&st.messages)))
    }

    /// Append a turn's results in call order, resolving suspensions; returns the request
    /// the run halts on (the first suspension in call order when there is no `wait_for`).
    async fn record_turn(
        &self,
        st: &mut RunState,
        calls: &[Call],
        outcomes: Vec<(Value, ToolResult)>,
    ) -> Option<Request> {
        let mut blocks = Vec::new();
        let mut relay_answer: Option<Answer> = None;
        let mut halted = None;
        for (call, (args, mut result)) in calls.iter().zip(outcomes) {
            if let Some(request) = result.pending().cloned() {
                self.emitter
                    .event(|| StreamEvent::Pending {
                        request: request.clone(),
                    })
                    .await;
                // Boxed: a suspension is rare, and its future would otherwise make every
                // run's future kilobytes larger (and every move of it slower).
                match Box::pin(self.resolve(call, &args, request, &mut relay_answer)).await {
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
            self.emitter.event(|| result_event(call, &result)).await;
        }
        if !blocks.is_empty() {
            st.messages
                .push(wire::results_message(self.client.provider.style, blocks));
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
        match self.client.provider.style {
            Style::OpenAi => st.messages.push(wire::tool_message(&call.id, &call.name, result)),
            Style::Anthropic => blocks.push(wire::tool_result_block(&call.id, result)),
            Style::Gemini => blocks.push(gemini::function_response(call, result)),
        }
    }

    /// One execution of `call`, returning the arguments it ran with and its result: the
    /// model's own attempt, or with `retry` the re-execution of a suspended call once its
    /// request is answered (SPEC §10).
    ///
    /// The model's attempt goes through `before_tool`; arguments that do not parse are a
    /// failure it reads. A retry carries the answer in the tool's context, and its request's
    /// prompt names a refused answer (`declined/expired: …`, the tool is not run) or a second
    /// suspension (`unresolved: …`: a request is never asked twice). `after_tool` sees every
    /// real result and never a suspension; every execution reports its `tool` metric.
    async fn call_tool(&self, call: &Call, retry: Option<Retry<'_>>) -> (Value, ToolResult) {
        let started = Instant::now();
        let source = source_of(self.toolkit, &call.name);
        let (mut args, answer, prompt) = match retry {
            None => match &call.args {
                Ok(args) => (args.clone(), None, None),
                Err(msg) => {
                    let r = ToolResult::failure(msg);
                    self.emit_tool(&call.name, source, &r, started);
                    return (json!({}), r);
                }
            },
            Some(Retry { args, prompt, answer }) if answer.ok => (args.clone(), Some(answer), Some(prompt)),
            Some(Retry { args, prompt, .. }) => {
                return (
                    args.clone(),
                    ToolResult::failure(format!("declined/expired: {prompt}")),
                );
            }
        };
        if self.client.tiers.is_some()
            && call.name == tiers::TOOL_SEARCH
            && let Some(tk) = self.toolkit
        {
            let r = tiers::search(tk, &args);
            self.emit_tool(&call.name, ToolSource::Builtin, &r, started);
            return (args, r);
        }
        let Some(tk) = self.toolkit else {
            let r = ToolResult::failure(format!("unknown tool: {}", call.name));
            if answer.is_none() {
                self.emit_tool(&call.name, source, &r, started);
            }
            return (args, r);
        };
        if answer.is_none()
            && let Some(hook) = &self.hooks.before_tool
        {
            let info = ToolCallInfo {
                name: call.name.clone(),
                args: args.clone(),
                id: call.id.clone(),
                turn: self.turn,
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
        let mut ctx = ToolContext::default()
            .with_cancel(self.cancel.child_token())
            .with_call_id(&call.id);
        ctx.answer = answer;
        if let Some(sink) = self.emitter.progress_sink(&call.id, &call.name) {
            ctx = ctx.with_progress(sink);
        }
        let result = tk.execute(&call.name, args.clone(), ctx).await;
        // A suspension is not a real result: after_tool only sees the resolved one.
        let result = if result.is_pending() {
            result
        } else {
            self.after_tool(call, &args, result).await
        };
        self.emit_tool(&call.name, source, &result, started);
        match prompt {
            Some(prompt) if result.is_pending() => {
                (args, ToolResult::failure(format!("unresolved: {prompt}")))
            }
            _ => (args, result),
        }
    }

    async fn after_tool(&self, call: &Call, args: &Value, result: ToolResult) -> ToolResult {
        match &self.hooks.after_tool {
            Some(hook) => {
                let outcome = ToolOutcome {
                    name: call.name.clone(),
                    args: args.clone(),
                    result: result.clone(),
                    id: call.id.clone(),
                    turn: self.turn,
                };
                hook(outcome).await.unwrap_or(result)
            }
            None => result,
        }
    }

    fn emit_tool(&self, name: &str, source: ToolSource, result: &ToolResult, started: Instant) {
        let pending = result.is_pending();
        self.metrics.emit(MetricEvent::Tool {
            tool: name.to_owned(),
            source,
            is_error: !pending && result.is_error,
            pending,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        });
    }

    /// SPEC §10 rule 1/2. `Err(request)` ⇒ halt (no `wait_for`). All relay calls of a turn
    /// ride one request, so the turn's first relay answer serves the later relay calls too.
    async fn resolve(
        &self,
        call: &Call,
        args: &Value,
        request: Request,
        relay_answer: &mut Option<Answer>,
    ) -> Result<ToolResult, Request> {
        let is_relay = request.kind == relay::RELAY_KIND;
        let answer = match relay_answer.as_ref().filter(|_| is_relay) {
            Some(a) => a.clone(),
            None => {
                let Some(wait_for) = &self.client.wait_for else {
                    return Err(request);
                };
                let a = wait_for(request.clone()).await;
                if is_relay {
                    *relay_answer = Some(a.clone());
                }
                a
            }
        };
        let retry = Retry {
            args,
            prompt: &request.prompt,
            answer,
        };
        Ok(self.call_tool(call, Some(retry)).await.1)
    }

    /// Durable resume: rebuild the halted turn so every tool call has exactly one result.
    /// The halted call (whose placeholder is the last result the halt wrote) re-executes
    /// with the answer, replacing its placeholder; results recorded before the halt are
    /// kept; calls that never got a slot re-run (relay calls read their result off the
    /// answer's `data.results`).
    async fn fill_halted_turn(&mut self, st: &mut RunState, resume: Resume<'_>) {
        let Some((idx, calls)) = relay::halted_turn(&st.messages) else {
            return;
        };
        let recorded = relay::recorded_results(&st.messages[idx + 1..]);
        let halted_id = recorded.last().map(|(id, _)| id.clone());
        st.messages.truncate(idx + 1);
        self.turn = st.turns;
        let mut blocks = Vec::new();
        for call in &calls {
            let args = call.args_or_empty();
            let is_halted = halted_id.as_deref() == Some(call.id.as_str());
            if !is_halted && let Some((_, kept)) = recorded.iter().find(|(id, _)| *id == call.id) {
                match self.client.provider.style {
                    Style::OpenAi => st.messages.push(kept.clone()),
                    Style::Anthropic | Style::Gemini => blocks.push(kept.clone()),
                }
                continue;
            }
            let relay_call = source_of(self.toolkit, &call.name) == ToolSource::Relay;
            let result = if is_halted || relay_call {
                let retry = Retry {
                    args: &args,
                    prompt: &resume.pending.prompt,
                    answer: resume.answer.clone(),
                };
                self.call_tool(call, Some(retry)).await.1
            } else {
                let (_, r) = self.call_tool(call, None).await;
                match r.pending() {
                    Some(request) => ToolResult::failure(format!("unresolved: {}", request.prompt)),
                    None => r,
                }
            };
            self.push_result(st, &mut blocks, call, args, &result);
            self.emitter.event(|| result_event(call, &result)).await;
        }
        if !blocks.is_empty() {
            st.messages
                .push(wire::results_message(self.client.provider.style, blocks));
        }
    }
}

fn source_of(toolkit: Option<&Toolkit>, name: &str) -> ToolSource {
    toolkit
        .and_then(|tk| tk.get(name))
        .map(|t| t.source())
        .unwrap_or_default()
}

/// The last assistant text in a transcript (any style).
fn last_text(messages: &[Value]) -> String {
    let text_of = |blocks: &Vec<Value>| -> Option<String> {
        let t: String = blocks
            .iter()
            .filter(|b| b["type"] == "text" || b.get("type").is_none())
            .filter_map(|b| b["text"].as_str())
            .collect();
        (!t.is_empty()).then_some(t)
    };
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "assistant" || m["role"] == "model")
        .find_map(|m| match (&m["content"], &m["parts"]) {
            (Value::String(s), _) => Some(s.clone()),
            (Value::Array(blocks), _) | (_, Value::Array(blocks)) => text_of(blocks),
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
