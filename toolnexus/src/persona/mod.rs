//! Personas (SPEC §7E): an agent whose identity lives in a directory of Markdown files,
//! with durable memory it edits itself and a heartbeat so it can act unprompted.
//!
//! - [`Persona::from_dir`] composes the directory's [`BOOTSTRAP_ORDER`] files into one system
//!   prompt (the *soul*), each as a `## <file>` section, once: a frozen snapshot for the
//!   session, so the prompt prefix stays cache-stable.
//! - [`memory_tool`] (also [`Persona::memory_tool`]) edits `MEMORY.md` / `USER.md` on disk;
//!   what it writes loads at the next session's `from_dir`. Opt-in: it is never one of the
//!   default built-ins.
//! - [`Heartbeat`] turns timer ticks into heartbeat turns: ticks coalesce, a
//!   [`HEARTBEAT_OK`] reply is silent, anything else is a report for the host.
//!
//! ```
//! use toolnexus::persona::Persona;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("SOUL.md"), "You are Ava, a calm support assistant.")?;
//! std::fs::write(dir.path().join("MEMORY.md"), "- Onboarded 2026-07.")?;
//! let persona = Persona::from_dir(dir.path())?;
//! assert_eq!(
//!     persona.soul(),
//!     "## SOUL.md\n\nYou are Ava, a calm support assistant.\n\n## MEMORY.md\n\n- Onboarded 2026-07."
//! );
//! assert_eq!(persona.sections(), ["SOUL.md", "MEMORY.md"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod heartbeat;
mod memory;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use heartbeat::{Beat, HEARTBEAT_OK, HEARTBEAT_PROMPT, Heartbeat, Ticks};
pub use memory::{MemoryAction, MemoryTarget, memory_tool};

use crate::tool::Tool;

/// The files a persona directory may hold, in the order their sections are composed.
pub const BOOTSTRAP_ORDER: [&str; 7] = [
    "AGENTS.md",
    "SOUL.md",
    "IDENTITY.md",
    "USER.md",
    "TOOLS.md",
    "HEARTBEAT.md",
    "MEMORY.md",
];

/// Each file is read up to this many bytes (2 MiB); the rest is left out with a notice.
pub const MAX_FILE_BYTES: usize = 2_097_152;

/// A persona: its directory and the soul composed from it at load time.
#[derive(Clone, Debug)]
pub struct Persona {
    dir: PathBuf,
    soul: String,
    sections: Vec<&'static str>,
    truncated: Vec<&'static str>,
}

/// Why a persona directory could not be loaded. Each names the directory or file.
#[derive(Debug, thiserror::Error)]
pub enum PersonaError {
    /// The directory does not exist or is not a directory.
    #[error("persona directory not found: {}", dir.display())]
    NotFound {
        /// The directory asked for.
        dir: PathBuf,
    },
    /// A file is not UTF-8 text.
    #[error("{}: not UTF-8 text (invalid byte at offset {offset})", file.display())]
    NotUtf8 {
        /// The file.
        file: PathBuf,
        /// Where its first invalid byte is.
        offset: usize,
    },
    /// A file could not be read.
    #[error("{}: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl Persona {
    /// Load the persona in `dir`: each present [`BOOTSTRAP_ORDER`] file becomes a
    /// `## <file>` section of the soul (absent ones are skipped). A file over
    /// [`MAX_FILE_BYTES`] is cut at the last whole character within the cap and ends with a
    /// notice; the file itself is not touched.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Persona, PersonaError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(PersonaError::NotFound { dir: dir.to_owned() });
        }
        let mut persona = Persona {
            dir: dir.to_owned(),
            soul: String::new(),
            sections: Vec::new(),
            truncated: Vec::new(),
        };
        for name in BOOTSTRAP_ORDER {
            let Some(file) = read_capped(&dir.join(name))? else {
                continue;
            };
            if !persona.soul.is_empty() {
                persona.soul.push_str("\n\n");
            }
            persona
                .soul
                .push_str(&format!("## {name}\n\n{}", file.text.trim()));
            if let Some(size) = file.cut_from {
                persona.soul.push_str(&format!(
                    "\n\n[truncated: {name} is {size} bytes; only its first {MAX_FILE_BYTES} bytes are loaded]"
                ));
                persona.truncated.push(name);
            }
            persona.sections.push(name);
        }
        Ok(persona)
    }

    /// The composed system prompt (empty when the directory holds none of the files).
    pub fn soul(&self) -> &str {
        &self.soul
    }

    /// The files that made a section, in order.
    pub fn sections(&self) -> &[&'static str] {
        &self.sections
    }

    /// The files cut at [`MAX_FILE_BYTES`].
    pub fn truncated(&self) -> &[&'static str] {
        &self.truncated
    }

    /// The persona's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The `memory` tool over this persona's directory ([`memory_tool`]).
    pub fn memory_tool(&self) -> Tool {
        memory_tool(&self.dir)
    }
}

impl fmt::Display for Persona {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "persona {} ({})", self.dir.display(), self.sections.join(", "))
    }
}

/// A file's text read up to the cap; `cut_from` is its full size when it was cut.
struct Capped {
    text: String,
    cut_from: Option<u64>,
}

/// Read at most `MAX_FILE_BYTES + 1` bytes of `path`; `None` when it does not exist.
fn read_capped(path: &Path) -> Result<Option<Capped>, PersonaError> {
    let read_err = |source| PersonaError::Read {
        file: path.to_owned(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    let cut_from = if bytes.len() > MAX_FILE_BYTES {
        bytes.truncate(MAX_FILE_BYTES);
        Some(std::fs::metadata(path).map_err(read_err)?.len())
    } else {
        None
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // The cap may split the last character: drop that partial character only.
        Err(e) if cut_from.is_some() && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(e) => {
            return Err(PersonaError::NotUtf8 {
                file: path.to_owned(),
                offset: e.utf8_error().valid_up_to(),
            });
        }
    };
    Ok(Some(Capped { text, cut_from }))
}
