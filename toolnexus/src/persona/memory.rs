//! The `memory` tool (SPEC §7E): the persona edits its own `MEMORY.md` and its model of the
//! user, `USER.md`. Every action rewrites the file atomically (a temporary file in the same
//! directory, then a rename), so a crash leaves the old file or the new one, never half of
//! one. The running session's prompt is not changed: the next session's
//! [`Persona::from_dir`](super::Persona::from_dir) reads what was written.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::MAX_FILE_BYTES;
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource};

/// What the tool's description tells the model.
const DESCRIPTION: &str = "Persist durable memory across sessions. action=add appends an entry; \
     action=replace swaps existing text for `with`; action=remove deletes existing text. \
     target=self (MEMORY.md, your own notes; the default) or user (USER.md, what you know about \
     the user). Writes go to disk and load at the START of your next session: they do not change \
     your current context.";

/// One of the tool's actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryAction {
    /// Append `- <text>` as a new entry.
    Add,
    /// Replace every occurrence of `text` with `with`.
    Replace,
    /// Delete every occurrence of `text`.
    Remove,
}

impl FromStr for MemoryAction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "add" => Ok(Self::Add),
            "replace" => Ok(Self::Replace),
            "remove" => Ok(Self::Remove),
            other => Err(format!("unknown action \"{other}\": use add, replace or remove")),
        }
    }
}

/// Which file an action edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemoryTarget {
    /// `MEMORY.md`, the persona's own notes.
    #[default]
    SelfNotes,
    /// `USER.md`, its model of the user.
    User,
}

impl MemoryTarget {
    /// The file this target edits.
    pub fn file_name(self) -> &'static str {
        match self {
            Self::SelfNotes => "MEMORY.md",
            Self::User => "USER.md",
        }
    }
}

impl FromStr for MemoryTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "self" => Ok(Self::SelfNotes),
            "user" => Ok(Self::User),
            other => Err(format!(
                "unknown target \"{other}\": use self (MEMORY.md) or user (USER.md)"
            )),
        }
    }
}

/// The `memory` tool over `dir`. Calls are serialized, so parallel calls of one turn never
/// lose each other's writes.
///
/// ```
/// use serde_json::json;
/// use toolnexus::persona::memory_tool;
/// use toolnexus::ToolContext;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let home = tempfile::tempdir().unwrap();
/// let memory = memory_tool(home.path());
/// let r = memory.execute(json!({"action": "add", "target": "user", "text": "Prefers dark roast"}), ToolContext::default()).await;
/// assert!(!r.is_error);
/// assert_eq!(std::fs::read_to_string(home.path().join("USER.md")).unwrap(), "- Prefers dark roast\n");
/// let r = memory.execute(json!({"action": "remove", "text": "tea"}), ToolContext::default()).await;
/// assert!(r.is_error);
/// assert_eq!(r.output, "\"tea\" is not in MEMORY.md: nothing was changed (read the file's section in your prompt for its exact text)");
/// # });
/// ```
pub fn memory_tool(dir: impl Into<PathBuf>) -> Tool {
    let dir: Arc<Path> = Arc::from(dir.into());
    let lock = Arc::new(Mutex::new(()));
    Tool::new("memory", move |args: Value, _| {
        let (dir, lock) = (dir.clone(), lock.clone());
        async move {
            let _one_at_a_time = lock.lock().await;
            match apply(&dir, &args).await {
                Ok(done) => ToolResult::success(done),
                Err(why) => ToolResult::failure(why),
            }
        }
    })
    .with_description(DESCRIPTION)
    .with_schema(json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
            "target": {"type": "string", "enum": ["self", "user"], "description": "self (MEMORY.md, default) or user (USER.md)"},
            "text": {"type": "string", "description": "For add: the entry. For replace/remove: the existing text."},
            "with": {"type": "string", "description": "For replace: the new text."}
        },
        "required": ["action", "text"]
    }))
    .with_source(ToolSource::Builtin)
}

/// Run one call; `Err` is the message the model reads.
async fn apply(dir: &Path, args: &Value) -> Result<String, String> {
    let action: MemoryAction = args["action"]
        .as_str()
        .ok_or("missing \"action\": use add, replace or remove")?
        .parse()?;
    let target: MemoryTarget = match args.get("target").and_then(Value::as_str) {
        Some(t) => t.parse()?,
        None => MemoryTarget::default(),
    };
    let text = args["text"]
        .as_str()
        .filter(|t| !t.trim().is_empty())
        .ok_or("missing \"text\": the entry to add, or the existing text to replace or remove")?;
    let name = target.file_name();
    let path = dir.join(name);
    let current = match tokio::fs::read(&path).await {
        Ok(bytes) => {
            String::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8 text: not changed"))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {name}: {e}")),
    };
    let next = match action {
        MemoryAction::Add => format!("{}\n- {text}\n", current.trim_end())
            .trim_start()
            .to_owned(),
        MemoryAction::Replace | MemoryAction::Remove if !current.contains(text) => {
            return Err(format!(
                "\"{text}\" is not in {name}: nothing was changed (read the file's section in your prompt for its exact text)"
            ));
        }
        MemoryAction::Replace => {
            let with = args["with"]
                .as_str()
                .ok_or("replace needs \"with\": the new text (to delete, use remove)")?;
            current.replace(text, with)
        }
        MemoryAction::Remove => current.replace(text, ""),
    };
    if next.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{name} would grow past {MAX_FILE_BYTES} bytes, more than a session loads: remove or replace old entries first"
        ));
    }
    write_atomically(dir, name, next.as_bytes()).await?;
    Ok(format!(
        "saved to {name} ({}); it loads at the start of your next session",
        match action {
            MemoryAction::Add => "added",
            MemoryAction::Replace => "replaced",
            MemoryAction::Remove => "removed",
        }
    ))
}

/// Write `dir/name` through a temporary file beside it and a rename.
async fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = async {
        let mut f = tokio::fs::File::create(&tmp).await?;
        tokio::io::AsyncWriteExt::write_all(&mut f, bytes).await?;
        f.sync_all().await?;
        tokio::fs::rename(&tmp, dir.join(name)).await
    }
    .await;
    written.map_err(|e| {
        // Best effort: a temp file that was created but not renamed is removed.
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {name}: {e}")
    })
}
