//! Two `toolnexus serve --a2a --store postgres://…` processes on one PostgreSQL (the real
//! binary, the scripted model): a task sent to one is read on the other; 200 tasks sent
//! round-robin from 8 concurrent clients all end, none lost and none run twice; a replica
//! killed with SIGKILL mid-task has its task failed by the other within the lease.
//!
//! Needs `TOOLNEXUS_PG_URL` (`. .ci/pg-start`); skips visibly without it, required in CI.

#[path = "../../tests/peer/mod.rs"]
mod peer;

mod replica;

use std::collections::HashMap;
use std::time::Duration;

use replica::{ended, replica, rpc, send};
use serde_json::json;
use toolnexus_mock::{MockModel, Scenario};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_share_every_task_and_run_each_once() {
    let Some(store) = peer::postgres_url() else { return };
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let replicas = [replica(&model, &store, 30_000), replica(&model, &store, 30_000)];
    let http = reqwest::Client::new();

    let id = rpc(&http, &replicas[0].url, "SendMessage", send("hello replicas")).await["result"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let task = ended(&http, &replicas[1].url, &id).await;
    assert_eq!(task["status"]["state"], "completed", "{task}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"],
        "You said: hello replicas"
    );

    // 200 tasks, round-robin over the replicas from 8 clients; each appends its marker.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran.log");
    let urls: Vec<String> = replicas.iter().map(|r| r.url.clone()).collect();
    let clients = (0..8).map(|c| {
        let (http, urls, log) = (http.clone(), urls.clone(), log.clone());
        tokio::spawn(async move {
            let mut sent = Vec::new();
            for n in (c..200).step_by(8) {
                let text = format!(r#"run bash {{"command":"echo task-{n} >> {}"}}"#, log.display());
                let answer = rpc(&http, &urls[n % 2], "SendMessage", send(&text)).await;
                let id = answer["result"]["id"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{answer}"));
                sent.push((n, id.to_owned()));
            }
            let mut states = Vec::new();
            for (n, id) in sent {
                // Read on the other replica than the one that took it.
                let task = ended(&http, &urls[(n + 1) % 2], &id).await;
                states.push(task["status"]["state"].as_str().unwrap().to_owned());
            }
            states
        })
    });
    let mut states = HashMap::new();
    for client in futures_join(clients.collect()).await {
        for state in client {
            *states.entry(state).or_insert(0) += 1;
        }
    }
    assert_eq!(states, HashMap::from([("completed".to_owned(), 200)]));
    let ran = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = ran.lines().collect();
    lines.sort_unstable();
    let mut want: Vec<String> = (0..200).map(|n| format!("task-{n}")).collect();
    want.sort_unstable();
    assert_eq!(lines, want, "every task ran exactly once");
}

async fn futures_join<T>(handles: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_killed_replicas_task_is_failed_by_the_other_within_the_lease() {
    let Some(store) = peer::postgres_url() else { return };
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let mut one = replica(&model, &store, 600);
    let two = replica(&model, &store, 600);
    let http = reqwest::Client::new();
    let answer = rpc(
        &http,
        &one.url,
        "SendMessage",
        send(r#"run bash {"command":"sleep 60"}"#),
    )
    .await;
    let id = answer["result"]["id"].as_str().unwrap().to_owned();
    // Running on replica 1 (bounded wait), then SIGKILL: no goodbye, the lease just lapses.
    for _ in 0..200 {
        let task = rpc(&http, &two.url, "GetTask", json!({"id": id})).await;
        if task["result"]["status"]["state"] == "working" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    one.child.kill().unwrap();
    one.child.wait().unwrap();

    let task = ended(&http, &two.url, &id).await;
    assert_eq!(task["status"]["state"], "failed", "{task}");
    let message = task["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(
        message.starts_with("the replica running this task was lost (lease expired at "),
        "{message}"
    );
}
