//! The file walk behind `grep` and `glob`: every regular file under a root (symlinks not
//! followed, `.git` and `node_modules` skipped, nothing else ignored), in one deterministic
//! order — by path relative to the root, `/`-separated, compared by code point — so that
//! which results a `limit` keeps depends only on the file set. Walks in parallel with
//! ripgrep's `ignore` walker, and stops after [`MAX_FILES`] files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};

use crate::result::ToolResult;

/// Directories never descended into.
const SKIPPED_DIRS: [&str; 2] = [".git", "node_modules"];

/// The most files one walk looks at (a checkout of the Linux kernel has about 90 000):
/// past it the walk stops and says so, rather than listing a whole disk.
pub(super) const MAX_FILES: usize = 200_000;

/// What a walk found.
pub(super) struct Walk {
    /// The kept files, sorted.
    pub files: Vec<Found>,
    /// `true` when the walk stopped at its file bound: `files` is then an arbitrary part.
    pub stopped: bool,
}

/// One file found by the walk.
pub(super) struct Found {
    /// Relative to the walk root, `/`-separated: what the tools print and sort by.
    pub rel: String,
    /// Where to open it.
    pub path: PathBuf,
}

/// Set when the call is dropped, so the blocking walk and search stop early.
#[derive(Clone, Default)]
pub(super) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub(super) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A guard that sets the flag when dropped — held by the async side of the call.
    pub(super) fn on_drop(&self) -> StopGuard {
        StopGuard(self.0.clone())
    }
}

/// Sets its [`StopFlag`] when dropped.
pub(super) struct StopGuard(Arc<AtomicBool>);

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A glob as the tools apply it: `*` and `?` stop at `/`, `**` crosses directories, and a
/// pattern with no `/` is tested against the file name alone.
pub(super) struct FileGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl FileGlob {
    pub(super) fn new(pattern: &str) -> Result<Self, globset::Error> {
        let glob = GlobBuilder::new(pattern).literal_separator(true).build()?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            name_only: !pattern.contains('/'),
        })
    }

    pub(super) fn is_match(&self, rel: &str) -> bool {
        if self.name_only {
            self.matcher.is_match(rel.rsplit('/').next().unwrap_or(rel))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

/// Every file under `root` (shown to the model as `shown`) whose relative path passes
/// `keep`, sorted, looking at no more than `max_files` files. A root that is itself a file
/// yields just that file, under its shown path.
pub(super) fn files(
    tool: &str,
    root: &Path,
    shown: &str,
    keep: impl Fn(&str) -> bool + Sync,
    stop: &StopFlag,
    max_files: usize,
) -> Result<Walk, String> {
    let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{tool}: path not found: {shown}"),
        _ => format!("{tool}: cannot access {shown}: {e}"),
    })?;
    if !meta.is_dir() {
        let rel = shown.to_owned();
        let files = if keep(&rel) {
            vec![Found {
                rel,
                path: root.to_path_buf(),
            }]
        } else {
            Vec::new()
        };
        return Ok(Walk {
            files,
            stopped: false,
        });
    }
    let seen = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel();
    WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .threads(threads())
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_some_and(|t| t.is_dir())
                    && SKIPPED_DIRS.iter().any(|d| e.file_name() == *d))
        })
        .build_parallel()
        .run(|| {
            let tx = tx.clone();
            let (keep, seen, stopped) = (&keep, &seen, &stopped);
            Box::new(move |entry| {
                if stop.is_set() {
                    return WalkState::Quit;
                }
                // Unreadable directories are skipped, as a plain directory listing would.
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if seen.fetch_add(1, Ordering::Relaxed) >= max_files {
                    stopped.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                let Ok(rel) = entry.path().strip_prefix(root) else {
                    return WalkState::Continue;
                };
                let rel = slash_path(rel);
                if keep(&rel) {
                    let _ = tx.send(Found {
                        rel,
                        path: entry.into_path(),
                    });
                }
                WalkState::Continue
            })
        });
    drop(tx);
    let mut files: Vec<Found> = rx.into_iter().collect();
    files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Ok(Walk {
        files,
        stopped: stopped.into_inner(),
    })
}

/// The result of a listing (`glob`'s paths, `grep`'s matches): the lines and their count,
/// and when a bound stopped the work early, a last line saying so and `truncated: true`.
pub(super) fn listing<S: std::borrow::Borrow<str>>(
    tool: &str,
    lines: &[S],
    stopped_after: Option<String>,
    narrow: &str,
) -> ToolResult {
    let mut output = lines.join("\n");
    if let Some(after) = &stopped_after {
        output.push_str(&format!(
            "\n({tool} stopped after {after}: the results are partial; narrow {narrow})"
        ));
    }
    let result = ToolResult::success(output).with_meta("count", lines.len());
    match stopped_after {
        Some(_) => result.with_meta("truncated", true),
        None => result,
    }
}

/// A relative path as the tools print it: `/` between components on every platform.
fn slash_path(rel: &Path) -> String {
    let s = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        s.into_owned()
    } else {
        s.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

/// Worker threads for walking and searching.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(12))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_stops_at_its_file_bound_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..10 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        let walk = |max| files("glob", dir.path(), "d", |_| true, &StopFlag::default(), max).unwrap();
        let all = walk(10);
        assert_eq!((all.files.len(), all.stopped), (10, false));
        let part = walk(4);
        assert_eq!((part.files.len(), part.stopped), (4, true));
    }
}
