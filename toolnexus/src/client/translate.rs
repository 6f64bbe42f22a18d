//! Single-turn translation (SPEC §11): OpenAI shapes in, exactly one provider call, OpenAI
//! shapes out. No loop, no tool execution, no conversation state — the caller owns the
//! conversation and runs the tools itself.
//!
//! [`Client::translate`] is the entry point: one call through the client's send path
//! (retries, `request_params`/`body_transform`, timeout, the `llm` metric), with
//! `before_llm`/`after_llm` firing exactly once and no tool hook ever. The conversions are
//! pure and public: a [`Draft`] is the provider request before `before_llm` sees it,
//! [`Draft::body`] assembles the body, [`Draft::parse`] reads the answer back.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::client::translate::{FinishReason, TranslateRequest};
//! use toolnexus::client::transport::{from_fn, HttpResponse};
//! use toolnexus::client::{Client, Style};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A provider that asks for one tool call, whatever it is sent.
//! let provider = from_fn(|_req| async {
//!     Ok(HttpResponse::json(&json!({
//!         "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
//!         "stop_reason": "tool_use",
//!         "usage": {"input_tokens": 12, "output_tokens": 5}
//!     })))
//! });
//! let client = Client::builder()
//!     .base_url("https://api.anthropic.com")
//!     .style(Style::Anthropic)
//!     .model("claude-sonnet-4-5")
//!     .api_key("sk-test")
//!     .transport(provider)
//!     .build()
//!     .unwrap();
//! let request = TranslateRequest::new(vec![
//!     json!({"role": "system", "content": "Be terse."}),
//!     json!({"role": "user", "content": "Weather in Paris?"}),
//! ])
//! .tools(vec![json!({"type": "function", "function": {"name": "get_weather"}})]);
//!
//! let result = client.translate(request).await.unwrap();
//! assert_eq!(result.finish_reason, FinishReason::ToolCalls);
//! assert_eq!(result.tool_calls[0].id, "toolu_1");
//! assert_eq!(result.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
//! assert_eq!(result.usage.total_tokens, 17);
//! // Hand the calls back to an OpenAI-speaking caller as an assistant message.
//! assert_eq!(result.tool_calls_json()[0]["function"]["name"], "get_weather");
//! # });
//! ```

use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::hooks::LlmResponse;
use super::metrics::Sink;
use super::run::guard;
use super::{Client, ClientError, Style, Usage};
use crate::{ContentPart, Toolkit};

/// One translate call: the caller's OpenAI-shaped conversation and declarations, set with
/// the chaining methods.
#[derive(Clone, Debug, Default)]
pub struct TranslateRequest {
    messages: Vec<Value>,
    tools: Vec<Value>,
    toolkit: Option<Toolkit>,
    tool_choice: Option<Value>,
    system: Option<String>,
    max_tokens: Option<u32>,
    cancel: Option<CancellationToken>,
}

impl TranslateRequest {
    /// A request carrying OpenAI `messages`, verbatim (assistant `tool_calls`, `tool`-role
    /// results included), and nothing else.
    pub fn new(messages: Vec<Value>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }

    /// Sets the OpenAI `tools`, verbatim.
    pub fn tools(mut self, tools: Vec<Value>) -> Self {
        self.tools = tools;
        self
    }

    /// Declares a toolkit's tools (first, before `tools`). They are never executed.
    pub fn toolkit(mut self, toolkit: &Toolkit) -> Self {
        self.toolkit = Some(toolkit.clone());
        self
    }

    /// Sets the OpenAI `tool_choice`, verbatim; JSON `null` ⇒ absent.
    pub fn tool_choice(mut self, choice: Value) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Replaces the system prompt (the client's, and on the Anthropic style the hoisted
    /// `system`/`developer` messages).
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Caps the completion length; `0` ⇒ the provider default (Anthropic: 4096; OpenAI: no
    /// key).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Lets `cancel` abort the in-flight call (never retried), like a run's token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

/// One tool call the model asked for, in OpenAI shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TranslatedToolCall {
    /// The id the caller echoes as `tool_call_id` on its result message.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments as a JSON string — the OpenAI wire form.
    pub arguments: String,
}

/// The OpenAI finish reason of a translated turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end (also the fallback for any unrecognised provider reason).
    Stop,
    /// The turn emitted at least one tool call.
    ToolCalls,
    /// The completion hit the token cap.
    Length,
    /// The provider refused or filtered the completion.
    ContentFilter,
}

impl FinishReason {
    /// The wire value: `stop`, `tool_calls`, `length`, `content_filter`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
        }
    }
}

/// An OpenAI-shaped single-turn result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TranslateResult {
    /// The assistant text (`""` when the model only called tools).
    pub text: String,
    /// Every tool call, in provider order.
    pub tool_calls: Vec<TranslatedToolCall>,
    /// Any tool call ⇒ [`FinishReason::ToolCalls`], whatever the provider said.
    pub finish_reason: FinishReason,
    /// This call's token usage (OpenAI names; Anthropic input/output mapped onto them).
    pub usage: Usage,
    /// The model id the call was made with.
    pub model: String,
    /// The provider's decoded response, for fields this type does not model.
    pub raw: Option<Value>,
}

impl TranslateResult {
    /// The tool calls as an OpenAI `tool_calls` array, ready for an assistant message.
    pub fn tool_calls_json(&self) -> Vec<Value> {
        self.tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect()
    }
}

/// Maps a provider stop reason onto the OpenAI finish reason. Tool calls always win.
pub fn finish_reason_for(has_tool_calls: bool, provider_stop: Option<&str>) -> FinishReason {
    match provider_stop {
        _ if has_tool_calls => FinishReason::ToolCalls,
        Some("max_tokens" | "length") => FinishReason::Length,
        Some("refusal" | "content_filter") => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// Flattens an OpenAI `content` (a string, or an array of parts) to text: the `text` of
/// every part that has one, concatenated. Anything else is `""`.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Reads tool-call arguments given either as a JSON string or as an object. Anything that
/// is not (or does not parse to) an object becomes `{}`.
pub fn args_object(arguments: &Value) -> Map<String, Value> {
    match arguments {
        Value::Object(m) => m.clone(),
        Value::String(s) => match serde_json::from_str(s) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// Renders tool-call arguments as the OpenAI wire string: a string stays verbatim, an
/// object becomes compact JSON, anything else `{}`.
pub fn args_string(arguments: &Value) -> String {
    match arguments {
        Value::String(s) => s.clone(),
        Value::Object(_) => arguments.to_string(),
        _ => "{}".to_string(),
    }
}

/// Converts OpenAI `messages` to Anthropic messages plus the hoisted system prompt.
///
/// Assistant `tool_calls` become `tool_use` blocks (arguments parsed into an object);
/// consecutive `tool`/`function` results merge into one `user` turn of `tool_result`
/// blocks; `system`/`developer` messages are hoisted (joined with a blank line); text-part
/// arrays are flattened; canonical media parts become Anthropic blocks (audio, which
/// Anthropic cannot carry, becomes a text placeholder). Empty turns are dropped.
pub fn openai_messages_to_anthropic(messages: &[Value]) -> (Vec<Value>, String) {
    let mut out = Vec::new();
    let mut system = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, results: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(results)}));
        }
    };
    for m in messages.iter().filter(|m| m.is_object()) {
        let content = m.get("content").unwrap_or(&Value::Null);
        match m.get("role").and_then(Value::as_str) {
            Some("system" | "developer") => {
                flush(&mut out, &mut results);
                let s = content_text(content);
                if !s.is_empty() {
                    system.push(s);
                }
            }
            Some("tool" | "function") => {
                let text = content_text(content);
                let media = media_blocks(content);
                let mut block = Map::new();
                block.insert("type".into(), "tool_result".into());
                block.insert(
                    "content".into(),
                    if media.is_empty() {
                        Value::String(text)
                    } else {
                        let mut blocks = vec![json!({"type": "text", "text": text})];
                        blocks.extend(media);
                        Value::Array(blocks)
                    },
                );
                let id = id_string(m.get("tool_call_id"));
                if !id.is_empty() {
                    block.insert("tool_use_id".into(), Value::String(id));
                }
                results.push(Value::Object(block));
            }
            Some("assistant") => {
                flush(&mut out, &mut results);
                let mut blocks = Vec::new();
                let text = content_text(content);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls_of(m) {
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": args_object(&Value::String(call.arguments)),
                    }));
                }
                // An empty assistant turn would be rejected by the provider.
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            _ => {
                flush(&mut out, &mut results);
                if let Some(turn) = user_turn(content) {
                    out.push(turn);
                }
            }
        }
    }
    flush(&mut out, &mut results);
    (out, system.join("\n\n"))
}

/// A user turn: text flattened, media parts translated in place, provider-native blocks
/// passed through. `None` when there is nothing to send.
fn user_turn(content: &Value) -> Option<Value> {
    let text = content_text(content);
    let parts = match content {
        Value::Array(parts) if parts.iter().any(is_media_part) => parts,
        Value::Array(parts) if text.is_empty() && !parts.is_empty() => {
            return Some(json!({"role": "user", "content": parts}));
        }
        _ if text.is_empty() => return None,
        _ => return Some(json!({"role": "user", "content": text})),
    };
    let mut blocks = Vec::new();
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for p in parts {
        if is_media_part(p) {
            blocks.push(media_block(p));
        } else if p.get("type").and_then(Value::as_str) != Some("text") {
            blocks.push(p.clone());
        }
    }
    Some(json!({"role": "user", "content": blocks}))
}

/// A canonical non-text content part (`{"type":"image"|"file"|"audio","mimeType":…}`); a
/// provider-native block is not one.
fn is_media_part(p: &Value) -> bool {
    matches!(
        p.get("type").and_then(Value::as_str),
        Some("image" | "file" | "audio")
    ) && p.get("mimeType").is_some_and(Value::is_string)
}

/// The Anthropic blocks of the media parts in `content`.
fn media_blocks(content: &Value) -> Vec<Value> {
    match content {
        Value::Array(parts) => parts
            .iter()
            .filter(|p| is_media_part(p))
            .map(media_block)
            .collect(),
        _ => Vec::new(),
    }
}

/// One media part as an Anthropic block. A part Anthropic cannot carry degrades to a text
/// placeholder naming it (nothing is dropped silently); one that does not parse as a
/// content part (neither `data` nor `url`) is passed through untouched.
fn media_block(part: &Value) -> Value {
    match serde_json::from_value::<ContentPart>(part.clone()) {
        Ok(p) => p
            .to_anthropic_block()
            .unwrap_or_else(|_| json!({"type": "text", "text": p.placeholder()})),
        Err(_) => part.clone(),
    }
}

/// An assistant message's OpenAI `tool_calls`; entries without a `function` are skipped.
fn tool_calls_of(message: &Value) -> Vec<TranslatedToolCall> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(|tc| {
            let function = tc.get("function").filter(|f| f.is_object())?;
            Some(TranslatedToolCall {
                id: id_string(tc.get("id")),
                name: id_string(function.get("name")),
                arguments: args_string(function.get("arguments").unwrap_or(&Value::Null)),
            })
        })
        .collect()
}

/// An id or name as a string: strings verbatim, numbers in decimal, anything else `""`.
fn id_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.as_f64() != Some(0.0) => n.to_string(),
        _ => String::new(),
    }
}

/// JSON truthiness as the reference ports apply it to optional fields.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// Converts OpenAI `tools` to Anthropic declarations. Entries already in Anthropic shape
/// (a top-level `name`) pass through; unrecognised entries are skipped.
pub fn openai_tools_to_anthropic(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .filter_map(|t| {
            let Some(function) = t.get("function").filter(|f| f.is_object()) else {
                return truthy(t.get("name")).then(|| t.clone());
            };
            let name = function.get("name").filter(|n| truthy(Some(n)))?;
            let mut decl = Map::new();
            decl.insert("name".into(), name.clone());
            if let Some(d) = function.get("description").filter(|d| truthy(Some(d))) {
                decl.insert("description".into(), d.clone());
            }
            let schema = match function.get("parameters") {
                Some(p @ Value::Object(_)) => p.clone(),
                _ => json!({"type": "object", "properties": {}}),
            };
            decl.insert("input_schema".into(), schema);
            Some(Value::Object(decl))
        })
        .collect()
}

/// Maps OpenAI `tool_choice` onto Anthropic's: `required`/`any` ⇒ `any`, `none` ⇒ `none`, a
/// named function ⇒ `tool`. `auto` (the provider default) and anything unrecognised ⇒ `None`.
pub fn openai_tool_choice_to_anthropic(choice: &Value) -> Option<Value> {
    match choice {
        Value::String(s) => match s.as_str() {
            "required" | "any" => Some(json!({"type": "any"})),
            "none" => Some(json!({"type": "none"})),
            _ => None,
        },
        Value::Object(_) => {
            let name = choice
                .get("function")
                .and_then(|f| f.get("name"))
                .filter(|n| truthy(Some(n)))?;
            Some(json!({"type": "tool", "name": name}))
        }
        _ => None,
    }
}

/// A translate call's provider request before the `before_llm` hook: the hook may replace
/// `messages` and `tools`, then [`body`](Self::body) assembles what goes on the wire.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    /// The provider-shaped messages.
    pub messages: Vec<Value>,
    /// The provider-shaped tool declarations (toolkit's first).
    pub tools: Vec<Value>,
    style: Style,
    system: String,
    tool_choice: Option<Value>,
    max_tokens: Option<u32>,
}

impl Draft {
    /// The request for `style`; `client_system` is the client's configured system prompt.
    pub fn new(style: Style, request: &TranslateRequest, client_system: Option<&str>) -> Self {
        match style {
            // `Client::translate` refuses a Gemini client before drafting; a Gemini draft
            // made by hand is the OpenAI one.
            Style::OpenAi | Style::Gemini => Self::openai(request, client_system),
            Style::Anthropic => Self::anthropic(request, client_system),
        }
    }

    /// The OpenAI-style request: `messages` verbatim, with a `system` message prepended
    /// (the request's override, else `client_system`) only when the conversation carries
    /// no `system`/`developer` message; `tools` and `tool_choice` verbatim.
    fn openai(request: &TranslateRequest, client_system: Option<&str>) -> Self {
        let system = request.system.as_deref().or(client_system).unwrap_or_default();
        let has_system = request.messages.iter().any(|m| {
            matches!(
                m.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            )
        });
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !system.is_empty() && !has_system {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.extend(request.messages.iter().cloned());
        let mut tools = request
            .toolkit
            .as_ref()
            .map(Toolkit::to_openai)
            .unwrap_or_default();
        tools.extend(request.tools.iter().cloned());
        Self {
            messages,
            tools,
            style: Style::OpenAi,
            system: String::new(),
            tool_choice: request.tool_choice.clone().filter(|c| !c.is_null()),
            max_tokens: request.max_tokens,
        }
    }

    /// The Anthropic-style request: messages converted by [`openai_messages_to_anthropic`];
    /// system = the request's override, else `client_system`, else the hoisted messages;
    /// tools converted by [`openai_tools_to_anthropic`], `tool_choice` by
    /// [`openai_tool_choice_to_anthropic`].
    fn anthropic(request: &TranslateRequest, client_system: Option<&str>) -> Self {
        let (messages, hoisted) = openai_messages_to_anthropic(&request.messages);
        let system = match (&request.system, client_system) {
            (Some(s), _) => s.clone(),
            (None, Some(s)) if !s.is_empty() => s.to_string(),
            _ => hoisted,
        };
        let mut tools = request
            .toolkit
            .as_ref()
            .map(Toolkit::to_anthropic)
            .unwrap_or_default();
        tools.extend(openai_tools_to_anthropic(&request.tools));
        Self {
            messages,
            tools,
            style: Style::Anthropic,
            system,
            tool_choice: request
                .tool_choice
                .as_ref()
                .and_then(openai_tool_choice_to_anthropic),
            max_tokens: request.max_tokens,
        }
    }

    /// The request body for `model`, before `request_params`/`body_transform`. Empty
    /// `tools` ⇒ no `tools` key.
    pub fn body(&self, model: &str) -> Map<String, Value> {
        let mut body = Map::new();
        body.insert("model".into(), model.into());
        let max_tokens = self.max_tokens.filter(|&n| n > 0);
        // A draft's style is never Gemini (`Draft::new` drafts the OpenAI shape for it).
        match self.style {
            Style::OpenAi | Style::Gemini => {
                body.insert("messages".into(), self.messages.clone().into());
                if !self.tools.is_empty() {
                    body.insert("tools".into(), self.tools.clone().into());
                }
                if let Some(choice) = &self.tool_choice {
                    body.insert("tool_choice".into(), choice.clone());
                }
                if let Some(n) = max_tokens {
                    body.insert("max_tokens".into(), n.into());
                }
            }
            Style::Anthropic => {
                body.insert("max_tokens".into(), max_tokens.unwrap_or(4096).into());
                body.insert("messages".into(), self.messages.clone().into());
                if !self.system.is_empty() {
                    body.insert("system".into(), self.system.clone().into());
                }
                if !self.tools.is_empty() {
                    body.insert("tools".into(), self.tools.clone().into());
                }
                if let Some(choice) = &self.tool_choice {
                    body.insert("tool_choice".into(), choice.clone());
                }
            }
        }
        body
    }

    /// Reads the provider's decoded response into a [`TranslateResult`] for `model`.
    pub fn parse(&self, raw: Value, model: &str) -> TranslateResult {
        match self.style {
            Style::OpenAi | Style::Gemini => parse_openai(raw, model),
            Style::Anthropic => parse_anthropic(raw, model),
        }
    }
}

fn parse_openai(raw: Value, model: &str) -> TranslateResult {
    let usage = Usage::from_raw(Style::OpenAi, raw.get("usage").unwrap_or(&Value::Null));
    let choice = raw.get("choices").and_then(|c| c.get(0)).unwrap_or(&Value::Null);
    let message = choice.get("message").unwrap_or(&Value::Null);
    let tool_calls: Vec<_> = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|tc| tc.is_object())
        .map(|tc| {
            let function = tc.get("function").unwrap_or(&Value::Null);
            TranslatedToolCall {
                id: id_string(tc.get("id")),
                name: id_string(function.get("name")),
                arguments: args_string(function.get("arguments").unwrap_or(&Value::Null)),
            }
        })
        .collect();
    TranslateResult {
        text: content_text(message.get("content").unwrap_or(&Value::Null)),
        finish_reason: finish_reason_for(
            !tool_calls.is_empty(),
            choice.get("finish_reason").and_then(Value::as_str),
        ),
        tool_calls,
        usage,
        model: model.to_string(),
        raw: Some(raw),
    }
}

fn parse_anthropic(raw: Value, model: &str) -> TranslateResult {
    let usage = Usage::from_raw(Style::Anthropic, raw.get("usage").unwrap_or(&Value::Null));
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in raw.get("content").and_then(Value::as_array).into_iter().flatten() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(TranslatedToolCall {
                id: id_string(block.get("id")),
                name: id_string(block.get("name")),
                arguments: match block.get("input") {
                    Some(input @ Value::Object(_)) => input.to_string(),
                    _ => "{}".to_string(),
                },
            }),
            _ => {}
        }
    }
    TranslateResult {
        text,
        finish_reason: finish_reason_for(
            !tool_calls.is_empty(),
            raw.get("stop_reason").and_then(Value::as_str),
        ),
        tool_calls,
        usage,
        model: model.to_string(),
        raw: Some(raw),
    }
}

impl Client {
    /// Single-turn translation (SPEC §11): exactly one provider call for an OpenAI-shaped
    /// conversation, answered in OpenAI shape. Nothing executes — a `toolkit` on the request
    /// is only declared, tool hooks never fire, and there is no conversation state, so calls
    /// may run concurrently.
    ///
    /// The call shares the loop's infrastructure: retries and backoff, `request_params` and
    /// `body_transform`, the whole-call `timeout`, the `llm` metric event. `before_llm` (turn
    /// 0; may replace messages, tools and model, or abort) and `after_llm` fire exactly once.
    pub async fn translate(&self, request: TranslateRequest) -> Result<TranslateResult, ClientError> {
        let inner = &self.inner;
        if inner.provider.style == Style::Gemini {
            return Err(ClientError::Unsupported(
                "translate speaks the openai and anthropic styles; a gemini client cannot translate",
            ));
        }
        let mut draft = Draft::new(inner.provider.style, &request, inner.system_prompt.as_deref());
        let mut model = inner.model.clone();
        inner
            .hooks
            .apply_before_llm(0, &mut draft.messages, &mut draft.tools, &mut model)
            .await?;
        let provider = &inner.provider;
        let body = provider.encode(&draft.body(&model));
        let metrics = Sink {
            registry: &inner.registry,
            on_metric: inner.on_metric.as_ref(),
        };
        let cancel = request.cancel.clone().unwrap_or_default();
        let raw = guard(inner.timeout, &cancel, provider.complete(body, &model, metrics)).await?;
        if let Some(hook) = &inner.hooks.after_llm {
            hook(LlmResponse {
                response: raw.clone(),
                model: model.clone(),
                turn: 0,
            })
            .await;
        }
        Ok(draft.parse(raw, &model))
    }
}
