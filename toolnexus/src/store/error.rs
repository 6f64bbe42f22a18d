//! What can go wrong between toolnexus and its database.

/// A database failure. URLs in it have their password masked; the driver's error stays
/// reachable through [`source`](std::error::Error::source).
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// [`Db::open`](super::Db::open) was given `memory` or `file:`, which are not databases.
    #[error("{url} is not an SQL store (expected sqlite:<path> or postgres://...)")]
    NotSql {
        /// The store URL.
        url: String,
    },
    /// The URL names an engine this build was compiled without.
    #[error("{url}: this build has no {feature} support (cargo feature `{feature}`)")]
    Disabled {
        /// The store URL, password masked.
        url: String,
        /// `sqlite` or `postgres`.
        feature: &'static str,
    },
    /// The database could not be reached or refused the login, after the bounded retries.
    #[error("cannot connect to {url} after {attempts} attempt(s): {source}")]
    Connect {
        /// The store URL, password masked.
        url: String,
        /// How many connection attempts were made.
        attempts: u32,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A migration failed; its transaction was rolled back.
    #[error("migration {version} failed: {source}")]
    Migrate {
        /// The migration's version.
        version: u32,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The database was migrated by a newer toolnexus than this one.
    #[error(
        "the database is at schema version {found}, newer than this toolnexus knows ({known}); upgrade toolnexus"
    )]
    TooNew {
        /// The highest version recorded in the database.
        found: u32,
        /// The highest version this build carries.
        known: u32,
    },
    /// A statement kept failing for a transient reason (the database away or restarting,
    /// SQLite locked) through every retry of [`DbOptions::query_retries`](super::DbOptions).
    #[error("database unavailable after {attempts} attempt(s): {source}")]
    Unavailable {
        /// How many times the statement was tried.
        attempts: u32,
        /// The driver's last error.
        #[source]
        source: sqlx::Error,
    },
    /// A query failed (not transiently: not retried).
    #[error("query failed: {source}")]
    Query {
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
}

crate::debug_as_display!(DbError);

impl From<sqlx::Error> for DbError {
    fn from(source: sqlx::Error) -> Self {
        Self::Query { source }
    }
}
