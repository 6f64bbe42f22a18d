//! `write`: create or overwrite a file, creating its parent directories. The new content
//! replaces the old atomically (a temporary sibling renamed over it). The result's metadata
//! says what changed (`files`, `diff`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::diffmeta::{self, ChangeKind, FileChange};
use super::files::{io_error, write_atomic};
use super::workspace::{Workspace, real_path};
use super::{blocking, builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// `write`'s arguments.
#[derive(JsonSchema)]
struct WriteArgs {
    /// Path to write to
    path: String,
    /// Content to write
    content: String,
}

impl WriteArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("write", args)?;
        Ok(Self {
            path: a.str("path")?.to_owned(),
            content: a.str_or_empty("content")?.to_owned(),
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "write",
        "Write content to a file (create/overwrite), creating parent directories.",
        input_schema::<WriteArgs>(),
        move |args, _| run(ws.clone(), args),
    )
}

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let WriteArgs { path: shown, content } = WriteArgs::parse(&args)?;
    blocking("write", move || {
        let path = ws.resolve("write", &shown)?;
        // Through a symlink to its target, which a rename onto the link itself would replace.
        let target = real_path(&path).unwrap_or(path);
        if target.is_dir() {
            return Err(format!("write: {shown} is a directory, not a file"));
        }
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("write: cannot create directory {}: {e}", parent.display()))?;
        }
        let kind = if target.exists() {
            ChangeKind::Modified
        } else {
            ChangeKind::Added
        };
        let before = match kind {
            ChangeKind::Modified => diffmeta::old_text("write", &target).unwrap_or_default(),
            _ => String::new(),
        };
        write_atomic(&target, content.as_bytes()).map_err(|e| io_error("write", &shown, &e))?;
        let bytes = content.len();
        let change = FileChange {
            path: &shown,
            kind,
            before: &before,
            after: &content,
        };
        let result = ToolResult::success(format!("Wrote {bytes} bytes to {shown}")).with_meta("bytes", bytes);
        Ok(diffmeta::attach(result, &[change]))
    })
    .await
}
