//! The one directory walker, on ripgrep's `ignore` (no ignore files honoured, hidden files
//! included, `.git` and `node_modules` never entered): every file under a root as its path
//! relative to the root, `/`-separated, and its path. The built-in `grep`/`glob` walk without
//! following symlinks, in parallel; skill discovery follows them.
//!
//! The order files are found in is the file system's and the threads': callers sort.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ignore::{DirEntry, WalkBuilder, WalkState};

/// Directories never descended into.
const SKIPPED_DIRS: [&str; 2] = [".git", "node_modules"];

/// One file found by a walk.
pub(crate) struct Found {
    /// Relative to the walk root, `/`-separated.
    pub rel: String,
    /// Where to open it.
    pub path: PathBuf,
}

/// What a walk does with symbolic links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Links {
    /// Not followed: a link is neither a file nor a directory of the walk.
    #[cfg_attr(not(feature = "builtins"), allow(dead_code))]
    Skip,
    /// Followed, files and directories alike, except a link back to a directory being walked
    /// (a loop). A file reached by several paths (a directory linked from two places) is
    /// found once, under its path of fewest segments, then first in code point order.
    Follow,
}

/// What a walk found.
pub(crate) struct Walked {
    /// The kept files, unsorted.
    pub files: Vec<Found>,
    /// `true` when the walk stopped at its file bound: `files` is then an arbitrary part.
    #[cfg_attr(not(feature = "builtins"), allow(dead_code))]
    pub stopped: bool,
}

/// Every file under the directory `root` whose relative path passes `keep`, looking at no
/// more than `max_files` files. With `threads > 1` the walk runs on that many threads; `stop`
/// returning `true` ends it early (what was found so far is returned). Unreadable entries are
/// skipped, as a plain directory listing would.
pub(crate) fn files(
    root: &Path,
    links: Links,
    threads: usize,
    max_files: usize,
    keep: impl Fn(&str) -> bool + Sync,
    stop: &(dyn Fn() -> bool + Sync),
) -> Walked {
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .follow_links(links == Links::Follow)
        .threads(threads)
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_some_and(|t| t.is_dir())
                    && SKIPPED_DIRS.iter().any(|d| e.file_name() == *d))
        });
    // Only a walk that went through a link can find a file twice.
    let linked = AtomicBool::new(false);
    let (seen, stopped) = (AtomicUsize::new(0), AtomicBool::new(false));
    let over_bound = || stop() || stopped.load(Ordering::Relaxed);
    let found = |entry: DirEntry| -> Option<Found> {
        if entry.path_is_symlink() {
            linked.store(true, Ordering::Relaxed);
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        if seen.fetch_add(1, Ordering::Relaxed) >= max_files {
            stopped.store(true, Ordering::Relaxed);
            return None;
        }
        let rel = slash_path(entry.path().strip_prefix(root).ok()?);
        keep(&rel).then(|| Found {
            rel,
            path: entry.into_path(),
        })
    };
    let mut out = Vec::new();
    if threads <= 1 {
        for entry in builder.build() {
            if over_bound() {
                break;
            }
            out.extend(entry.ok().and_then(found));
        }
    } else {
        let (tx, rx) = std::sync::mpsc::channel();
        builder.build_parallel().run(|| {
            let (tx, found) = (tx.clone(), &found);
            let over_bound = &over_bound;
            Box::new(move |entry| {
                if over_bound() {
                    return WalkState::Quit;
                }
                if let Some(f) = entry.ok().and_then(found) {
                    let _ = tx.send(f);
                }
                WalkState::Continue
            })
        });
        drop(tx);
        out.extend(rx);
    }
    if links == Links::Follow && linked.into_inner() {
        out = once_per_file(out);
    }
    Walked {
        files: out,
        stopped: stopped.into_inner(),
    }
}

/// Each file once, under its shortest path: a file is the same when its directory resolves
/// to the same real directory and its name is the same.
fn once_per_file(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by(|a, b| (a.rel.matches('/').count(), &a.rel).cmp(&(b.rel.matches('/').count(), &b.rel)));
    let mut real_dirs: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    found.retain(|f| {
        let (Some(dir), Some(name)) = (f.path.parent(), f.path.file_name()) else {
            return true;
        };
        let real = real_dirs
            .entry(dir.to_path_buf())
            .or_insert_with(|| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()));
        seen.insert(real.join(name))
    });
    found
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn rels(root: &Path, links: Links, threads: usize) -> Vec<String> {
        let mut found: Vec<String> = files(root, links, threads, usize::MAX, |_| true, &|| false)
            .files
            .into_iter()
            .map(|f| f.rel)
            .collect();
        found.sort();
        found
    }

    #[test]
    fn links_are_skipped_or_followed_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "a/x.txt",
            "b/y.txt",
            ".hidden/h",
            ".git/config",
            "c/node_modules/m.js",
        ] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::os::unix::fs::symlink(root.join("b"), root.join("a/to_b")).unwrap();
        std::os::unix::fs::symlink(root, root.join("b/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("a/x.txt"), root.join("x_link")).unwrap();
        for threads in [1, 4] {
            assert_eq!(
                rels(root, Links::Skip, threads),
                [".hidden/h", "a/x.txt", "b/y.txt"]
            );
        }
        // `b` is reached as `b` and `a/to_b`: listed once, under the shorter path; the link
        // back to the root is a loop; a linked file is a file of its own name.
        for threads in [1, 4] {
            assert_eq!(
                rels(root, Links::Follow, threads),
                [".hidden/h", "a/x.txt", "b/y.txt", "x_link"]
            );
        }
        let stopped = files(root, Links::Skip, 1, usize::MAX, |_| true, &|| true);
        assert!(stopped.files.is_empty());
        let bounded = files(root, Links::Skip, 1, 2, |_| true, &|| false);
        assert_eq!((bounded.files.len(), bounded.stopped), (2, true));
    }
}
