//! `glob`: list the files matching a glob under a directory, as sorted relative paths,
//! capped at `limit` (default 100).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::args::Args;
use super::walk::{self, FileGlob, StopFlag};
use super::{blocking, builtin};
use crate::result::ToolResult;
use crate::tool::Tool;

/// Paths returned when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 100;

pub(super) fn tool() -> Tool {
    builtin(
        "glob",
        "List files matching a glob under a directory. Output is newline-joined relative paths.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern to match"},
                "path": {"type": "string", "description": "Directory to search (default: process cwd)"},
                "limit": {"type": "number", "description": "Maximum number of results (default 100)"},
            },
            "required": ["pattern"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("glob", &args)?;
    let pattern = a.str("pattern")?;
    let root = a.opt_str("path")?.unwrap_or(".").to_owned();
    let limit = a.opt_count("limit")?.unwrap_or(DEFAULT_LIMIT);
    let glob = FileGlob::new(pattern).map_err(|e| format!("glob: invalid glob pattern: {e}"))?;
    let stop = StopFlag::default();
    let _stop_on_drop = stop.on_drop();
    blocking("glob", move || {
        let files = walk::files(
            "glob",
            &PathBuf::from(&root),
            &root,
            |rel| glob.is_match(rel),
            &stop,
        )?;
        let shown: Vec<&str> = files.iter().take(limit).map(|f| f.rel.as_str()).collect();
        Ok(ToolResult::success(shown.join("\n")).with_meta("count", shown.len()))
    })
    .await
}
