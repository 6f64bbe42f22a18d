//! Durable suspensions on SQLite and PostgreSQL: a run halted through replica A is answered
//! through replica B, and of two concurrent answers exactly one resumes it.

mod peer;
mod store_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use store_support::each_engine;
use toolnexus::client::{
    Client, ClientError, RunOptions, RunStatus, Style, SuspensionError, SuspensionStore,
};
use toolnexus::store::{Db, SqlConversationStore, SqlSuspensions};
use toolnexus::{Answer, Request, Tool, ToolContext, ToolResult, Toolkit};
use toolnexus_mock::{MockModel, Scenario};

/// Suspends for a city until re-run with an answer; counts the answered runs.
fn ask_city(answered: Arc<AtomicUsize>) -> Toolkit {
    Toolkit::new([Tool::new("ask_city", move |_: Value, ctx: ToolContext| {
        let answered = answered.clone();
        async move {
            match ctx.answer {
                Some(a) => {
                    answered.fetch_add(1, Ordering::SeqCst);
                    ToolResult::success(a.data.as_ref().and_then(|d| d["output"].as_str()).unwrap_or(""))
                }
                None => ToolResult::suspend(Request::new("input", "Which city?")),
            }
        }
    })
    .with_description("which city")])
}

fn replica(model: &MockModel, db: &Db) -> Client {
    Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed-for-the-mock")
        .store(Arc::new(SqlConversationStore::new(db.clone())))
        .suspensions(Arc::new(SqlSuspensions::new(db.clone())))
        .build()
        .unwrap()
}

#[tokio::test]
async fn halted_on_replica_a_answered_once_across_replicas() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    for t in each_engine().await {
        let answered = Arc::new(AtomicUsize::new(0));
        let tk = ask_city(answered.clone());
        let a = replica(&model, &t.db);
        let b_db = t.reopen().await;
        let b = replica(&model, &b_db);

        let halted = a
            .ask("ask_city {}", "thread", RunOptions::new(&tk))
            .await
            .unwrap();
        assert_eq!(halted.status, RunStatus::Pending);
        let request = halted.pending.clone().unwrap();
        let (stored, answer) = SqlSuspensions::new(b_db.clone())
            .get(&request.id)
            .await
            .unwrap()
            .expect("recorded through replica A, visible to B");
        assert_eq!(stored.request, request);
        assert_eq!(stored.conversation.as_deref(), Some("thread"));
        assert_eq!(stored.transcript, halted.messages);
        assert_eq!(answer, None);

        // Two answers at once: replica B, and a retried webhook on replica A.
        let answer = Answer::output(&request.id, "Chennai");
        let (rb, ra) = tokio::join!(
            b.resume_stored(&answer, RunOptions::new(&tk)),
            a.resume_stored(&answer, RunOptions::new(&tk)),
        );
        let (won, lost) = match (rb, ra) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
            other => panic!("{}: exactly one answer must win: {other:?}", t.url),
        };
        assert_eq!(won.status, RunStatus::Done);
        assert_eq!(won.text, "Here is what the tools returned:\n- ask_city: Chennai");
        assert!(
            matches!(&lost, ClientError::Suspension(SuspensionError::AlreadyAnswered { id }) if *id == request.id),
            "{lost}"
        );
        assert_eq!(
            lost.to_string(),
            format!("toolnexus: suspension \"{}\" was already answered", request.id)
        );
        assert_eq!(
            answered.load(Ordering::SeqCst),
            1,
            "{}: resumed exactly once",
            t.url
        );
        // The conversation continued from the halt, stored once.
        let (messages, _) = a.store().load("thread").await.unwrap().unwrap();
        assert_eq!(messages, won.messages);
        assert_eq!(messages.len(), 4);
        let (_, recorded) = SqlSuspensions::new(t.db.clone())
            .get(&request.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(recorded, Some(answer.clone()));

        // Unknown ids, mismatched answers and clients without a store are typed errors.
        let err = b
            .resume_stored(&Answer::output("nope", "x"), RunOptions::new(&tk))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "toolnexus: suspension \"nope\" not found");
        let plain = Client::builder()
            .base_url(model.base_url())
            .style(Style::OpenAi)
            .model("m")
            .api_key("k")
            .build()
            .unwrap();
        let err = plain
            .resume_stored(&answer, RunOptions::new(&tk))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::Suspension(SuspensionError::NoStore)),
            "{err}"
        );
    }
}

/// Many concurrent claims of one suspension on the store itself: exactly one succeeds.
#[tokio::test]
async fn of_many_concurrent_answers_exactly_one_claims() {
    for t in each_engine().await {
        let request = Request::new("approval", "ok?");
        let halted = toolnexus::client::Suspension {
            request: request.clone(),
            conversation: None,
            transcript: vec![serde_json::json!({"role": "user", "content": "x"})],
        };
        SqlSuspensions::new(t.db.clone()).put(&halted).await.unwrap();
        let mut handles = Vec::new();
        for i in 0..8 {
            let db = if i % 2 == 0 {
                t.db.clone()
            } else {
                t.reopen().await
            };
            let answer = Answer::output(&request.id, format!("from {i}"));
            handles.push(tokio::spawn(async move {
                SqlSuspensions::new(db).answer(&answer.id.clone(), &answer).await
            }));
        }
        let mut wins = 0;
        for h in handles {
            match h.await.unwrap() {
                Ok(s) => {
                    assert_eq!(s, halted);
                    wins += 1;
                }
                Err(SuspensionError::AlreadyAnswered { id }) => assert_eq!(id, request.id),
                Err(e) => panic!("{}: {e}", t.url),
            }
        }
        assert_eq!(wins, 1, "{}", t.url);
    }
}
