//! `apply_patch`: opencode's `*** Begin Patch` grammar — `*** Add File: p`,
//! `*** Update File: p` (hunks of ` `/`-`/`+` lines, split by `@@`), `*** Delete File: p`,
//! `*** End Patch`. Atomic, as the SPEC says:
//!
//! 1. **Plan.** Every operation is checked against the filesystem and the operations before
//!    it, keyed by each file's real location (so `./a`, `a` and a symlink to `a` are one
//!    file), and the final content of every touched file is computed. Nothing is written.
//! 2. **Commit.** Missing directories are created, every new content is written to a
//!    temporary file beside its target, every file replaced is kept aside (a hard link,
//!    else a copy) and every file deleted is renamed aside, then each temporary file is
//!    renamed over its target. If any step fails, what was done is undone — old files
//!    back in place, new files and created directories removed — and the error says so.
//!
//! The result's metadata says what changed: `files` and one `diff` for the whole patch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::diffmeta::{self, ChangeKind, FileChange};
use super::files::{read_text, stage_write};
use super::workspace::{Workspace, real_entry, real_path};
use super::{blocking, builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// `apply_patch`'s arguments.
#[derive(JsonSchema)]
struct PatchArgs {
    /// The patch text in Begin/End Patch format
    #[schemars(rename = "patchText")]
    patch_text: String,
}

impl PatchArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("apply_patch", args)?;
        Ok(Self {
            patch_text: a.str("patchText")?.to_owned(),
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "apply_patch",
        "Apply a patch (Begin/End Patch grammar: Add/Update/Delete File). Atomic — a non-matching hunk aborts with no writes.",
        input_schema::<PatchArgs>(),
        move |args, _| run(ws.clone(), args),
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

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let PatchArgs { patch_text } = PatchArgs::parse(&args)?;
    let ops = parse(&patch_text).map_err(|e| format!("apply_patch: {e}"))?;
    blocking("apply_patch", move || {
        let planned = plan(&ops, &ws)?;
        commit(&planned)?;
        let count = |f: fn(&Op) -> bool| ops.iter().filter(|o| f(o)).count();
        let plural = if ops.len() == 1 { "" } else { "s" };
        let result = ToolResult::success(format!("Applied patch: {} file operation{plural}", ops.len()))
            .with_meta("added", count(|o| matches!(o, Op::Add { .. })))
            .with_meta("updated", count(|o| matches!(o, Op::Update { .. })))
            .with_meta("deleted", count(|o| matches!(o, Op::Delete { .. })));
        let changes: Vec<FileChange<'_>> = planned.iter().filter_map(Planned::change).collect();
        Ok(diffmeta::attach(result, &changes))
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

/// A file's state as the patch's operations so far leave it.
#[derive(Debug)]
enum State {
    /// As on disk, and present (not read: a file only deleted need not be text).
    OnDisk,
    /// This content.
    Content(String),
    /// No file.
    Absent,
}

/// One file the patch touches: where it really is, how the patch names it, whether it
/// exists before, and its state after.
#[derive(Debug)]
struct Planned {
    target: PathBuf,
    shown: String,
    existed: bool,
    /// The text before the patch, once read (for the change metadata).
    before: Option<String>,
    after: State,
}

impl Planned {
    /// What the patch did to this file, for the change metadata; `None` for a file it
    /// created and deleted again.
    fn change(&self) -> Option<FileChange<'_>> {
        let (kind, after) = match (&self.after, self.existed) {
            (State::Content(text), false) => (ChangeKind::Added, text.as_str()),
            (State::Content(text), true) => (ChangeKind::Modified, text.as_str()),
            (State::Absent, true) => (ChangeKind::Deleted, ""),
            _ => return None,
        };
        Some(FileChange {
            path: &self.shown,
            kind,
            before: self.before.as_deref().unwrap_or_default(),
            after,
        })
    }
}

/// Where an operation's file really is: symlinks and `..` resolved (and, with
/// confinement, checked), so two spellings of one file are one key. Deleting a symlink
/// deletes the link, so there the last component is kept as is.
fn locate(ws: &Workspace, op: &Op) -> Result<PathBuf, String> {
    let shown = op.path();
    let unresolvable = |e: std::io::Error| format!("apply_patch: cannot resolve {shown}: {e}");
    match op {
        Op::Delete { .. } => real_entry(&ws.resolve_entry("apply_patch", shown)?).map_err(unresolvable),
        _ => real_path(&ws.resolve("apply_patch", shown)?).map_err(unresolvable),
    }
}

/// Check every operation and compute every touched file's final state, writing nothing.
fn plan(ops: &[Op], ws: &Workspace) -> Result<Vec<Planned>, String> {
    let mut planned: Vec<Planned> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for op in ops {
        let shown = op.path();
        let fail = |e: String| format!("apply_patch: {e}");
        let target = locate(ws, op)?;
        let i = *index.entry(target.clone()).or_insert_with(|| {
            let existed = std::fs::symlink_metadata(&target).is_ok();
            planned.push(Planned {
                target,
                shown: shown.to_owned(),
                existed,
                before: None,
                after: if existed { State::OnDisk } else { State::Absent },
            });
            planned.len() - 1
        });
        let entry = &mut planned[i];
        if matches!(entry.after, State::OnDisk) && entry.target.is_dir() {
            return Err(fail(format!("{shown} is a directory, not a file")));
        }
        entry.after = match (op, &entry.after) {
            (Op::Add { .. }, State::OnDisk | State::Content(_)) => {
                return Err(fail(format!("file already exists: {shown}")));
            }
            (Op::Add { content, .. }, State::Absent) => State::Content(content.clone()),
            (Op::Delete { .. } | Op::Update { .. }, State::Absent) => {
                return Err(fail(format!("file not found: {shown}")));
            }
            (Op::Delete { .. }, State::OnDisk) => {
                // Best effort: a file only deleted need not be text, nor small.
                entry.before = diffmeta::old_text("apply_patch", &entry.target);
                State::Absent
            }
            (Op::Delete { .. }, State::Content(_)) => State::Absent,
            (Op::Update { body, .. }, State::OnDisk) => {
                let text = read_text("apply_patch", &entry.target, shown)?;
                let next = apply_update(&text, body).map_err(fail)?;
                entry.before = Some(text);
                State::Content(next)
            }
            (Op::Update { body, .. }, State::Content(text)) => {
                State::Content(apply_update(text, body).map_err(fail)?)
            }
        };
    }
    check_parents(&planned)?;
    Ok(planned)
}

/// Every file the patch writes needs a directory to land in: each parent must be a
/// directory on disk or missing (then created), and never a file the same patch writes.
fn check_parents(planned: &[Planned]) -> Result<(), String> {
    let written: HashMap<&Path, &str> = planned
        .iter()
        .filter(|p| matches!(p.after, State::Content(_)))
        .map(|p| (p.target.as_path(), p.shown.as_str()))
        .collect();
    for p in planned.iter().filter(|p| matches!(p.after, State::Content(_))) {
        for parent in p.target.ancestors().skip(1) {
            if let Some(other) = written.get(parent) {
                return Err(format!(
                    "apply_patch: {other} cannot be a file and also the directory of {}",
                    p.shown
                ));
            }
            match std::fs::metadata(parent) {
                Ok(meta) if meta.is_dir() => break,
                Ok(_) => {
                    return Err(format!(
                        "apply_patch: a parent of {} is a file, not a directory",
                        p.shown
                    ));
                }
                Err(_) => {}
            }
        }
    }
    Ok(())
}

/// A file put aside during a commit: the old file a commit replaced (a hard link or a
/// copy) or deleted (renamed). Dropping it removes it — the old content is then gone for good.
type Aside = tempfile::NamedTempFile<()>;

/// What a commit has done so far, to be undone if a later step fails.
#[derive(Default)]
struct Done<'a> {
    dirs: Vec<PathBuf>,
    /// Targets now holding new content, with the old file kept aside if there was one.
    replaced: Vec<(&'a Path, Option<Aside>)>,
    /// Targets renamed aside to delete them.
    deleted: Vec<(&'a Path, Aside)>,
}

impl Done<'_> {
    /// Put everything back; what could not be is listed in the returned text.
    fn undo(self) -> String {
        let mut failures = Vec::new();
        let mut note = |what: String, r: std::io::Result<()>| {
            if let Err(e) = r {
                failures.push(format!("{what}: {e}"));
            }
        };
        for (target, aside) in self.replaced.into_iter().rev() {
            match aside {
                Some(old) => note(format!("restoring {}", target.display()), restore(old, target)),
                None => note(
                    format!("removing {}", target.display()),
                    std::fs::remove_file(target),
                ),
            }
        }
        for (target, old) in self.deleted.into_iter().rev() {
            note(format!("restoring {}", target.display()), restore(old, target));
        }
        for dir in self.dirs.iter().rev() {
            note(format!("removing {}", dir.display()), std::fs::remove_dir(dir));
        }
        if failures.is_empty() {
            "nothing was changed".into()
        } else {
            format!("undoing it failed too ({})", failures.join("; "))
        }
    }
}

/// Put a file kept aside back at `target`; if that fails, keep it where it is (and say where)
/// rather than let it be removed.
fn restore(old: Aside, target: &Path) -> std::io::Result<()> {
    std::fs::rename(old.path(), target).map_err(|e| {
        let kept = old
            .into_temp_path()
            .keep()
            .map_or_else(|k| k.path.display().to_string(), |p| p.display().to_string());
        std::io::Error::other(format!("{e}; the old file is kept at {kept}"))
    })
}

/// Keep `target` aside under a fresh name in its directory, with `how` (link, copy or
/// rename from `target` to the given path).
fn aside(target: &Path, how: impl Fn(&Path, &Path) -> std::io::Result<()>) -> std::io::Result<Aside> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".toolnexus-old")
        .make_in(dir, |path| how(target, path))
}

/// Write the plan (see the module docs); on failure undo what was done.
fn commit(planned: &[Planned]) -> Result<(), String> {
    let mut done = Done::default();
    commit_steps(planned, &mut done)
        .map_err(|e| format!("apply_patch: {e}; {}", std::mem::take(&mut done).undo()))
}

fn commit_steps<'a>(planned: &'a [Planned], done: &mut Done<'a>) -> Result<(), String> {
    let fail = |what: &str, path: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", path.display());
    let mut staged = Vec::new();
    for p in planned {
        let State::Content(content) = &p.after else {
            continue;
        };
        if let Some(parent) = p.target.parent() {
            let missing: Vec<&Path> = parent.ancestors().take_while(|a| !a.exists()).collect();
            for dir in missing.into_iter().rev() {
                std::fs::create_dir(dir).map_err(|e| fail("create directory", dir, e))?;
                done.dirs.push(dir.to_path_buf());
            }
        }
        let tmp = stage_write(&p.target, content.as_bytes()).map_err(|e| fail("write", &p.target, e))?;
        staged.push((p, tmp));
    }
    for p in planned
        .iter()
        .filter(|p| p.existed && matches!(p.after, State::Absent))
    {
        let old = aside(&p.target, |from, to| std::fs::rename(from, to))
            .map_err(|e| fail("delete", &p.target, e))?;
        done.deleted.push((&p.target, old));
    }
    for (p, tmp) in staged {
        let old = if p.existed {
            let keep = |from: &Path, to: &Path| {
                std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(drop))
            };
            Some(aside(&p.target, keep).map_err(|e| fail("keep the old content of", &p.target, e))?)
        } else {
            None
        };
        tmp.persist(&p.target)
            .map_err(|e| fail("replace", &p.target, e.error))?;
        done.replaced.push((&p.target, old));
    }
    // Committed: the old files kept aside go now.
    std::mem::take(done);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of `dir`, sorted: leftovers of a failed commit would show here.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn planned(dir: &Path, text: &str) -> Vec<Planned> {
        let ws = Workspace::new(Some(dir), false);
        plan(&parse(text).unwrap(), &ws).unwrap()
    }

    /// Failures past planning (the filesystem changed under the patch) are undone.
    #[test]
    fn a_commit_that_fails_midway_puts_everything_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        std::fs::write(d.join("b.txt"), "b\n").unwrap();
        std::fs::write(d.join("c.txt"), "c\n").unwrap();
        let text = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: new/n.txt\n+n\n\
                    *** Delete File: c.txt\n*** Update File: b.txt\n-b\n+B\n*** End Patch";

        // b.txt becomes a directory after planning: staging its content fails after the
        // directory for new/n.txt was made and two contents were staged.
        let plan = planned(d, text);
        std::fs::remove_file(d.join("b.txt")).unwrap();
        std::fs::create_dir(d.join("b.txt")).unwrap();
        let err = commit(&plan).unwrap_err();
        assert_eq!(
            err,
            format!(
                "apply_patch: cannot write {}: is a directory; nothing was changed",
                d.join("b.txt").display()
            )
        );
        assert_eq!(names(d), ["a.txt", "b.txt", "c.txt"]);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "a\n");

        // c.txt vanishes after planning: renaming it aside fails; the directory made for
        // new/n.txt and the staged contents go.
        std::fs::remove_dir(d.join("b.txt")).unwrap();
        std::fs::write(d.join("b.txt"), "b\n").unwrap();
        let plan = planned(d, text);
        std::fs::remove_file(d.join("c.txt")).unwrap();
        let err = commit(&plan).unwrap_err();
        assert!(err.starts_with("apply_patch: cannot delete "), "{err}");
        assert_eq!(names(d), ["a.txt", "b.txt"]);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "a\n");

        // And untouched, the same plan commits whole, leaving nothing aside.
        std::fs::write(d.join("c.txt"), "c\n").unwrap();
        commit(&planned(d, text)).unwrap();
        assert_eq!(names(d), ["a.txt", "b.txt", "new"]);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "A\n");
        assert_eq!(std::fs::read_to_string(d.join("b.txt")).unwrap(), "B\n");
        assert_eq!(names(&d.join("new")), ["n.txt"]);
    }

    /// Undoing a commit that got as far as replacing and deleting files puts the old files
    /// back and removes what it created.
    #[test]
    fn undo_restores_replaced_and_deleted_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (a, c, n, new_dir) = (
            d.join("a.txt"),
            d.join("c.txt"),
            d.join("sub/n.txt"),
            d.join("sub"),
        );
        std::fs::write(&a, "old a\n").unwrap();
        std::fs::write(&c, "old c\n").unwrap();
        let mut done = Done::default();
        // What commit_steps does, step by step.
        std::fs::create_dir(&new_dir).unwrap();
        done.dirs.push(new_dir.clone());
        let kept = aside(&a, |from, to| std::fs::hard_link(from, to)).unwrap();
        stage_write(&a, b"new a\n").unwrap().persist(&a).unwrap();
        done.replaced.push((&a, Some(kept)));
        stage_write(&n, b"new n\n").unwrap().persist(&n).unwrap();
        done.replaced.push((&n, None));
        let deleted = aside(&c, |from, to| std::fs::rename(from, to)).unwrap();
        done.deleted.push((&c, deleted));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a\n");
        assert!(!c.exists());

        assert_eq!(done.undo(), "nothing was changed");
        assert_eq!(names(d), ["a.txt", "c.txt"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a\n");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "old c\n");
    }
}
