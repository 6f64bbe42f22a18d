//! Reading and writing files for the file built-ins, with one set of bounds and one wording
//! for what can go wrong.
//!
//! Reads are bounded by the bytes actually read, never by the size the filesystem reports
//! (`/proc` files report 0, a device reports nothing), and only regular files are opened:
//! a FIFO would block the open until a writer appears and a device never ends. Writes go to
//! a temporary file in the same directory, renamed over the target, so a reader sees the old
//! content or the new, never a half-written file.

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::path::Path;

/// The most a built-in reads into memory from one file (and the most `read` returns).
pub(super) const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// An I/O failure on `shown` (the path as the model gave it), worded so the model can act.
pub(super) fn io_error(tool: &str, shown: &str, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => format!("{tool}: file not found: {shown}"),
        io::ErrorKind::PermissionDenied => format!("{tool}: permission denied: {shown}"),
        io::ErrorKind::IsADirectory => format!("{tool}: {shown} is a directory, not a file"),
        io::ErrorKind::NotADirectory => format!("{tool}: a parent of {shown} is not a directory"),
        _ => format!("{tool}: cannot access {shown}: {err}"),
    }
}

/// `true` when `bytes` hold a NUL byte: no text file does (git and ripgrep use the same
/// test). `contains` on bytes is a memchr scan, cheap next to the read itself.
pub(super) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

/// What a file that is not a regular file is, for the refusal message.
fn kind_of(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Refuse what is not a regular file, with the directory case worded as before.
fn check_regular(tool: &str, shown: &str, meta: &Metadata) -> Result<(), String> {
    if meta.is_dir() {
        return Err(format!("{tool}: {shown} is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(format!(
            "{tool}: {shown} is {}, not a regular file",
            kind_of(meta)
        ));
    }
    Ok(())
}

/// Open `path` for reading without blocking on a FIFO (a plain open waits for a writer);
/// returns the handle and what it is. Reading a regular file is unaffected.
pub(super) fn open_nonblocking(path: &Path) -> io::Result<(File, Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// Open `path` for reading if it is a regular file; returns it with the size its metadata
/// reports (a hint only: `/proc` files report 0).
pub(super) fn open_regular(tool: &str, path: &Path, shown: &str) -> Result<(File, u64), String> {
    // Checked by path first, for the directory message and so a device is never opened.
    let meta = std::fs::metadata(path).map_err(|e| io_error(tool, shown, &e))?;
    check_regular(tool, shown, &meta)?;
    let (file, meta) = open_nonblocking(path).map_err(|e| io_error(tool, shown, &e))?;
    // And what was opened is what was checked, should the path have been swapped meanwhile.
    check_regular(tool, shown, &meta)?;
    Ok((file, meta.len()))
}

/// Append at most `limit` bytes of `file` to `buf`; `false` when the file holds more.
pub(super) fn read_at_most(file: &mut File, limit: u64, buf: &mut Vec<u8>) -> io::Result<bool> {
    let start = buf.len();
    file.take(limit + 1).read_to_end(buf)?;
    Ok((buf.len() - start) as u64 <= limit)
}

/// The whole of a regular file of at most [`MAX_FILE_BYTES`], as bytes.
pub(super) fn read_bytes(tool: &str, path: &Path, shown: &str) -> Result<Vec<u8>, String> {
    let (mut file, size) = open_regular(tool, path, shown)?;
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{tool}: {shown} is {size} bytes, over the {MAX_FILE_BYTES}-byte limit"
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    if !read_at_most(&mut file, MAX_FILE_BYTES, &mut bytes).map_err(|e| io_error(tool, shown, &e))? {
        return Err(format!(
            "{tool}: {shown} holds more than {MAX_FILE_BYTES} bytes, over the limit"
        ));
    }
    Ok(bytes)
}

/// The whole of a UTF-8 text file, refusing directories, special files, invalid UTF-8 and
/// oversized files.
pub(super) fn read_text(tool: &str, path: &Path, shown: &str) -> Result<String, String> {
    let bytes = read_bytes(tool, path, shown)?;
    text_of(tool, shown, bytes)
}

/// `bytes` as text, or the refusal a model can act on. A NUL byte is valid UTF-8 and
/// passes, as in the Python port: only invalid UTF-8 is refused.
pub(super) fn text_of(tool: &str, shown: &str, bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| format!("{tool}: {shown} is not valid UTF-8 text"))
}

/// `content` written to a temporary file beside `target`, ready to be renamed over it
/// ([`tempfile::NamedTempFile::persist`]); dropping it removes it. The temporary file gets
/// the target's permissions (an executable script stays executable), or a new file's.
///
/// A target that exists must be a regular file this process may write: the rename would
/// otherwise replace a read-only file, or a FIFO, that a plain write could not.
pub(super) fn stage_write(target: &Path, content: &[u8]) -> io::Result<tempfile::NamedTempFile> {
    let existing = match std::fs::metadata(target) {
        Ok(meta) if meta.is_dir() => return Err(io::ErrorKind::IsADirectory.into()),
        Ok(meta) if !meta.is_file() => {
            return Err(io::Error::other(format!(
                "it is {}, not a regular file",
                kind_of(&meta)
            )));
        }
        Ok(meta) => {
            // Opening for writing (without truncating) asks the OS whether we may.
            std::fs::OpenOptions::new().write(true).open(target)?;
            Some(meta)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".toolnexus");
    #[cfg(unix)]
    {
        // A new file gets what a plain create would: 0666 less the umask.
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(content)?;
    if let Some(meta) = existing {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    // On disk before the rename makes it visible: a crash leaves the old file or the new.
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// Replace `target` with `content` atomically (see [`stage_write`]).
pub(super) fn write_atomic(target: &Path, content: &[u8]) -> io::Result<()> {
    stage_write(target, content)?
        .persist(target)
        .map(drop)
        .map_err(|e| e.error)
}
