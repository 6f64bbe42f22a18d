//! Where a served agent keeps its tasks (SPEC §7B `TaskStore`): a two-method trait, an
//! in-memory default, and a directory of `<id>.json` files written atomically.
//!
//! ```
//! use toolnexus::a2a::{Task, TaskState, store::resolve_store};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let store = resolve_store(&format!("file:{}", dir.path().display())).unwrap();
//! store.save(&Task::new("t1", TaskState::Working)).await.unwrap();
//! assert_eq!(store.get("t1").await.unwrap().unwrap().status.state, TaskState::Working);
//! assert!(dir.path().join("t1.json").is_file());
//! assert!(store.get("nope").await.unwrap().is_none());
//! # });
//! ```

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::io::AsyncWriteExt;

use super::wire::{Task, new_id};

/// A store failure (I/O, a corrupt file, a bad store spec).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("task store: {0}")]
pub struct TaskStoreError(pub String);

/// Where served tasks live. Every task read and write of a served agent goes through it;
/// implement it to keep tasks in a database.
pub trait TaskStore: Send + Sync {
    /// The task with `id`, or `None`.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>>;
    /// Insert or replace `task` (keyed by its id).
    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>>;
}

/// The default store: tasks live as long as the process.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, Task>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many tasks it holds.
    pub fn len(&self) -> usize {
        self.tasks.lock().map(|t| t.len()).unwrap_or(0)
    }

    /// `true` when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TaskStore for MemoryTaskStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        let found = self
            .tasks
            .lock()
            .map(|t| t.get(id).cloned())
            .map_err(|_| TaskStoreError("in-memory task store lock poisoned".into()));
        Box::pin(async move { found })
    }

    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let done = self
            .tasks
            .lock()
            .map(|mut t| {
                t.insert(task.id.clone(), task.clone());
            })
            .map_err(|_| TaskStoreError("in-memory task store lock poisoned".into()));
        Box::pin(async move { done })
    }
}

/// One JSON file per task in a directory. A save writes a uniquely named temporary file,
/// flushes it to disk and renames it over `<id>.json`, so a reader — or a restart after a
/// crash — sees the old task or the new one, never a torn file.
#[derive(Clone, Debug)]
pub struct FileTaskStore {
    dir: PathBuf,
}

impl FileTaskStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of task `id`. Ids outside `[A-Za-z0-9_-]` (a peer chooses the id it asks
    /// for) are hex-encoded, so none can leave the directory or collide with another.
    pub fn path_for(&self, id: &str) -> PathBuf {
        let plain = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let name = if plain {
            format!("{id}.json")
        } else {
            let hex: String = id.bytes().map(|b| format!("{b:02x}")).collect();
            format!("x-{hex}.json")
        };
        self.dir.join(name)
    }
}

fn io_error(path: &Path, e: impl fmt::Display) -> TaskStoreError {
    TaskStoreError(format!("{}: {e}", path.display()))
}

impl TaskStore for FileTaskStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move {
            let path = self.path_for(id);
            match tokio::fs::read(&path).await {
                Ok(bytes) => serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| io_error(&path, e)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_error(&path, e)),
            }
        })
    }

    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let path = self.path_for(&task.id);
            tokio::fs::create_dir_all(&self.dir)
                .await
                .map_err(|e| io_error(&self.dir, e))?;
            let body = serde_json::to_vec(task).map_err(|e| io_error(&path, e))?;
            // Unique per save: two saves of one task never share a temporary file.
            let tmp = self.dir.join(format!(".{}.tmp", new_id()));
            let written = async {
                let mut file = tokio::fs::File::create(&tmp).await?;
                file.write_all(&body).await?;
                file.sync_all().await?;
                tokio::fs::rename(&tmp, &path).await
            }
            .await;
            if let Err(e) = written {
                let _ = tokio::fs::remove_file(&tmp).await;
                return Err(io_error(&path, e));
            }
            Ok(())
        })
    }
}

/// The store a spec names: `"memory"` ⇒ [`MemoryTaskStore`], `"file:<dir>"` ⇒
/// [`FileTaskStore`] (the spelling of the SPEC's `a2a.store` and the CLI's `--store`).
pub fn resolve_store(spec: &str) -> Result<Arc<dyn TaskStore>, TaskStoreError> {
    match spec {
        "memory" => Ok(Arc::new(MemoryTaskStore::new())),
        _ => match spec.strip_prefix("file:") {
            Some(dir) if !dir.is_empty() => Ok(Arc::new(FileTaskStore::new(dir))),
            _ => Err(TaskStoreError(format!(
                "unknown store \"{spec}\" (expected \"memory\" or \"file:<dir>\")"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::{Message, TaskState};

    #[tokio::test]
    async fn memory_store_round_trip() {
        let store = MemoryTaskStore::new();
        assert!(store.get("a").await.unwrap().is_none());
        store.save(&Task::new("a", TaskState::Submitted)).await.unwrap();
        store.save(&Task::new("a", TaskState::Completed)).await.unwrap();
        assert_eq!(
            store.get("a").await.unwrap().unwrap().status.state,
            TaskState::Completed
        );
        assert_eq!(store.len(), 1);
    }

    #[tokio::test]
    async fn file_store_writes_whole_files_and_keeps_ids_inside_the_dir() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileTaskStore::new(dir.path().join("tasks"));
        let mut task = Task::new("../../etc/passwd", TaskState::Failed);
        task.status.message = Some(Message::agent_text("boom"));
        store.save(&task).await.unwrap();
        let path = store.path_for("../../etc/passwd");
        assert_eq!(path.parent(), Some(dir.path().join("tasks").as_path()));
        assert_eq!(
            path.file_name().unwrap().to_str().unwrap(),
            "x-2e2e2f2e2e2f6574632f706173737764.json"
        );
        assert_eq!(store.get("../../etc/passwd").await.unwrap(), Some(task));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("tasks"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["x-2e2e2f2e2e2f6574632f706173737764.json"]);

        // Concurrent saves of one task: every read sees a whole task.
        let store = Arc::new(store);
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut t = Task::new("same", TaskState::Working);
                    t.status.message = Some(Message::agent_text("x".repeat(10_000 * (i + 1))));
                    store.save(&t).await.unwrap();
                })
            })
            .collect();
        for _ in 0..50 {
            if let Some(t) = store.get("same").await.unwrap() {
                assert_eq!(t.status.state, TaskState::Working);
            }
        }
        for w in writers {
            w.await.unwrap();
        }
        assert!(store.get("same").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_corrupt_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.json"), b"{not json").unwrap();
        let err = FileTaskStore::new(dir.path()).get("bad").await.unwrap_err();
        assert!(err.to_string().starts_with("task store: "), "{err}");
        assert!(
            err.to_string().contains("bad.json: key must be a string"),
            "{err}"
        );
    }

    #[test]
    fn store_specs() {
        assert!(resolve_store("memory").is_ok());
        assert!(resolve_store("file:/tmp/x").is_ok());
        for bad in ["file:", "redis://x", ""] {
            assert_eq!(
                resolve_store(bad).err().unwrap().to_string(),
                format!("task store: unknown store \"{bad}\" (expected \"memory\" or \"file:<dir>\")")
            );
        }
    }
}
