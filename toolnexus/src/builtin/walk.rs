//! The file walk behind `grep` and `glob`: every regular file under a root (the crate's
//! one [walker](crate::walk), symlinks not followed, in parallel), in one deterministic
//! order — by path relative to the root, `/`-separated, compared by code point — so that
//! which results a `limit` keeps depends only on the file set. Stops after [`MAX_FILES`]
//! files.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{GlobBuilder, GlobMatcher};

use crate::result::ToolResult;
use crate::walk::Links;
pub(super) use crate::walk::{Found, Walked as Walk};

/// The most files one walk looks at (a checkout of the Linux kernel has about 90 000):
/// past it the walk stops and says so, rather than listing a whole disk.
pub(super) const MAX_FILES: usize = 200_000;

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
    let mut walk = crate::walk::files(root, Links::Skip, threads(), max_files, keep, &|| stop.is_set());
    walk.files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    Ok(walk)
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
