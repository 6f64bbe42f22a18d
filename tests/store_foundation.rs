//! The store foundation against real databases: migrations applied once (also by replicas
//! opening together), the schema ledger, connection errors that never show the password.

mod peer;
mod store_support;

use std::time::Duration;

use store_support::{Proxy, each_engine, fresh_postgres, pg_addr, via, with_database};
use toolnexus::store::{Db, DbError, DbOptions, StoreUrl, migrate::MIGRATIONS};

async fn ledger(db: &Db) -> Vec<(i32, String)> {
    match db.pool() {
        toolnexus::store::Pool::Sqlite(p) => {
            sqlx::query_as("SELECT version, name FROM toolnexus_migrations ORDER BY version")
                .fetch_all(p)
                .await
                .unwrap()
        }
        toolnexus::store::Pool::Postgres(p) => {
            sqlx::query_as("SELECT version, name FROM toolnexus_migrations ORDER BY version")
                .fetch_all(p)
                .await
                .unwrap()
        }
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn open_applies_every_migration_once_and_reopen_applies_none() {
    for t in each_engine().await {
        let want: Vec<(i32, String)> = MIGRATIONS
            .iter()
            .map(|m| (m.version as i32, m.name.to_owned()))
            .collect();
        assert_eq!(ledger(&t.db).await, want, "{}", t.url);
        assert_eq!(want[0], (1, "0001_conversations_suspensions".to_owned()));
        let again = t.reopen().await;
        assert_eq!(ledger(&again).await, want, "{}", t.url);
    }
}

#[tokio::test]
async fn replicas_opening_at_once_migrate_exactly_once() {
    for t in each_engine().await {
        // A brand-new database each time: the replicas race on the empty schema.
        let url = match &t.url {
            StoreUrl::Sqlite(p) => StoreUrl::Sqlite(p.with_file_name("race.db")),
            StoreUrl::Postgres(_) => match fresh_postgres().await {
                Some(other) => {
                    // Drop its schema so the racers start from nothing.
                    drop_schema(&other.db).await;
                    other.url.clone()
                }
                None => continue,
            },
            _ => unreachable!(),
        };
        let opens = (0..6).map(|_| {
            let url = url.clone();
            tokio::spawn(async move { Db::open(&url, DbOptions::default()).await })
        });
        for opened in futures::future::join_all(opens).await {
            let db = opened.unwrap().unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(ledger(&db).await.len(), MIGRATIONS.len(), "{url}");
        }
    }
}

async fn drop_schema(db: &Db) {
    let toolnexus::store::Pool::Postgres(p) = db.pool() else {
        unreachable!()
    };
    sqlx::raw_sql(
        "DROP TABLE toolnexus_conversations; DROP TABLE toolnexus_suspensions; DROP TABLE IF EXISTS toolnexus_a2a_tasks; DROP TABLE toolnexus_migrations",
    )
    .execute(p)
    .await
    .unwrap();
}

#[tokio::test]
async fn a_wrong_password_fails_without_showing_it() {
    let Some(server) = peer::postgres_url() else {
        return;
    };
    let mut url = url::Url::parse(&server).unwrap();
    url.set_password(Some("not-the-Pa55word")).unwrap();
    let store: StoreUrl = url.as_str().parse().unwrap();
    let err = Db::open(&store, DbOptions::default()).await.unwrap_err();
    let shown = format!("{err} / {err:?} / {:?}", std::error::Error::source(&err));
    assert!(!shown.contains("not-the-Pa55word"), "{shown}");
    // A refused login is not retried.
    assert!(
        matches!(&err, DbError::Connect { attempts: 1, url, .. } if url.contains(":***@")),
        "{shown}"
    );
    assert!(shown.contains("password authentication failed"), "{shown}");
}

#[tokio::test]
async fn an_unreachable_database_fails_after_bounded_retries_naming_the_url() {
    let Some(server) = peer::postgres_url() else {
        return;
    };
    let proxy = Proxy::start(pg_addr(&server)).await;
    proxy.cut();
    let store: StoreUrl = via(&with_database(&server, "postgres"), proxy.addr())
        .parse()
        .unwrap();
    let options = DbOptions {
        retries: 2,
        retry_delay: Duration::from_millis(10),
        connect_timeout: Duration::from_secs(2),
        ..DbOptions::default()
    };
    let err = Db::open(&store, options).await.unwrap_err();
    let DbError::Connect { url, attempts, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*attempts, 3, "{err}");
    assert_eq!(url, &store.to_string());
    assert!(
        err.to_string()
            .starts_with(&format!("cannot connect to {store} after 3 attempt(s): ")),
        "{err}"
    );
    assert!(!err.to_string().contains(&password(&server)), "{err}");
    // Restored, the same URL opens.
    proxy.restore();
    Db::open(&store, DbOptions::default()).await.unwrap();
}

fn password(server: &str) -> String {
    url::Url::parse(server)
        .unwrap()
        .password()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn memory_and_file_urls_are_not_databases() {
    let err = Db::open(&StoreUrl::Memory, DbOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "memory is not an SQL store (expected sqlite:<path> or postgres://...)"
    );
}
