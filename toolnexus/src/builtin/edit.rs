//! `edit`: exact-string replacement in a file — one unique occurrence, or all of them with
//! `replaceAll`. The edited content replaces the old atomically; the result's metadata says
//! what changed (`files`, `diff`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::diffmeta::{self, ChangeKind, FileChange};
use super::files::{io_error, read_text, write_atomic};
use super::workspace::{Workspace, real_path};
use super::{blocking, builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// `edit`'s arguments.
#[derive(JsonSchema)]
struct EditArgs {
    /// Path to the file to edit
    path: String,
    /// Exact string to replace
    #[schemars(rename = "oldString")]
    old: String,
    /// Replacement string
    #[schemars(rename = "newString")]
    new: String,
    /// Replace all occurrences
    #[schemars(rename = "replaceAll")]
    replace_all: Option<bool>,
}

impl EditArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("edit", args)?;
        Ok(Self {
            path: a.str("path")?.to_owned(),
            old: a.str("oldString")?.to_owned(),
            new: a.str_or_empty("newString")?.to_owned(),
            replace_all: a.opt_bool("replaceAll")?,
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "edit",
        "Exact-string replace in a file. Default replaces a single unique occurrence; replaceAll replaces all.",
        input_schema::<EditArgs>(),
        move |args, _| run(ws.clone(), args),
    )
}

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let args = EditArgs::parse(&args)?;
    blocking("edit", move || {
        let shown = &args.path;
        let path = ws.resolve("edit", shown)?;
        let content = read_text("edit", &path, shown)?;
        let (old, new) = (args.old.as_str(), args.new.as_str());
        let count = content.matches(old).count();
        if count == 0 {
            return Err(format!("edit: oldString not found in {shown}"));
        }
        let (next, n) = if args.replace_all == Some(true) {
            (content.replace(old, new), count)
        } else if count > 1 {
            return Err(format!(
                "edit: oldString is not unique in {shown} ({count} occurrences); use replaceAll"
            ));
        } else {
            (content.replacen(old, new, 1), 1)
        };
        let target = real_path(&path).unwrap_or(path);
        write_atomic(&target, next.as_bytes()).map_err(|e| io_error("edit", shown, &e))?;
        let plural = if n == 1 { "" } else { "s" };
        let result = ToolResult::success(format!("Edited {shown} ({n} replacement{plural})"))
            .with_meta("replacements", n);
        let change = FileChange {
            path: shown,
            kind: ChangeKind::Modified,
            before: &content,
            after: &next,
        };
        Ok(diffmeta::attach(result, &[change]))
    })
    .await
}
