//! `todowrite`: replace the session todo list and echo it back rendered. Stateless across
//! processes (SPEC §4A): the list lives in the conversation, not here.

use serde_json::{Value, json};

use super::args::Args;
use super::builtin;
use crate::result::ToolResult;
use crate::tool::Tool;

/// Written out, not derived like the other built-ins' schemas: the pinned bytes put the
/// array's `description` before its `items`, and schemars writes it after.
pub(super) fn tool() -> Tool {
    builtin(
        "todowrite",
        "Replace the session todo list. Returns the rendered list.",
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The full todo list to store",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "text": {"type": "string"},
                            "completed": {"type": "boolean"},
                        },
                        "required": ["id", "text", "completed"],
                    },
                }
            },
            "required": ["todos"],
            "additionalProperties": false,
        }),
        |args, _| async move { run(&args) },
    )
}

/// One `[x] text` / `[ ] text` line per todo; `(no todos)` for an empty list.
fn run(args: &Value) -> Result<ToolResult, String> {
    let a = Args::new("todowrite", args)?;
    let todos = a.array("todos")?;
    let mut lines = Vec::with_capacity(todos.len());
    for (i, todo) in todos.iter().enumerate() {
        let item = a.item("todos", i, todo)?;
        item.str("id")?;
        let text = item.str("text")?;
        let mark = if item.bool("completed")? { 'x' } else { ' ' };
        lines.push(format!("[{mark}] {text}"));
    }
    let rendered = if lines.is_empty() {
        "(no todos)".to_owned()
    } else {
        lines.join("\n")
    };
    Ok(ToolResult::success(rendered).with_meta("todos", todos.clone()))
}
