//! The prompt one turn sends. The client hands over the whole transcript every turn, but an
//! ACP session already holds it, so the rendered transcript ends with a marker naming the
//! latest user turn as superseding everything earlier (otherwise agents have been seen
//! answering a stale copy).

use serde_json::Value;

/// The marker the other ports use; any unambiguous marker would do, this one is shared.
pub(super) const SUPERSEDES_MARKER: &str = "SUPERSEDES-ALL-PRIOR";

/// `role: text` per message with text, then `SUPERSEDES-ALL-PRIOR: <latest user text>`
/// (the last rendered line when there is no user text).
pub(super) fn render(messages: &[Value]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut last_user = String::new();
    for message in messages.iter().filter(|m| m.is_object()) {
        let role = message["role"].as_str().unwrap_or("");
        let text = content_text(&message["content"]);
        if text.is_empty() {
            continue;
        }
        lines.push(format!("{role}: {text}"));
        if role == "user" {
            last_user = text;
        }
    }
    if last_user.is_empty()
        && let Some(last) = lines.last()
    {
        last_user = last.clone();
    }
    lines.push(format!("{SUPERSEDES_MARKER}: {last_user}"));
    lines.join("\n")
}

/// A message's text: a string, or the text parts of a part list joined (media parts are
/// skipped: this turn is text-only).
fn content_text(content: &Value) -> String {
    match content {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => {
                    let text = match o.get("text") {
                        Some(Value::Null) | None if o.get("type") == Some(&Value::from("text")) => {
                            o.get("value")
                        }
                        other => other,
                    };
                    match text {
                        None | Some(Value::Null) => None,
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(other) => Some(other.to_string()),
                    }
                }
                _ => None,
            })
            .collect(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_transcript_ends_with_the_latest_user_turn_marked() {
        let messages = [
            json!({"role": "system", "content": "Be brief."}),
            json!({"role": "user", "content": "first question"}),
            json!({"role": "assistant", "content": null, "tool_calls": []}),
            json!({"role": "assistant", "content": "first answer"}),
            json!({"role": "user", "content": [{"type": "text", "text": "second "}, {"type": "image_url"}, {"type": "text", "text": "question"}]}),
        ];
        assert_eq!(
            render(&messages),
            "system: Be brief.\nuser: first question\nassistant: first answer\nuser: second question\n\
             SUPERSEDES-ALL-PRIOR: second question"
        );
    }

    #[test]
    fn without_user_text_the_last_line_is_marked() {
        let messages = [
            json!({"role": "system", "content": "only this"}),
            json!("not a message"),
        ];
        assert_eq!(
            render(&messages),
            "system: only this\nSUPERSEDES-ALL-PRIOR: system: only this"
        );
        assert_eq!(render(&[]), "SUPERSEDES-ALL-PRIOR: ");
    }
}
