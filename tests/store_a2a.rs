//! The A2A task store on real databases (SQLite, and PostgreSQL on `TOOLNEXUS_PG_URL`): the
//! lease contract, two replicas (two pools) on one database seeing one task and failing an
//! expired one exactly once, a database that goes away mid-run, and two served agents on one
//! SQLite file.

mod a2a_support;
mod store_support;

// One copy of the skip rule: store_support reaches it as `crate::peer`.
use a2a_support::peer;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use a2a_support::{Served, check_lease_semantics};
use serde_json::json;
use store_support::{Proxy, each_engine, fresh, fresh_postgres, pg_addr, via};
use toolnexus::Toolkit;
use toolnexus::a2a::{A2aConfig, Artifact, Lease, Message, Part, Task, TaskState, TaskStore};
use toolnexus::client::{Client, Style};
use toolnexus::store::{SqlTaskStore, StoreUrl};
use toolnexus_mock::{MockModel, Scenario};

#[tokio::test]
async fn every_engine_keeps_the_lease_contract() {
    for engine in each_engine().await {
        let store = SqlTaskStore::from_db(engine.db.clone());
        check_lease_semantics(&store).await;

        // The whole task survives the round trip: history, artifacts, context.
        let mut task = Task::new("whole", TaskState::Completed);
        task.context_id = Some("ctx-1".into());
        task.history = vec![Message::agent_text("step one")];
        task.artifacts = vec![Artifact {
            artifact_id: "a-1".into(),
            name: Some("answer".into()),
            parts: vec![Part::Text("forty-two".into())],
        }];
        store.save(&task).await.unwrap();
        assert_eq!(store.get("whole").await.unwrap(), Some(task), "{}", engine.url);
    }
}

#[tokio::test]
async fn two_replicas_share_tasks_and_fail_an_expired_one_exactly_once() {
    for engine in each_engine().await {
        let one = SqlTaskStore::from_db(engine.db.clone());
        let two = SqlTaskStore::from_db(engine.reopen().await);
        let t0 = 1_700_000_000_000;
        let running = Task::new("shared", TaskState::Working);
        one.claim(&running, &Lease::new("replica-1", t0, Duration::from_secs(30)))
            .await
            .unwrap();
        assert_eq!(two.get("shared").await.unwrap(), Some(running), "{}", engine.url);

        for i in 0..60 {
            let task = Task::new(format!("gone-{i}"), TaskState::Working);
            one.claim(&task, &Lease::new("replica-dead", t0, Duration::from_millis(100)))
                .await
                .unwrap();
        }
        // Both replicas sweep at once, twice each: every expired task is failed once.
        let sweep = |store: SqlTaskStore| async move {
            let mut failed = store.expire(t0 + 1_000).await.unwrap();
            failed.extend(store.expire(t0 + 1_000).await.unwrap());
            failed
        };
        let (a, b) = tokio::join!(sweep(one.clone()), sweep(two.clone()));
        let ids: Vec<String> = a.iter().chain(&b).map(|t| t.id.clone()).collect();
        assert_eq!(ids.len(), 60, "{}: {ids:?}", engine.url);
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 60);
        let gone = two.get("gone-7").await.unwrap().unwrap();
        assert_eq!(gone.status.state, TaskState::Failed);
        assert_eq!(
            gone.status.message.unwrap().text(),
            "the replica running this task was lost (lease expired at 2023-11-14T22:13:20.100Z)"
        );
        // The live lease (30 s) was not touched.
        assert_eq!(
            two.get("shared").await.unwrap().unwrap().status.state,
            TaskState::Working
        );
    }
}

#[tokio::test]
async fn a_database_that_goes_away_is_a_clear_error_and_comes_back() {
    let Some(engine) = fresh_postgres().await else {
        return;
    };
    let StoreUrl::Postgres(raw) = &engine.url else {
        unreachable!()
    };
    let proxy = Proxy::start(pg_addr(raw)).await;
    let url: StoreUrl = via(raw, proxy.addr()).parse().unwrap();
    let password = url::Url::parse(raw).unwrap().password().unwrap().to_owned();
    let store = SqlTaskStore::open(&url).await.unwrap();
    store
        .save(&Task::new("before", TaskState::Working))
        .await
        .unwrap();

    proxy.cut();
    let err = store.get("before").await.unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("task store: {url}: database unavailable after ")),
        "{err}"
    );
    assert!(url.to_string().contains(":***@"), "{url}");
    assert!(!err.contains(&password), "{err}");

    proxy.restore();
    // The pool reconnects on the next use (bounded: a few tries).
    let mut back = None;
    for _ in 0..20 {
        if let Ok(task) = store.get("before").await {
            back = task;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(back.map(|t| t.status.state), Some(TaskState::Working));
}

#[tokio::test]
async fn two_agents_on_one_sqlite_file_serve_the_same_tasks() {
    let engine = fresh().await;
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let client = Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed")
        .build()
        .unwrap();
    let replica = |db| A2aConfig {
        store: Some(Arc::new(SqlTaskStore::from_db(db)) as Arc<dyn TaskStore>),
        ..A2aConfig::default()
    };
    let one = Served::start(&Toolkit::default(), client.clone(), replica(engine.db.clone())).await;
    let two = Served::start(&Toolkit::default(), client, replica(engine.reopen().await)).await;
    let send = json!({"message": {"role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": "hello sql"}]},
                      "configuration": {"blocking": true}});
    let done = one.rpc("SendMessage", send, None).await["result"].clone();
    assert_eq!(done["status"]["state"], "completed", "{done}");
    let id = done["id"].as_str().unwrap();
    let seen = two.rpc("GetTask", json!({"id": id}), None).await["result"].clone();
    assert_eq!(seen, done);
    assert_eq!(seen["artifacts"][0]["parts"][0]["text"], "You said: hello sql");
}
