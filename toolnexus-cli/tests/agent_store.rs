//! `toolnexus agent DIR --store URL --session ID` on the real binary: the conversation lives in
//! the store under its id (here an SQLite database), the next start resumes it, and a bad URL
//! is a usage error naming it.

mod bounded;

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use toolnexus::store::{StoreUrl, Stores};
use toolnexus_mock::{MockModel, Scenario};

/// Runs `toolnexus agent DIR ARGS` with `input` on stdin (its end quits the agent), killed
/// after 60 s; returns the exit code, stdout and stderr.
fn agent(dir: &Path, url: &str, args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .arg("agent")
        .arg(dir)
        .args([
            "--base-url",
            url,
            "--model",
            "mock-model",
            "--api-key-env",
            "OPENAI_API_KEY",
        ])
        .args(args)
        .env("OPENAI_API_KEY", "test-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let status = bounded::exit_within(
        &mut child,
        Duration::from_secs(60),
        &format!("toolnexus agent {args:?}"),
    );
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), out, err)
}

/// The user turns stored under `id`.
fn user_turns(rt: &tokio::runtime::Runtime, url: &StoreUrl, id: &str) -> Vec<String> {
    rt.block_on(async {
        let stores = Stores::open(url).await.unwrap();
        let (messages, _) = stores.conversations.load(id).await.unwrap().unwrap();
        messages
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect()
    })
}

#[test]
fn the_session_lives_in_the_store_under_its_id_and_is_resumed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Planner))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("ava");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("SOUL.md"), "You are Ava, a calm support assistant.").unwrap();
    let db = home.path().join("agents.db");
    let spec = format!("sqlite:{}", db.display());
    let store = ["--store", spec.as_str(), "--session", "ava-1"];

    let (code, out, err) = agent(&dir, &mock.base_url(), &store, "hello there\n");
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("(SOUL.md) — new session"), "{out}");
    assert!(out.contains("You said: hello there"), "{out}");

    let (code, out, err) = agent(&dir, &mock.base_url(), &store, "and again\n");
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("— resumed 3 messages"), "{out}");

    let url: StoreUrl = spec.parse().unwrap();
    assert_eq!(user_turns(&rt, &url, "ava-1"), ["hello there", "and again"]);
    // Nothing went to the persona directory's own store.
    assert!(!dir.join(".toolnexus").exists());

    // Another id in the same store is a new session.
    let other = ["--store", spec.as_str(), "--session", "ava-2"];
    let (code, out, _) = agent(&dir, &mock.base_url(), &other, "");
    assert_eq!(code, Some(0));
    assert!(out.contains("— new session"), "{out}");
}

#[test]
fn a_bad_store_url_is_a_usage_error_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let (code, _, err) = agent(
        home.path(),
        "http://127.0.0.1:9/v1",
        &["--store", "mysql://root:hunter2@h/db"],
        "",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--store:"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}
