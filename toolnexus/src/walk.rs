//! The one directory walk: every file under a root as its path relative to the root,
//! `/`-separated, and its path. No ignore files are honoured, hidden files are included, `.git`
//! and `node_modules` are never entered. Skill discovery follows symlinks and walks on one
//! thread with `walkdir` (the walker ripgrep's `ignore` is built on), which keeps a followed
//! link from looping; the built-in `grep`/`glob` follow none and list directories on several
//! threads. The order files are found in is the file system's and the threads': callers sort.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use walkdir::WalkDir;

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
/// more than `max_files` files. A walk that does not follow links lists directories on
/// `threads` threads; `stop` returning `true` ends a walk early (what was found so far is
/// returned). Unreadable entries, and links that loop, are skipped, as a plain directory
/// listing would.
pub(crate) fn files(
    root: &Path,
    links: Links,
    threads: usize,
    max_files: usize,
    keep: impl Fn(&str) -> bool + Sync,
    stop: &(dyn Fn() -> bool + Sync),
) -> Walked {
    match links {
        Links::Skip if threads > 1 => in_parallel(root, threads, max_files, &keep, stop),
        _ => in_order(root, links, max_files, &keep, stop),
    }
}

/// The walk on one thread, by `walkdir`, which also keeps a followed link from looping.
fn in_order(
    root: &Path,
    links: Links,
    max_files: usize,
    keep: &dyn Fn(&str) -> bool,
    stop: &dyn Fn() -> bool,
) -> Walked {
    let walk = WalkDir::new(root)
        .follow_links(links == Links::Follow)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !(e.file_type().is_dir() && skipped(e.file_name())));
    // Only a walk that went through a link can find a file twice.
    let mut linked = false;
    let (mut seen, mut stopped) = (0usize, false);
    let mut out = Vec::new();
    for entry in walk {
        if stop() {
            break;
        }
        let Ok(entry) = entry else { continue };
        linked |= entry.path_is_symlink();
        if !entry.file_type().is_file() {
            continue;
        }
        if seen >= max_files {
            stopped = true;
            break;
        }
        seen += 1;
        out.extend(found(root, entry.into_path(), keep));
    }
    if links == Links::Follow && linked {
        out = once_per_file(out);
    }
    Walked { files: out, stopped }
}

/// Directories still to list, and how many are being listed (each may add more).
struct Pending {
    dirs: Vec<PathBuf>,
    listing: usize,
}

/// A walk that follows no links (so cannot loop) on `threads` threads, each listing one
/// directory at a time from a shared stack.
#[cfg_attr(not(feature = "builtins"), allow(dead_code))]
fn in_parallel(
    root: &Path,
    threads: usize,
    max_files: usize,
    keep: &(dyn Fn(&str) -> bool + Sync),
    stop: &(dyn Fn() -> bool + Sync),
) -> Walked {
    let pending = Mutex::new(Pending {
        dirs: vec![root.to_path_buf()],
        listing: 0,
    });
    let changed = Condvar::new();
    let (seen, stopped) = (AtomicUsize::new(0), AtomicBool::new(false));
    let over = || stop() || stopped.load(Ordering::Relaxed);
    let worker = || {
        let mut out = Vec::new();
        while let Some(dir) = next_dir(&pending, &changed, &over) {
            // Handed back even if `keep` panics, so the other threads do not wait forever.
            let mut listed = Listed {
                pending: &pending,
                changed: &changed,
                subdirs: Vec::new(),
            };
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if over() {
                    break;
                }
                let Ok(kind) = entry.file_type() else { continue };
                if kind.is_dir() {
                    if !skipped(&entry.file_name()) {
                        listed.subdirs.push(entry.path());
                    }
                } else if kind.is_file() {
                    if seen.fetch_add(1, Ordering::Relaxed) >= max_files {
                        stopped.store(true, Ordering::Relaxed);
                        break;
                    }
                    out.extend(found(root, entry.path(), keep));
                }
            }
        }
        out
    };
    let files = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads).map(|_| s.spawn(worker)).collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    Walked {
        files,
        stopped: stopped.into_inner(),
    }
}

/// The next directory to list, waiting while others are being listed (they may find more);
/// `None` once none is left and none is being listed, or the walk is over.
fn next_dir(pending: &Mutex<Pending>, changed: &Condvar, over: &dyn Fn() -> bool) -> Option<PathBuf> {
    let mut p = pending.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if over() {
            return None;
        }
        if let Some(dir) = p.dirs.pop() {
            p.listing += 1;
            return Some(dir);
        }
        if p.listing == 0 {
            return None;
        }
        p = changed.wait(p).unwrap_or_else(PoisonError::into_inner);
    }
}

/// One directory being listed: on drop, its subdirectories join the stack and the waiting
/// threads look again.
struct Listed<'a> {
    pending: &'a Mutex<Pending>,
    changed: &'a Condvar,
    subdirs: Vec<PathBuf>,
}

impl Drop for Listed<'_> {
    fn drop(&mut self) {
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        p.dirs.append(&mut self.subdirs);
        p.listing -= 1;
        self.changed.notify_all();
    }
}

/// A directory never descended into.
fn skipped(name: &std::ffi::OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|d| name == *d)
}

/// The file at `path` as a [`Found`] when `keep` accepts its path relative to `root`.
fn found(root: &Path, path: PathBuf, keep: &dyn Fn(&str) -> bool) -> Option<Found> {
    let rel = slash_path(path.strip_prefix(root).ok()?);
    keep(&rel).then_some(Found { rel, path })
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
        assert_eq!(
            rels(root, Links::Follow, 1),
            [".hidden/h", "a/x.txt", "b/y.txt", "x_link"]
        );
        for threads in [1, 4] {
            let stopped = files(root, Links::Skip, threads, usize::MAX, |_| true, &|| true);
            assert!(stopped.files.is_empty());
            let bounded = files(root, Links::Skip, threads, 2, |_| true, &|| false);
            assert_eq!((bounded.files.len(), bounded.stopped), (2, true));
        }
    }

    #[test]
    fn a_panic_while_listing_ends_the_parallel_walk_instead_of_hanging_it() {
        // One file, one level down: while one thread lists `a` and panics, the others wait
        // for what it may find.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/f"), "").unwrap();
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        // On its own thread, so that a hang fails the test after the bound instead of hanging it.
        std::thread::spawn(move || {
            let walked = std::panic::catch_unwind(|| {
                files(
                    &root,
                    Links::Skip,
                    4,
                    usize::MAX,
                    |_| panic!("a filter that fails"),
                    &|| false,
                )
            });
            let _ = tx.send(walked.is_err());
        });
        let panicked = rx.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(
            panicked,
            Ok(true),
            "the panic reaches the caller and no thread waits forever"
        );
    }
}
