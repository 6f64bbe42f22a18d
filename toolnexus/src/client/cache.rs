//! Prompt caching (issue 22): mark the stable prefix of every request so the provider can
//! reuse it. Anthropic gets `cache_control` breakpoints after the tools, after the system
//! prompt and on the latest message; OpenAI gets a `prompt_cache_key`; Gemini, which caches
//! on its own, gets nothing (its cached tokens still reach the usage). Opt-in: a client
//! without [`PromptCache`] sends exactly the bytes it always did.
//!
//! The marks go on the wire body only, never into the transcript, so every request carries
//! the same three breakpoints however long the conversation grows (Anthropic allows four).

use serde_json::{Map, Value, json};

use super::wire::Style;

/// Prompt-caching settings, given to
/// [`ClientBuilder::prompt_cache`](super::ClientBuilder::prompt_cache).
///
/// ```
/// use toolnexus::client::PromptCache;
///
/// // Anthropic breakpoints (5-minute lifetime) and, for OpenAI, a routing key.
/// let cache = PromptCache::new().key("user-42");
/// assert_eq!(cache.key_str(), Some("user-42"));
/// // Anthropic's one-hour lifetime.
/// let _long = PromptCache::new().long_ttl(true);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptCache {
    key: Option<String>,
    long_ttl: bool,
}

impl PromptCache {
    /// Caching on: Anthropic breakpoints; OpenAI sends nothing until a [`key`](Self::key).
    pub fn new() -> Self {
        Self::default()
    }

    /// OpenAI's `prompt_cache_key`: requests sharing a key are routed to share a cache
    /// (one per user or per conversation).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into()).filter(|k| !k.is_empty());
        self
    }

    /// Anthropic's one-hour cache lifetime (`"ttl": "1h"`) instead of the default five minutes.
    pub fn long_ttl(mut self, on: bool) -> Self {
        self.long_ttl = on;
        self
    }

    /// The OpenAI key, when set.
    pub fn key_str(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Mark `body` (a request body of `style`) for caching.
    pub(crate) fn apply(&self, style: Style, body: &mut Map<String, Value>) {
        match style {
            Style::OpenAi => {
                if let Some(key) = &self.key {
                    body.insert("prompt_cache_key".into(), key.as_str().into());
                }
            }
            // Gemini caches implicitly; its explicit `cachedContents` are out of scope.
            Style::Gemini => {}
            Style::Anthropic => {
                let mark = if self.long_ttl {
                    json!({"type": "ephemeral", "ttl": "1h"})
                } else {
                    json!({"type": "ephemeral"})
                };
                if let Some(Value::Array(tools)) = body.get_mut("tools") {
                    mark_last(tools, &mark);
                }
                if let Some(system) = body.get_mut("system") {
                    mark_content(system, &mark);
                }
                if let Some(last) = body
                    .get_mut("messages")
                    .and_then(Value::as_array_mut)
                    .and_then(|m| m.last_mut())
                    && let Some(content) = last.get_mut("content")
                {
                    mark_content(content, &mark);
                }
            }
        }
    }
}

/// A string becomes one text block carrying the mark; a list of blocks marks its last.
fn mark_content(content: &mut Value, mark: &Value) {
    match content {
        Value::String(s) if !s.is_empty() => {
            *content = json!([{"type": "text", "text": s, "cache_control": mark}]);
        }
        Value::Array(blocks) => mark_last(blocks, mark),
        _ => {}
    }
}

fn mark_last(list: &mut [Value], mark: &Value) {
    if let Some(Value::Object(last)) = list.last_mut() {
        last.insert("cache_control".into(), mark.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(cache: &PromptCache, style: Style, body: Value) -> String {
        let Value::Object(mut map) = body else {
            unreachable!()
        };
        cache.apply(style, &mut map);
        Value::Object(map).to_string()
    }

    #[test]
    fn anthropic_breakpoints_after_tools_system_and_latest_message() {
        let body = json!({"model": "m", "system": "Be brief.", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}],
            "tools": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(
            applied(&PromptCache::new(), Style::Anthropic, body),
            r#"{"model":"m","system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","cache_control":{"type":"ephemeral"}}]}],"tools":[{"name":"a"},{"name":"b","cache_control":{"type":"ephemeral"}}]}"#
        );
        // An empty system prompt stays as it is; the mark can carry the long lifetime.
        let body = json!({"system": "", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(
            applied(&PromptCache::new().long_ttl(true), Style::Anthropic, body),
            r#"{"system":"","messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}"#
        );
    }

    #[test]
    fn openai_gets_the_key_only() {
        let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(
            applied(&PromptCache::new(), Style::OpenAi, body.clone()),
            r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#
        );
        assert_eq!(
            applied(&PromptCache::new().key("u1"), Style::OpenAi, body),
            r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"prompt_cache_key":"u1"}"#
        );
    }
}
