//! [`SqlConversationStore`]: `ask` conversations in `toolnexus_conversations`, versioned, so
//! replicas sharing the database never silently drop each other's turns.

use futures::future::BoxFuture;
use serde_json::Value;

use super::{Db, with_pool};
use crate::client::{ConversationStore, StoreError, Version, Versioned};

/// Conversations in an SQL database (SQLite or PostgreSQL).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use toolnexus::client::ConversationStore;
/// use toolnexus::store::{Db, DbOptions, SqlConversationStore};
///
/// let db = Db::open(&"sqlite:state.db".parse()?, DbOptions::default()).await?;
/// let store: Arc<dyn ConversationStore> = Arc::new(SqlConversationStore::new(db));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct SqlConversationStore {
    db: Db,
}

impl SqlConversationStore {
    /// The conversations of `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// A failure naming the database (password masked) and the conversation.
    fn failed(
        &self,
        id: &str,
        doing: &str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> StoreError {
        let e = e.into();
        StoreError::with_source(
            format!("{} conversation \"{id}\" in {}: {e}", doing, self.db.url()),
            e,
        )
    }
}

impl ConversationStore for SqlConversationStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Versioned>, StoreError>> {
        Box::pin(async move {
            // A read: repeating it is always safe.
            let row: Option<(String, i64)> = with_pool!(self.db.pool(), p => {
                self.db.retry(|_| {
                    sqlx::query_as("SELECT messages, version FROM toolnexus_conversations WHERE id = $1")
                        .bind(id)
                        .fetch_optional(p)
                })
                .await
            })
            .map_err(|e| self.failed(id, "loading", e))?;
            let Some((messages, version)) = row else {
                return Ok(None);
            };
            let messages = serde_json::from_str(&messages).map_err(|e| self.failed(id, "decoding", e))?;
            Ok(Some((
                messages,
                Version::new(u64::try_from(version).unwrap_or(0)),
            )))
        })
    }

    fn save_if<'a>(
        &'a self,
        id: &'a str,
        messages: Vec<Value>,
        expected: Option<Version>,
    ) -> BoxFuture<'a, Result<Version, StoreError>> {
        Box::pin(async move {
            let body = serde_json::to_string(&messages).map_err(|e| self.failed(id, "encoding", e))?;
            let next = Version::after(expected);
            let next_i = i64::try_from(next.get()).map_err(|e| self.failed(id, "saving", e))?;
            let expected_i = expected.map(|v| i64::try_from(v.get()).unwrap_or(i64::MAX));
            let body = body.as_str();
            // One statement each: the row's version is checked and bumped atomically, so a
            // repeat after a lost answer cannot apply twice: the first made the row's version
            // `next`, and the repeat changes nothing. A repeat that changed nothing checks
            // whether the row is exactly this write (version `next`, these messages): then it
            // was ours. Another writer can only match that with the same messages on the same
            // base, which loses no turn.
            let done = with_pool!(self.db.pool(), p => {
                self.db.retry(|attempt| async move {
                    let changed = match expected_i {
                        None => sqlx::query(
                            "INSERT INTO toolnexus_conversations (id, version, messages) VALUES ($1, $2, $3)
                             ON CONFLICT (id) DO NOTHING",
                        )
                        .bind(id)
                        .bind(next_i)
                        .bind(body)
                        .execute(p)
                        .await?,
                        Some(v) => sqlx::query(
                            "UPDATE toolnexus_conversations
                             SET messages = $1, version = $2, updated_at = CURRENT_TIMESTAMP
                             WHERE id = $3 AND version = $4",
                        )
                        .bind(body)
                        .bind(next_i)
                        .bind(id)
                        .bind(v)
                        .execute(p)
                        .await?,
                    }
                    .rows_affected();
                    if changed == 1 || attempt == 1 {
                        return Ok(changed);
                    }
                    let row: Option<(String, i64)> = sqlx::query_as(
                        "SELECT messages, version FROM toolnexus_conversations WHERE id = $1",
                    )
                    .bind(id)
                    .fetch_optional(p)
                    .await?;
                    Ok(u64::from(row.is_some_and(|(m, v)| v == next_i && m == body)))
                })
                .await
            })
            .map_err(|e| self.failed(id, "saving", e))?;
            if done == 1 {
                Ok(next)
            } else {
                Err(StoreError::conflict(id))
            }
        })
    }
}
