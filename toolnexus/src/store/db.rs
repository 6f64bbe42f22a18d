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
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            max_connections: 8,
            connect_timeout: Duration::from_secs(5),
            retries: 3,
            retry_delay: Duration::from_millis(200),
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// An open, migrated database. Cloning it is cheap and shares the pool.
#[derive(Clone, Debug)]
pub struct Db {
    pool: Pool,
    url: Arc<StoreUrl>,
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
        let delay = options.retry_delay.saturating_mul(1 << (attempts - 1).min(6));
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

/// Failures worth another attempt: the server is not (yet) there, not a wrong login or URL.
fn transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
        // 57P03 cannot_connect_now: PostgreSQL is starting up or shutting down.
        sqlx::Error::Database(db) => db.code().as_deref() == Some("57P03"),
        _ => false,
    }
}
