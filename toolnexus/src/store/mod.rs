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
mod suspensions;
mod url;

#[cfg(feature = "a2a")]
pub use a2a_tasks::SqlTaskStore;
pub use conversations::SqlConversationStore;
pub use db::{Db, DbOptions, Pool};
pub use error::DbError;
pub use suspensions::SqlSuspensions;
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

use std::sync::Arc;

use crate::client::{
    ConversationStore, FileStore, FileSuspensions, InMemoryStore, InMemorySuspensions, SuspensionStore,
};

/// The stores one [`StoreUrl`] gives a server: conversations and suspensions (and the
/// [`Db`] itself for an SQL URL, for the A2A task store and others to share).
#[derive(Clone)]
pub struct Stores {
    /// `ask` conversations.
    pub conversations: Arc<dyn ConversationStore>,
    /// Halted runs waiting for answers.
    pub suspensions: Arc<dyn SuspensionStore>,
    /// The database, for an SQL URL.
    pub db: Option<Db>,
}

impl Stores {
    /// `memory`: this process only; `file:<dir>`: `<dir>/conversations` and
    /// `<dir>/suspensions`; `sqlite:` / `postgres://`: the database, opened and migrated.
    pub async fn open(url: &StoreUrl) -> Result<Stores, DbError> {
        Ok(match url {
            StoreUrl::Memory => Stores {
                conversations: Arc::new(InMemoryStore::new()),
                suspensions: Arc::new(InMemorySuspensions::new()),
                db: None,
            },
            StoreUrl::File(dir) => Stores {
                conversations: Arc::new(FileStore::new(dir.join("conversations"))),
                suspensions: Arc::new(FileSuspensions::new(dir.join("suspensions"))),
                db: None,
            },
            StoreUrl::Sqlite(_) | StoreUrl::Postgres(_) => {
                let db = Db::open(url, DbOptions::default()).await?;
                Stores {
                    conversations: Arc::new(SqlConversationStore::new(db.clone())),
                    suspensions: Arc::new(SqlSuspensions::new(db.clone())),
                    db: Some(db),
                }
            }
        })
    }
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores")
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}
