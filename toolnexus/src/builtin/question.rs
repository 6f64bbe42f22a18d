//! `question`: ask the human. The first call suspends (SPEC §10) with `kind:"question"`;
//! the re-execution after the host's `wait_for` returns the answer's data verbatim.

use serde_json::{Map, Value, json};

use super::args::Args;
use super::builtin;
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::suspend::Request;
use crate::tool::Tool;

/// Written out, not derived like the other built-ins' schemas: the pinned bytes put the
/// array's `description` before its `items`, and schemars writes it after.
pub(super) fn tool() -> Tool {
    builtin(
        "question",
        "Ask the host one or more questions. Suspends via a kind:\"question\" Request (§10); the host's waitFor resolves it and the answer is returned to the model.",
        json!({
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "description": "Questions to ask",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string"},
                            "header": {"type": "string"},
                            "options": {"type": "array", "items": {"type": "string"}},
                            "multiple": {"type": "boolean"},
                        },
                        "required": ["question"],
                    },
                }
            },
            "required": ["questions"],
            "additionalProperties": false,
        }),
        |args, ctx| async move { run(&args, &ctx) },
    )
}

fn run(args: &Value, ctx: &ToolContext) -> Result<ToolResult, String> {
    // The retry after wait_for: the resolution is the answer (as with kind "input").
    if let Some(answer) = &ctx.answer {
        let data = answer.data.clone().unwrap_or_else(|| json!({}));
        return Ok(ToolResult::success(data));
    }
    let a = Args::new("question", args)?;
    let questions = a.array("questions")?;
    let prompt = render_prompt(&a, questions)?;
    let mut data = Map::new();
    data.insert("questions".into(), Value::Array(questions.clone()));
    Ok(ToolResult::suspend(
        Request::new("question", prompt).with_data(data),
    ))
}

/// SPEC §4A: each question's text in order, `" (options: a, b, c)"` appended when it has
/// options, joined by `"\n"`. `header` is not rendered; it stays in `data.questions`.
fn render_prompt(a: &Args<'_>, questions: &[Value]) -> Result<String, String> {
    let mut lines = Vec::with_capacity(questions.len());
    for (i, q) in questions.iter().enumerate() {
        let item = a.item("questions", i, q)?;
        let mut line = item.str("question")?.to_owned();
        item.check_opt("header", "a string", Value::is_string)?;
        item.check_opt("multiple", "a boolean", Value::is_boolean)?;
        let options = item.opt_strings("options")?;
        if !options.is_empty() {
            line.push_str(&format!(" (options: {})", options.join(", ")));
        }
        lines.push(line);
    }
    Ok(lines.join("\n"))
}
