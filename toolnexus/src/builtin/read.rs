//! `read`: a UTF-8 text file, whole or as a 1-based line window; a known media file
//! (png/jpg/jpeg/gif/webp/pdf/mp3/wav) comes back as a content part instead.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::files::{MAX_FILE_BYTES, io_error, open_regular, read_text, text_of};
use super::workspace::Workspace;
use super::{blocking, builtin, input_schema};
use crate::content::{ContentError, ContentPart, mime_for_extension};
use crate::result::ToolResult;
use crate::tool::Tool;

/// `read`'s arguments.
#[derive(JsonSchema)]
struct ReadArgs {
    /// Path to the file to read
    path: String,
    /// 1-based line to start from
    #[schemars(with = "Option<f64>")]
    offset: Option<usize>,
    /// Maximum number of lines to read
    #[schemars(with = "Option<f64>")]
    limit: Option<usize>,
}

impl ReadArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("read", args)?;
        Ok(Self {
            path: a.str("path")?.to_owned(),
            offset: a.opt_count("offset")?,
            limit: a.opt_count("limit")?,
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "read",
        "Read a file. A known media file (png/jpg/jpeg/gif/webp/pdf/mp3/wav) comes back as a content part; otherwise it is read as UTF-8 text, and with offset/limit only that line window is returned.",
        input_schema::<ReadArgs>(),
        move |args, _| run(ws.clone(), args),
    )
}

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let args = ReadArgs::parse(&args)?;
    blocking("read", move || {
        let shown = &args.path;
        let path = ws.resolve("read", shown)?;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        if mime_for_extension(ext).is_some() {
            return read_media(&path, shown);
        }
        if args.offset.is_none() && args.limit.is_none() {
            return read_text("read", &path, shown).map(ToolResult::success);
        }
        let start = args.offset.unwrap_or(1).max(1) - 1;
        read_window(&path, shown, start, args.limit).map(ToolResult::success)
    })
    .await
}

fn read_media(path: &Path, shown: &str) -> Result<ToolResult, String> {
    // Refuses FIFOs and devices before anything reads them.
    open_regular("read", path, shown)?;
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
    let (file, _) = open_regular("read", path, shown)?;
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
    text_of("read", shown, window)
}
