//! PostgreSQL restarted under a running `toolnexus serve --a2a --store postgres://…` (the real
//! binary, the scripted model, a real `pg_ctl stop` and `start` of the CI cluster): a task
//! running across the restart still ends, a read while the database is down fails with an
//! error naming the store with its password masked, the pool reconnects for the next task,
//! and nothing panics.
//!
//! Its own test binary on purpose: cargo runs test binaries one at a time, so stopping the
//! server here disturbs no other test. Needs `TOOLNEXUS_PG_URL` and `TOOLNEXUS_PG_CTL` (both
//! from `. .ci/pg-start`); skips visibly without them, required in CI.

#[path = "../../tests/peer/mod.rs"]
mod peer;

mod replica;

use std::process::{Command, Stdio};
use std::time::Duration;

use replica::{ended, ended_or, replica_with, rpc, send};
use serde_json::{Value, json};
use toolnexus_mock::{MockModel, Scenario};

/// Runs `.ci/pg-start`'s control script with `action` (`stop` / `start`); each waits at most
/// 30 s (`pg_ctl -w -t 30`).
fn pg_ctl(ctl: &str, action: &str) {
    let out = Command::new(ctl).arg(action).output().unwrap();
    assert!(
        out.status.success(),
        "pg_ctl {action}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `postgres://user:secret@host/db` as the store prints it: `postgres://user:***@host/db`.
fn masked(url: &str) -> (String, String) {
    let mut parsed = url::Url::parse(url).unwrap();
    let password = parsed.password().unwrap_or_default().to_owned();
    parsed.set_password(Some("***")).unwrap();
    (parsed.to_string(), password)
}

/// A `GetTask` error seen while the database was away: names the store, never the password.
fn assert_clear(answer: &Value, shown: &str, password: &str) {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(shown), "{answer}");
    assert!(!message.contains(password), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_running_across_a_postgres_restart_ends_and_the_pool_reconnects() {
    let Some(store) = peer::postgres_url() else { return };
    let Some(ctl) = std::env::var("TOOLNEXUS_PG_CTL").ok().filter(|c| !c.is_empty()) else {
        peer::missing("PostgreSQL control: TOOLNEXUS_PG_CTL is not set (`. .ci/pg-start` sets it)");
        return;
    };
    let (shown, password) = masked(&store);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.stderr");
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    // A lease far longer than the outage: the task must not be swept as lost meanwhile.
    let mut server = replica_with(
        &model,
        &store,
        30_000,
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    let http = reqwest::Client::new();

    let answer = rpc(
        &http,
        &server.url,
        "SendMessage",
        send(r#"run bash {"command":"sleep 4; echo slept through it"}"#),
    )
    .await;
    let id = answer["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_owned();
    let mut working = false;
    for _ in 0..200 {
        let task = rpc(&http, &server.url, "GetTask", json!({"id": id})).await;
        if task["result"]["status"]["state"] == "working" {
            working = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(working, "task {id} never started");

    pg_ctl(&ctl, "stop");
    let down = rpc(&http, &server.url, "GetTask", json!({"id": id})).await;
    assert_eq!(down["error"]["code"], -32603, "{down}");
    assert_clear(&down, &shown, &password);
    pg_ctl(&ctl, "start");

    // The bash step outlives the outage; its result is written once the database is back.
    let task = ended_or(&http, &server.url, &id, |e| assert_clear(e, &shown, &password)).await;
    assert_eq!(task["status"]["state"], "completed", "{task}");
    let text = task["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("slept through it"), "{task}");

    // The pool dropped its dead connections and opened new ones.
    let answer = rpc(&http, &server.url, "SendMessage", send("hello again")).await;
    let again = answer["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_owned();
    let task = ended(&http, &server.url, &again).await;
    assert_eq!(task["status"]["state"], "completed", "{task}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "You said: hello again");

    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains(&password), "the password leaked to the log");
}
