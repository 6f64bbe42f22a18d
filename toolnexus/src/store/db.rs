//! One connection pool to the SQL database a [`StoreUrl`] names, opened with bounded retries
//! and migrated before first use.

use std::sync::Arc;
use std::time::Duration;

use super::{DbError, StoreUrl, migrate};

/// The driver pool of one engine. Code that is the same for both engines matches it once
/// through `with_pool!` (crate-internal).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Pool {
    /// An SQLite database file.
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

/// How [`Db::open`] connects.
#[derive(Clone, Debug)]
pub struct DbOptions {
    /// The most connections the pool holds open.
    pub max_connections: u32,
    /// How long one connection attempt (or one wait for a free pooled connection) may take.
    pub connect_timeout: Duration,
    /// How many more times a failed first connection is tried when the failure is transient
    /// (refused, reset, timed out, server starting up); a refused login is not retried.
    pub retries: u32,
    /// The wait before the first retry; it doubles on each further retry.
    pub retry_delay: Duration,
    /// How long SQLite waits on a lock another connection or process holds before failing.
    pub busy_timeout: Duration,
    /// How many more times a statement of an open [`Db`] is tried after a transient failure
    /// (the connection refused, reset or closed, no pooled connection in time, PostgreSQL
    /// shutting down or starting up, SQLite busy or locked): enough to ride out a database
    /// restart. Never past [`connect_timeout`](Self::connect_timeout) after the statement's
    /// first try: a pool that cannot connect has already waited that long by itself, so a
    /// database that stays away costs one `connect_timeout`, not one per retry. Only
    /// statements that are safe to repeat are repeated (each store says why its are);
    /// conflicts, constraint violations and bad SQL fail at once.
    pub query_retries: u32,
    /// The wait before a statement's first retry; it doubles on each further retry.
    pub query_retry_delay: Duration,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 8,
            connect_timeout: Duration::from_secs(5),
            retries: 3,
            retry_delay: Duration::from_millis(200),
            busy_timeout: Duration::from_secs(5),
            // 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s: a statement waits about 3 s in all.
            query_retries: 5,
            query_retry_delay: Duration::from_millis(100),
        }
    }
}

/// An open, migrated database. Cloning it is cheap and shares the pool.
#[derive(Clone, Debug)]
pub struct Db {
    pool: Pool,
    url: Arc<StoreUrl>,
    retries: u32,
    retry_delay: Duration,
    retry_for: Duration,
}

impl Db {
    /// Connects to `url` (an SQLite file, created if missing, in WAL mode; or PostgreSQL),
    /// retrying transient failures up to `options.retries` times, then applies the pending
    /// [migrations](super::migrate) under a lock so replicas starting together are safe.
    pub async fn open(url: &StoreUrl, options: DbOptions) -> Result<Db, DbError> {
        let pool = connect(url, &options).await?;
        migrate::run(&pool).await?;
        Ok(Db {
            pool,
            url: Arc::new(url.clone()),
            retries: options.query_retries,
            retry_delay: options.query_retry_delay,
            retry_for: options.connect_timeout,
        })
    }

    /// The driver pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The URL it was opened with (print it: it masks the password).
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// Runs `attempt` (given its number, from 1) until it succeeds, fails for good, or has
    /// failed transiently `1 +` [`DbOptions::query_retries`] times or for longer than
    /// [`DbOptions::connect_timeout`] ([`DbError::Unavailable`]).
    /// Only for operations that are safe to repeat: a transient failure may come after the
    /// statement was applied, with only its answer lost, so a repeat must not apply it twice
    /// (a read; a conditional write the first one makes a no-op, whose caller then recognises
    /// its own write from the attempt number).
    pub(crate) async fn retry<T, F, Fut>(&self, mut attempt: F) -> Result<T, DbError>
    where
        F: FnMut(u32) -> Fut,
        Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
    {
        let started = tokio::time::Instant::now();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let failed = match attempt(attempts).await {
                Ok(done) => return Ok(done),
                Err(e) if transient(&e) => e,
                Err(source) => return Err(DbError::Query { source }),
            };
            let delay = backoff(self.retry_delay, attempts);
            if attempts > self.retries || started.elapsed() + delay > self.retry_for {
                return Err(DbError::Unavailable {
                    attempts,
                    source: failed,
                });
            }
            tracing::warn!(url = %self.url, attempts, error = %failed, "database statement failed; retrying in {delay:?}");
            tokio::time::sleep(delay).await;
        }
    }

    /// Closes every pooled connection (waiting for those in use to be returned).
    pub async fn close(&self) {
        crate::store::with_pool!(&self.pool, p => p.close().await)
    }
}

async fn connect(url: &StoreUrl, options: &DbOptions) -> Result<Pool, DbError> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let failed = match connect_once(url, options).await? {
            Ok(pool) => return Ok(pool),
            Err(e) => e,
        };
        if attempts > options.retries || !transient(&failed) {
            return Err(DbError::Connect {
                url: url.to_string(),
                attempts,
                source: failed,
            });
        }
        let delay = backoff(options.retry_delay, attempts);
        tracing::warn!(%url, attempts, error = %failed, "database not reachable; retrying in {delay:?}");
        tokio::time::sleep(delay).await;
    }
}

/// One attempt: `Err` for a URL this build cannot open, `Ok(Err)` for a driver failure.
async fn connect_once(url: &StoreUrl, options: &DbOptions) -> Result<Result<Pool, sqlx::Error>, DbError> {
    match url {
        StoreUrl::Memory | StoreUrl::File(_) => Err(DbError::NotSql { url: url.to_string() }),
        #[cfg(feature = "sqlite")]
        StoreUrl::Sqlite(path) => {
            use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
            let connect = SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .busy_timeout(options.busy_timeout);
            Ok(SqlitePoolOptions::new()
                .max_connections(options.max_connections)
                .acquire_timeout(options.connect_timeout)
                .connect_with(connect)
                .await
                .map(Pool::Sqlite))
        }
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(raw) => {
            use std::str::FromStr;
            let connect = match sqlx::postgres::PgConnectOptions::from_str(raw) {
                Ok(c) => c,
                Err(e) => return Ok(Err(e)),
            };
            Ok(sqlx::postgres::PgPoolOptions::new()
                .max_connections(options.max_connections)
                .acquire_timeout(options.connect_timeout)
                .connect_with(connect)
                .await
                .map(Pool::Postgres))
        }
        #[allow(unreachable_patterns)]
        _ => Err(DbError::Disabled {
            url: url.to_string(),
            feature: if matches!(url, StoreUrl::Sqlite(_)) {
                "sqlite"
            } else {
                "postgres"
            },
        }),
    }
}

/// The wait after failed attempt number `attempts` (from 1): `first`, doubling each time.
fn backoff(first: Duration, attempts: u32) -> Duration {
    first.saturating_mul(1 << attempts.saturating_sub(1).min(6))
}

/// Failures worth another attempt: the server is away for now (not yet started, restarting,
/// the connection cut) or, for SQLite, another writer holds the file; never a wrong login,
/// a bad URL or SQL, a constraint or a conflict.
fn transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
        // A connection closed before PostgreSQL answered the TLS probe (a server going down,
        // a proxy dropping it): sqlx reads the end of the stream as a zero byte.
        sqlx::Error::Protocol(m) => m.starts_with("unexpected response from SSLRequest: 0x00 "),
        sqlx::Error::Database(db) => db.code().is_some_and(|code| transient_code(&code)),
        _ => false,
    }
}

/// A PostgreSQL SQLSTATE or an SQLite result code that means "try again". A SQLSTATE is
/// always five characters (some all digits, like 08006); SQLite's codes, extended ones
/// included, have at most four digits.
fn transient_code(code: &str) -> bool {
    if code.len() == 5 {
        // PostgreSQL: 08xxx connection exceptions; 57P01 admin_shutdown and 57P02
        // crash_shutdown (the session was cut); 57P03 cannot_connect_now (starting up).
        code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
    } else {
        // SQLite: the primary code (low byte) SQLITE_BUSY (5) or SQLITE_LOCKED (6).
        code.parse::<u32>().is_ok_and(|c| matches!(c & 0xff, 5 | 6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_codes_of_both_engines() {
        for code in [
            "5", "6", "517", "262", "57P01", "57P02", "57P03", "08006", "08001",
        ] {
            assert!(transient_code(code), "{code}");
        }
        // SQLite constraint (19, 2067 unique), PostgreSQL unique violation, syntax error,
        // bad password, serialization failure (a transaction's, not a statement's, to redo).
        for code in ["19", "2067", "23505", "42601", "28P01", "40001"] {
            assert!(!transient_code(code), "{code}");
        }
    }

    #[test]
    fn a_connection_closed_during_the_tls_probe_is_transient() {
        let closed = "unexpected response from SSLRequest: 0x00 (sqlx_postgres::connection::tls:95)";
        assert!(transient(&sqlx::Error::Protocol(closed.into())));
        let other = "unexpected response from SSLRequest: 0x45 (sqlx_postgres::connection::tls:95)";
        assert!(!transient(&sqlx::Error::Protocol(other.into())));
    }

    #[test]
    fn backoff_doubles_from_the_first_wait_and_stops_growing() {
        let first = Duration::from_millis(100);
        let waits: Vec<u128> = (1..=9).map(|n| backoff(first, n).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 6400, 6400, 6400]);
    }
}
