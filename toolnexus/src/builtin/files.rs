//! Reading text files for the file built-ins (`read`, `edit`, `apply_patch`), with one set
//! of bounds and one wording for what can go wrong.

use std::io;
use std::path::Path;

/// The most a built-in reads into memory from one file (and the most `read` returns).
pub(super) const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// An I/O failure on `shown` (the path as the model gave it), worded so the model can act.
pub(super) fn io_error(tool: &str, shown: &str, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => format!("{tool}: file not found: {shown}"),
        io::ErrorKind::PermissionDenied => format!("{tool}: permission denied: {shown}"),
        io::ErrorKind::IsADirectory => format!("{tool}: {shown} is a directory, not a file"),
        _ => format!("{tool}: cannot access {shown}: {err}"),
    }
}

/// `true` when `bytes` hold a NUL byte: no text file does (git and ripgrep use the same
/// test). `contains` on bytes is a memchr scan, cheap next to the read itself.
pub(super) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

/// Check that `path` is a regular file of at most [`MAX_FILE_BYTES`]; returns its size.
pub(super) fn check_file(tool: &str, path: &Path, shown: &str) -> Result<u64, String> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(tool, shown, &e))?;
    if meta.is_dir() {
        return Err(format!("{tool}: {shown} is a directory, not a file"));
    }
    Ok(meta.len())
}

/// The whole of a UTF-8 text file, refusing directories, binaries and oversized files.
pub(super) fn read_text(tool: &str, path: &Path, shown: &str) -> Result<String, String> {
    let size = check_file(tool, path, shown)?;
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{tool}: {shown} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| io_error(tool, shown, &e))?;
    if looks_binary(&bytes) {
        return Err(format!("{tool}: {shown} is a binary file, not text"));
    }
    String::from_utf8(bytes).map_err(|_| format!("{tool}: {shown} is not valid UTF-8 text"))
}
