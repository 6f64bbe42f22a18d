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

use super::wire::{Message, Task, TaskState, new_id};

/// A store failure (I/O, a corrupt file, a bad store spec).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("task store: {0}")]
pub struct TaskStoreError(pub String);

/// Who runs a task and until when: a replica that takes a task holds its lease and renews
/// it while the run goes on; a lease that runs out means the replica was lost.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// The replica's id (one per process; the A2A server's `A2aConfig::replica_id`).
    pub owner: String,
    /// When the lease runs out, in milliseconds since the Unix epoch. Wall-clock time, so
    /// replicas sharing a store must have roughly synchronised clocks (NTP).
    pub expires_at_ms: u64,
}

impl Lease {
    /// A lease for `owner` that runs out `ttl` after `now_ms`.
    pub fn new(owner: impl Into<String>, now_ms: u64, ttl: std::time::Duration) -> Self {
        let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        Self {
            owner: owner.into(),
            expires_at_ms: now_ms.saturating_add(ttl),
        }
    }
}

/// Now, in milliseconds since the Unix epoch (the clock leases are measured on).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The status message of a task whose replica was lost.
pub fn lost_message(expired_at_ms: u64) -> String {
    let at = utc_time(expired_at_ms);
    format!("the replica running this task was lost (lease expired at {at})")
}

/// `expires_at_ms` as an RFC 3339 UTC time, without pulling in a date crate.
fn utc_time(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// A task that is `submitted` or `working`: the states a lease guards.
fn active(task: &Task) -> bool {
    matches!(task.status.state, TaskState::Submitted | TaskState::Working)
}

/// Where served tasks live. Every task read and write of a served agent goes through it;
/// implement it to keep tasks in a database.
///
/// Only [`get`](TaskStore::get) and [`save`](TaskStore::save) are required. The lease
/// methods have defaults built on them that keep no lease: right for a store one process
/// uses, where a task never outlives its replica. A store several replicas share overrides
/// them all, each as one atomic step ([`MemoryTaskStore`], [`FileTaskStore`], and the SQL
/// store do).
pub trait TaskStore: Send + Sync {
    /// The task with `id`, or `None`.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>>;
    /// Insert or replace `task` (keyed by its id), dropping any lease on it.
    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// Stores a new `task` held under `lease`.
    fn claim<'a>(&'a self, task: &'a Task, lease: &'a Lease) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let _ = lease;
        self.save(task)
    }

    /// Writes `task` only if `owner` still holds its lease and the stored task is still
    /// `submitted` or `working` (compare-and-set). `false` ⇒ nothing written: the task was
    /// canceled elsewhere or its lease expired and another replica failed it. Once `task`
    /// leaves `submitted`/`working` the lease is dropped.
    fn update_owned<'a>(
        &'a self,
        task: &'a Task,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let _ = owner;
        Box::pin(async move {
            match self.get(&task.id).await? {
                Some(stored) if active(&stored) => self.save(task).await.map(|()| true),
                _ => Ok(false),
            }
        })
    }

    /// Extends the lease on task `id` to `lease` if `lease.owner` still holds it and the task
    /// is still `submitted` or `working`. `false` ⇒ the owner must stop the run.
    fn renew<'a>(&'a self, id: &'a str, lease: &'a Lease) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let _ = lease;
        Box::pin(async move { Ok(self.get(id).await?.as_ref().is_some_and(active)) })
    }

    /// Marks task `id` `canceled` with `message` unless it already ended, dropping its lease.
    /// Returns the task as stored afterwards (`canceled`, or the terminal task untouched),
    /// `None` when there is no such task.
    fn cancel<'a>(
        &'a self,
        id: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move {
            let Some(mut task) = self.get(id).await? else {
                return Ok(None);
            };
            if !task.status.state.is_terminal() {
                mark(&mut task, TaskState::Canceled, message);
                self.save(&task).await?;
            }
            Ok(Some(task))
        })
    }

    /// Marks `failed` every `submitted`/`working` task whose lease ran out before `now_ms`
    /// ([`lost_message`]), each only if it is still active and still expired at the write —
    /// so when several replicas sweep at once each task is failed once. Returns the tasks it
    /// failed.
    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<Task>, TaskStoreError>> {
        let _ = now_ms;
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// Sets `task`'s state and agent message.
pub(crate) fn mark(task: &mut Task, state: TaskState, message: &str) {
    task.status.state = state;
    task.status.message = Some(Message::agent_text(message));
}

/// The default store: tasks live as long as the process. Every lease method is one step
/// under its lock.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, Held>>,
}

/// A stored task and the lease on it, if one holds it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Held {
    task: Task,
    lease: Option<Lease>,
}

impl Held {
    /// [`TaskStore::update_owned`] on one record.
    fn update_owned(&mut self, task: &Task, owner: &str) -> bool {
        let owns = self.lease.as_ref().is_some_and(|l| l.owner == owner);
        if !owns || !active(&self.task) {
            return false;
        }
        self.task = task.clone();
        if !active(task) {
            self.lease = None;
        }
        true
    }

    /// [`TaskStore::renew`] on one record.
    fn renew(&mut self, lease: &Lease) -> bool {
        match &mut self.lease {
            Some(held) if held.owner == lease.owner && active(&self.task) => {
                held.expires_at_ms = lease.expires_at_ms;
                true
            }
            _ => false,
        }
    }

    /// [`TaskStore::cancel`] on one record; `true` when it changed.
    fn cancel(&mut self, message: &str) -> bool {
        if self.task.status.state.is_terminal() {
            return false;
        }
        mark(&mut self.task, TaskState::Canceled, message);
        self.lease = None;
        true
    }

    /// [`TaskStore::expire`] on one record; `true` when it failed the task.
    fn expire(&mut self, now_ms: u64) -> bool {
        match &self.lease {
            Some(lease) if lease.expires_at_ms < now_ms && active(&self.task) => {
                mark(
                    &mut self.task,
                    TaskState::Failed,
                    &lost_message(lease.expires_at_ms),
                );
                self.lease = None;
                true
            }
            _ => false,
        }
    }
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

    /// The lease on task `id`, if one holds it.
    pub fn lease(&self, id: &str) -> Option<Lease> {
        self.tasks.lock().ok()?.get(id)?.lease.clone()
    }

    /// Runs `f` under the lock, as one atomic step.
    fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut HashMap<String, Held>) -> T,
    ) -> BoxFuture<'static, Result<T, TaskStoreError>> {
        let done = self
            .tasks
            .lock()
            .map(|mut tasks| f(&mut tasks))
            .map_err(|_| TaskStoreError("in-memory task store lock poisoned".into()));
        Box::pin(async move { done })
    }
}

impl TaskStore for MemoryTaskStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        self.with(|t| t.get(id).map(|h| h.task.clone()))
    }

    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let held = Held {
            task: task.clone(),
            lease: None,
        };
        self.with(move |t| {
            t.insert(held.task.id.clone(), held);
        })
    }

    fn claim<'a>(&'a self, task: &'a Task, lease: &'a Lease) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        let held = Held {
            task: task.clone(),
            lease: Some(lease.clone()),
        };
        self.with(move |t| {
            t.insert(held.task.id.clone(), held);
        })
    }

    fn update_owned<'a>(
        &'a self,
        task: &'a Task,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        self.with(|t| t.get_mut(&task.id).is_some_and(|h| h.update_owned(task, owner)))
    }

    fn renew<'a>(&'a self, id: &'a str, lease: &'a Lease) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        self.with(|t| t.get_mut(id).is_some_and(|h| h.renew(lease)))
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        self.with(|t| {
            t.get_mut(id).map(|h| {
                h.cancel(message);
                h.task.clone()
            })
        })
    }

    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<Task>, TaskStoreError>> {
        self.with(move |t| {
            t.values_mut()
                .filter_map(|h| h.expire(now_ms).then(|| h.task.clone()))
                .collect()
        })
    }
}

/// One JSON file per task in a directory. A write goes to a uniquely named temporary file,
/// flushed to disk and renamed over `<id>.json`, so a reader — or a restart after a crash —
/// sees the old task or the new one, never a torn file. The lease of a task rides in the
/// same file (key `toolnexusLease`, beside the task's own fields), so task and lease change
/// together. Writes are serialised within the process, which makes each lease method one
/// atomic step for every server sharing this store value; separate processes sharing one
/// directory are not coordinated — use an SQL store for replicas.
#[derive(Clone, Debug)]
pub struct FileTaskStore {
    dir: PathBuf,
    writes: Arc<tokio::sync::Mutex<()>>,
}

/// The key of the lease inside a task file.
const LEASE_KEY: &str = "toolnexusLease";

impl FileTaskStore {
    /// A store in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            writes: Arc::default(),
        }
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

    async fn read(&self, path: &Path) -> Result<Option<Held>, TaskStoreError> {
        let bytes = match tokio::fs::read(path).await {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(path, e)),
        };
        let mut doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| io_error(path, e))?;
        let lease = match doc.as_object_mut().and_then(|o| o.remove(LEASE_KEY)) {
            Some(lease) => Some(serde_json::from_value(lease).map_err(|e| io_error(path, e))?),
            None => None,
        };
        let task = serde_json::from_value(doc).map_err(|e| io_error(path, e))?;
        Ok(Some(Held { task, lease }))
    }

    /// Writes `held` atomically; the caller holds `writes`.
    async fn write(&self, held: &Held) -> Result<(), TaskStoreError> {
        let path = self.path_for(&held.task.id);
        tokio::fs::create_dir_all(&self.dir)
            .await
            .map_err(|e| io_error(&self.dir, e))?;
        let mut doc = serde_json::to_value(&held.task).map_err(|e| io_error(&path, e))?;
        if let (Some(lease), Some(fields)) = (&held.lease, doc.as_object_mut()) {
            let lease = serde_json::to_value(lease).map_err(|e| io_error(&path, e))?;
            fields.insert(LEASE_KEY.into(), lease);
        }
        let body = serde_json::to_vec(&doc).map_err(|e| io_error(&path, e))?;
        // Unique per write: two writes never share a temporary file.
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
    }

    /// Reads task `id`, lets `change` edit it, and writes it back when `change` says so —
    /// one step under the write lock. `None` when there is no such task.
    async fn modify<T>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Held) -> (bool, T),
    ) -> Result<Option<T>, TaskStoreError> {
        let _writing = self.writes.lock().await;
        let Some(mut held) = self.read(&self.path_for(id)).await? else {
            return Ok(None);
        };
        let (changed, out) = change(&mut held);
        if changed {
            self.write(&held).await?;
        }
        Ok(Some(out))
    }
}

fn io_error(path: &Path, e: impl fmt::Display) -> TaskStoreError {
    TaskStoreError(format!("{}: {e}", path.display()))
}

impl TaskStore for FileTaskStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move { Ok(self.read(&self.path_for(id)).await?.map(|h| h.task)) })
    }

    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let _writing = self.writes.lock().await;
            self.write(&Held {
                task: task.clone(),
                lease: None,
            })
            .await
        })
    }

    fn claim<'a>(&'a self, task: &'a Task, lease: &'a Lease) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let _writing = self.writes.lock().await;
            self.write(&Held {
                task: task.clone(),
                lease: Some(lease.clone()),
            })
            .await
        })
    }

    fn update_owned<'a>(
        &'a self,
        task: &'a Task,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let done = self.modify(&task.id, |h| {
                let done = h.update_owned(task, owner);
                (done, done)
            });
            Ok(done.await?.unwrap_or(false))
        })
    }

    fn renew<'a>(&'a self, id: &'a str, lease: &'a Lease) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let done = self.modify(id, |h| {
                let done = h.renew(lease);
                (done, done)
            });
            Ok(done.await?.unwrap_or(false))
        })
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move { self.modify(id, |h| (h.cancel(message), h.task.clone())).await })
    }

    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<Task>, TaskStoreError>> {
        Box::pin(async move {
            let _writing = self.writes.lock().await;
            let mut entries = match tokio::fs::read_dir(&self.dir).await {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(io_error(&self.dir, e)),
            };
            let mut failed = Vec::new();
            while let Some(entry) = entries.next_entry().await.map_err(|e| io_error(&self.dir, e))? {
                let path = entry.path();
                if path.extension().is_none_or(|x| x != "json") {
                    continue;
                }
                // One unreadable file must not stop the sweep of the others.
                match self.read(&path).await {
                    Ok(Some(mut held)) => {
                        if held.expire(now_ms) {
                            self.write(&held).await?;
                            failed.push(held.task);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!("A2A lease sweep skipped a task file: {e}"),
                }
            }
            Ok(failed)
        })
    }
}

/// The store a spec names: `"memory"` ⇒ [`MemoryTaskStore`], `"file:<dir>"` ⇒
/// [`FileTaskStore`] (the spelling of the SPEC's `a2a.store` and the CLI's `--store`),
/// `"sqlite:<path>"` or `"postgres://…"` ⇒ an SQL store shared by replicas (features
/// `sqlite`/`postgres`), which connects at its first use.
pub fn resolve_store(spec: &str) -> Result<Arc<dyn TaskStore>, TaskStoreError> {
    let sql = ["sqlite:", "postgres://", "postgresql://"]
        .iter()
        .any(|p| spec.starts_with(p));
    match spec {
        "memory" => Ok(Arc::new(MemoryTaskStore::new())),
        _ if sql => sql_store(spec),
        _ => match spec.strip_prefix("file:") {
            Some(dir) if !dir.is_empty() => Ok(Arc::new(FileTaskStore::new(dir))),
            _ => Err(TaskStoreError(format!(
                "unknown store \"{spec}\" (expected memory, file:<dir>, sqlite:<path> or postgres://...)"
            ))),
        },
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn sql_store(spec: &str) -> Result<Arc<dyn TaskStore>, TaskStoreError> {
    let url: crate::store::StoreUrl = spec.parse().map_err(|e| TaskStoreError(format!("{e}")))?;
    Ok(Arc::new(crate::store::SqlTaskStore::lazy(url)))
}

#[cfg(not(any(feature = "sqlite", feature = "postgres")))]
fn sql_store(_: &str) -> Result<Arc<dyn TaskStore>, TaskStoreError> {
    // The spec may carry a password: not repeated here.
    Err(TaskStoreError(
        "an SQL store needs a build with the cargo feature `sqlite` or `postgres`".into(),
    ))
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
                format!(
                    "task store: unknown store \"{bad}\" (expected memory, file:<dir>, sqlite:<path> or postgres://...)"
                )
            );
        }
    }
}
