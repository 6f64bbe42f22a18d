//! Conversation memory for `ask` (SPEC §8 "Conversation memory"): a two-method store keyed
//! by conversation id, an in-memory default, and a file-backed store that survives restarts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use futures::future::BoxFuture;
use serde_json::Value;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A store failure (I/O, corrupt file), with its cause as
/// [`source`](std::error::Error::source) when there is one.
#[derive(thiserror::Error)]
#[error("conversation store: {message}")]
pub struct StoreError {
    message: String,
    #[source]
    source: Option<BoxError>,
}

crate::debug_as_display!(StoreError);

impl StoreError {
    /// A failure described by `message` (what a log line reads, after `conversation store: `).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// A failure described by `message`, caused by `source`.
    pub fn with_source(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// What went wrong, without the `conversation store: ` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Where `ask` conversations live. Implement it for a database to persist elsewhere.
pub trait ConversationStore: Send + Sync {
    /// The transcript stored under `id`, or `None`.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>>;
    /// Replace the transcript stored under `id`.
    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// The default store: per client, process lifetime.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    map: Mutex<HashMap<String, Vec<Value>>>,
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ConversationStore for InMemoryStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        let found = self
            .map
            .lock()
            .map_err(|_| StoreError::new("in-memory store lock poisoned"))
            .map(|m| m.get(id).cloned());
        Box::pin(async move { found })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> BoxFuture<'a, Result<(), StoreError>> {
        let done = self
            .map
            .lock()
            .map_err(|_| StoreError::new("in-memory store lock poisoned"))
            .map(|mut m| {
                m.insert(id.to_owned(), messages);
            });
        Box::pin(async move { done })
    }
}

/// One JSON file per conversation in a directory; writes go through a temp file and a
/// rename so a crash never leaves a half-written transcript.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
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

impl ConversationStore for FileStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Vec<Value>>, StoreError>> {
        Box::pin(async move {
            let path = self.path_for(id);
            match tokio::fs::read(&path).await {
                Ok(bytes) => serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| io_err(&path, e)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_err(&path, e)),
            }
        })
    }

    fn save<'a>(&'a self, id: &'a str, messages: Vec<Value>) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let path = self.path_for(id);
            tokio::fs::create_dir_all(&self.dir)
                .await
                .map_err(|e| io_err(&self.dir, e))?;
            let tmp = path.with_extension("json.tmp");
            let body = serde_json::to_vec(&messages).map_err(|e| io_err(&path, e))?;
            tokio::fs::write(&tmp, body).await.map_err(|e| io_err(&tmp, e))?;
            tokio::fs::rename(&tmp, &path).await.map_err(|e| io_err(&path, e))
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
    async fn in_memory_store_replaces() {
        let s = InMemoryStore::new();
        s.save("a", vec![json!(1)]).await.unwrap();
        s.save("a", vec![json!(2)]).await.unwrap();
        assert_eq!(s.get("a").await.unwrap(), Some(vec![json!(2)]));
    }
}
