//! [`SqlSuspensions`]: halted runs in `toolnexus_suspensions`, answered exactly once across
//! every replica sharing the database.

use futures::future::BoxFuture;

use super::{Db, with_pool};
use crate::client::{Recorded, Suspension, SuspensionError, SuspensionStore};
use crate::suspend::Answer;

/// Suspensions in an SQL database (SQLite or PostgreSQL). The answer is claimed by one
/// conditional `UPDATE … WHERE state = 'pending'`, so of two concurrent answers — from two
/// replicas, or a retried webhook — exactly one wins.
#[derive(Clone, Debug)]
pub struct SqlSuspensions {
    db: Db,
}

/// The row: request, conversation, transcript, answer (JSON text, the same on both engines).
type Row = (String, Option<String>, String, Option<String>);

impl SqlSuspensions {
    /// The suspensions of `db`.
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    fn failed(
        &self,
        id: &str,
        doing: &str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> SuspensionError {
        let e = e.into();
        SuspensionError::failed(
            format!("{doing} suspension \"{id}\" in {}: {e}", self.db.url()),
            e,
        )
    }

    async fn row(&self, id: &str) -> Result<Option<Recorded>, SuspensionError> {
        // A read: repeating it is always safe.
        let row: Option<Row> = with_pool!(self.db.pool(), p => {
            self.db.retry(|_| {
                sqlx::query_as(
                    "SELECT request, conversation, transcript, answer FROM toolnexus_suspensions WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(p)
            })
            .await
        })
        .map_err(|e| self.failed(id, "loading", e))?;
        let Some((request, conversation, transcript, answer)) = row else {
            return Ok(None);
        };
        let decode = |e| self.failed(id, "decoding", e);
        let suspension = Suspension {
            request: serde_json::from_str(&request).map_err(decode)?,
            conversation,
            transcript: serde_json::from_str(&transcript).map_err(decode)?,
        };
        let answer = answer
            .map(|a| serde_json::from_str(&a))
            .transpose()
            .map_err(decode)?;
        Ok(Some((suspension, answer)))
    }
}

impl SuspensionStore for SqlSuspensions {
    fn put<'a>(&'a self, suspension: &'a Suspension) -> BoxFuture<'a, Result<(), SuspensionError>> {
        Box::pin(async move {
            let id = suspension.request.id.as_str();
            let encode = |e| self.failed(id, "encoding", e);
            let request = serde_json::to_string(&suspension.request).map_err(encode)?;
            let transcript = serde_json::to_string(&suspension.transcript).map_err(encode)?;
            let (request, transcript) = (request.as_str(), transcript.as_str());
            // A repeat after a lost answer hits the primary key the first one wrote; the
            // request (with its unique id) being exactly this one says that write was ours.
            with_pool!(self.db.pool(), p => {
                self.db.retry(|attempt| async move {
                    let inserted = sqlx::query(
                        "INSERT INTO toolnexus_suspensions (id, conversation, request, transcript, state)
                         VALUES ($1, $2, $3, $4, 'pending')",
                    )
                    .bind(id)
                    .bind(suspension.conversation.as_deref())
                    .bind(request)
                    .bind(transcript)
                    .execute(p)
                    .await;
                    match inserted {
                        Err(e) if attempt > 1 && e.as_database_error().is_some_and(|d| d.is_unique_violation()) => {
                            let stored: Option<(String,)> =
                                sqlx::query_as("SELECT request FROM toolnexus_suspensions WHERE id = $1")
                                    .bind(id)
                                    .fetch_optional(p)
                                    .await?;
                            if stored.is_some_and(|(r,)| r == request) { Ok(()) } else { Err(e) }
                        }
                        other => other.map(drop),
                    }
                })
                .await
            })
            .map_err(|e| self.failed(id, "recording", e))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Recorded>, SuspensionError>> {
        Box::pin(self.row(id))
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        answer: &'a Answer,
    ) -> BoxFuture<'a, Result<Suspension, SuspensionError>> {
        Box::pin(async move {
            if answer.id != id {
                return Err(SuspensionError::Mismatch {
                    id: id.to_owned(),
                    answer: answer.id.clone(),
                });
            }
            let body = serde_json::to_string(answer).map_err(|e| self.failed(id, "encoding", e))?;
            // Only getting a connection is retried, never the claim itself: a claim whose answer
            // was lost cannot tell "mine" from a second, identical answer (a retried webhook),
            // and taking it for mine would resume the run twice. Such a failure is reported;
            // answering again then says "already answered" if the first one landed.
            let claimed = with_pool!(self.db.pool(), p => {
                let mut conn = self.db.retry(|_| p.acquire()).await.map_err(|e| self.failed(id, "answering", e))?;
                sqlx::query(
                    "UPDATE toolnexus_suspensions
                     SET state = 'answered', answer = $1, answered_at = CURRENT_TIMESTAMP
                     WHERE id = $2 AND state = 'pending'",
                )
                .bind(&body)
                .bind(id)
                .execute(&mut *conn)
                .await
                .map(|r| r.rows_affected() == 1)
            })
            .map_err(|e| self.failed(id, "answering", super::DbError::from(e)))?;
            match self.row(id).await? {
                Some((suspension, _)) if claimed => Ok(suspension),
                Some(_) => Err(SuspensionError::AlreadyAnswered { id: id.to_owned() }),
                None => Err(SuspensionError::NotFound { id: id.to_owned() }),
            }
        })
    }
}
