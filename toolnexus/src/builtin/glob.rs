//! `glob`: list the files matching a glob under a directory, as sorted relative paths,
//! capped at `limit` (default 100).

use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::walk::{self, FileGlob, MAX_FILES, StopFlag};
use super::workspace::Workspace;
use super::{blocking, builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// Paths returned when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 100;

/// `glob`'s arguments.
#[derive(JsonSchema)]
struct GlobArgs {
    /// Glob pattern to match
    pattern: String,
    /// Directory to search (default: process cwd)
    path: Option<String>,
    /// Maximum number of results (default 100)
    #[schemars(with = "Option<f64>")]
    limit: Option<usize>,
}

impl GlobArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("glob", args)?;
        Ok(Self {
            pattern: a.str("pattern")?.to_owned(),
            path: a.opt_str("path")?.map(str::to_owned),
            limit: a.opt_count("limit")?,
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "glob",
        "List files matching a glob under a directory. Output is newline-joined relative paths.",
        input_schema::<GlobArgs>(),
        move |args, _| run(ws.clone(), args),
    )
}

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let args = GlobArgs::parse(&args)?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    let glob = FileGlob::new(&args.pattern).map_err(|e| format!("glob: invalid glob pattern: {e}"))?;
    let stop = StopFlag::default();
    let _stop_on_drop = stop.on_drop();
    blocking("glob", move || {
        let (root, shown) = match &args.path {
            Some(p) => (ws.resolve("glob", p)?, p.clone()),
            None => ws.dir("glob")?,
        };
        let walk = walk::files("glob", &root, &shown, |rel| glob.is_match(rel), &stop, MAX_FILES)?;
        let listed: Vec<&str> = walk.files.iter().take(limit).map(|f| f.rel.as_str()).collect();
        let stopped = walk.stopped.then(|| format!("looking at {MAX_FILES} files"));
        Ok(walk::listing("glob", &listed, stopped, "the path or the pattern"))
    })
    .await
}
