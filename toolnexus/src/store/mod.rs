//! Durable, shared state on SQL (features `sqlite` and `postgres`): conversations, suspended
//! runs and, with `a2a`, A2A tasks, so several replicas of one agent behind a load balancer
//! see the same state, and a restart loses nothing.
//!
//! A [`StoreUrl`] names where state lives; [`Db::open`] connects to an SQL one (bounded
//! retries) and applies the embedded [migrations](migrate) under a lock.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolnexus::store::{Db, DbOptions, StoreUrl};
//!
//! let url: StoreUrl = "sqlite:state.db".parse()?;
//! let db = Db::open(&url, DbOptions::default()).await?;
//! println!("state in {}", db.url());
//! # Ok(()) }
//! ```

#[cfg(feature = "a2a")]
mod a2a_tasks;
mod conversations;
mod db;
mod error;
pub mod migrate;
mod url;

#[cfg(feature = "a2a")]
pub use a2a_tasks::SqlTaskStore;
pub use conversations::SqlConversationStore;
pub use db::{Db, DbOptions, Pool};
pub use error::DbError;
pub use url::{StoreUrl, StoreUrlError};

/// `with_pool!(db.pool(), p => expr)`: `expr` once per engine, with `p` bound to that
/// engine's pool (`&SqlitePool` or `&PgPool`), for queries written the same way for both
/// (`$1`-style placeholders work on both).
macro_rules! with_pool {
    ($pool:expr, $p:ident => $body:expr) => {
        match $pool {
            #[cfg(feature = "sqlite")]
            $crate::store::Pool::Sqlite($p) => $body,
            #[cfg(feature = "postgres")]
            $crate::store::Pool::Postgres($p) => $body,
        }
    };
}
pub(crate) use with_pool;
