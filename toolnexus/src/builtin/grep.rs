//! `grep`: search file contents by regex under a directory, as `file:line:text` lines,
//! capped at `limit` (default 100). Binary (NUL-holding) and non-UTF-8 files are skipped.
//! Matching is ripgrep's `grep-regex`, configured so that no match spans a line; each match
//! found in a whole file then names its line directly (what `grep-searcher` does for a file
//! already in memory, without its transcoding machinery, which valid UTF-8 never needs).
//!
//! Bounded every way a tree can be large: files looked at ([`MAX_FILES`]), bytes per file
//! and in all, matches whatever `limit` asks, and bytes per printed line.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::files::{looks_binary, open_nonblocking, read_at_most};
use super::walk::{self, FileGlob, Found, MAX_FILES, StopFlag};
use super::workspace::Workspace;
use super::{blocking, builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// Matches returned when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 100;

/// The most matches one call returns, whatever its `limit`.
const MAX_MATCHES: usize = 10_000;

/// Files larger than this are skipped rather than read into memory.
const MAX_SEARCH_BYTES: u64 = 64 * 1024 * 1024;

/// The most one call reads across all files; past it no further file is started.
const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

/// A matched line longer than this is cut (a minified bundle is one line of megabytes).
const MAX_LINE_BYTES: usize = 2000;

/// Below this many files, searching on the calling thread beats starting workers.
const PARALLEL_THRESHOLD: usize = 64;

/// `grep`'s arguments.
#[derive(JsonSchema)]
struct GrepArgs {
    /// Regular expression to search for
    pattern: String,
    /// Directory to search (default: process cwd)
    path: Option<String>,
    /// Glob filter for file names
    include: Option<String>,
    /// Maximum number of matches (default 100)
    #[schemars(with = "Option<f64>")]
    limit: Option<usize>,
}

impl GrepArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("grep", args)?;
        Ok(Self {
            pattern: a.str("pattern")?.to_owned(),
            path: a.opt_str("path")?.map(str::to_owned),
            include: a.opt_str("include")?.map(str::to_owned),
            limit: a.opt_count("limit")?,
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "grep",
        "Search file contents by regex under a directory. Output is file:line:text matches.",
        input_schema::<GrepArgs>(),
        move |args, _| run(ws.clone(), args),
    )
}

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let args = GrepArgs::parse(&args)?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_MATCHES);
    let matcher = line_matcher(&args.pattern).map_err(|e| format!("grep: invalid regex: {e}"))?;
    let include = args
        .include
        .as_deref()
        .map(FileGlob::new)
        .transpose()
        .map_err(|e| format!("grep: invalid include glob: {e}"))?;
    let stop = StopFlag::default();
    let _stop_on_drop = stop.on_drop();
    blocking("grep", move || {
        let (root, shown) = match &args.path {
            Some(p) => (ws.resolve("grep", p)?, p.clone()),
            None => ws.dir("grep")?,
        };
        let keep = |rel: &str| include.as_ref().is_none_or(|g| g.is_match(rel));
        let walk = walk::files("grep", &root, &shown, keep, &stop, MAX_FILES)?;
        let found = search(&walk.files, &matcher, limit, &stop, MAX_TOTAL_BYTES);
        let stopped = if walk.stopped {
            Some(format!("looking at {MAX_FILES} files"))
        } else {
            found
                .out_of_bytes
                .then(|| format!("reading {MAX_TOTAL_BYTES} bytes"))
        };
        Ok(walk::listing(
            "grep",
            &found.lines,
            stopped,
            "the path or the include glob",
        ))
    })
    .await
}

/// What a search found.
struct Searched {
    lines: Vec<String>,
    /// The byte budget ran out before every file was searched.
    out_of_bytes: bool,
}

/// The first `limit` matching lines over `files`, in file order then line order, reading at
/// most about `budget` bytes in all.
///
/// Workers claim files in ascending order and stop claiming once `limit` matches are in
/// hand (or the budget is spent). Every claimed file is searched to the end, so the searched
/// files always form a prefix of the list holding at least `limit` matches (or all of them):
/// the first `limit` in order are exactly the answer.
fn search(files: &[Found], matcher: &RegexMatcher, limit: usize, stop: &StopFlag, budget: u64) -> Searched {
    let next = AtomicUsize::new(0);
    let found = AtomicUsize::new(0);
    let read = AtomicU64::new(0);
    let out_of_bytes = AtomicBool::new(false);
    let worker = || {
        let mut buf = Vec::new();
        let mut hits: Vec<(usize, Vec<String>)> = Vec::new();
        while found.load(Ordering::Relaxed) < limit && !stop.is_set() {
            if read.load(Ordering::Relaxed) >= budget {
                out_of_bytes.store(true, Ordering::Relaxed);
                break;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(file) = files.get(i) else { break };
            buf.clear();
            if !read_file(file, &mut buf) {
                continue;
            }
            read.fetch_add(buf.len() as u64, Ordering::Relaxed);
            let lines = search_bytes(matcher, file, &buf, limit);
            if !lines.is_empty() {
                found.fetch_add(lines.len(), Ordering::Relaxed);
                hits.push((i, lines));
            }
        }
        hits
    };
    let mut hits = if files.len() < PARALLEL_THRESHOLD {
        worker()
    } else {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..walk::threads()).map(|_| s.spawn(worker)).collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        })
    };
    hits.sort_unstable_by_key(|(i, _)| *i);
    let lines = hits
        .into_iter()
        .flat_map(|(_, lines)| lines)
        .take(limit)
        .collect();
    Searched {
        lines,
        out_of_bytes: out_of_bytes.into_inner(),
    }
}

/// Read one found file into `buf`, bounded by the bytes read; `false` for a file that is
/// unreadable, no longer a regular file, or larger than [`MAX_SEARCH_BYTES`].
fn read_file(file: &Found, buf: &mut Vec<u8>) -> bool {
    let Ok((mut handle, meta)) = open_nonblocking(&file.path) else {
        return false;
    };
    meta.is_file()
        && meta.len() <= MAX_SEARCH_BYTES
        && read_at_most(&mut handle, MAX_SEARCH_BYTES, buf).unwrap_or(false)
}

/// `pattern` as grep applies it, line by line.
fn line_matcher(pattern: &str) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        // `^`/`$` anchor at line boundaries and no match spans lines, as in line-by-line search.
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        // A CRLF line ends where its text ends, as in the other ports' text-mode reads.
        .crlf(true)
        .build(pattern)
}

/// Up to `limit` `rel:line:text` matches in one file's bytes; none for a binary or
/// non-UTF-8 file. A match cannot span lines (the matcher's line terminator), so the line
/// around each match is the matching line; the search resumes at the next line.
fn search_bytes(matcher: &RegexMatcher, file: &Found, bytes: &[u8], limit: usize) -> Vec<String> {
    if looks_binary(bytes) {
        return Vec::new();
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    // `at` is always the start of a line; `counted` the line start `number` belongs to.
    let (mut at, mut counted, mut number) = (0, 0, 1);
    while at < bytes.len() && lines.len() < limit {
        let found = match matcher.find_at(bytes, at) {
            Ok(Some(found)) => found,
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(file = %file.rel, error = %e, "grep: search failed; file skipped");
                break;
            }
        };
        // The empty string after a final line break is no line.
        if found.start() == bytes.len() && bytes.ends_with(b"\n") {
            break;
        }
        let start = memchr::memrchr(b'\n', &bytes[at..found.start()]).map_or(at, |i| at + i + 1);
        let end = memchr::memchr(b'\n', &bytes[found.start()..]).map_or(bytes.len(), |i| found.start() + i);
        number += memchr::memchr_iter(b'\n', &bytes[counted..start]).count();
        counted = start;
        // Both ends are at a line break or an end of the text, so at character boundaries.
        let line = &text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        lines.push(format!("{}:{number}:{}", file.rel, cut_line(line)));
        at = end + 1;
    }
    lines
}

/// `text`, or its first [`MAX_LINE_BYTES`] (at a character boundary) and how much was cut.
fn cut_line(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_LINE_BYTES {
        return text.into();
    }
    let mut end = MAX_LINE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [{} more bytes on this line]", &text[..end], text.len() - end).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_budget_stops_new_files_and_keeps_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<Found> = (0..5)
            .map(|i| {
                let path = dir.path().join(format!("f{i}"));
                std::fs::write(&path, "hit\n".repeat(25)).unwrap(); // 100 bytes
                Found {
                    rel: format!("f{i}"),
                    path,
                }
            })
            .collect();
        let matcher = line_matcher("hit").unwrap();
        let stop = StopFlag::default();
        let all = search(&files, &matcher, 1000, &stop, 10_000);
        assert_eq!((all.lines.len(), all.out_of_bytes), (125, false));
        // 250 bytes of budget: files 0..3 are started (the third crosses it), then it stops.
        let part = search(&files, &matcher, 1000, &stop, 250);
        assert_eq!((part.lines.len(), part.out_of_bytes), (75, true));
        assert_eq!(part.lines[74], "f2:25:hit");
    }

    #[test]
    fn each_matching_line_once_with_its_number() {
        let file = Found {
            rel: "f".into(),
            path: "f".into(),
        };
        let search = |pattern: &str, text: &str, limit: usize| {
            search_bytes(&line_matcher(pattern).unwrap(), &file, text.as_bytes(), limit)
        };
        let text = "alpha\r\nbeta beta\n\ngamma\ndelta";
        assert_eq!(search("beta", text, 100), ["f:2:beta beta"]);
        assert_eq!(
            search("a$", text, 100),
            ["f:1:alpha", "f:2:beta beta", "f:4:gamma", "f:5:delta"]
        );
        assert_eq!(search("a", text, 2), ["f:1:alpha", "f:2:beta beta"]);
        assert_eq!(search("^$", text, 100), ["f:3:"]);
        assert!(search("^$", "a\n", 100).is_empty());
        // An empty match names its line once; no line follows the last line break.
        assert_eq!(search("x*", "a\nb\n", 100), ["f:1:a", "f:2:b"]);
        assert_eq!(search("é+", "café\nnaïve\nété", 100), ["f:1:café", "f:3:été"]);
        assert!(search("a", "", 100).is_empty());
        // A match can never span lines: a pattern that must is refused.
        assert!(line_matcher("a\nb").is_err());
    }

    #[test]
    fn long_lines_are_cut_at_a_character_boundary() {
        assert_eq!(cut_line("short"), "short");
        let long = "é".repeat(1500); // 3000 bytes
        let cut = cut_line(&long);
        assert_eq!(
            cut,
            format!("{}… [1000 more bytes on this line]", "é".repeat(1000))
        );
    }
}
