//! The file walk behind `grep` and `glob`: every regular file under a root (the crate's
//! one [walker](crate::walk), symlinks not followed, in parallel), in one deterministic
//! order — by path relative to the root, `/`-separated, compared by code point — so that
//! which results a `limit` keeps depends only on the file set.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{GlobBuilder, GlobMatcher};

pub(super) use crate::walk::Found;
use crate::walk::Links;

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
    let mut found = crate::walk::files(root, Links::Skip, threads(), keep, &|| stop.is_set());
    found.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Ok(found)
}

/// Worker threads for walking and searching.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(12))
}
