//! `toolnexus run` as a real child process against the scripted mock model on 127.0.0.1.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use toolnexus_mock::{MockModel, Scenario};

fn run(base: &str, args: &[&str], stdin: &str, cwd: &std::path::Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .arg("run")
        .args([
            "--base-url",
            base,
            "--model",
            "mock-model",
            "--api-key-env",
            "OPENAI_API_KEY",
        ])
        .args(args)
        .current_dir(cwd)
        .env("OPENAI_API_KEY", "test-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolnexus");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The scripted model on 127.0.0.1, served by the returned runtime: keep both for the test.
fn start_mock() -> (tokio::runtime::Runtime, MockModel) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Planner))
        .unwrap();
    (rt, mock)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn once_runs_the_tools_shows_the_calls_and_prints_the_answer() {
    let (_rt, mock) = start_mock();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hi").unwrap();
    let o = run(
        &mock.base_url(),
        &["--once", r#"glob {"pattern":"*.txt"}"#],
        "",
        dir.path(),
    );
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{err}");
    assert!(err.contains(r#"→ glob {"pattern":"*.txt"}"#), "{err}");
    assert!(
        out.starts_with("Here is what the tools returned:\n- glob: "),
        "{out}"
    );
    assert!(out.contains("notes.txt"), "{out}");
}

#[test]
fn repl_asks_a_question_on_the_terminal_and_quits_on_exit() {
    let (_rt, mock) = start_mock();
    let dir = tempfile::tempdir().unwrap();
    let input = "question {\"questions\":[{\"question\":\"Which city?\"}]}\nChennai\nhello\nexit\n";
    let o = run(&mock.base_url(), &["--style", "openai"], input, dir.path());
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{err}");
    assert!(err.contains("? Which city?\n  answer: "), "{err}");
    assert_eq!(
        out,
        "Here is what the tools returned:\n- question: {\"answers\":[\"Chennai\"]}\nYou said: hello\n"
    );
}

#[test]
fn a_bad_style_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        "http://127.0.0.1:9",
        &["--style", "cohere", "--once", "x"],
        "",
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "toolnexus: unknown client style \"cohere\" (expected \"openai\", \"anthropic\" or \"gemini\")\n"
    );
}

#[test]
fn an_incomplete_run_exits_non_zero() {
    let (_rt, mock) = start_mock();
    let dir = tempfile::tempdir().unwrap();
    // One round trip: the model asks for a tool, and the limit stops the run before it answers.
    let o = run(
        &mock.base_url(),
        &["--max-turns", "1", "--once", r#"glob {"pattern":"*.txt"}"#],
        "",
        dir.path(),
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.ends_with("\ntoolnexus: stopped by the maxTurns limit\n"),
        "{err}"
    );
}

#[test]
fn timeout_and_retries_bound_a_model_that_never_answers() {
    // Accepts every connection and never answers; holds the sockets until the test ends.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let accepted = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let held = accepted.clone();
    std::thread::spawn(move || {
        for sock in listener.incoming().flatten() {
            held.lock().unwrap().push(sock);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &base,
        &[
            "--once",
            "hi",
            "--timeout",
            "1",
            "--retries",
            "0",
            "--no-builtins",
        ],
        "",
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        "toolnexus: run timeout after 1000ms (client timeout budget)\n"
    );
    assert_eq!(accepted.lock().unwrap().len(), 1);

    let o = run(&base, &["--once", "hi", "--timeout", "0"], "", dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("invalid value '0' for '--timeout <SECONDS>'"),
        "{}",
        text(&o.stderr)
    );
}
