//! The Gemini dialect (issue 22): Google's `generateContent` wire.
//!
//! `POST {base}/models/{model}:generateContent` (`:streamGenerateContent?alt=sse` when
//! streaming) with `x-goog-api-key`. A body is `contents` (turns of `parts`), the system prompt
//! as `systemInstruction`, and the toolkit's `tools: [{functionDeclarations}]` (the toolkit's
//! own [`to_gemini`](crate::Toolkit::to_gemini) rendering). The model answers with
//! `candidates[0].content` — text and `functionCall` parts — and `usageMetadata`; each tool
//! result goes back as a `functionResponse` part, all of a turn's in one `user` turn.
//!
//! The transcript keeps these native shapes, as it does for the other two dialects.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use super::wire::{Call, Declarations, Turn, Usage, short};
use crate::content::{ContentPart, Media, MediaSource};
use crate::result::ToolResult;

/// A request body, keys in the order Google documents them.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    contents: Vec<Cow<'a, Value>>,
    #[serde(rename = "systemInstruction", skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a Declarations>,
}

impl<'a> Body<'a> {
    pub(crate) fn new(system: &str, contents: Vec<Cow<'a, Value>>, tools: &'a Declarations) -> Self {
        Body {
            contents,
            system_instruction: (!system.is_empty()).then(|| json!({"parts": [{"text": system}]})),
            tools: (!tools.is_empty()).then_some(tools),
        }
    }
}

/// The endpoint for `model` under `models_url` (`{base}/models`, its query kept).
pub(crate) fn endpoint(models_url: &str, model: &str, stream: bool) -> String {
    let model = model.strip_prefix("models/").unwrap_or(model);
    let method = if stream {
        "streamGenerateContent"
    } else {
        "generateContent"
    };
    let Ok(mut url) = url::Url::parse(models_url) else {
        return format!("{models_url}/{model}:{method}");
    };
    url.set_path(&format!("{}/{model}:{method}", url.path()));
    if stream {
        url.query_pairs_mut().append_pair("alt", "sse");
    }
    url.into()
}

/// `usageMetadata`: prompt, candidates (+ thoughts) and total token counts, and the prompt
/// tokens served from the cache.
pub(crate) fn usage(raw: &Value) -> Usage {
    let n = |k: &str| raw.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (p, c) = (
        n("promptTokenCount"),
        n("candidatesTokenCount") + n("thoughtsTokenCount"),
    );
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: match n("totalTokenCount") {
            0 => p + c,
            t => t,
        },
        cache_read_tokens: n("cachedContentTokenCount"),
        cache_creation_tokens: 0,
    }
}

/// A user turn: text, or parts (media inline as base64, or by URL).
pub(crate) fn user_message(content: Value) -> Value {
    let parts = match content {
        Value::String(text) => vec![json!({"text": text})],
        Value::Array(parts) => parts
            .into_iter()
            .map(|p| match serde_json::from_value::<ContentPart>(p.clone()) {
                Ok(part) => part_of(&part),
                Err(_) => p,
            })
            .collect(),
        other => vec![json!({"text": other.to_string()})],
    };
    json!({"role": "user", "parts": parts})
}

/// A canonical content part as a Gemini part.
pub(crate) fn part_of(part: &ContentPart) -> Value {
    let media = |m: &Media| match &m.source {
        MediaSource::Data(data) => json!({"inlineData": {"mimeType": m.mime_type, "data": data}}),
        MediaSource::Url(url) => json!({"fileData": {"mimeType": m.mime_type, "fileUri": url}}),
    };
    match part {
        ContentPart::Text { text } => json!({"text": text}),
        ContentPart::Image(m) | ContentPart::File(m) | ContentPart::Audio(m) => media(m),
    }
}

/// The `functionResponse` part for one tool result: `{"output": …}`, or `{"error": …}` for
/// a failure (Google's convention); the call's `id` echoed when the model sent one.
pub(crate) fn function_response(call: &Call, result: &ToolResult) -> Value {
    let key = if result.is_error { "error" } else { "output" };
    let mut response = json!({"name": call.name, "response": {key: result.output}});
    if !call.id.is_empty() {
        response["id"] = call.id.clone().into();
    }
    json!({"functionResponse": response})
}

/// The `user` turn carrying a turn's function responses.
pub(crate) fn results_message(parts: Vec<Value>) -> Value {
    json!({"role": "user", "parts": parts})
}

fn call_of(part: &Value) -> Option<Call> {
    let fc = part.get("functionCall")?;
    let args = match &fc["args"] {
        Value::Null => "{}".to_owned(),
        v => v.to_string(),
    };
    Some(Call::new(
        fc["id"].as_str().unwrap_or_default().to_owned(),
        fc["name"].as_str().unwrap_or_default().to_owned(),
        args,
    ))
}

/// The text of a model turn's parts (thoughts left out).
fn text_of(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p["thought"] != true)
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// A non-streamed response: the model turn moved out of `data` (copied when `keep`).
pub(crate) fn parse_response(data: &mut Value, keep: bool) -> Result<Turn, String> {
    let usage = data.get("usageMetadata").map(usage).unwrap_or_default();
    let Some(candidate) = data.pointer_mut("/candidates/0") else {
        return Err(format!("LLM response has no candidates[0]: {}", short(data)));
    };
    // A candidate stopped before any content (SAFETY, MAX_TOKENS) is an empty model turn.
    let message = match candidate.get_mut("content") {
        Some(c) if c.is_object() => {
            let mut m = if keep { c.clone() } else { c.take() };
            m["role"] = "model".into();
            if !m["parts"].is_array() {
                m["parts"] = json!([]);
            }
            m
        }
        _ => json!({"role": "model", "parts": []}),
    };
    let parts = message["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
    Ok(Turn {
        text: text_of(parts),
        calls: parts.iter().filter_map(call_of).collect(),
        message,
        usage,
    })
}

/// Folds the chunks of a streamed answer into one turn: text concatenated (each piece a
/// delta), function calls kept whole and in order, the last `usageMetadata` (cumulative).
#[derive(Default)]
pub(crate) struct StreamTurn {
    text: String,
    calls: Vec<Value>,
    usage: Usage,
}

impl StreamTurn {
    /// Take one chunk; returns its text, for the run's text deltas.
    pub(crate) fn push(&mut self, chunk: &Value) -> String {
        if let Some(u) = chunk.get("usageMetadata") {
            self.usage = usage(u);
        }
        let parts = chunk
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        self.calls
            .extend(parts.iter().filter(|p| p.get("functionCall").is_some()).cloned());
        let text = text_of(parts);
        self.text.push_str(&text);
        text
    }

    pub(crate) fn finish(self) -> Turn {
        let mut parts = Vec::with_capacity(self.calls.len() + 1);
        if !self.text.is_empty() {
            parts.push(json!({"text": self.text}));
        }
        let calls = self.calls.iter().filter_map(call_of).collect();
        parts.extend(self.calls);
        Turn {
            message: json!({"role": "model", "parts": parts}),
            text: self.text,
            calls,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_keep_the_query_and_strip_a_models_prefix() {
        let base = "https://generativelanguage.googleapis.com/v1beta/models";
        assert_eq!(
            endpoint(base, "gemini-2.5-flash", false),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            endpoint("http://h/v1beta/models?key=K", "models/g", true),
            "http://h/v1beta/models/g:streamGenerateContent?key=K&alt=sse"
        );
    }

    #[test]
    fn a_response_with_text_calls_and_usage() {
        let mut data = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "thinking", "thought": true}, {"text": "Let me check."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}},
            {"functionCall": {"id": "fc2", "name": "add", "args": {"a": 1}}}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 4, "thoughtsTokenCount": 2,
                              "totalTokenCount": 16, "cachedContentTokenCount": 6}});
        let t = parse_response(&mut data, false).unwrap();
        assert_eq!(t.text, "Let me check.");
        let calls: Vec<_> = t
            .calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.raw.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("", "get_weather", r#"{"city":"Oslo"}"#),
                ("fc2", "add", r#"{"a":1}"#)
            ]
        );
        assert_eq!(
            (
                t.usage.prompt_tokens,
                t.usage.completion_tokens,
                t.usage.total_tokens
            ),
            (10, 6, 16)
        );
        assert_eq!(t.usage.cache_read_tokens, 6);
        let mut blocked = json!({"candidates": [{"finishReason": "SAFETY"}]});
        assert_eq!(
            parse_response(&mut blocked, false).unwrap().message,
            json!({"role": "model", "parts": []})
        );
        assert_eq!(
            parse_response(&mut json!({"promptFeedback": {"blockReason": "OTHER"}}), false).unwrap_err(),
            r#"LLM response has no candidates[0]: {"promptFeedback":{"blockReason":"OTHER"}}"#
        );
    }

    #[test]
    fn results_and_user_parts() {
        let call = Call::new(String::new(), "add".into(), "{}".into());
        assert_eq!(
            function_response(&call, &ToolResult::failure("bad")).to_string(),
            r#"{"functionResponse":{"name":"add","response":{"error":"bad"}}}"#
        );
        let call = Call::new("fc1".into(), "add".into(), "{}".into());
        assert_eq!(
            function_response(&call, &ToolResult::success("5")).to_string(),
            r#"{"functionResponse":{"name":"add","response":{"output":"5"},"id":"fc1"}}"#
        );
        let png = serde_json::to_value(ContentPart::image_bytes(vec![1, 2], "image/png")).unwrap();
        assert_eq!(
            user_message(json!([{"type": "text", "text": "see"}, png])).to_string(),
            r#"{"role":"user","parts":[{"text":"see"},{"inlineData":{"mimeType":"image/png","data":"AQI="}}]}"#
        );
    }
}
