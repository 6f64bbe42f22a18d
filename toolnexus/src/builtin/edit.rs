//! `edit`: exact-string replacement in a file — one unique occurrence, or all of them with
//! `replaceAll`.

use std::path::Path;

use serde_json::{Value, json};

use super::args::Args;
use super::files::{io_error, read_text};
use super::{blocking, builtin};
use crate::result::ToolResult;
use crate::tool::Tool;

pub(super) fn tool() -> Tool {
    builtin(
        "edit",
        "Exact-string replace in a file. Default replaces a single unique occurrence; replaceAll replaces all.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit"},
                "oldString": {"type": "string", "description": "Exact string to replace"},
                "newString": {"type": "string", "description": "Replacement string"},
                "replaceAll": {"type": "boolean", "description": "Replace all occurrences"},
            },
            "required": ["path", "oldString", "newString"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("edit", &args)?;
    let shown = a.str("path")?.to_owned();
    let old = a.str("oldString")?.to_owned();
    let new = a.str_or_empty("newString")?.to_owned();
    let replace_all = a.opt_bool("replaceAll")?.unwrap_or(false);
    blocking("edit", move || {
        let path = Path::new(&shown);
        let content = read_text("edit", path, &shown)?;
        let count = content.matches(old.as_str()).count();
        if count == 0 {
            return Err(format!("edit: oldString not found in {shown}"));
        }
        let (next, n) = if replace_all {
            (content.replace(&old, &new), count)
        } else if count > 1 {
            return Err(format!(
                "edit: oldString is not unique in {shown} ({count} occurrences); use replaceAll"
            ));
        } else {
            (content.replacen(&old, &new, 1), 1)
        };
        std::fs::write(path, next).map_err(|e| io_error("edit", &shown, &e))?;
        let plural = if n == 1 { "" } else { "s" };
        Ok(
            ToolResult::success(format!("Edited {shown} ({n} replacement{plural})"))
                .with_meta("replacements", n),
        )
    })
    .await
}
