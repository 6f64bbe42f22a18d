//! `ask` conversations on SQLite and PostgreSQL: versions, compare-and-set, two replicas
//! continuing one conversation at once, restarts, and the database going away.

mod peer;
mod store_support;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::{Value, json};
use store_support::{Proxy, TestDb, each_engine, fresh_postgres, pg_addr, via};
use toolnexus::client::{Client, ConversationStore, RunOptions, Style, Version};
use toolnexus::store::{Db, DbOptions, SqlConversationStore, StoreUrl};
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};
use toolnexus_mock::{MockModel, Scenario};

fn store(db: &Db) -> Arc<dyn ConversationStore> {
    Arc::new(SqlConversationStore::new(db.clone()))
}

fn client(model: &MockModel, store: Arc<dyn ConversationStore>) -> Client {
    Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed-for-the-mock")
        .store(store)
        .build()
        .unwrap()
}

/// Both callers of `meet` wait for each other: each `ask` has loaded the conversation before
/// either saves it, so the race is certain, not likely.
static MEET: LazyLock<tokio::sync::Barrier> = LazyLock::new(|| tokio::sync::Barrier::new(2));

fn meet() -> Toolkit {
    Toolkit::new([Tool::new("meet", |args: Value, _: ToolContext| async move {
        tokio::time::timeout(Duration::from_secs(30), MEET.wait())
            .await
            .expect("the other ask never arrived");
        ToolResult::success(format!("met {}", args["who"].as_str().unwrap_or("?")))
    })
    .with_description("wait for the other caller")])
}

#[tokio::test]
async fn compare_and_set_versions_and_restart() {
    for t in each_engine().await {
        let s = store(&t.db);
        assert_eq!(s.load("c").await.unwrap(), None, "{}", t.url);
        let v1 = s.save_if("c", vec![json!(1)], None).await.unwrap();
        assert_eq!(v1, Version::new(1));
        let lost = s.save_if("c", vec![json!(9)], None).await.unwrap_err();
        assert_eq!(
            lost.to_string(),
            "conversation store: conversation \"c\" was changed by another writer while this turn ran"
        );
        let v2 = s.save_if("c", vec![json!(1), json!(2)], Some(v1)).await.unwrap();
        assert_eq!(v2, Version::new(2));
        assert!(
            s.save_if("c", vec![json!(9)], Some(v1))
                .await
                .unwrap_err()
                .is_conflict()
        );
        s.save("other", vec![json!("x")]).await.unwrap();
        s.save("other", vec![json!("y")]).await.unwrap();
        // A restart: the pool closed, a new one opened on the same database.
        t.db.close().await;
        let reopened = store(&t.reopen().await);
        assert_eq!(
            reopened.load("c").await.unwrap(),
            Some((vec![json!(1), json!(2)], v2)),
            "{}",
            t.url
        );
        assert_eq!(
            reopened.load("other").await.unwrap(),
            Some((vec![json!("y")], Version::new(2)))
        );
    }
}

/// Replica A and replica B (two `Db` handles, two clients) answer on one conversation at
/// once: both turns are kept, the loser's after the winner's.
#[tokio::test]
async fn two_replicas_asking_on_one_conversation_keep_both_turns() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    for t in each_engine().await {
        let a = client(&model, store(&t.db));
        let b = client(&model, store(&t.reopen().await));
        a.ask("hello", "shared", RunOptions::new(&meet()))
            .await
            .map(drop)
            .unwrap_or_else(|e| panic!("{e}"));
        // (The first ask above called no tool: the planner only echoes it.)
        let (ra, rb) = tokio::join!(
            a.ask(r#"meet {"who":"a"}"#, "shared", RunOptions::new(&meet())),
            b.ask(r#"meet {"who":"b"}"#, "shared", RunOptions::new(&meet())),
        );
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        assert_eq!(ra.text, "Here is what the tools returned:\n- meet: met a");
        assert_eq!(rb.text, "Here is what the tools returned:\n- meet: met b");
        let (stored, version) = store(&t.db).load("shared").await.unwrap().unwrap();
        assert_eq!(version, Version::new(3), "{}", t.url);
        let users: Vec<&str> = stored
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str())
            .collect();
        // Both turns, each whole (user, tool call, tool result, answer), neither dropped.
        assert_eq!(users.len(), 3, "{stored:#?}");
        assert_eq!(users[0], "hello");
        assert!(users.contains(&r#"meet {"who":"a"}"#) && users.contains(&r#"meet {"who":"b"}"#));
        assert_eq!(stored.len(), 2 + 4 + 4, "{stored:#?}");
        for who in ["a", "b"] {
            let at = stored
                .iter()
                .position(|m| m["content"] == format!(r#"meet {{"who":"{who}"}}"#))
                .unwrap();
            assert_eq!(stored[at + 2]["content"], format!("met {who}"));
            assert_eq!(
                stored[at + 3]["content"],
                format!("Here is what the tools returned:\n- meet: met {who}")
            );
        }
    }
}

async fn open_via(t: &TestDb, proxy: &Proxy) -> (StoreUrl, Db) {
    let StoreUrl::Postgres(raw) = &t.url else {
        unreachable!()
    };
    let url: StoreUrl = via(raw, proxy.addr()).parse().unwrap();
    let options = DbOptions {
        connect_timeout: Duration::from_secs(2),
        ..DbOptions::default()
    };
    let db = Db::open(&url, options).await.unwrap();
    (url, db)
}

/// PostgreSQL goes away under a running store (the proxy cuts every connection): each call
/// fails within the bounded connect timeout with an error naming the URL without the password;
/// when it comes back, the same store works again with nothing lost.
#[tokio::test]
async fn the_database_going_away_is_a_clear_error_and_its_return_heals() {
    let Some(t) = fresh_postgres().await else { return };
    let StoreUrl::Postgres(raw) = &t.url else {
        unreachable!()
    };
    let password = url::Url::parse(raw).unwrap().password().unwrap().to_owned();
    let proxy = Proxy::start(pg_addr(raw)).await;
    let (url, db) = open_via(&t, &proxy).await;
    let s = store(&db);
    let v1 = s.save_if("c", vec![json!("kept")], None).await.unwrap();

    proxy.cut();
    let err = s.load("c").await.unwrap_err();
    let shown = format!("{err} / {err:?}");
    assert!(
        shown.starts_with(&format!(
            "conversation store: loading conversation \"c\" in {url}: "
        )),
        "{shown}"
    );
    assert!(url.to_string().contains(":***@"), "{url}");
    assert!(!shown.contains(&password), "{shown}");
    assert!(std::error::Error::source(&err).is_some());
    assert!(s.save_if("c", vec![json!("lost")], Some(v1)).await.is_err());

    proxy.restore();
    assert_eq!(s.load("c").await.unwrap(), Some((vec![json!("kept")], v1)));
}
