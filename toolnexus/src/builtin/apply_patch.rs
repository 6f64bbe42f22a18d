//! `apply_patch`: opencode's `*** Begin Patch` grammar — `*** Add File: p`,
//! `*** Update File: p` (hunks of ` `/`-`/`+` lines, split by `@@`), `*** Delete File: p`,
//! `*** End Patch`. Atomic: every operation is checked and staged before anything is
//! written, so a hunk that does not match leaves the filesystem untouched.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::args::Args;
use super::files::{io_error, read_text};
use super::{blocking, builtin};
use crate::result::ToolResult;
use crate::tool::Tool;

pub(super) fn tool() -> Tool {
    builtin(
        "apply_patch",
        "Apply a patch (Begin/End Patch grammar: Add/Update/Delete File). Atomic — a non-matching hunk aborts with no writes.",
        json!({
            "type": "object",
            "properties": {
                "patchText": {"type": "string", "description": "The patch text in Begin/End Patch format"}
            },
            "required": ["patchText"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

/// One file operation of a parsed patch.
#[derive(Debug, PartialEq)]
enum Op {
    Add { path: String, content: String },
    Update { path: String, body: Vec<String> },
    Delete { path: String },
}

impl Op {
    fn path(&self) -> &str {
        match self {
            Op::Add { path, .. } | Op::Update { path, .. } | Op::Delete { path } => path,
        }
    }
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("apply_patch", &args)?;
    let text = a.str("patchText")?;
    let ops = parse(text).map_err(|e| format!("apply_patch: {e}"))?;
    blocking("apply_patch", move || {
        let staged = stage(&ops).map_err(|e| format!("apply_patch: {e}"))?;
        commit(staged)?;
        let count = |f: fn(&Op) -> bool| ops.iter().filter(|o| f(o)).count();
        let plural = if ops.len() == 1 { "" } else { "s" };
        Ok(
            ToolResult::success(format!("Applied patch: {} file operation{plural}", ops.len()))
                .with_meta("added", count(|o| matches!(o, Op::Add { .. })))
                .with_meta("updated", count(|o| matches!(o, Op::Update { .. })))
                .with_meta("deleted", count(|o| matches!(o, Op::Delete { .. }))),
        )
    })
    .await
}

/// `*** Add File: p` and its siblings: the operation and the (trimmed) path.
fn file_marker(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("*** ")?;
    let (kind, path) = ["Add", "Update", "Delete"]
        .iter()
        .find_map(|k| Some((*k, rest.strip_prefix(k)?.strip_prefix(" File: ")?)))?;
    // The marker needs a non-empty path; a path of only spaces trims to empty, as elsewhere.
    (!path.is_empty()).then_some((kind, path.trim()))
}

fn parse(text: &str) -> Result<Vec<Op>, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    if lines.get(i).map(|l| l.trim()) != Some("*** Begin Patch") {
        return Err("missing '*** Begin Patch'".into());
    }
    i += 1;
    let mut ops = Vec::new();
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "*** End Patch" {
            return Ok(ops);
        }
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        let (kind, path) = file_marker(line).ok_or_else(|| format!("unexpected line: {line}"))?;
        let path = path.to_owned();
        i += 1;
        let start = i;
        while i < lines.len() && lines[i].trim() != "*** End Patch" && file_marker(lines[i]).is_none() {
            i += 1;
        }
        let body = &lines[start..i];
        ops.push(match kind {
            "Add" => Op::Add {
                path,
                content: body
                    .iter()
                    .map(|l| l.strip_prefix('+').unwrap_or(l))
                    .collect::<Vec<_>>()
                    .join("\n"),
            },
            "Delete" => Op::Delete { path },
            _ => Op::Update {
                path,
                body: body.iter().map(|l| (*l).to_owned()).collect(),
            },
        });
    }
    Err("missing '*** End Patch'".into())
}

/// Apply an Update body to `content`. Each `@@`-separated hunk's old block (context and
/// `-` lines) must occur in the file; its first occurrence becomes the new block (context
/// and `+` lines). A hunk with no old lines appends.
fn apply_update(content: &str, body: &[String]) -> Result<String, String> {
    let mut result = content.to_owned();
    for hunk in body.split(|l| l.starts_with("@@")).filter(|h| !h.is_empty()) {
        let mut old = Vec::new();
        let mut new = Vec::new();
        for line in hunk {
            if let Some(l) = line.strip_prefix('-') {
                old.push(l);
            } else if let Some(l) = line.strip_prefix('+') {
                new.push(l);
            } else {
                let l = line.strip_prefix(' ').unwrap_or(line);
                old.push(l);
                new.push(l);
            }
        }
        let (old, new) = (old.join("\n"), new.join("\n"));
        if old.is_empty() {
            if !result.is_empty() && !result.ends_with('\n') {
                result.push('\n');
            }
            result.push_str(&new);
        } else if result.contains(&old) {
            result = result.replacen(&old, &new, 1);
        } else {
            return Err("hunk does not match file contents".into());
        }
    }
    Ok(result)
}

/// What the patch will do to one path: new content, or removal.
type Staged = Vec<(PathBuf, Option<String>)>;

/// Check every operation against the filesystem (and earlier operations of the same
/// patch) and compute the final content of every touched file, writing nothing.
fn stage(ops: &[Op]) -> Result<Staged, String> {
    let mut staged: Staged = Vec::new();
    // The state of `path` as the patch so far leaves it: Some(Some(text)), Some(None) for
    // deleted, None for "not touched yet".
    let current = |staged: &Staged, path: &Path| {
        staged
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, c)| c.clone())
    };
    for op in ops {
        let path = PathBuf::from(op.path());
        let exists = match current(&staged, &path) {
            Some(state) => state.is_some(),
            None => path.exists(),
        };
        let next = match op {
            Op::Add { content, .. } => {
                if exists {
                    return Err(format!("file already exists: {}", op.path()));
                }
                Some(content.clone())
            }
            Op::Delete { .. } => {
                if !exists {
                    return Err(format!("file not found: {}", op.path()));
                }
                None
            }
            Op::Update { body, .. } => {
                let text = match current(&staged, &path) {
                    Some(Some(text)) => text,
                    Some(None) => return Err(format!("file not found: {}", op.path())),
                    None => read_text("apply_patch", &path, op.path())
                        .map_err(|e| e.trim_start_matches("apply_patch: ").to_owned())?,
                };
                Some(apply_update(&text, body)?)
            }
        };
        staged.retain(|(p, _)| *p != path);
        staged.push((path, next));
    }
    Ok(staged)
}

/// Write the staged result: every new content goes to a temporary sibling first, then all
/// are renamed into place and the deletions done, so a failed write leaves no file changed.
fn commit(staged: Staged) -> Result<(), String> {
    let mut temps: Vec<(PathBuf, PathBuf)> = Vec::new();
    let cleanup = |temps: &[(PathBuf, PathBuf)]| {
        for (tmp, _) in temps {
            let _ = std::fs::remove_file(tmp);
        }
    };
    for (path, content) in &staged {
        let Some(content) = content else { continue };
        let shown = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            cleanup(&temps);
            return Err(format!(
                "apply_patch: cannot create directory {}: {e}",
                parent.display()
            ));
        }
        let tmp = temp_sibling(path);
        if let Err(e) = std::fs::write(&tmp, content) {
            cleanup(&temps);
            return Err(io_error("apply_patch", &shown, &e));
        }
        temps.push((tmp, path.clone()));
    }
    for (tmp, path) in &temps {
        std::fs::rename(tmp, path).map_err(|e| io_error("apply_patch", &path.display().to_string(), &e))?;
    }
    for (path, content) in &staged {
        if content.is_none() {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("apply_patch", &path.display().to_string(), &e)),
            }
        }
    }
    Ok(())
}

/// `dir/.name.<pid>.toolnexus-patch`: same directory, so the rename is atomic.
fn temp_sibling(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.toolnexus-patch", std::process::id()))
}
