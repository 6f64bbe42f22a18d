//! `grep`: search file contents by regex under a directory, as `file:line:text` lines,
//! capped at `limit` (default 100). Binary (NUL-holding) and non-UTF-8 files are skipped.
//! Built on ripgrep's crates: the parallel `ignore` walk, `grep-regex`, `grep-searcher`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::UTF8;
use grep_searcher::{Searcher, SearcherBuilder};
use serde_json::{Value, json};

use super::args::Args;
use super::files::looks_binary;
use super::walk::{self, FileGlob, Found, StopFlag};
use super::{blocking, builtin};
use crate::result::ToolResult;
use crate::tool::Tool;

/// Matches returned when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 100;

/// Files larger than this are skipped rather than read into memory.
const MAX_SEARCH_BYTES: u64 = 64 * 1024 * 1024;

/// Below this many files, searching on the calling thread beats starting workers.
const PARALLEL_THRESHOLD: usize = 64;

pub(super) fn tool() -> Tool {
    builtin(
        "grep",
        "Search file contents by regex under a directory. Output is file:line:text matches.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for"},
                "path": {"type": "string", "description": "Directory to search (default: process cwd)"},
                "include": {"type": "string", "description": "Glob filter for file names"},
                "limit": {"type": "number", "description": "Maximum number of matches (default 100)"},
            },
            "required": ["pattern"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("grep", &args)?;
    let pattern = a.str("pattern")?;
    let root = a.opt_str("path")?.unwrap_or(".").to_owned();
    let include = a.opt_str("include")?;
    let limit = a.opt_count("limit")?.unwrap_or(DEFAULT_LIMIT);
    let matcher = RegexMatcherBuilder::new()
        // `^`/`$` anchor at line boundaries and no match spans lines, as in line-by-line search.
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        // A CRLF line ends where its text ends, as in the other ports' text-mode reads.
        .crlf(true)
        .build(pattern)
        .map_err(|e| format!("grep: invalid regex: {e}"))?;
    let include = include
        .map(FileGlob::new)
        .transpose()
        .map_err(|e| format!("grep: invalid include glob: {e}"))?;
    let stop = StopFlag::default();
    let _stop_on_drop = stop.on_drop();
    blocking("grep", move || {
        let keep = |rel: &str| include.as_ref().is_none_or(|g| g.is_match(rel));
        let files = walk::files("grep", &PathBuf::from(&root), &root, keep, &stop)?;
        let matches = search(&files, &matcher, limit, &stop);
        let count = matches.len();
        Ok(ToolResult::success(matches.join("\n")).with_meta("count", count))
    })
    .await
}

/// The first `limit` matching lines over `files`, in file order then line order.
///
/// Workers claim files in ascending order and stop claiming once `limit` matches are in
/// hand. Every claimed file is searched to the end, so the searched files always form a
/// prefix of the list holding at least `limit` matches (or all of them): the first `limit`
/// in order are exactly the answer.
fn search(files: &[Found], matcher: &RegexMatcher, limit: usize, stop: &StopFlag) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let found = AtomicUsize::new(0);
    let worker = || {
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .line_terminator(LineTerminator::crlf())
            .build();
        let mut hits: Vec<(usize, Vec<String>)> = Vec::new();
        while found.load(Ordering::Relaxed) < limit && !stop.is_set() {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(file) = files.get(i) else { break };
            let lines = search_file(&mut searcher, matcher, file, limit);
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
    hits.into_iter()
        .flat_map(|(_, lines)| lines)
        .take(limit)
        .collect()
}

/// Up to `limit` `rel:line:text` matches in one file; none for a file that is unreadable,
/// too large, binary or not UTF-8.
fn search_file(searcher: &mut Searcher, matcher: &RegexMatcher, file: &Found, limit: usize) -> Vec<String> {
    let too_big = std::fs::metadata(&file.path).map_or(true, |m| m.len() > MAX_SEARCH_BYTES);
    if too_big {
        return Vec::new();
    }
    let Ok(bytes) = std::fs::read(&file.path) else {
        return Vec::new();
    };
    if looks_binary(&bytes) || std::str::from_utf8(&bytes).is_err() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let sink = UTF8(|line_number, line: &str| {
        let text = line.strip_suffix('\n').unwrap_or(line);
        let text = text.strip_suffix('\r').unwrap_or(text);
        lines.push(format!("{}:{line_number}:{text}", file.rel));
        Ok(lines.len() < limit)
    });
    // The bytes are valid UTF-8 and the sink never fails, so this cannot error.
    if let Err(e) = searcher.search_slice(matcher, &bytes, sink) {
        tracing::debug!(file = %file.rel, error = %e, "grep: search failed; file skipped");
    }
    lines
}
