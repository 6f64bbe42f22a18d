//! Shared by the tests that run `toolnexus serve --a2a --store postgres://…` processes (the
//! real binary on the scripted model): start a replica, talk JSON-RPC to it, wait for a task
//! to end. Its test files take the database from `peer::postgres_url`.
#![allow(dead_code)] // each test file uses a different part

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus_mock::MockModel;

/// A running replica; killed if the test fails before it does.
pub struct Replica {
    pub child: Child,
    /// Its A2A endpoint.
    pub url: String,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a replica on its own 127.0.0.1 port, sharing `store`, leases of `lease_ms`, its
/// stderr discarded.
pub fn replica(model: &MockModel, store: &str, lease_ms: u64) -> Replica {
    replica_with(model, store, lease_ms, Stdio::null())
}

/// [`replica`] with its stderr sent to `stderr`.
pub fn replica_with(model: &MockModel, store: &str, lease_ms: u64, stderr: Stdio) -> Replica {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["serve", "--a2a", "127.0.0.1:0", "--store", store])
        .args([
            "--a2a-lease-ms",
            &lease_ms.to_string(),
            "--max-running",
            "256",
            "--no-confine",
            "--expose-dangerous",
        ])
        .args(["--base-url", &model.base_url(), "--model", "mock-model"])
        .args(["--api-key-env", "OPENAI_API_KEY"])
        .env("OPENAI_API_KEY", "sk-not-needed")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    Replica { child, url }
}

/// One JSON-RPC call; the whole response body (`result` or `error`).
pub async fn rpc(http: &reqwest::Client, replica: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    http.post(format!("{replica}/"))
        .json(&body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `SendMessage` params for a non-blocking task saying `text`.
pub fn send(text: &str) -> Value {
    json!({"message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": text}]},
           "configuration": {"blocking": false}})
}

/// Polls `GetTask` on `replica` until the task is terminal (bounded); `GetTask` errors are
/// handed to `on_error` and polling goes on.
pub async fn ended_or(
    http: &reqwest::Client,
    replica: &str,
    id: &str,
    mut on_error: impl FnMut(&Value),
) -> Value {
    for _ in 0..600 {
        let answer = rpc(http, replica, "GetTask", json!({"id": id})).await;
        if answer.get("error").is_some() {
            on_error(&answer);
        }
        let task = &answer["result"];
        if ["completed", "failed", "canceled"].contains(&task["status"]["state"].as_str().unwrap_or("")) {
            return task.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never ended on {replica}");
}

/// Polls `GetTask` on `replica` until the task is terminal (bounded).
pub async fn ended(http: &reqwest::Client, replica: &str, id: &str) -> Value {
    ended_or(http, replica, id, |_| {}).await
}
