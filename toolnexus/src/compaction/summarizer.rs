//! The ready, opt-in summarizer: one plain completion on a [`Client`] of the host's choosing.

use futures::future::BoxFuture;
use serde_json::Value;

use crate::client::hooks::Hooks;
use crate::client::{BoxError, Client, RunOptions};

/// What the summarizing model is asked to do, before the rendered transcript.
pub const SUMMARY_INSTRUCTIONS: &str = "Summarize the conversation below for your own later use. Keep every \
     fact, decision, name, number and open task; drop pleasantries. Answer with the summary only.";

/// Each message is cut to this many characters in the summarizing prompt, so one huge tool
/// output cannot make the summary request itself overflow the model.
const MAX_RENDERED_CHARS: usize = 2000;

/// A `summarize` for [`CompactorOptions::new`](super::CompactorOptions::new) that asks
/// `client`'s model (a cheap one is fine) for the summary: one plain completion, no tools,
/// none of the client's hooks (so a compactor on the same client never re-enters).
///
/// ```no_run
/// use toolnexus::client::{Client, Style};
/// use toolnexus::compaction::{CompactorOptions, client_summarizer, compactor};
///
/// let cheap = Client::builder()
///     .base_url("https://openrouter.ai/api/v1")
///     .style(Style::OpenAi)
///     .model("deepseek/deepseek-chat")
///     .build()?;
/// let hooks = compactor(CompactorOptions::new(100_000, client_summarizer(cheap))).hooks();
/// # let _ = hooks;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn client_summarizer(
    client: Client,
) -> impl Fn(Vec<Value>) -> BoxFuture<'static, Result<String, BoxError>> + Send + Sync + 'static {
    move |older: Vec<Value>| {
        let client = client.clone();
        Box::pin(async move {
            let prompt = format!("{SUMMARY_INSTRUCTIONS}\n\n{}", render(&older));
            let opts = RunOptions::default().hooks(Hooks::new());
            let result = client.run_with(prompt, opts).await?;
            Ok(result.text)
        })
    }
}

/// The transcript as plain lines, `role: text`, either dialect.
fn render(messages: &[Value]) -> String {
    let mut out = String::new();
    for m in messages {
        let role = m["role"].as_str().unwrap_or("?");
        let mut text = String::new();
        match &m["content"] {
            Value::String(s) => text.push_str(s),
            Value::Array(blocks) => {
                for b in blocks {
                    match b["type"].as_str() {
                        Some("text") => text.push_str(b["text"].as_str().unwrap_or("")),
                        Some("tool_use") => text.push_str(&format!("[called {} {}]", b["name"], b["input"])),
                        Some("tool_result") => text.push_str(&format!("[result {}]", b["content"])),
                        _ => {}
                    }
                    text.push(' ');
                }
            }
            _ => {}
        }
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let f = &c["function"];
            text.push_str(&format!(
                "[called {} {}]",
                f["name"].as_str().unwrap_or(""),
                f["arguments"].as_str().unwrap_or("")
            ));
        }
        let text: String = text.trim().chars().take(MAX_RENDERED_CHARS).collect();
        out.push_str(role);
        out.push_str(": ");
        out.push_str(&text);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_both_dialects_and_caps_each_message() {
        let long = "x".repeat(MAX_RENDERED_CHARS + 50);
        let text = render(&[
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": long}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "user: hi");
        assert_eq!(lines[1], "assistant: [called lookup {}]");
        assert_eq!(lines[2].len(), "tool: ".len() + MAX_RENDERED_CHARS);
        assert_eq!(lines[3], "user: [result \"ok\"]");
    }
}
