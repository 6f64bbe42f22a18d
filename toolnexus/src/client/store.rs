//! Conversation memory for `ask` (SPEC §8 "Conversation memory"): a store keyed by
//! conversation id, an in-memory default, and a file-backed store that survives restarts.
//! With the `sqlite` / `postgres` features, `store::SqlConversationStore` keeps them in a
//! database several replicas share.
//!
//! Every stored transcript carries a [`Version`]; a save names the version it read
//! ([`ConversationStore::save_if`]), so when two writers continue one conversation at once,
//! the second learns it ([`StoreError::Conflict`]) instead of silently dropping the first's turn.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use serde_json::Value;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A store failure: the store itself failed (I/O, corrupt file, database away), with its cause
/// as [`source`](std::error::Error::source), or a compare-and-set lost to another writer.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store failed.
    #[error("conversation store: {message}")]
    Failed {
        /// What went wrong.
        message: String,
        /// The cause.
        #[source]
        source: Option<BoxError>,
    },
    /// [`save_if`](ConversationStore::save_if) found another version than the one expected:
    /// someone else saved this conversation since it was read.
    #[error(
        "conversation store: conversation \"{conversation}\" was changed by another writer while this turn ran"
    )]
    Conflict {
        /// The conversation id.
        conversation: String,
    },
}

crate::debug_as_display!(StoreError);

impl StoreError {
    /// A failure described by `message` (what a log line reads, after `conversation store: `).
    pub fn new(message: impl Into<String>) -> Self {
        Self::Failed {
            message: message.into(),
            source: None,
        }
    }

    /// A failure described by `message`, caused by `source`.
    pub fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Failed {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// A lost compare-and-set on `conversation`.
    pub fn conflict(conversation: impl Into<String>) -> Self {
        Self::Conflict {
            conversation: conversation.into(),
        }
    }

    /// What went wrong, without the `conversation store: ` prefix.
    pub fn message(&self) -> String {
        let shown = self.to_string();
        shown
            .strip_prefix("conversation store: ")
            .map_or(shown.clone(), str::to_owned)
    }

    /// `true` for [`StoreError::Conflict`].
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

/// The version of a stored transcript: 1 after the first save, one more after each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(u64);

impl Version {
    /// The version numbered `n`.
    pub const fn new(n: u64) -> Self {
        Self(n)
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The version a successful save over `expected` produces.
    pub fn after(expected: Option<Version>) -> Version {
        Version(expected.map_or(1, |v| v.0 + 1))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// A stored transcript and its version.
pub type Versioned = (Vec<Value>, Version);

/// Where `ask` conversations live. Implement [`load`](Self::load) and
/// [`save_if`](Self::save_if) for a database to persist elsewhere; `get` and `save` follow.
pub trait ConversationStore: Send + Sync {
    /// The transcript stored under `id` and its version, or `None`.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Versioned>, StoreError>>;

    /// Compare-and-set: store `messages` under `id` if its version is still `expected`
    /// (`None`: nothing stored yet) and return the new version; else
    /// [`StoreError::Conflict`], storing nothing.
    fn save_if<'a>(
        &'a self,
        id: &'a str,
        messages: Vec<Value>,
        expected: Option<Version>,
    ) -> BoxFuture<'a, Result<Version, StoreError>>;

    /// The transcript stored under `id`, or `None`.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        Box::pin(async move { Ok(self.load(id).await?.map(|(messages, _)| messages)) })
    }

    /// Replace the transcript stored under `id`, whatever its version (last writer wins).
    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            // Each lost race means another writer saved in between; a few rounds settle it.
            for _ in 0..UNCONDITIONAL_ROUNDS {
                let current = self.load(id).await?.map(|(_, v)| v);
                match self.save_if(id, messages.clone(), current).await {
                    Err(StoreError::Conflict { .. }) => continue,
                    done => return done.map(drop),
                }
            }
            Err(StoreError::conflict(id))
        })
    }
}

/// How many compare-and-set rounds an unconditional [`ConversationStore::save`] tries.
const UNCONDITIONAL_ROUNDS: usize = 16;

/// The default store: per client, process lifetime.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    map: Mutex<HashMap<String, (Vec<Value>, Version)>>,
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ConversationStore for InMemoryStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Versioned>, StoreError>> {
        let found = self
            .map
            .lock()
            .map_err(|_| StoreError::new("in-memory store lock poisoned"))
            .map(|m| m.get(id).cloned());
        Box::pin(async move { found })
    }

    fn save_if<'a>(
        &'a self,
        id: &'a str,
        messages: Vec<Value>,
        expected: Option<Version>,
    ) -> BoxFuture<'a, Result<Version, StoreError>> {
        let done = self
            .map
            .lock()
            .map_err(|_| StoreError::new("in-memory store lock poisoned"))
            .and_then(|mut m| {
                if m.get(id).map(|(_, v)| *v) != expected {
                    return Err(StoreError::conflict(id));
                }
                let next = Version::after(expected);
                m.insert(id.to_owned(), (messages, next));
                Ok(next)
            });
        Box::pin(async move { done })
    }
}

/// One JSON file per conversation in a directory, `{"version": n, "messages": [...]}` (a bare
/// array, as written before versions, reads as version 0). Writes go through a synced temp
/// file and a rename, so a crash never leaves a half-written transcript. Saves through one
/// `FileStore` (and its clones) are serialized; use one per directory and process.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
    writing: Arc<tokio::sync::Mutex<()>>,
}

impl FileStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            writing: Arc::default(),
        }
    }

    /// The file holding conversation `id`. Ids outside `[A-Za-z0-9_-]` are hex-encoded so
    /// two ids can never share a file and none can escape the directory.
    pub fn path_for(&self, id: &str) -> PathBuf {
        let safe = !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        let name = if safe {
            format!("{id}.json")
        } else {
            let hex: String = id.bytes().map(|b| format!("{b:02x}")).collect();
            format!("x-{hex}.json")
        };
        self.dir.join(name)
    }
}

fn io_err(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::with_source(format!("{}: {e}", path.display()), e)
}

/// The file form of a transcript.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum OnDisk {
    Versioned { version: u64, messages: Vec<Value> },
    Legacy(Vec<Value>),
}

impl FileStore {
    async fn read(&self, id: &str) -> Result<Option<Versioned>, StoreError> {
        let path = self.path_for(id);
        match tokio::fs::read(&path).await {
            Ok(bytes) => match serde_json::from_slice(&bytes).map_err(|e| io_err(&path, e))? {
                OnDisk::Versioned { version, messages } => Ok(Some((messages, Version(version)))),
                OnDisk::Legacy(messages) => Ok(Some((messages, Version(0)))),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&path, e)),
        }
    }
}

/// Writes `body` to `path` atomically and durably: a uniquely named synced sibling renamed
/// over it, then the directory synced so the rename itself survives a crash.
pub(crate) async fn write_atomic(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt as _;
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_extension(format!(
        "tmp.{}.{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = async {
        let mut file = tokio::fs::File::create(&tmp).await?;
        file.write_all(body).await?;
        file.sync_all().await?;
        tokio::fs::rename(&tmp, path).await
    }
    .await;
    if written.is_err() {
        let _ = tokio::fs::remove_file(&tmp).await;
        return written;
    }
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        tokio::fs::File::open(dir).await?.sync_all().await?;
    }
    Ok(())
}

impl ConversationStore for FileStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Versioned>, StoreError>> {
        Box::pin(self.read(id))
    }

    fn save_if<'a>(
        &'a self,
        id: &'a str,
        messages: Vec<Value>,
        expected: Option<Version>,
    ) -> BoxFuture<'a, Result<Version, StoreError>> {
        Box::pin(async move {
            let _writing = self.writing.lock().await;
            if self.read(id).await?.map(|(_, v)| v) != expected {
                return Err(StoreError::conflict(id));
            }
            let path = self.path_for(id);
            tokio::fs::create_dir_all(&self.dir)
                .await
                .map_err(|e| io_err(&self.dir, e))?;
            let next = Version::after(expected);
            let body = serde_json::to_vec(&OnDisk::Versioned {
                version: next.0,
                messages,
            })
            .map_err(|e| io_err(&path, e))?;
            write_atomic(&path, &body).await.map_err(|e| io_err(&path, e))?;
            Ok(next)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn file_store_round_trips_and_survives_a_new_instance() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileStore::new(dir.path().join("convos"));
        assert_eq!(a.get("t1").await.unwrap(), None);
        a.save("t1", vec![json!({"role": "user", "content": "hi"})])
            .await
            .unwrap();
        let b = FileStore::new(dir.path().join("convos"));
        assert_eq!(
            b.get("t1").await.unwrap(),
            Some(vec![json!({"role": "user", "content": "hi"})])
        );
        assert!(a.path_for("../etc").ends_with("x-2e2e2f657463.json"));
        std::fs::write(b.path_for("bad"), "{").unwrap();
        let err = b.get("bad").await.unwrap_err();
        assert!(err.message().contains("bad.json"), "{err}");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[tokio::test]
    async fn file_store_reads_the_unversioned_format_as_version_0() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        std::fs::write(store.path_for("old"), r#"[{"role":"user","content":"hi"}]"#).unwrap();
        let (messages, v) = store.load("old").await.unwrap().unwrap();
        assert_eq!((messages.len(), v), (1, Version::new(0)));
        assert!(
            store
                .save_if("old", vec![], None)
                .await
                .unwrap_err()
                .is_conflict()
        );
        assert_eq!(
            store.save_if("old", vec![], Some(v)).await.unwrap(),
            Version::new(1)
        );
        assert_eq!(
            std::fs::read_to_string(store.path_for("old")).unwrap(),
            r#"{"version":1,"messages":[]}"#
        );
        // No temp file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    async fn compare_and_set(store: &dyn ConversationStore) {
        assert_eq!(store.load("c").await.unwrap(), None);
        let v1 = store.save_if("c", vec![json!(1)], None).await.unwrap();
        assert_eq!(v1, Version::new(1));
        let err = store.save_if("c", vec![json!(9)], None).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "conversation store: conversation \"c\" was changed by another writer while this turn ran"
        );
        let v2 = store
            .save_if("c", vec![json!(1), json!(2)], Some(v1))
            .await
            .unwrap();
        assert_eq!(v2, Version::new(2));
        assert!(
            store
                .save_if("c", vec![json!(9)], Some(v1))
                .await
                .unwrap_err()
                .is_conflict()
        );
        assert_eq!(
            store.load("c").await.unwrap(),
            Some((vec![json!(1), json!(2)], v2))
        );
        store.save("c", vec![json!(3)]).await.unwrap();
        assert_eq!(
            store.load("c").await.unwrap(),
            Some((vec![json!(3)], Version::new(3)))
        );
    }

    #[tokio::test]
    async fn both_stores_compare_and_set() {
        compare_and_set(&InMemoryStore::new()).await;
        let dir = tempfile::tempdir().unwrap();
        compare_and_set(&FileStore::new(dir.path())).await;
    }

    #[tokio::test]
    async fn in_memory_store_replaces() {
        let s = InMemoryStore::new();
        s.save("a", vec![json!(1)]).await.unwrap();
        s.save("a", vec![json!(2)]).await.unwrap();
        assert_eq!(s.get("a").await.unwrap(), Some(vec![json!(2)]));
    }
}
