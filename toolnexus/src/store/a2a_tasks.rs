//! The A2A [`TaskStore`] on SQL: every replica of a served agent reads and writes the same
//! table `toolnexus_a2a_tasks` (migration 2), so `GetTask` on any replica returns the same
//! task, and the leases that guard running tasks are shared.
//!
//! Each lease step is one conditional `UPDATE` (compare-and-set on the owner, the state and,
//! for the sweep, the very expiry it read), so two replicas racing never both win and no
//! write is lost. The task itself is kept whole as JSON (status, artifacts, history).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolnexus::a2a::A2aConfig;
//! use toolnexus::store::{SqlTaskStore, StoreUrl};
//!
//! let url: StoreUrl = "postgres://agent:secret@db.internal:5432/agents".parse()?;
//! let store = SqlTaskStore::open(&url).await?;
//! let config = A2aConfig { store: Some(Arc::new(store)), ..A2aConfig::default() };
//! # let _ = config; Ok(()) }
//! ```

use futures::future::BoxFuture;
use tokio::sync::OnceCell;

use super::{Db, DbError, DbOptions, StoreUrl, with_pool};
use crate::a2a::store::{Lease, TaskStoreError, lost_message, mark};
use crate::a2a::{Task, TaskState, TaskStore};

/// The states a lease guards, as SQL (kept in step with `store::active`).
const ACTIVE: &str = "state IN ('submitted', 'working')";
/// The most expired tasks one sweep fails; the next sweep takes the rest.
const SWEEP_BATCH: i64 = 500;
/// How many times `cancel` retries when the task changed between its read and its write.
const CANCEL_TRIES: usize = 8;

/// A2A tasks in an SQLite or PostgreSQL database. Cheap to clone (the pool is shared).
#[derive(Clone, Debug)]
pub struct SqlTaskStore {
    url: StoreUrl,
    db: std::sync::Arc<OnceCell<Db>>,
}

impl SqlTaskStore {
    /// Opens (and migrates) the database at `url` now: an unreachable database is an error
    /// here, naming the URL without its password.
    pub async fn open(url: &StoreUrl) -> Result<Self, DbError> {
        let db = Db::open(url, DbOptions::default()).await?;
        Ok(Self::from_db(db))
    }

    /// A store on an already open database.
    pub fn from_db(db: Db) -> Self {
        Self {
            url: db.url().clone(),
            db: std::sync::Arc::new(OnceCell::new_with(Some(db))),
        }
    }

    /// A store that opens `url` at its first use (for a config file read synchronously); a
    /// failed open is retried at the next use.
    pub fn lazy(url: StoreUrl) -> Self {
        Self {
            url,
            db: std::sync::Arc::default(),
        }
    }

    /// Where the tasks live (printing it masks the password).
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    async fn db(&self) -> Result<&Db, TaskStoreError> {
        self.db
            .get_or_try_init(|| Db::open(&self.url, DbOptions::default()))
            .await
            .map_err(|e| TaskStoreError(e.to_string()))
    }

    /// A database error as a task store error naming the (masked) URL.
    fn failed(&self, e: DbError) -> TaskStoreError {
        TaskStoreError(format!("{}: {e}", self.url))
    }

    fn encode(&self, task: &Task) -> Result<String, TaskStoreError> {
        serde_json::to_string(task)
            .map_err(|e| TaskStoreError(format!("{}: task {}: {e}", self.url, task.id)))
    }

    fn decode(&self, id: &str, json: &str) -> Result<Task, TaskStoreError> {
        serde_json::from_str(json)
            .map_err(|e| TaskStoreError(format!("{}: task {id} is not valid JSON: {e}", self.url)))
    }

    /// Inserts or replaces `task` with `lease` (or none).
    async fn put(&self, task: &Task, lease: Option<&Lease>) -> Result<(), TaskStoreError> {
        let json = self.encode(task)?;
        let owner = lease.map(|l| l.owner.clone());
        let until = lease.map(|l| millis(l.expires_at_ms));
        let sql = "INSERT INTO toolnexus_a2a_tasks (id, state, task, lease_owner, lease_expires_at)
                   VALUES ($1, $2, $3, $4, $5)
                   ON CONFLICT (id) DO UPDATE SET state = excluded.state, task = excluded.task,
                       lease_owner = excluded.lease_owner, lease_expires_at = excluded.lease_expires_at,
                       updated_at = CURRENT_TIMESTAMP";
        let db = self.db().await?;
        // An upsert of fixed values: a repeat writes the same row again.
        with_pool!(db.pool(), p => db.retry(|_| sqlx::query(sql)
            .bind(&task.id)
            .bind(task.status.state.as_str())
            .bind(&json)
            .bind(owner.as_deref())
            .bind(until)
            .execute(p))
            .await
            .map(drop))
        .map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// Runs a conditional `UPDATE` with `binds` (all text or integers); `true` when it
    /// changed a row.
    ///
    /// Every caller's condition is one the update itself makes false (the task leaves
    /// `submitted`/`working`, or its JSON changes), so a repeat after a lost answer cannot
    /// apply twice; it changes nothing instead. `mine` is `(id, task JSON written)`: a repeat
    /// that changed nothing then finds that exact JSON (it carries a fresh timestamp) and
    /// counts the first attempt's write as done. A lease renewal, the one update that leaves
    /// its condition true, passes `None`: its repeat simply matches again.
    async fn update(
        &self,
        sql: &str,
        binds: &[Bind<'_>],
        mine: Option<(&str, &str)>,
    ) -> Result<bool, TaskStoreError> {
        let db = self.db().await?;
        let changed = with_pool!(db.pool(), p => db.retry(|attempt| async move {
            let mut query = sqlx::query(sql);
            for bind in binds {
                query = match *bind {
                    Bind::Text(s) => query.bind(s),
                    Bind::Int(n) => query.bind(n),
                };
            }
            let changed = query.execute(p).await?.rows_affected() == 1;
            let Some((id, json)) = mine.filter(|_| !changed && attempt > 1) else {
                return Ok(changed);
            };
            let stored: Option<String> = sqlx::query_scalar("SELECT task FROM toolnexus_a2a_tasks WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?;
            Ok(stored.as_deref() == Some(json))
        })
        .await)
        .map_err(|e| self.failed(e))?;
        Ok(changed)
    }

    /// `(task JSON)` of `id`.
    async fn read(&self, id: &str) -> Result<Option<String>, TaskStoreError> {
        let db = self.db().await?;
        // A read: repeating it is always safe.
        let row = with_pool!(db.pool(), p => db.retry(|_| {
            sqlx::query_scalar("SELECT task FROM toolnexus_a2a_tasks WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
        })
        .await)
        .map_err(|e| self.failed(e))?;
        Ok(row)
    }
}

/// A value bound to a conditional update.
enum Bind<'a> {
    Text(&'a str),
    Int(i64),
}

/// Milliseconds as the column's signed 64-bit integer (saturating: year 292 million).
fn millis(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

impl TaskStore for SqlTaskStore {
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move {
            match self.read(id).await? {
                Some(json) => self.decode(id, &json).map(Some),
                None => Ok(None),
            }
        })
    }

    fn save<'a>(&'a self, task: &'a Task) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.put(task, None))
    }

    fn claim<'a>(&'a self, task: &'a Task, lease: &'a Lease) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(self.put(task, Some(lease)))
    }

    fn update_owned<'a>(
        &'a self,
        task: &'a Task,
        owner: &'a str,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let json = self.encode(task)?;
            // Leaving submitted/working drops the lease in the same statement.
            let keep = i64::from(matches!(
                task.status.state,
                TaskState::Submitted | TaskState::Working
            ));
            let sql = format!(
                "UPDATE toolnexus_a2a_tasks SET state = $1, task = $2,
                     lease_owner = CASE WHEN $3 = 1 THEN lease_owner ELSE NULL END,
                     lease_expires_at = CASE WHEN $3 = 1 THEN lease_expires_at ELSE NULL END,
                     updated_at = CURRENT_TIMESTAMP
                 WHERE id = $4 AND lease_owner = $5 AND {ACTIVE}"
            );
            let binds = [
                Bind::Text(task.status.state.as_str()),
                Bind::Text(&json),
                Bind::Int(keep),
                Bind::Text(&task.id),
                Bind::Text(owner),
            ];
            self.update(&sql, &binds, Some((&task.id, &json))).await
        })
    }

    fn renew<'a>(&'a self, id: &'a str, lease: &'a Lease) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let sql = format!(
                "UPDATE toolnexus_a2a_tasks SET lease_expires_at = $1
                 WHERE id = $2 AND lease_owner = $3 AND {ACTIVE}"
            );
            let binds = [
                Bind::Int(millis(lease.expires_at_ms)),
                Bind::Text(id),
                Bind::Text(&lease.owner),
            ];
            self.update(&sql, &binds, None).await
        })
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move {
            // Read, then write only if the row is still exactly what was read; a change in
            // between (the owner moved it on) means read again. Each retry follows a state
            // change, and a task changes state a handful of times, so a few tries suffice.
            for _ in 0..CANCEL_TRIES {
                let Some(json) = self.read(id).await? else {
                    return Ok(None);
                };
                let mut task = self.decode(id, &json)?;
                if task.status.state.is_terminal() {
                    return Ok(Some(task));
                }
                mark(&mut task, TaskState::Canceled, message);
                let canceled = self.encode(&task)?;
                let sql = "UPDATE toolnexus_a2a_tasks SET state = 'canceled', task = $1,
                               lease_owner = NULL, lease_expires_at = NULL, updated_at = CURRENT_TIMESTAMP
                           WHERE id = $2 AND task = $3";
                if self
                    .update(
                        sql,
                        &[Bind::Text(&canceled), Bind::Text(id), Bind::Text(&json)],
                        Some((id, &canceled)),
                    )
                    .await?
                {
                    return Ok(Some(task));
                }
            }
            Err(TaskStoreError(format!(
                "{}: task {id} kept changing while being canceled; try again",
                self.url
            )))
        })
    }

    fn expire(&self, now_ms: u64) -> BoxFuture<'_, Result<Vec<Task>, TaskStoreError>> {
        Box::pin(async move {
            let now = millis(now_ms);
            let db = self.db().await?;
            let sql = format!(
                "SELECT id, task, lease_owner, lease_expires_at FROM toolnexus_a2a_tasks
                 WHERE lease_owner IS NOT NULL AND lease_expires_at < $1 AND {ACTIVE}
                 ORDER BY lease_expires_at LIMIT $2"
            );
            // A read: repeating it is always safe.
            let rows: Vec<(String, String, String, i64)> = with_pool!(db.pool(), p => db.retry(|_| {
                sqlx::query_as(&sql).bind(now).bind(SWEEP_BATCH).fetch_all(p)
            })
            .await)
            .map_err(|e| self.failed(e))?;
            let mut failed = Vec::new();
            for (id, json, owner, expired) in rows {
                let mut task = match self.decode(&id, &json) {
                    Ok(task) => task,
                    Err(e) => {
                        tracing::warn!("A2A lease sweep skipped a task: {e}");
                        continue;
                    }
                };
                mark(
                    &mut task,
                    TaskState::Failed,
                    &lost_message(u64::try_from(expired).unwrap_or(0)),
                );
                let json = self.encode(&task)?;
                // Only the lease that was read, still expired: a renewal or another sweeper
                // in between makes this a no-op.
                let sql = format!(
                    "UPDATE toolnexus_a2a_tasks SET state = 'failed', task = $1,
                         lease_owner = NULL, lease_expires_at = NULL, updated_at = CURRENT_TIMESTAMP
                     WHERE id = $2 AND lease_owner = $3 AND lease_expires_at = $4 AND lease_expires_at < $5 AND {ACTIVE}"
                );
                let binds = [
                    Bind::Text(&json),
                    Bind::Text(&id),
                    Bind::Text(&owner),
                    Bind::Int(expired),
                    Bind::Int(now),
                ];
                if self.update(&sql, &binds, Some((&id, &json))).await? {
                    failed.push(task);
                }
            }
            Ok(failed)
        })
    }
}
