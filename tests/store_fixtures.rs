//! `tests/fixtures/store/v1.sqlite` was written by this version's SQL stores and is checked
//! in: every later version must open it (migrating it forward) and read its rows as written.
//! `TOOLNEXUS_WRITE_STORE_FIXTURE=1` rewrites it (only when schema slot 1 itself changes,
//! which a released schema never does).

mod peer;
mod store_support;

use serde_json::json;
use toolnexus::Request;
use toolnexus::client::{ConversationStore, Suspension, SuspensionStore, Version};
use toolnexus::store::{Db, DbOptions, SqlConversationStore, SqlSuspensions, StoreUrl};
use toolnexus::suspend::Answer;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store/v1.sqlite");

fn halted() -> Suspension {
    let mut request = Request::new("approval", "Refund order 42?");
    request.id = "req-v1".into();
    Suspension {
        request,
        conversation: Some("alice".into()),
        transcript: vec![json!({"role": "user", "content": "refund 42"})],
    }
}

async fn write(path: &std::path::Path) {
    let db = Db::open(&StoreUrl::Sqlite(path.into()), DbOptions::default())
        .await
        .unwrap();
    let conversations = SqlConversationStore::new(db.clone());
    let v1 = conversations
        .save_if("alice", vec![json!({"role": "user", "content": "hi"})], None)
        .await
        .unwrap();
    conversations
        .save_if(
            "alice",
            vec![
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": "hello"}),
            ],
            Some(v1),
        )
        .await
        .unwrap();
    let suspensions = SqlSuspensions::new(db.clone());
    suspensions.put(&halted()).await.unwrap();
    let mut other = halted();
    other.request.id = "req-v1-answered".into();
    suspensions.put(&other).await.unwrap();
    suspensions
        .answer("req-v1-answered", &Answer::output("req-v1-answered", "yes"))
        .await
        .unwrap();
    // Closing checkpoints the WAL into the one file.
    db.close().await;
}

#[tokio::test]
async fn the_v1_fixture_opens_and_reads_as_written() {
    if std::env::var_os("TOOLNEXUS_WRITE_STORE_FIXTURE").is_some() {
        let _ = std::fs::remove_file(FIXTURE);
        write(FIXTURE.as_ref()).await;
    }
    // A copy: opening migrates and writes the WAL, and the checked-in file must stay v1.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("v1.sqlite");
    std::fs::copy(FIXTURE, &copy).unwrap();
    let db = Db::open(&StoreUrl::Sqlite(copy), DbOptions::default())
        .await
        .unwrap();
    assert_eq!(
        SqlConversationStore::new(db.clone()).load("alice").await.unwrap(),
        Some((
            vec![
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": "hello"})
            ],
            Version::new(2)
        ))
    );
    let suspensions = SqlSuspensions::new(db.clone());
    assert_eq!(suspensions.get("req-v1").await.unwrap(), Some((halted(), None)));
    let (_, answer) = suspensions.get("req-v1-answered").await.unwrap().unwrap();
    assert_eq!(answer, Some(Answer::output("req-v1-answered", "yes")));
    // Still answerable exactly once after the upgrade.
    suspensions
        .answer("req-v1", &Answer::output("req-v1", "ok"))
        .await
        .unwrap();
    assert!(
        suspensions
            .answer("req-v1", &Answer::output("req-v1", "ok"))
            .await
            .is_err()
    );
}
