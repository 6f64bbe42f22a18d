//! Versioned schema migrations, embedded in the binary and applied by [`Db::open`](super::Db::open).
//!
//! Each migration is a pair of files, `migrations/sqlite/NNNN_name.sql` and
//! `migrations/postgres/NNNN_name.sql`, registered once in [`MIGRATIONS`]. Applied versions
//! are recorded in `toolnexus_migrations(version, name, applied_at)`. All pending migrations
//! run in one transaction under a lock (PostgreSQL: `pg_advisory_xact_lock`; SQLite:
//! `BEGIN IMMEDIATE`), so replicas starting at once apply each exactly once. A released
//! migration is never edited: a change is a new version.

use super::{DbError, Pool};

/// One schema step, for both engines.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Its version: applied in ascending order, each once.
    pub version: u32,
    /// Its file name without `.sql`, e.g. `0001_conversations_suspensions`.
    pub name: &'static str,
    /// The SQLite script.
    pub sqlite: &'static str,
    /// The PostgreSQL script.
    pub postgres: &'static str,
}

/// A [`Migration`] from the two files named `$name.sql`.
macro_rules! migration {
    ($version:literal, $name:literal) => {
        Migration {
            version: $version,
            name: $name,
            sqlite: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/sqlite/",
                $name,
                ".sql"
            )),
            postgres: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/migrations/postgres/",
                $name,
                ".sql"
            )),
        }
    };
}

/// Every migration, in version order (slot 2 is the A2A task store's).
pub const MIGRATIONS: &[Migration] = &[
    migration!(1, "0001_conversations_suspensions"),
    migration!(2, "0002_a2a_tasks"),
];

/// The key of the PostgreSQL advisory lock the migrating transaction holds ("toolnex" in ASCII).
#[cfg(feature = "postgres")]
const PG_LOCK_KEY: i64 = 0x0074_6f6f_6c6e_6578;

/// In the open transaction `$tx`: the ledger table (`$ledger` is its engine's DDL), then
/// every pending migration's `$script` field, each recorded as it is applied.
// Through `Executor`'s own (boxed, `Send`) methods: the generic `query(..).execute(&mut *tx)`
// futures defeat the `Send` proof of `Db::open`, which servers run inside `tokio::spawn`.
macro_rules! apply_pending {
    ($tx:ident, $ledger:literal, $script:ident) => {{
        use sqlx::{Executor as _, Row as _};
        (&mut *$tx).execute($ledger).await?;
        let done = (&mut *$tx)
            .fetch_all("SELECT version FROM toolnexus_migrations")
            .await?
            .iter()
            .map(|row| row.try_get::<i32, _>(0))
            .collect::<Result<Vec<i32>, _>>()?;
        for m in pending(&done)? {
            let failed = |source| DbError::Migrate {
                version: m.version,
                source,
            };
            // A `&str` runs unprepared, so one script may hold several statements.
            (&mut *$tx).execute(m.$script).await.map_err(failed)?;
            (&mut *$tx)
                .execute(
                    sqlx::query("INSERT INTO toolnexus_migrations (version, name) VALUES ($1, $2)")
                        .bind(m.version as i32)
                        .bind(m.name),
                )
                .await
                .map_err(failed)?;
        }
    }};
}

/// Applies every migration the database has not recorded yet.
pub(crate) async fn run(pool: &Pool) -> Result<(), DbError> {
    match pool {
        #[cfg(feature = "sqlite")]
        Pool::Sqlite(p) => {
            // IMMEDIATE takes the write lock now, so a second process waits (busy timeout)
            // instead of both reading "nothing applied".
            let mut tx = p.begin_with("BEGIN IMMEDIATE").await?;
            apply_pending!(
                tx,
                "CREATE TABLE IF NOT EXISTS toolnexus_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)",
                sqlite
            );
            tx.commit().await?;
        }
        #[cfg(feature = "postgres")]
        Pool::Postgres(p) => {
            let mut tx = p.begin().await?;
            // Taken before the ledger's CREATE TABLE IF NOT EXISTS, which itself races.
            sqlx::Executor::execute(
                &mut *tx,
                sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(PG_LOCK_KEY),
            )
            .await?;
            apply_pending!(
                tx,
                "CREATE TABLE IF NOT EXISTS toolnexus_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
                postgres
            );
            tx.commit().await?;
        }
    }
    Ok(())
}

/// The migrations not in `done`, or [`DbError::TooNew`] when the database is ahead of us.
fn pending(done: &[i32]) -> Result<Vec<&'static Migration>, DbError> {
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    if let Some(&found) = done.iter().max()
        && i64::from(found) > i64::from(known)
    {
        return Err(DbError::TooNew {
            found: u32::try_from(found).unwrap_or(u32::MAX),
            known,
        });
    }
    Ok(MIGRATIONS
        .iter()
        .filter(|m| !done.iter().any(|&d| i64::from(d) == i64::from(m.version)))
        .collect())
}
