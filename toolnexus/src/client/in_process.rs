//! In-process models (SPEC §8 "In-process models"): a host `generate` function behind the
//! same transport seam, so the loop, hooks, metrics and suspension behave identically.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::transport::{self, HttpResponse, HttpTransport, TransportError};
use super::wire::{Style, Usage};
use super::{Client, ClientBuilder};

/// Never dialled: `.invalid` is reserved (RFC 2606) so it can never resolve.
pub(crate) const BASE_URL: &str = "http://in-process.invalid/v1";

/// What `generate` receives: OpenAI-shaped messages and tool declarations.
#[derive(Clone, Debug)]
pub struct GenerateRequest {
    /// The transcript (OpenAI shapes).
    pub messages: Vec<Value>,
    /// Tool declarations (OpenAI shape); empty when none.
    pub tools: Vec<Value>,
    /// The model id.
    pub model: String,
    /// The whole body the client assembled.
    pub body: Value,
}

/// One tool call a `generate` asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedCall {
    /// Call id (`call_<index>` when absent).
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments: a JSON string, or any value (encoded for you).
    pub arguments: Value,
}

/// One assistant message from `generate`: text, or tool calls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generation {
    /// The answer text (used when there are no tool calls).
    pub content: String,
    /// Tool calls; non-empty ⇒ `finish_reason: tool_calls`.
    pub tool_calls: Vec<GeneratedCall>,
    /// Token usage, when the model reports it.
    pub usage: Option<Usage>,
}

impl Generation {
    /// A final text answer.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            ..Self::default()
        }
    }

    /// A request for tool calls.
    pub fn calls(calls: Vec<GeneratedCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::default()
        }
    }
}

/// The host model: a failure (`Err(message)`) is final — there is no wire to retry.
pub type Generate =
    Arc<dyn Fn(GenerateRequest) -> BoxFuture<'static, Result<Generation, String>> + Send + Sync>;

impl Client {
    /// A client around a host `generate` function instead of a wire: OpenAI-shaped
    /// messages, no API key, failures final (retries default to 0), streaming refused.
    /// Returns the builder so every other option can still be set.
    ///
    /// ```
    /// use toolnexus::client::{Client, Generation};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let client = Client::in_process("local-model", |req| async move {
    ///     Ok(Generation::text(format!("{} messages seen", req.messages.len())))
    /// })
    /// .build()
    /// .unwrap();
    /// let r = client.run("hi", &toolnexus::Toolkit::default()).await.unwrap();
    /// assert_eq!(r.text, "1 messages seen");
    /// # });
    /// ```
    pub fn in_process<F, Fut>(model: impl Into<String>, generate: F) -> ClientBuilder
    where
        F: Fn(GenerateRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Generation, String>> + Send + 'static,
    {
        let generate: Generate = Arc::new(move |req| Box::pin(generate(req)));
        let mut b = Client::builder()
            .base_url(BASE_URL)
            .style(Style::OpenAi)
            .model(model)
            .api_key("in-process")
            .retries(0)
            .transport(transport(generate));
        b.in_process = true;
        b
    }
}

/// The transport that answers every request by calling `generate` and building the
/// `choices` envelope around its answer.
pub(crate) fn transport(generate: Generate) -> Arc<dyn HttpTransport> {
    transport::from_fn(move |req| {
        let generate = generate.clone();
        async move {
            let body = req.json();
            let request = GenerateRequest {
                messages: body["messages"].as_array().cloned().unwrap_or_default(),
                tools: body["tools"].as_array().cloned().unwrap_or_default(),
                model: body["model"].as_str().unwrap_or("").to_owned(),
                body: body.clone(),
            };
            let generation = generate(request)
                .await
                .map_err(|e| TransportError::fatal(format!("generate failed: {e}")))?;
            Ok(HttpResponse::json(&envelope(generation)))
        }
    })
}

fn envelope(g: Generation) -> Value {
    let (message, finish) = if g.tool_calls.is_empty() {
        (json!({"role": "assistant", "content": g.content}), "stop")
    } else {
        let calls: Vec<Value> = g
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let arguments = match c.arguments {
                    Value::String(s) => s,
                    Value::Null => "{}".to_owned(),
                    other => other.to_string(),
                };
                json!({
                    "id": c.id.unwrap_or_else(|| format!("call_{i}")),
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments},
                })
            })
            .collect();
        (json!({"role": "assistant", "tool_calls": calls}), "tool_calls")
    };
    let u = g.usage.unwrap_or_default();
    let total = if u.total_tokens == 0 {
        u.prompt_tokens + u.completion_tokens
    } else {
        u.total_tokens
    };
    json!({
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": total},
    })
}
