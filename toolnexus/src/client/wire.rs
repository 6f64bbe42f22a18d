//! The two provider dialects (SPEC §8): endpoint and auth, request bodies, response parsing,
//! tool-result shapes, and the last-moment encoding of content parts.
//!
//! The transcript keeps each provider's native message shapes (what the model sent comes
//! back verbatim) plus canonical content parts under a `parts` key; `PartEncoder::wire_messages` turns
//! those parts into the provider's blocks right before a request is sent.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::gemini;
use super::keys::Redactor;
use crate::content::{ContentPart, UnsupportedPart};
use crate::result::ToolResult;
use crate::toolkit::Toolkit;

/// Which wire dialect a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`, Bearer auth) — also
    /// OpenRouter, vLLM, Ollama and most gateways.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`, `x-api-key`).
    Anthropic,
    /// Google Gemini `generateContent` (`POST {base}/models/{model}:generateContent`,
    /// `x-goog-api-key`), e.g. base `https://generativelanguage.googleapis.com/v1beta`.
    Gemini,
}

impl Style {
    /// `"openai"`, `"anthropic"` or `"gemini"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Style::OpenAi => "openai",
            Style::Anthropic => "anthropic",
            Style::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Style {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `"openai"`, `"anthropic"` or `"gemini"`, as a CLI flag or a config file spells the style.
///
/// ```
/// use toolnexus::client::Style;
///
/// assert_eq!("anthropic".parse::<Style>().unwrap(), Style::Anthropic);
/// assert_eq!("gemini".parse::<Style>().unwrap(), Style::Gemini);
/// let err = "cohere".parse::<Style>().unwrap_err();
/// assert_eq!(err.to_string(), r#"unknown client style "cohere" (expected "openai", "anthropic" or "gemini")"#);
/// ```
impl FromStr for Style {
    type Err = UnknownStyle;
    fn from_str(s: &str) -> Result<Self, UnknownStyle> {
        match s {
            "openai" => Ok(Style::OpenAi),
            "anthropic" => Ok(Style::Anthropic),
            "gemini" => Ok(Style::Gemini),
            other => Err(UnknownStyle(other.to_owned())),
        }
    }
}

/// A style name that is not `openai`, `anthropic` or `gemini` (the name as given).
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown client style \"{0}\" (expected \"openai\", \"anthropic\" or \"gemini\")")]
pub struct UnknownStyle(pub String);

crate::debug_as_display!(UnknownStyle);

/// Token usage, summed across turns in a `RunResult`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Prompt tokens read from the provider's prompt cache (Anthropic
    /// `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens`). Serialized
    /// only when non-zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache (Anthropic
    /// `cache_creation_input_tokens`). Serialized only when non-zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// One response's `usage` object: OpenAI `prompt/completion/total_tokens`, Anthropic
    /// `input_tokens`→prompt, `output_tokens`→completion (total = their sum); the cache
    /// counts of both dialects.
    pub fn from_raw(style: Style, raw: &Value) -> Usage {
        let n = |k: &str| raw.get(k).and_then(Value::as_u64).unwrap_or(0);
        match style {
            Style::OpenAi => {
                let (p, c) = (n("prompt_tokens"), n("completion_tokens"));
                let total = match n("total_tokens") {
                    0 => p + c,
                    t => t,
                };
                let cached = raw
                    .pointer("/prompt_tokens_details/cached_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                Usage {
                    prompt_tokens: p,
                    completion_tokens: c,
                    total_tokens: total,
                    cache_read_tokens: cached,
                    cache_creation_tokens: 0,
                }
            }
            Style::Anthropic => {
                let (p, c) = (n("input_tokens"), n("output_tokens"));
                Usage {
                    prompt_tokens: p,
                    completion_tokens: c,
                    total_tokens: p + c,
                    cache_read_tokens: n("cache_read_input_tokens"),
                    cache_creation_tokens: n("cache_creation_input_tokens"),
                }
            }
            Style::Gemini => gemini::usage(raw),
        }
    }

    /// The usage of a whole response body of `style` (`usage`, Gemini `usageMetadata`).
    pub(crate) fn of_response(style: Style, body: &Value) -> Usage {
        let key = if style == Style::Gemini {
            "usageMetadata"
        } else {
            "usage"
        };
        body.get(key)
            .map(|u| Usage::from_raw(style, u))
            .unwrap_or_default()
    }

    /// Add `other` into `self`.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
    }
}

/// The endpoint for a style: `/chat/completions`, or `/messages` with `/v1` appended to the
/// base path only when it does not already end in it. The path is appended to the base
/// URL's path; its query (`?key=…`) stays a query.
pub(crate) fn endpoint(style: Style, base: &url::Url) -> String {
    let mut url = base.clone();
    let path = base.path().trim_end_matches('/');
    let tail = match style {
        Style::OpenAi => "/chat/completions",
        Style::Anthropic if path.ends_with("/v1") => "/messages",
        Style::Anthropic => "/v1/messages",
        // The model and method follow per request (`gemini::endpoint`).
        Style::Gemini => "/models",
    };
    url.set_path(&format!("{path}{tail}"));
    url.into()
}

/// Auth + content-type headers, then the host's extra headers (which win by coming last).
pub(crate) fn headers(style: Style, api_key: &str, extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut h = match style {
        Style::OpenAi => vec![("authorization".to_owned(), format!("Bearer {api_key}"))],
        Style::Anthropic => vec![
            ("x-api-key".to_owned(), api_key.to_owned()),
            ("anthropic-version".to_owned(), "2023-06-01".to_owned()),
        ],
        Style::Gemini => vec![("x-goog-api-key".to_owned(), api_key.to_owned())],
    };
    h.push(("content-type".to_owned(), "application/json".to_owned()));
    h.extend(extra.iter().cloned());
    h
}

/// The tool declarations one turn sends: the toolkit's rendering (JSON text made once per
/// tool set), or the list a `before_llm` hook put in its place.
#[derive(Clone, Debug)]
pub(crate) enum Declarations {
    Rendered(Arc<RawValue>),
    Listed(Vec<Value>),
}

impl Declarations {
    pub(crate) fn of(toolkit: Option<&Toolkit>, style: Style) -> Self {
        match (toolkit, style) {
            (Some(tk), _) if tk.is_empty() => Self::Listed(Vec::new()),
            (Some(tk), Style::OpenAi) => Self::Rendered(tk.to_openai_json()),
            (Some(tk), Style::Anthropic) => Self::Rendered(tk.to_anthropic_json()),
            (Some(tk), Style::Gemini) => Self::Listed(tk.to_gemini()),
            (None, _) => Self::Listed(Vec::new()),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Self::Rendered(_) => false,
            Self::Listed(list) => list.is_empty(),
        }
    }

    /// The declarations as values, for a hook to read.
    pub(crate) fn to_values(&self) -> Vec<Value> {
        match self {
            Self::Rendered(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
            Self::Listed(list) => list.clone(),
        }
    }
}

impl Serialize for Declarations {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Rendered(raw) => raw.serialize(s),
            Self::Listed(list) => list.serialize(s),
        }
    }
}

/// A request body of any style; it serializes straight to bytes, borrowing the transcript.
pub(crate) enum Body<'a> {
    Chat(ChatBody<'a>),
    Gemini(gemini::Body<'a>),
}

impl Serialize for Body<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Chat(b) => b.serialize(s),
            Self::Gemini(b) => b.serialize(s),
        }
    }
}

impl<'a> Body<'a> {
    pub(crate) fn new(
        style: Style,
        model: &'a str,
        system: &'a str,
        messages: Vec<Cow<'a, Value>>,
        tools: &'a Declarations,
        stream: bool,
    ) -> Self {
        match style {
            Style::Gemini => Self::Gemini(gemini::Body::new(system, messages, tools)),
            _ => Self::Chat(ChatBody::new(style, model, system, messages, tools, stream)),
        }
    }
}

/// An OpenAI or Anthropic body, key order as the other ports send it: OpenAI `model,
/// messages, stream, stream_options, tools, tool_choice`; Anthropic `model, max_tokens,
/// system, messages, stream, tools`. An empty tool list omits `tools` (and `tool_choice`)
/// entirely — many providers reject `[]`.
#[derive(Serialize)]
pub(crate) struct ChatBody<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: Vec<Cow<'a, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a Declarations>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl<'a> ChatBody<'a> {
    fn new(
        style: Style,
        model: &'a str,
        system: &'a str,
        messages: Vec<Cow<'a, Value>>,
        tools: &'a Declarations,
        stream: bool,
    ) -> Self {
        let tools = (!tools.is_empty()).then_some(tools);
        let anthropic = style == Style::Anthropic;
        ChatBody {
            model,
            max_tokens: anthropic.then_some(4096),
            system: anthropic.then_some(system),
            messages,
            stream: stream.then_some(true),
            stream_options: (stream && !anthropic).then_some(StreamOptions { include_usage: true }),
            tool_choice: tools.filter(|_| !anthropic).map(|_| "auto"),
            tools,
        }
    }
}

/// One tool call the model asked for.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    /// The parsed arguments object, or why they could not be read.
    pub args: Result<Value, String>,
    /// The raw arguments JSON as the model sent it.
    pub raw: String,
}

impl Call {
    pub(crate) fn new(id: String, name: String, raw: String) -> Call {
        let args = parse_args(&name, &raw);
        Call { id, name, args, raw }
    }

    /// The arguments as recorded/forwarded: the parsed object, `{}` when unreadable.
    pub(crate) fn args_or_empty(&self) -> Value {
        self.args.clone().unwrap_or_else(|_| json!({}))
    }
}

/// Malformed arguments become a message the model can act on, never a crash.
fn parse_args(name: &str, raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(format!(
            "invalid arguments for tool \"{name}\": expected a JSON object, got {raw}"
        )),
        Err(e) => Err(format!(
            "invalid arguments for tool \"{name}\": {e}; call it again with a JSON object matching its schema"
        )),
    }
}

/// One assistant turn, parsed.
#[derive(Clone, Debug)]
pub(crate) struct Turn {
    /// The assistant message as it enters the transcript.
    pub message: Value,
    pub text: String,
    pub calls: Vec<Call>,
    pub usage: Usage,
}

/// Parse a non-streaming response body. The assistant message is moved out of `data`,
/// or copied when `keep` (an `after_llm` hook reads the whole response afterwards).
pub(crate) fn parse_response(style: Style, data: &mut Value, keep: bool) -> Result<Turn, String> {
    let usage = Usage::of_response(style, data);
    let out = |v: &mut Value| if keep { v.clone() } else { v.take() };
    match style {
        Style::OpenAi => {
            let message = match data.pointer_mut("/choices/0/message") {
                Some(m) if m.is_object() => out(m),
                _ => return Err(format!("LLM response has no choices[0].message: {}", short(data))),
            };
            let text = message
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let calls = message
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(|calls| calls.iter().map(openai_call).collect())
                .unwrap_or_default();
            Ok(Turn {
                message,
                text,
                calls,
                usage,
            })
        }
        Style::Anthropic => {
            let content = match data.get_mut("content") {
                Some(blocks @ Value::Array(_)) => out(blocks),
                None | Some(Value::Null) => Value::Array(Vec::new()),
                Some(_) => return Err(format!("LLM response content is not an array: {}", short(data))),
            };
            let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
            let text = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            let calls = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(anthropic_call)
                .collect();
            Ok(Turn {
                message: json!({"role": "assistant", "content": content}),
                text,
                calls,
                usage,
            })
        }
        Style::Gemini => gemini::parse_response(data, keep),
    }
}

fn openai_call(call: &Value) -> Call {
    let raw = match &call["function"]["arguments"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    Call::new(
        call["id"].as_str().unwrap_or_default().to_owned(),
        call["function"]["name"].as_str().unwrap_or_default().to_owned(),
        raw,
    )
}

pub(crate) fn anthropic_call(block: &Value) -> Call {
    let input = match &block["input"] {
        Value::Null => json!({}),
        v => v.clone(),
    };
    Call::new(
        block["id"].as_str().unwrap_or_default().to_owned(),
        block["name"].as_str().unwrap_or_default().to_owned(),
        input.to_string(),
    )
}

/// The OpenAI transcript message for one tool result. `parts` (canonical) and `name` ride
/// along only when the tool returned content parts; text-only results stay byte-identical.
pub(crate) fn tool_message(call_id: &str, name: &str, result: &ToolResult) -> Value {
    let mut msg = json!({"role": "tool", "tool_call_id": call_id, "content": result.output});
    if !result.parts.is_empty() {
        msg["parts"] = serde_json::to_value(&result.parts).unwrap_or_default();
        msg["name"] = name.into();
    }
    msg
}

/// The Anthropic `tool_result` block for one tool result (`parts` as for [`tool_message`]).
pub(crate) fn tool_result_block(use_id: &str, result: &ToolResult) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": use_id,
        "content": result.output,
        "is_error": result.is_error,
    });
    if !result.parts.is_empty() {
        block["parts"] = serde_json::to_value(&result.parts).unwrap_or_default();
    }
    block
}

/// The `user` turn carrying one turn's tool results (Anthropic `tool_result` blocks, Gemini
/// `functionResponse` parts; OpenAI results are messages of their own).
pub(crate) fn results_message(style: Style, blocks: Vec<Value>) -> Value {
    match style {
        Style::Gemini => gemini::results_message(blocks),
        _ => json!({"role": "user", "content": blocks}),
    }
}

/// Whether a content block is rewritten on the way out: a tool result carrying parts, or
/// a canonical media part. Messages without such blocks go out as they are, not cloned.
fn needs_encoding(b: &Value) -> bool {
    b.get("type").and_then(Value::as_str).is_some_and(|t| match t {
        "tool_result" => b.get("parts").is_some(),
        "image" | "file" | "audio" => b.get("mimeType").is_some(),
        _ => false,
    })
}

/// A canonical media part inside a content list (`{"type":"image","mimeType":…}`), as
/// opposed to a provider block that is already encoded.
fn canonical_part(v: &Value) -> Option<ContentPart> {
    let kind = v.get("type")?.as_str()?;
    if !matches!(kind, "image" | "file" | "audio") || v.get("mimeType").is_none() {
        return None;
    }
    serde_json::from_value(v.clone()).ok()
}

/// Encodes canonical parts into provider blocks. A part the host attached (a user prompt)
/// that the style cannot carry is an error before any HTTP call; one a tool produced
/// degrades to a text placeholder and warns once, so a remote tool cannot fail the run.
pub(crate) struct PartEncoder {
    warned: Mutex<HashSet<String>>,
}

impl PartEncoder {
    pub(crate) fn new() -> Self {
        Self {
            warned: Mutex::new(HashSet::new()),
        }
    }

    fn encode(&self, style: Style, part: &ContentPart, attached: bool) -> Result<Value, UnsupportedPart> {
        let block = match style {
            Style::OpenAi => part.to_openai_block(),
            Style::Anthropic => part.to_anthropic_block(),
            Style::Gemini => Ok(gemini::part_of(part)),
        };
        match block {
            Ok(b) => Ok(b),
            Err(e) if attached => Err(e),
            Err(e) => {
                let key = format!("{}:{}", e.kind, e.style);
                if self.warned.lock().map(|mut w| w.insert(key)).unwrap_or(false) {
                    tracing::warn!("{e} — sent as a text placeholder");
                }
                Ok(json!({"type": "text", "text": part.placeholder()}))
            }
        }
    }

    fn encode_list(&self, style: Style, parts: &Value) -> Result<Vec<Value>, UnsupportedPart> {
        let parts: Vec<ContentPart> = serde_json::from_value(parts.clone()).unwrap_or_default();
        parts.iter().map(|p| self.encode(style, p, false)).collect()
    }

    /// Transcript → the provider's message list. OpenAI rejects media in a `tool` message,
    /// so there every non-text part of one turn's tool results is relocated, in call order,
    /// into one synthetic `user` message right after the last tool message; that message
    /// never enters the transcript.
    pub(crate) fn wire_messages<'m>(
        &self,
        style: Style,
        messages: &'m [Value],
    ) -> Result<Vec<Cow<'m, Value>>, UnsupportedPart> {
        let mut out = Vec::with_capacity(messages.len());
        let mut relocated: Vec<Value> = Vec::new();
        let flush = |out: &mut Vec<Cow<'m, Value>>, relocated: &mut Vec<Value>| {
            if !relocated.is_empty() {
                out.push(Cow::Owned(
                    json!({"role": "user", "content": std::mem::take(relocated)}),
                ));
            }
        };
        for m in messages {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            if role == "tool" {
                let Some(obj) = m.as_object() else {
                    out.push(Cow::Borrowed(m));
                    continue;
                };
                let mut msg = obj.clone();
                msg.remove("name");
                let parts = msg.remove("parts");
                if let Some(parts) = parts.filter(|p| p.as_array().is_some_and(|a| !a.is_empty())) {
                    let all: Vec<ContentPart> = serde_json::from_value(parts).unwrap_or_default();
                    let (texts, media): (Vec<_>, Vec<_>) =
                        all.iter().partition(|p| matches!(p, ContentPart::Text { .. }));
                    if !texts.is_empty() {
                        let mut blocks =
                            vec![json!({"type": "text", "text": m["content"].as_str().unwrap_or("")})];
                        for p in texts {
                            blocks.push(self.encode(style, p, false)?);
                        }
                        msg.insert("content".into(), blocks.into());
                    }
                    for p in media {
                        let label = format!(
                            "Output of tool {} ({}):",
                            m["name"].as_str().unwrap_or(""),
                            m["tool_call_id"].as_str().unwrap_or("")
                        );
                        relocated.push(json!({"type": "text", "text": label}));
                        relocated.push(self.encode(style, p, false)?);
                    }
                }
                out.push(Cow::Owned(Value::Object(msg)));
                continue;
            }
            flush(&mut out, &mut relocated);
            match m.get("content") {
                Some(Value::Array(content)) if content.iter().any(needs_encoding) => {
                    let attached = role == "user";
                    let mut blocks = Vec::with_capacity(content.len());
                    for b in content {
                        if b["type"] == "tool_result" && b.get("parts").is_some() {
                            let mut nb = b.as_object().cloned().unwrap_or_default();
                            let parts = nb.remove("parts").unwrap_or_default();
                            let mut inner =
                                vec![json!({"type": "text", "text": b["content"].as_str().unwrap_or("")})];
                            inner.extend(self.encode_list(style, &parts)?);
                            nb.insert("content".into(), inner.into());
                            blocks.push(Value::Object(nb));
                        } else if let Some(part) = canonical_part(b) {
                            blocks.push(self.encode(style, &part, attached)?);
                        } else {
                            blocks.push(b.clone());
                        }
                    }
                    let mut msg = m.clone();
                    msg["content"] = blocks.into();
                    out.push(Cow::Owned(msg));
                }
                _ => out.push(Cow::Borrowed(m)),
            }
        }
        flush(&mut out, &mut relocated);
        Ok(out)
    }
}

/// The provider's error text as it may be shown: the JSON `error.message` when there is
/// one, every run of a secret redacted should a gateway reflect it, capped at 200 chars.
pub(crate) fn provider_message(body: &[u8], redactor: &Redactor) -> String {
    let text = String::from_utf8_lossy(body);
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    let msg = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error").filter(|e| e.is_string()))
        })
        .and_then(Value::as_str)
        .unwrap_or_else(|| text.trim());
    // Redacted before the cut, so no secret survives split across the edge.
    let msg = redactor.redact(msg);
    if msg.chars().count() > 200 {
        let cut: String = msg.chars().take(200).collect();
        format!("{cut}…")
    } else {
        msg
    }
}

pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{ContentPart, MediaKind};

    #[test]
    fn endpoints_append_v1_only_when_absent_and_keep_the_query() {
        let at = |style, base: &str| endpoint(style, &url::Url::parse(base).unwrap());
        assert_eq!(
            at(Style::Anthropic, "https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(at(Style::Anthropic, "http://h/v1/"), "http://h/v1/messages");
        assert_eq!(
            at(Style::OpenAi, "http://h/api/v1/"),
            "http://h/api/v1/chat/completions"
        );
        assert_eq!(
            at(Style::OpenAi, "http://h/v1?key=SECRET"),
            "http://h/v1/chat/completions?key=SECRET"
        );
        assert_eq!(
            at(Style::Anthropic, "http://h/?key=S&x=1"),
            "http://h/v1/messages?key=S&x=1"
        );
    }

    #[test]
    fn malformed_arguments_are_readable_errors() {
        let c = Call::new("c1".into(), "add".into(), "{\"a\":".into());
        assert!(
            c.args
                .unwrap_err()
                .starts_with("invalid arguments for tool \"add\": EOF")
        );
        let c = Call::new("c1".into(), "add".into(), "[1]".into());
        assert_eq!(
            c.args.unwrap_err(),
            "invalid arguments for tool \"add\": expected a JSON object, got [1]"
        );
        assert_eq!(
            Call::new("c".into(), "n".into(), " ".into()).args.unwrap(),
            json!({})
        );
    }

    #[test]
    fn tool_parts_relocate_on_openai_and_nest_on_anthropic() {
        let img = ContentPart::from_bytes(MediaKind::Image, b"PNG", "image/png");
        let r = ToolResult::success("chart").with_parts([img]);
        let enc = PartEncoder::new();
        let msgs = vec![tool_message("c1", "plot", &r)];
        let wire = enc.wire_messages(Style::OpenAi, &msgs).unwrap();
        assert_eq!(
            serde_json::to_string(&wire).unwrap(),
            r#"[{"role":"tool","tool_call_id":"c1","content":"chart"},{"role":"user","content":[{"type":"text","text":"Output of tool plot (c1):"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5H"}}]}]"#
        );
        let msgs = vec![json!({"role": "user", "content": [tool_result_block("t1", &r)]})];
        let wire = enc.wire_messages(Style::Anthropic, &msgs).unwrap();
        assert_eq!(
            serde_json::to_string(&wire).unwrap(),
            r#"[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"chart"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"UE5H"}}],"is_error":false}]}]"#
        );
    }

    #[test]
    fn unsupported_tool_part_degrades_but_attached_part_errors() {
        let audio = ContentPart::from_bytes(MediaKind::Audio, b"ID3", "audio/mpeg");
        let enc = PartEncoder::new();
        let r = ToolResult::success("clip").with_parts([audio.clone()]);
        let msgs = vec![json!({"role": "user", "content": [tool_result_block("t1", &r)]})];
        let wire = enc.wire_messages(Style::Anthropic, &msgs).unwrap();
        assert_eq!(
            wire[0]["content"][0]["content"][1]["text"],
            "[unsupported audio part (audio/mpeg, 3 bytes)]"
        );
        let attached = vec![json!({"role": "user", "content": [serde_json::to_value(&audio).unwrap()]})];
        assert!(enc.wire_messages(Style::Anthropic, &attached).is_err());
    }

    #[test]
    fn provider_message_prefers_error_message_and_redacts_the_key() {
        let base = url::Url::parse("http://h").unwrap();
        let redactor = Redactor::new("sk-secret-123", &base);
        let body = br#"{"error":{"message":"bad key sk-secret-123","type":"auth"}}"#;
        assert_eq!(provider_message(body, &redactor), "bad key «redacted»");
        assert_eq!(
            provider_message(br#"{"message":"ends secret-12"}"#, &redactor),
            "ends «redacted»"
        );
        assert_eq!(provider_message(b" upstream down ", &redactor), "upstream down");
    }
}
