//! `write`: create or overwrite a file, creating its parent directories.

use std::path::Path;

use serde_json::{Value, json};

use super::args::Args;
use super::files::io_error;
use super::{blocking, builtin};
use crate::result::ToolResult;
use crate::tool::Tool;

pub(super) fn tool() -> Tool {
    builtin(
        "write",
        "Write content to a file (create/overwrite), creating parent directories.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to write to"},
                "content": {"type": "string", "description": "Content to write"},
            },
            "required": ["path", "content"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("write", &args)?;
    let shown = a.str("path")?.to_owned();
    let content = a.str_or_empty("content")?.to_owned();
    blocking("write", move || {
        let path = Path::new(&shown);
        if path.is_dir() {
            return Err(format!("write: {shown} is a directory, not a file"));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("write: cannot create directory {}: {e}", parent.display()))?;
        }
        std::fs::write(path, &content).map_err(|e| io_error("write", &shown, &e))?;
        let bytes = content.len();
        Ok(ToolResult::success(format!("Wrote {bytes} bytes to {shown}")).with_meta("bytes", bytes))
    })
    .await
}
