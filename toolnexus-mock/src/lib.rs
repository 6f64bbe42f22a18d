//! A deterministic, scripted model served over the real OpenAI Chat Completions wire (and the
//! Anthropic Messages and Gemini `generateContent` wires) on 127.0.0.1 — the embedded default model of the quickstart, the
//! examples and the benchmarks. No key, no network, no cost, the same answer every time.
//!
//! Three scenarios:
//! - [`Scenario::Planner`] reads the user prompt and the advertised tools. The prompt is split
//!   into steps on the word `then`; each step names tools (an advertised name, or a suffix of
//!   one after `_`, so `get_weather` finds `bench_get_weather`), optionally followed by a
//!   JSON object of arguments. Step *n* becomes the *n*-th tool-calling turn (all calls of a
//!   step in parallel); when the steps are used up the model answers with a summary of the
//!   tool results. A prompt that names no tool is answered directly.
//! - [`Scenario::Bench`] is the cross-port benchmark script: turn 1 calls `get_weather`
//!   `{"city":"Paris"}` and `add` `{"a":2,"b":2}` in parallel, turn 2 answers [`BENCH_ANSWER`].
//! - [`Scenario::Persona`] is the planner with a memory: a prompt that names no tool is answered
//!   with the system prompt's `- ` entries (`I remember: …`), so a persona's recall shows.
//!
//! ```
//! use serde_json::json;
//! use toolnexus_mock::{plan, Reply, Scenario};
//!
//! let messages = vec![json!({"role": "user", "content": r#"get_weather {"city":"Oslo"}"#})];
//! match plan(Scenario::Planner, &messages, &["srv_get_weather"]) {
//!     Reply::Calls(calls) => {
//!         assert_eq!(calls[0].name, "srv_get_weather");
//!         assert_eq!(calls[0].arguments, json!({"city": "Oslo"}));
//!     }
//!     Reply::Text(t) => panic!("expected calls, got {t}"),
//! }
//! ```

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The final answer of the benchmark scenario (the same text as the other ports' mock).
pub const BENCH_ANSWER: &str = "The weather in Paris is Sunny, 22C. And 2 + 2 = 4.";

/// Which script the model follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scenario {
    /// Plan tool calls from the prompt and the advertised tools.
    #[default]
    Planner,
    /// The fixed benchmark script.
    Bench,
    /// The planner, with a memory: a prompt that names no tool is answered with the system
    /// prompt's `- ` lines (a persona's memory entries, SPEC §7E) as `I remember: a; b`, or
    /// `I remember nothing yet.`
    Persona,
}

/// One planned tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// A deterministic id (`call_<turn>_<index>`).
    pub id: String,
    /// The advertised tool name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

/// What the model says next.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// Call these tools (in parallel).
    Calls(Vec<Call>),
    /// Answer with this text.
    Text(String),
}

/// Decide the next reply for a transcript (`messages`, OpenAI or Anthropic shapes) given the
/// advertised tool names.
pub fn plan(scenario: Scenario, messages: &[Value], names: &[&str]) -> Reply {
    match scenario {
        Scenario::Bench => bench_reply(messages.iter().rev().map(Cow::Borrowed), names),
        Scenario::Planner => planner_reply(messages, names),
        Scenario::Persona => match planner_reply(messages, names) {
            // The planner's answer to a prompt that named no tool.
            Reply::Text(t) if t.starts_with("You said: ") => Reply::Text(recall(messages)),
            reply => reply,
        },
    }
}

/// What the system prompt remembers: its `- ` lines.
fn recall(messages: &[Value]) -> String {
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .map(text_of)
        .unwrap_or_default();
    let entries: Vec<&str> = system
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .collect();
    if entries.is_empty() {
        "I remember nothing yet.".to_owned()
    } else {
        format!("I remember: {}", entries.join("; "))
    }
}

/// The planner: step *n* of the prompt is tool-calling turn *n*, then a summary.
fn planner_reply(messages: &[Value], names: &[&str]) -> Reply {
    let last_user = messages
        .iter()
        .rposition(|m| m["role"] == "user" && !is_tool_result_turn(m))
        .unwrap_or(0);
    let since = &messages[last_user.min(messages.len())..];
    let turns_done = since.iter().filter(|m| is_tool_call_turn(m)).count();
    let prompt = messages.get(last_user).map(text_of).unwrap_or_default();
    let steps: Vec<Vec<(String, Value)>> = split_steps(&prompt)
        .iter()
        .map(|s| calls_in(s, names))
        .filter(|c| !c.is_empty())
        .collect();
    match steps.get(turns_done) {
        Some(step) => Reply::Calls(
            step.iter()
                .enumerate()
                .map(|(i, (name, arguments))| Call {
                    id: format!("call_{}_{}", turns_done + 1, i + 1),
                    name: name.clone(),
                    arguments: arguments.clone(),
                })
                .collect(),
        ),
        None => Reply::Text(summarize(since, &prompt)),
    }
}

/// The benchmark script, reading the transcript from its latest message back to the prompt:
/// a tool result since the prompt means turn 2. Only the messages it reads are parsed.
fn bench_reply<'v>(latest_first: impl Iterator<Item = Cow<'v, Value>>, names: &[&str]) -> Reply {
    for m in latest_first {
        if is_tool_result_turn(&m) {
            return Reply::Text(BENCH_ANSWER.to_owned());
        }
        if m["role"] == "user" {
            break;
        }
    }
    let pick = |suffix: &str| resolve(names, suffix).unwrap_or(suffix).to_owned();
    Reply::Calls(vec![
        Call {
            id: "call_weather_1".into(),
            name: pick("get_weather"),
            arguments: json!({"city": "Paris"}),
        },
        Call {
            id: "call_add_1".into(),
            name: pick("add"),
            arguments: json!({"a": 2, "b": 2}),
        },
    ])
}

fn is_tool_call_turn(m: &Value) -> bool {
    m["role"] == "assistant"
        && (m["tool_calls"].as_array().is_some_and(|c| !c.is_empty())
            || blocks(m).any(|b| b["type"] == "tool_use"))
}

fn is_tool_result_turn(m: &Value) -> bool {
    m["role"] == "tool" || (m["role"] == "user" && blocks(m).any(|b| b["type"] == "tool_result"))
}

fn blocks(m: &Value) -> impl Iterator<Item = &Value> {
    m["content"].as_array().into_iter().flatten()
}

/// The text of a message whose content is a string or an array of text blocks.
fn text_of(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or_else(|| p["content"].as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The advertised tool `word` names: itself, or the one ending in `_word`.
fn resolve<'a>(names: &[&'a str], word: &str) -> Option<&'a str> {
    names.iter().copied().find(|n| *n == word).or_else(|| {
        names
            .iter()
            .copied()
            .find(|n| n.len() > word.len() && n.ends_with(word) && n[..n.len() - word.len()].ends_with('_'))
    })
}

/// Split a prompt into steps at the standalone word `then` (outside JSON objects).
fn split_steps(prompt: &str) -> Vec<String> {
    let mut steps = vec![String::new()];
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    let mut rest = prompt;
    while let Some(c) = rest.chars().next() {
        if depth == 0 && !in_str && starts_word(rest, "then") && boundary_before(steps.last().unwrap()) {
            steps.push(String::new());
            rest = &rest[4..];
            continue;
        }
        match c {
            '"' if depth > 0 && !escaped => in_str = !in_str,
            '{' if !in_str => depth += 1,
            '}' if !in_str => depth = depth.saturating_sub(1),
            _ => {}
        }
        escaped = c == '\\' && !escaped;
        steps.last_mut().unwrap().push(c);
        rest = &rest[c.len_utf8()..];
    }
    steps
}

fn starts_word(s: &str, word: &str) -> bool {
    s.get(..word.len()).is_some_and(|w| w.eq_ignore_ascii_case(word))
        && !s[word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

fn boundary_before(prev: &str) -> bool {
    !prev.ends_with(|c: char| c.is_alphanumeric() || c == '_')
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The tool calls one step names, in order, each with its JSON arguments (or `{}`).
fn calls_in(step: &str, names: &[&str]) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    let mut i = 0;
    let bytes = step.as_bytes();
    while i < step.len() {
        if !is_name_char(bytes[i] as char) {
            i += step[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let end = step[i..]
            .find(|c: char| !is_name_char(c))
            .map_or(step.len(), |e| i + e);
        let word = &step[i..end];
        i = end;
        let Some(name) = resolve(names, word) else {
            continue;
        };
        let after = step[end..].trim_start();
        let mut args = json!({});
        if after.starts_with('{') {
            let mut stream = serde_json::Deserializer::from_str(after).into_iter::<Value>();
            if let Some(Ok(v @ Value::Object(_))) = stream.next() {
                i = step.len() - after.len() + stream.byte_offset();
                args = v;
            }
        }
        calls.push((name.to_owned(), args));
    }
    calls
}

/// The final answer: one line per tool result since the prompt.
fn summarize(since: &[Value], prompt: &str) -> String {
    let mut names = std::collections::HashMap::new();
    let mut lines = Vec::new();
    for m in since {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            names.insert(
                c["id"].as_str().unwrap_or_default().to_owned(),
                c.pointer("/function/name").cloned(),
            );
        }
        for b in blocks(m).filter(|b| b["type"] == "tool_use") {
            names.insert(
                b["id"].as_str().unwrap_or_default().to_owned(),
                Some(b["name"].clone()),
            );
        }
        let mut note = |id: &Value, text: String| {
            let name = names
                .get(id.as_str().unwrap_or_default())
                .cloned()
                .flatten()
                .and_then(|n| n.as_str().map(str::to_owned))
                .unwrap_or_else(|| "tool".into());
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            let first: String = first.chars().take(160).collect();
            lines.push(format!("- {name}: {first}"));
        };
        if m["role"] == "tool" {
            note(&m["tool_call_id"], text_of(m));
        }
        for b in blocks(m).filter(|b| b["type"] == "tool_result") {
            note(&b["tool_use_id"], text_of(b));
        }
    }
    if lines.is_empty() {
        format!("You said: {}", prompt.trim())
    } else {
        format!("Here is what the tools returned:\n{}", lines.join("\n"))
    }
}

fn estimate_tokens(v: &Value) -> u64 {
    (v.to_string().len() as u64).div_ceil(4)
}

/// The OpenAI Chat Completions response body for `reply`.
///
/// ```
/// use toolnexus_mock::{openai_response, Reply};
///
/// let body = openai_response("m", &Reply::Text("hi".into()), (3, 1));
/// assert_eq!(
///     body,
///     r#"{"id":"chatcmpl-mock","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#
/// );
/// ```
pub fn openai_response(model: &str, reply: &Reply, usage: (u64, u64)) -> String {
    let (content, tool_calls, finish_reason) = match reply {
        Reply::Calls(calls) => (
            None,
            Some(calls.iter().map(OpenAiToolCall::from).collect()),
            "tool_calls",
        ),
        Reply::Text(t) => (Some(t.as_str()), None, "stop"),
    };
    let body = OpenAiResponse {
        id: "chatcmpl-mock",
        object: "chat.completion",
        created: 0,
        model,
        choices: [OpenAiChoice {
            index: 0,
            message: OpenAiMessage {
                role: "assistant",
                content,
                tool_calls,
            },
            finish_reason,
        }],
        usage: OpenAiUsage::from(usage),
    };
    to_json(&body)
}

/// The Anthropic Messages response body for `reply`.
pub fn anthropic_response(model: &str, reply: &Reply, usage: (u64, u64)) -> String {
    let (content, stop_reason) = match reply {
        Reply::Calls(calls) => (
            calls
                .iter()
                .map(|c| AnthropicBlock::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input: &c.arguments,
                })
                .collect(),
            "tool_use",
        ),
        Reply::Text(t) => (vec![AnthropicBlock::Text { text: t }], "end_turn"),
    };
    let body = AnthropicResponse {
        id: "msg_mock",
        kind: "message",
        role: "assistant",
        model,
        content,
        stop_reason,
        usage: AnthropicUsage {
            input_tokens: usage.0,
            output_tokens: usage.1,
        },
    };
    to_json(&body)
}

fn to_json(body: &impl Serialize) -> String {
    // Plain structs of strings and numbers: serializing them cannot fail.
    serde_json::to_string(body).unwrap_or_default()
}

// The response bodies as typed structs, in the wire's key order: built and written without
// an intermediate `Value`, so the model costs the benchmark as little as a remote one would.
#[derive(Serialize)]
struct OpenAiResponse<'a> {
    id: &'static str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [OpenAiChoice<'a>; 1],
    usage: OpenAiUsage,
}

#[derive(Serialize)]
struct OpenAiChoice<'a> {
    index: u32,
    message: OpenAiMessage<'a>,
    finish_reason: &'static str,
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    role: &'static str,
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<OpenAiToolCall<'a>>>,
}

#[derive(Serialize)]
struct OpenAiToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunction<'a>,
}

impl<'a> From<&'a Call> for OpenAiToolCall<'a> {
    fn from(c: &'a Call) -> Self {
        OpenAiToolCall {
            id: &c.id,
            kind: "function",
            function: OpenAiFunction {
                name: &c.name,
                arguments: c.arguments.to_string(),
            },
        }
    }
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct OpenAiUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

impl From<(u64, u64)> for OpenAiUsage {
    fn from((prompt_tokens, completion_tokens): (u64, u64)) -> Self {
        OpenAiUsage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
        }
    }
}

#[derive(Serialize)]
struct AnthropicResponse<'a> {
    id: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<AnthropicBlock<'a>>,
    stop_reason: &'static str,
    usage: AnthropicUsage,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AnthropicBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
}

#[derive(Serialize)]
struct AnthropicUsage {
    input_tokens: u64,
    output_tokens: u64,
}

/// The OpenAI SSE stream for `reply`: text in word-sized deltas, tool calls by index with
/// their arguments in two pieces, a finish chunk, a usage chunk when asked, then `[DONE]`.
pub fn openai_sse(model: &str, reply: &Reply, usage: (u64, u64), include_usage: bool) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let finish = match reply {
        Reply::Text(t) => {
            for piece in t.split_inclusive(' ') {
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
            "stop"
        }
        Reply::Calls(calls) => {
            for (i, c) in calls.iter().enumerate() {
                let args = c.arguments.to_string();
                let (a, b) = args.split_at(args.len() / 2);
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                                           "function": {"name": c.name, "arguments": a}}]}),
                    Value::Null,
                ));
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
                    Value::Null,
                ));
            }
            "tool_calls"
        }
    };
    events.push(chunk(json!({}), json!(finish)));
    if include_usage {
        events.push(
            json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
            "model": model, "choices": [],
            "usage": OpenAiUsage::from(usage)}),
        );
    }
    let mut out = String::new();
    for e in events {
        out.push_str("data: ");
        out.push_str(&e.to_string());
        out.push_str("\n\n");
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// The benchmark script's fixed usage (prompt, completion tokens), as in the other ports' mock.
const BENCH_USAGE: (u64, u64) = (20, 8);

/// The planner's usage: about four characters a token.
fn planner_usage(messages: &[Value], reply: &Reply) -> (u64, u64) {
    let out = match reply {
        Reply::Text(t) => estimate_tokens(&json!(t)),
        Reply::Calls(c) => c.iter().map(|c| estimate_tokens(&c.arguments) + 4).sum(),
    };
    let prompt = serde_json::to_string(messages).map_or(0, |s| s.len() as u64);
    (prompt.div_ceil(4), out)
}

/// What the model reads of a request body (OpenAI or Anthropic shape). Tool schemas are
/// skipped unparsed: only the names matter, and parsing every schema on every turn would
/// make the mock, not the client, the cost a benchmark measures.
#[derive(Deserialize)]
struct RequestBody<'a> {
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    /// Checked as JSON, parsed into values only as far as the scenario reads.
    #[serde(borrow)]
    messages: Vec<&'a RawValue>,
    #[serde(default, borrow)]
    tools: Vec<ToolEntry<'a>>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    /// Anthropic's system prompt, beside the messages (read by [`Scenario::Persona`]).
    #[serde(default, borrow)]
    system: Option<Cow<'a, str>>,
}

/// An OpenAI `{type, function: {name}}` or Anthropic `{name}` tool entry.
#[derive(Deserialize)]
struct ToolEntry<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionName<'a>>,
}

#[derive(Deserialize)]
struct FunctionName<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

#[derive(Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

impl RequestBody<'_> {
    fn tool_names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .filter_map(|t| t.function.as_ref().map(|f| &*f.name).or(t.name.as_deref()))
            .collect()
    }

    fn reply(&self, scenario: Scenario) -> (Reply, (u64, u64), &str) {
        let model = self.model.as_deref().unwrap_or("mock-model");
        let names = self.tool_names();
        // Already checked as JSON while the body was read: parsing a message again cannot fail.
        let parse = |m: &&RawValue| serde_json::from_str(m.get()).unwrap_or(Value::Null);
        if scenario == Scenario::Bench {
            let latest_first = self.messages.iter().rev().map(|m| Cow::Owned(parse(m)));
            return (bench_reply(latest_first, &names), BENCH_USAGE, model);
        }
        let mut messages: Vec<Value> = self.messages.iter().map(parse).collect();
        let system = self.system.as_deref().filter(|s| !s.is_empty());
        if let Some(system) = system.filter(|_| scenario == Scenario::Persona) {
            messages.insert(0, json!({"role": "system", "content": system}));
        }
        let reply = plan(scenario, &messages, &names);
        let usage = planner_usage(&messages, &reply);
        (reply, usage, model)
    }
}

fn bad_request(e: serde_json::Error) -> Response {
    let error = json!({"error": {"message": format!("invalid request body: {e}")}});
    (StatusCode::BAD_REQUEST, Json(error)).into_response()
}

async fn chat(State(scenario): State<Scenario>, body: Bytes) -> Response {
    let body: RequestBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return bad_request(e),
    };
    let (reply, usage, model) = body.reply(scenario);
    if body.stream {
        let include_usage = body.stream_options.as_ref().is_some_and(|o| o.include_usage);
        let sse = openai_sse(model, &reply, usage, include_usage);
        return ([(header::CONTENT_TYPE, "text/event-stream")], sse).into_response();
    }
    json_response(openai_response(model, &reply, usage))
}

fn json_response(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Anthropic bodies carry the system prompt beside the messages and tool results as blocks;
/// the planner reads both shapes.
async fn messages(State(scenario): State<Scenario>, body: Bytes) -> Response {
    let body: RequestBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return bad_request(e),
    };
    let (reply, usage, model) = body.reply(scenario);
    json_response(anthropic_response(model, &reply, usage))
}

/// The Gemini `generateContent` response body for `reply` (function calls carry ids).
///
/// ```
/// use toolnexus_mock::{gemini_response, Reply};
///
/// let body = gemini_response("m", &Reply::Text("hi".into()), (3, 1));
/// assert_eq!(
///     body,
///     r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"m"}"#
/// );
/// ```
pub fn gemini_response(model: &str, reply: &Reply, usage: (u64, u64)) -> String {
    gemini_chunk(model, gemini_parts(reply), Some(usage)).to_string()
}

fn gemini_parts(reply: &Reply) -> Vec<Value> {
    match reply {
        Reply::Text(t) => vec![json!({"text": t})],
        Reply::Calls(calls) => calls
            .iter()
            .map(|c| json!({"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}}))
            .collect(),
    }
}

fn gemini_chunk(model: &str, parts: Vec<Value>, usage: Option<(u64, u64)>) -> Value {
    let mut chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}]});
    if let Some((p, c)) = usage {
        chunk["usageMetadata"] =
            json!({"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c});
    }
    chunk["modelVersion"] = model.into();
    chunk
}

/// The Gemini `streamGenerateContent?alt=sse` body for `reply`: text a word a chunk, the
/// function calls in one chunk, the usage on the last.
pub fn gemini_sse(model: &str, reply: &Reply, usage: (u64, u64)) -> String {
    let mut chunks: Vec<Vec<Value>> = match reply {
        Reply::Text(t) => t.split_inclusive(' ').map(|w| vec![json!({"text": w})]).collect(),
        Reply::Calls(_) => vec![gemini_parts(reply)],
    };
    let last = chunks.pop().unwrap_or_default();
    let mut out = String::new();
    for parts in chunks {
        out.push_str(&format!("data: {}\n\n", gemini_chunk(model, parts, None)));
    }
    out.push_str(&format!("data: {}\n\n", gemini_chunk(model, last, Some(usage))));
    out
}

/// Gemini `contents` as the Anthropic-shaped messages the planner reads: a `functionCall`
/// is a `tool_use`, a `functionResponse` a `tool_result` (ids as sent, else the name).
fn gemini_messages(contents: &[Value]) -> Vec<Value> {
    let id = |v: &Value| {
        v.get("id")
            .or_else(|| v.get("name"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    contents
        .iter()
        .map(|c| {
            let role = if c["role"] == "model" { "assistant" } else { "user" };
            let blocks: Vec<Value> = c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    if let Some(t) = p["text"].as_str() {
                        json!({"type": "text", "text": t})
                    } else if let Some(fc) = p.get("functionCall") {
                        json!({"type": "tool_use", "id": id(fc), "name": fc["name"], "input": fc["args"]})
                    } else if let Some(fr) = p.get("functionResponse") {
                        let r = &fr["response"];
                        let text = r["output"]
                            .as_str()
                            .or(r["error"].as_str())
                            .map_or_else(|| r.to_string(), str::to_owned);
                        json!({"type": "tool_result", "tool_use_id": id(fr), "content": text})
                    } else {
                        json!({"type": "other"})
                    }
                })
                .collect();
            json!({"role": role, "content": blocks})
        })
        .collect()
}

/// `POST /v1beta/models/{model}:generateContent` (or `:streamGenerateContent`): the planner
/// over Gemini's wire.
async fn generate(
    State(scenario): State<Scenario>,
    axum::extract::Path(call): axum::extract::Path<String>,
    body: Bytes,
) -> Response {
    let Some((model, method)) = call.rsplit_once(':') else {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"error": {"code": 404, "message": "expected {model}:generateContent"}})),
        )
            .into_response();
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return bad_request(e),
    };
    let messages = gemini_messages(body["contents"].as_array().map(Vec::as_slice).unwrap_or_default());
    let names: Vec<&str> = body
        .pointer("/tools/0/functionDeclarations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d["name"].as_str())
        .collect();
    let reply = plan(scenario, &messages, &names);
    let usage = match scenario {
        Scenario::Bench => BENCH_USAGE,
        Scenario::Planner | Scenario::Persona => planner_usage(&messages, &reply),
    };
    match method {
        "generateContent" => json_response(gemini_response(model, &reply, usage)),
        "streamGenerateContent" => (
            [(header::CONTENT_TYPE, "text/event-stream")],
            gemini_sse(model, &reply, usage),
        )
            .into_response(),
        other => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": {"code": 404, "message": format!("unknown method {other}")}})),
        )
            .into_response(),
    }
}

/// The Gemini model list (`GET /v1beta/models`).
async fn gemini_models() -> Response {
    let models: Vec<Value> = MODELS
        .iter()
        .map(|(id, name)| json!({"name": format!("models/{id}"), "displayName": name, "inputTokenLimit": 32768}))
        .collect();
    Json(json!({"models": models})).into_response()
}

/// The models the mock lists: id and display name.
pub const MODELS: [(&str, &str); 3] = [
    ("mock-model", "Mock Model"),
    ("mock-planner", "Mock Planner"),
    ("mock-bench", "Mock Bench"),
];

/// The largest page of the Anthropic model list, whatever `limit` asks: small, so a client
/// has to follow `has_more`/`after_id` as it must with a real provider.
pub const MODELS_PAGE: usize = 2;

#[derive(Deserialize)]
struct ModelsQuery {
    limit: Option<usize>,
    after_id: Option<String>,
}

/// `GET /v1/models` in the dialect of the asker: Anthropic's paged list when the request
/// carries `anthropic-version`, else OpenAI's (OpenRouter's `name` and `context_length` on
/// each entry).
async fn models(headers: axum::http::HeaderMap, query: axum::extract::Query<ModelsQuery>) -> Response {
    if headers.contains_key("anthropic-version") {
        let start = match &query.after_id {
            Some(after) => MODELS
                .iter()
                .position(|(id, _)| id == after)
                .map_or(MODELS.len(), |i| i + 1),
            None => 0,
        };
        let limit = query.limit.unwrap_or(20).clamp(1, MODELS_PAGE);
        let page: Vec<Value> = MODELS
            .iter()
            .skip(start)
            .take(limit)
            .map(|(id, name)| json!({"type": "model", "id": id, "display_name": name, "created_at": "2025-01-01T00:00:00Z"}))
            .collect();
        let body = json!({
            "has_more": start + page.len() < MODELS.len(),
            "first_id": page.first().map(|m| m["id"].clone()),
            "last_id": page.last().map(|m| m["id"].clone()),
            "data": page,
        });
        return Json(body).into_response();
    }
    let data: Vec<Value> = MODELS
        .iter()
        .map(|(id, name)| json!({"id": id, "object": "model", "created": 0, "owned_by": "toolnexus-mock", "name": name, "context_length": 32768}))
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

/// The model's HTTP routes: `POST /v1/chat/completions` (and without `/v1`), `POST
/// /v1/messages`, `GET /v1/models` (and without `/v1`); Gemini's `POST
/// /v1beta/models/{model}:generateContent` (and `:streamGenerateContent?alt=sse`) and `GET
/// /v1beta/models`.
pub fn router(scenario: Scenario) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .route("/v1beta/models/{call}", post(generate))
        .route("/v1beta/models", get(gemini_models))
        .with_state(scenario)
}

/// [`router`] behind a provider's key check: every request must carry `api_key` as
/// `Authorization: Bearer …` (OpenAI), `x-api-key` (Anthropic) or `x-goog-api-key`
/// (Gemini), else it is refused with 401 and the provider's error body — a stand-in for a real provider.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use axum::body::Body;
/// use axum::http::Request;
/// use tower::ServiceExt as _;
/// use toolnexus_mock::{Scenario, router_with_api_key};
///
/// let app = router_with_api_key(Scenario::Planner, "sk-right");
/// let ask = |key: &str| Request::get("/v1/models").header("x-api-key", key).body(Body::empty()).unwrap();
/// assert_eq!(app.clone().oneshot(ask("sk-wrong")).await.unwrap().status(), 401);
/// assert_eq!(app.oneshot(ask("sk-right")).await.unwrap().status(), 200);
/// # });
/// ```
pub fn router_with_api_key(scenario: Scenario, api_key: &str) -> Router {
    let key: Arc<str> = Arc::from(api_key);
    router(scenario).route_layer(middleware::from_fn_with_state(key, check_key))
}

async fn check_key(State(key): State<Arc<str>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let x_api_key = headers
        .get("x-api-key")
        .or_else(|| headers.get("x-goog-api-key"))
        .and_then(|v| v.to_str().ok());
    if bearer == Some(&*key) || x_api_key == Some(&*key) {
        return next.run(request).await;
    }
    // The shapes OpenAI and Anthropic answer a bad key with; the key itself is never echoed.
    let body = if request.uri().path().starts_with("/v1beta/") {
        json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT"}})
    } else if request.uri().path().ends_with("/messages") {
        json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    } else {
        json!({"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                         "code": "invalid_api_key"}})
    };
    (StatusCode::UNAUTHORIZED, Json(body)).into_response()
}

/// A running mock model. Dropping it stops the server.
#[derive(Debug)]
pub struct MockModel {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl MockModel {
    /// Serve `scenario` on `addr` (use `127.0.0.1:0` for a free port), with TCP_NODELAY on
    /// every connection so no response waits on a delayed ACK.
    pub async fn start(addr: &str, scenario: Scenario) -> std::io::Result<Self> {
        Self::serve(addr, router(scenario)).await
    }

    /// Like [`MockModel::start`], but requests must carry `api_key` ([`router_with_api_key`]).
    pub async fn start_with_api_key(addr: &str, scenario: Scenario, api_key: &str) -> std::io::Result<Self> {
        Self::serve(addr, router_with_api_key(scenario, api_key)).await
    }

    async fn serve(addr: &str, router: Router) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            stop: Some(stop),
        })
    }

    /// The socket address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI-style base URL, e.g. `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The Gemini-style base URL, e.g. `http://127.0.0.1:PORT/v1beta`.
    pub fn gemini_base_url(&self) -> String {
        format!("http://{}/v1beta", self.addr)
    }

    /// Stop serving.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planner_walks_the_steps_then_summarizes() {
        let tools = ["skill", "bash", "mcp_get_weather"];
        let prompt = r#"Load skill {"name":"hello-world"} then run bash {"command":"echo {then} hi"} and get_weather {"city":"Paris"}"#;
        let mut messages = vec![
            json!({"role": "system", "content": "s"}),
            json!({"role": "user", "content": prompt}),
        ];
        let Reply::Calls(c) = plan(Scenario::Planner, &messages, &tools) else {
            panic!()
        };
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].id.as_str(), c[0].name.as_str()), ("call_1_1", "skill"));
        assert_eq!(c[0].arguments, json!({"name": "hello-world"}));
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1_1", "type": "function", "function": {"name": "skill", "arguments": "{}"}}]}));
        messages
            .push(json!({"role": "tool", "tool_call_id": "call_1_1", "content": "<skill_content>\nbody"}));
        let Reply::Calls(c) = plan(Scenario::Planner, &messages, &tools) else {
            panic!()
        };
        let got: Vec<_> = c.iter().map(|c| (c.name.as_str(), c.arguments.clone())).collect();
        assert_eq!(
            got,
            [
                ("bash", json!({"command": "echo {then} hi"})),
                ("mcp_get_weather", json!({"city": "Paris"}))
            ]
        );
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_2_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            {"id": "call_2_2", "type": "function", "function": {"name": "mcp_get_weather", "arguments": "{}"}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_2_1", "content": "{then} hi\n"}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_2_2", "content": "Sunny"}));
        assert_eq!(
            plan(Scenario::Planner, &messages, &tools),
            Reply::Text(
                "Here is what the tools returned:\n- skill: <skill_content>\n- bash: {then} hi\n- mcp_get_weather: Sunny"
                    .into()
            )
        );
    }

    #[test]
    fn planner_answers_directly_without_tools() {
        let messages = vec![json!({"role": "user", "content": "hello there"})];
        assert_eq!(
            plan(Scenario::Planner, &messages, &["bash"]),
            Reply::Text("You said: hello there".into())
        );
    }

    #[test]
    fn bench_script_matches_the_other_ports() {
        let tools = ["bench_get_weather", "bench_add", "bench_echo"];
        let mut messages =
            vec![json!({"role": "user", "content": "What's the weather in Paris and what is 2+2?"})];
        let reply = plan(Scenario::Bench, &messages, &tools);
        let body: Value = serde_json::from_str(&openai_response("m", &reply, (20, 8))).unwrap();
        assert_eq!(
            body["choices"][0]["message"]["tool_calls"].to_string(),
            r#"[{"id":"call_weather_1","type":"function","function":{"name":"bench_get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_add_1","type":"function","function":{"name":"bench_add","arguments":"{\"a\":2,\"b\":2}"}}]"#
        );
        messages.push(json!({"role": "tool", "tool_call_id": "call_weather_1", "content": "Sunny"}));
        assert_eq!(
            plan(Scenario::Bench, &messages, &tools),
            Reply::Text(BENCH_ANSWER.into())
        );
    }

    #[test]
    fn anthropic_tool_results_count_as_results() {
        let messages = vec![
            json!({"role": "user", "content": "get_weather"}),
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Rain"}]}),
        ];
        assert_eq!(
            plan(Scenario::Planner, &messages, &["get_weather"]),
            Reply::Text("Here is what the tools returned:\n- get_weather: Rain".into())
        );
    }

    #[test]
    fn sse_stream_reassembles() {
        let reply = Reply::Calls(vec![Call {
            id: "c".into(),
            name: "add".into(),
            arguments: json!({"a": 1}),
        }]);
        let sse = openai_sse("m", &reply, (1, 2), true);
        let args: String = sse
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str::<Value>(d).unwrap())
            .filter_map(|v| {
                v.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                    .cloned()
            })
            .map(|a| a.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(args, r#"{"a":1}"#);
        assert!(sse.ends_with("data: [DONE]\n\n"));
        assert!(sse.contains(r#""usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}"#));
    }

    #[test]
    fn persona_answers_a_toolless_prompt_from_the_system_prompt() {
        let mut messages = vec![
            json!({"role": "system", "content": "## SOUL.md\n\nAva\n\n## USER.md\n\n- Prefers dark roast\n- IST"}),
            json!({"role": "user", "content": "what do you remember?"}),
        ];
        assert_eq!(
            plan(Scenario::Persona, &messages, &["memory"]),
            Reply::Text("I remember: Prefers dark roast; IST".into())
        );
        // A prompt naming a tool is planned as the planner does.
        messages[1] = json!({"role": "user", "content": r#"memory {"action":"add","text":"x"}"#});
        let Reply::Calls(c) = plan(Scenario::Persona, &messages, &["memory"]) else {
            panic!()
        };
        assert_eq!(c[0].arguments, json!({"action": "add", "text": "x"}));
        assert_eq!(
            plan(Scenario::Persona, &messages[1..], &[]),
            Reply::Text("I remember nothing yet.".into())
        );
    }
}
