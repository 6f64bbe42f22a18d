//! The file walk behind `grep` and `glob`: every regular file under a root (symlinks not
//! followed, `.git` and `node_modules` skipped, nothing else ignored), in one deterministic
//! order — by path relative to the root, `/`-separated, compared by code point — so that
//! which results a `limit` keeps depends only on the file set. Walks in parallel with
//! ripgrep's `ignore` walker.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};

/// Directories never descended into.
const SKIPPED_DIRS: [&str; 2] = [".git", "node_modules"];

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
/// `keep`, sorted. A root that is itself a file yields just that file, under its shown path.
pub(super) fn files(
    tool: &str,
    root: &Path,
    shown: &str,
    keep: impl Fn(&str) -> bool + Sync,
    stop: &StopFlag,
) -> Result<Vec<Found>, String> {
    let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{tool}: path not found: {shown}"),
        _ => format!("{tool}: cannot access {shown}: {e}"),
    })?;
    if !meta.is_dir() {
        let rel = shown.to_owned();
        return Ok(if keep(&rel) {
            vec![Found {
                rel,
                path: root.to_path_buf(),
            }]
        } else {
            Vec::new()
        });
    }
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
            let keep = &keep;
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
    let mut found: Vec<Found> = rx.into_iter().collect();
    found.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Ok(found)
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
