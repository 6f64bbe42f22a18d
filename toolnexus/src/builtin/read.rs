//! `read`: a UTF-8 text file, whole or as a 1-based line window; a known media file
//! (png/jpg/jpeg/gif/webp/pdf/mp3/wav) comes back as a content part instead.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Value, json};

use super::args::Args;
use super::files::{MAX_FILE_BYTES, check_file, io_error, looks_binary, read_text};
use super::{blocking, builtin};
use crate::content::{ContentError, ContentPart, mime_for_extension};
use crate::result::ToolResult;
use crate::tool::Tool;

pub(super) fn tool() -> Tool {
    builtin(
        "read",
        "Read a file. A known media file (png/jpg/jpeg/gif/webp/pdf/mp3/wav) comes back as a content part; otherwise it is read as UTF-8 text, and with offset/limit only that line window is returned.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read"},
                "offset": {"type": "number", "description": "1-based line to start from"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"},
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("read", &args)?;
    let shown = a.str("path")?.to_owned();
    let offset = a.opt_count("offset")?;
    let limit = a.opt_count("limit")?;
    blocking("read", move || {
        let path = Path::new(&shown);
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        if mime_for_extension(ext).is_some() {
            return read_media(path, &shown);
        }
        if offset.is_none() && limit.is_none() {
            return read_text("read", path, &shown).map(ToolResult::success);
        }
        read_window(path, &shown, offset.unwrap_or(1).max(1) - 1, limit).map(ToolResult::success)
    })
    .await
}

fn read_media(path: &Path, shown: &str) -> Result<ToolResult, String> {
    check_file("read", path, shown)?;
    let part = ContentPart::from_path(path, Some(MAX_FILE_BYTES as usize)).map_err(|e| match e {
        ContentError::Io { source, .. } => io_error("read", shown, &source),
        ContentError::TooLarge { size, limit } => {
            format!("read: {shown} is {size} bytes, over the {limit}-byte limit")
        }
        other => format!("read: {shown}: {other}"),
    })?;
    let summary = part.summary();
    // summary() is "image (image/png, 82 bytes)"; the tool reports "<path> (image/png, 82 bytes)".
    let detail = summary.split_once(' ').map_or("", |(_, rest)| rest);
    Ok(ToolResult::success(format!("{shown} {detail}")).with_parts([part]))
}

/// Lines `start..start+limit` (0-based) of the file, where lines are what splitting the text
/// on `"\n"` gives — so a trailing newline ends in one last empty line, as in the other ports.
/// Streams, so the window of a huge file costs only the window.
fn read_window(path: &Path, shown: &str, start: usize, limit: Option<usize>) -> Result<String, String> {
    check_file("read", path, shown)?;
    let file = File::open(path).map_err(|e| io_error("read", shown, &e))?;
    let mut reader = BufReader::new(file);
    let io = |e: std::io::Error| io_error("read", shown, &e);
    let end = limit.map_or(usize::MAX, |n| start.saturating_add(n));
    let mut window: Vec<u8> = Vec::new();
    let mut line = Vec::new();
    let mut index = 0;
    while index < end {
        let more = if index < start {
            reader.skip_until(b'\n').map_err(io)? > 0 && {
                // skip_until reports bytes consumed; a line without '\n' is the last one.
                index += 1;
                true
            }
        } else {
            line.clear();
            // One byte over the budget is enough to know the window is too big.
            let budget = MAX_FILE_BYTES + 1 - window.len() as u64;
            (&mut reader)
                .take(budget)
                .read_until(b'\n', &mut line)
                .map_err(io)?;
            let terminated = line.last() == Some(&b'\n');
            if terminated {
                line.pop();
            }
            if index > start {
                window.push(b'\n');
            }
            window.extend_from_slice(&line);
            if window.len() as u64 > MAX_FILE_BYTES {
                return Err(format!(
                    "read: the requested lines of {shown} exceed the {MAX_FILE_BYTES}-byte limit; pass a smaller limit"
                ));
            }
            index += 1;
            terminated
        };
        if !more {
            break;
        }
    }
    if looks_binary(&window) {
        return Err(format!("read: {shown} is a binary file, not text"));
    }
    String::from_utf8(window).map_err(|_| format!("read: {shown} is not valid UTF-8 text"))
}
