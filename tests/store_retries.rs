//! Bounded retries of statements after a transient failure, on real engines: PostgreSQL cut
//! away by a proxy (every connection dropped) and SQLite locked by another writer. A
//! statement retried through the outage succeeds once the database is back within the
//! budget; past the budget it fails with the typed [`DbError::Unavailable`], its message
//! naming the store with the password masked; a failure that is not transient (a duplicate
//! key) is not retried.

mod peer;
mod store_support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sqlx::Connection as _;
use store_support::{Proxy, TestDb, fresh, fresh_postgres, pg_addr, via};
use toolnexus::Request;
use toolnexus::a2a::{Task, TaskState, TaskStore};
use toolnexus::client::{ConversationStore, Suspension, SuspensionStore, Version};
use toolnexus::store::{
    Db, DbError, DbOptions, SqlConversationStore, SqlSuspensions, SqlTaskStore, StoreUrl,
};

/// A budget that comfortably outlasts the test's outage: 8 retries, 50 ms doubling (about
/// 6 s of waits), within a 20 s window.
fn patient() -> DbOptions {
    DbOptions {
        query_retries: 8,
        query_retry_delay: Duration::from_millis(50),
        connect_timeout: Duration::from_secs(20),
        ..DbOptions::default()
    }
}

/// A budget the outage outlasts: 2 retries, 10 ms apart.
fn impatient() -> DbOptions {
    DbOptions {
        query_retries: 2,
        query_retry_delay: Duration::from_millis(10),
        connect_timeout: Duration::from_secs(5),
        ..DbOptions::default()
    }
}

/// `t`'s database reached through `proxy`, opened with `options`; and its password.
async fn through(t: &TestDb, proxy: &Proxy, options: DbOptions) -> (Db, String) {
    let StoreUrl::Postgres(raw) = &t.url else {
        unreachable!()
    };
    let password = url::Url::parse(raw).unwrap().password().unwrap().to_owned();
    let url: StoreUrl = via(raw, proxy.addr()).parse().unwrap();
    (Db::open(&url, options).await.unwrap(), password)
}

/// Cuts `proxy`, waits (bounded) until a client attempt has been dropped, then restores it.
async fn outage(proxy: &Proxy) {
    proxy.cut();
    for _ in 0..400 {
        if proxy.dropped() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(proxy.dropped() > 0, "no statement reached the cut proxy");
    proxy.restore();
}

#[tokio::test]
async fn statements_retried_through_a_cut_succeed_once_postgres_is_back() {
    let Some(t) = fresh_postgres().await else { return };
    let proxy = Proxy::start(pg_addr(&t.url_raw())).await;
    let (db, _) = through(&t, &proxy, patient()).await;
    let conversations = SqlConversationStore::new(db.clone());
    let tasks = SqlTaskStore::from_db(db.clone());
    let v1 = conversations
        .save_if("c", vec![json!("one")], None)
        .await
        .unwrap();
    tasks.save(&Task::new("t", TaskState::Working)).await.unwrap();

    // A read.
    let (load, ()) = tokio::join!(conversations.load("c"), outage(&proxy));
    assert_eq!(load.unwrap(), Some((vec![json!("one")], v1)));
    // A compare-and-set write: applied once, at the next version.
    let (saved, ()) = tokio::join!(
        conversations.save_if("c", vec![json!("one"), json!("two")], Some(v1)),
        outage(&proxy)
    );
    assert_eq!(saved.unwrap(), Version::new(2));
    assert_eq!(
        conversations.load("c").await.unwrap(),
        Some((vec![json!("one"), json!("two")], Version::new(2)))
    );
    // The A2A task store's read.
    let (task, ()) = tokio::join!(tasks.get("t"), outage(&proxy));
    assert_eq!(task.unwrap().map(|t| t.status.state), Some(TaskState::Working));
}

#[tokio::test]
async fn a_write_applied_whose_answer_was_lost_is_recognised_as_its_own_on_the_retry() {
    let Some(t) = fresh_postgres().await else { return };
    let proxy = Proxy::start(pg_addr(&t.url_raw())).await;
    let (db, _) = through(&t, &proxy, patient()).await;
    let conversations = SqlConversationStore::new(db.clone());
    let v1 = conversations
        .save_if("c", vec![json!("one")], None)
        .await
        .unwrap();
    // The update reaches PostgreSQL and commits, but its answer never comes back.
    proxy.lose_answer(b"UPDATE 1");
    let save = tokio::spawn(async move {
        conversations
            .save_if("c", vec![json!("one"), json!("two")], Some(v1))
            .await
    });
    let direct = SqlConversationStore::new(t.reopen().await);
    let mut committed = false;
    for _ in 0..500 {
        if direct
            .load("c")
            .await
            .unwrap()
            .is_some_and(|(_, v)| v == Version::new(2))
        {
            committed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(committed, "the muted update was applied");
    // The connection drops; the retry finds its version already moved, by this very write.
    outage(&proxy).await;
    let saved = tokio::time::timeout(Duration::from_secs(30), save)
        .await
        .expect("the save finished")
        .unwrap();
    assert_eq!(saved.unwrap(), Version::new(2), "not a conflict with itself");
    assert_eq!(
        direct.load("c").await.unwrap(),
        Some((vec![json!("one"), json!("two")], Version::new(2)))
    );
}

#[tokio::test]
async fn past_the_budget_the_error_is_typed_and_names_the_store_without_its_password() {
    let Some(t) = fresh_postgres().await else { return };
    let proxy = Proxy::start(pg_addr(&t.url_raw())).await;
    let (db, password) = through(&t, &proxy, impatient()).await;
    let conversations = SqlConversationStore::new(db.clone());
    conversations
        .save_if("c", vec![json!("kept")], None)
        .await
        .unwrap();

    proxy.cut();
    let err = conversations.load("c").await.unwrap_err();
    let shown = format!("{err} / {err:?}");
    assert!(
        shown.starts_with(&format!(
            "conversation store: loading conversation \"c\" in {}: database unavailable after 3 attempt(s): ",
            db.url()
        )),
        "{shown}"
    );
    assert!(db.url().to_string().contains(":***@"));
    assert!(!shown.contains(&password), "{shown}");
    let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<DbError>());
    assert!(
        matches!(cause, Some(DbError::Unavailable { attempts: 3, .. })),
        "{cause:?}"
    );
    assert_eq!(proxy.dropped(), 3, "one connection per attempt");

    // The A2A task store says the same in its own words.
    let tasks = SqlTaskStore::from_db(db.clone());
    let err = tasks.get("t").await.unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "task store: {}: database unavailable after 3 attempt(s): ",
            db.url()
        )),
        "{err}"
    );
    assert!(!err.contains(&password), "{err}");

    proxy.restore();
    assert_eq!(
        conversations.load("c").await.unwrap(),
        Some((vec![json!("kept")], Version::new(1)))
    );
}

fn suspension(id: &str) -> Suspension {
    let mut request = Request::new("input", "Which city?");
    request.id = id.to_owned();
    Suspension {
        request,
        conversation: None,
        transcript: vec![json!({"role": "user", "content": "hi"})],
    }
}

#[tokio::test]
async fn a_duplicate_key_is_not_retried() {
    for t in [Some(fresh().await), fresh_postgres().await]
        .into_iter()
        .flatten()
    {
        let store = SqlSuspensions::new(t.db.clone());
        store.put(&suspension("s-1")).await.unwrap();
        let err = store.put(&suspension("s-1")).await.unwrap_err();
        let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<DbError>());
        let Some(DbError::Query { source }) = cause else {
            panic!("{}: {err} / {cause:?}", t.url)
        };
        assert!(
            source
                .as_database_error()
                .is_some_and(|d| d.is_unique_violation()),
            "{}: {source}",
            t.url
        );
    }
}

/// Another process's writer holding SQLite's write lock: `BEGIN IMMEDIATE` on its own
/// connection, released by `COMMIT` when `release` fires.
async fn lock_sqlite(t: &TestDb) -> sqlx::SqliteConnection {
    let StoreUrl::Sqlite(path) = &t.url else {
        unreachable!()
    };
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    sqlx::query("BEGIN IMMEDIATE").execute(&mut conn).await.unwrap();
    conn
}

#[tokio::test]
async fn sqlite_busy_is_retried_until_the_other_writer_commits_and_reported_past_the_budget() {
    let t = fresh().await;
    // SQLite waits 20 ms on the lock itself, then the retries take over.
    let quick = |options: DbOptions| DbOptions {
        busy_timeout: Duration::from_millis(20),
        ..options
    };
    let db = Db::open(&t.url, quick(patient())).await.unwrap();
    let store = Arc::new(SqlConversationStore::new(db));

    let mut holder = lock_sqlite(&t).await;
    let save = tokio::spawn({
        let store = store.clone();
        async move { store.save_if("c", vec![json!("after the lock")], None).await }
    });
    // Long enough for a few busy attempts (the test passes without them too, but then it
    // would not have exercised them: the budget, not this wait, bounds the save).
    tokio::time::sleep(Duration::from_millis(300)).await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    assert_eq!(save.await.unwrap().unwrap(), Version::new(1));

    let db = Db::open(&t.url, quick(impatient())).await.unwrap();
    let store = SqlConversationStore::new(db);
    sqlx::query("BEGIN IMMEDIATE").execute(&mut holder).await.unwrap();
    let err = store.save_if("d", vec![json!("never")], None).await.unwrap_err();
    let cause = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<DbError>());
    let Some(DbError::Unavailable { attempts: 3, source }) = cause else {
        panic!("{err} / {cause:?}")
    };
    assert_eq!(
        source.as_database_error().and_then(|d| d.code()).as_deref(),
        Some("5"),
        "SQLITE_BUSY: {source}"
    );
    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    assert_eq!(store.load("d").await.unwrap(), None);
}
