//! What a file-changing built-in changed, as result metadata (the upstream crate's and the Go
//! port's shape): `files`, one entry per file — `{"path", "status", "additions",
//! "deletions"}` with `status` `added`, `modified` or `deleted` — and `diff`, one unified diff
//! of them all (3 lines of context, `a/`/`b/` headers for a relative path, an absolute path
//! as it is, `/dev/null` for a side that does not exist).
//!
//! Bounded: the diff is computed under a deadline (past it, the changed region is reported
//! as one replacement rather than a minimal one) and the text kept is at most
//! [`MAX_DIFF_BYTES`], cut at a line end, with `diffCut` counting the bytes left out.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use similar::{Algorithm, ChangeTag, TextDiff};

use super::files::read_bytes;
use crate::result::ToolResult;

/// The most diff text a result carries.
pub(super) const MAX_DIFF_BYTES: usize = 64 * 1024;

/// How long one file's diff may take before a coarser one is accepted.
const DIFF_DEADLINE: Duration = Duration::from_millis(250);

/// What happened to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One changed file: its path as the call named it, and its text before and after (empty
/// for a side that does not exist).
pub(super) struct FileChange<'a> {
    pub(super) path: &'a str,
    pub(super) kind: ChangeKind,
    pub(super) before: &'a str,
    pub(super) after: &'a str,
}

/// A file's current text for the "before" side of a diff, if it is there: read with the
/// file tools' bounds, undecodable bytes replaced. `None` when it cannot be read (missing,
/// not a regular file, over the size limit).
pub(super) fn old_text(tool: &str, path: &Path) -> Option<String> {
    let bytes = read_bytes(tool, path, "").ok()?;
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `result` with `metadata.files` and `metadata.diff` describing `changes` (and
/// `metadata.diffCut` when the diff was cut).
pub(super) fn attach(result: ToolResult, changes: &[FileChange<'_>]) -> ToolResult {
    let mut files = Vec::with_capacity(changes.len());
    let mut diff = String::new();
    for change in changes {
        let lines = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .deadline(Instant::now() + DIFF_DEADLINE)
            .diff_lines(change.before, change.after);
        let (mut additions, mut deletions) = (0usize, 0usize);
        for op in lines.ops() {
            for c in lines.iter_changes(op) {
                match c.tag() {
                    ChangeTag::Insert => additions += 1,
                    ChangeTag::Delete => deletions += 1,
                    ChangeTag::Equal => {}
                }
            }
        }
        files.push(json!({
            "path": change.path,
            "status": change.kind,
            "additions": additions,
            "deletions": deletions,
        }));
        // Past the cap nothing more is rendered: the counts above are what is left to say.
        if diff.len() <= MAX_DIFF_BYTES {
            let path = change.path.replace('\\', "/");
            // git's a/ and b/ prefixes for a relative path; an absolute one stands as it is.
            let side = |prefix: &str| {
                if Path::new(change.path).is_absolute() {
                    path.clone()
                } else {
                    format!("{prefix}{path}")
                }
            };
            let from = match change.kind {
                ChangeKind::Added => "/dev/null".to_owned(),
                _ => side("a/"),
            };
            let to = match change.kind {
                ChangeKind::Deleted => "/dev/null".to_owned(),
                _ => side("b/"),
            };
            let text = lines
                .unified_diff()
                .context_radius(3)
                .header(&from, &to)
                .to_string();
            diff.push_str(&text);
        }
    }
    let mut result = result.with_meta("files", Value::Array(files));
    if diff.len() > MAX_DIFF_BYTES {
        let keep = diff[..=floor_char_boundary(&diff, MAX_DIFF_BYTES)]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        result = result.with_meta("diffCut", (diff.len() - keep) as u64);
        diff.truncate(keep);
    }
    result.with_meta("diff", diff)
}

/// The largest char boundary at or below `at` (`str::floor_char_boundary` is unstable).
fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(changes: &[FileChange<'_>]) -> serde_json::Map<String, Value> {
        attach(ToolResult::success("ok"), changes).metadata.unwrap()
    }

    #[test]
    fn one_modified_file_gives_counts_and_a_unified_diff() {
        let m = meta(&[FileChange {
            path: "src/a.txt",
            kind: ChangeKind::Modified,
            before: "1\n2\n3\n4\n5\n6\n7\n8\n",
            after: "1\n2\n3\n4\nfive\n6\n7\n8\nnine\n",
        }]);
        assert_eq!(
            m["files"],
            json!([{"path": "src/a.txt", "status": "modified", "additions": 2, "deletions": 1}])
        );
        assert_eq!(
            m["diff"],
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2,7 +2,8 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n+nine\n"
        );
        assert!(!m.contains_key("diffCut"));
    }

    #[test]
    fn added_and_deleted_files_use_dev_null_and_unchanged_gives_no_hunk() {
        let m = meta(&[
            FileChange {
                path: "new.txt",
                kind: ChangeKind::Added,
                before: "",
                after: "hi\n",
            },
            FileChange {
                path: "old.txt",
                kind: ChangeKind::Deleted,
                before: "a\nb",
                after: "",
            },
            FileChange {
                path: "same.txt",
                kind: ChangeKind::Modified,
                before: "x\n",
                after: "x\n",
            },
        ]);
        assert_eq!(
            m["diff"],
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n\
             --- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n\\ No newline at end of file\n"
        );
        assert_eq!(
            m["files"][2],
            json!({"path": "same.txt", "status": "modified", "additions": 0, "deletions": 0})
        );
    }

    #[test]
    fn a_huge_diff_is_cut_at_a_line_end_and_the_cut_is_counted() {
        let after: String = (0..20_000).map(|i| format!("line {i} é\n")).collect();
        let m = meta(&[FileChange {
            path: "big",
            kind: ChangeKind::Added,
            before: "",
            after: &after,
        }]);
        let diff = m["diff"].as_str().unwrap();
        assert!(
            diff.len() <= MAX_DIFF_BYTES && diff.ends_with('\n'),
            "{}",
            diff.len()
        );
        let full = "--- /dev/null\n+++ b/big\n@@ -0,0 +1,20000 @@\n".len()
            + after.lines().map(|l| l.len() + 2).sum::<usize>();
        assert_eq!(m["diffCut"], json!(full - diff.len()));
        assert_eq!(m["files"][0]["additions"], json!(20_000));
    }
}
