//! ACP agents as models, against a real ACP agent written with the Python ACP SDK
//! (`tests/peers/acp/agent.py`; `pip install agent-client-protocol==0.12.1`, done by .ci/run).
//! Each test spawns its own agent process and bounds every wait.

mod peer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolnexus::Toolkit;
use toolnexus::acp::{self, AcpError, AcpModel, AcpOptions};

/// Bound on any one test step: the thing under test must never hang past it.
const STEP: Duration = Duration::from_secs(30);

fn agent_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/acp/agent.py")
}

/// The Python that has the ACP SDK: `TOOLNEXUS_PYTHON`, else the CI venv, else `python3`.
/// `None` (after a visible SKIPPED line, or a panic under `TOOLNEXUS_REQUIRE_PEERS=1`)
/// when it cannot import `acp`.
fn python() -> Option<String> {
    static PROBED: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    match PROBED.get_or_init(probe) {
        Ok(python) => Some(python.clone()),
        Err(what) => {
            peer::missing(what);
            None
        }
    }
}

fn probe() -> Result<String, String> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-venv/bin/python");
    let python = std::env::var("TOOLNEXUS_PYTHON").ok().unwrap_or_else(|| {
        if venv.exists() {
            venv.display().to_string()
        } else {
            "python3".into()
        }
    });
    let ok = std::process::Command::new(&python)
        .args(["-c", "import acp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Ok(python);
    }
    Err(format!(
        "`{python}` cannot import the ACP SDK: set TOOLNEXUS_PYTHON to a python with \
         `pip install agent-client-protocol==0.12.1` (as .ci/run does)"
    ))
}

fn options(python: &str) -> AcpOptions {
    AcpOptions::new(python).arg(agent_script().display().to_string())
}

async fn start(opts: AcpOptions) -> AcpModel {
    tokio::time::timeout(STEP, acp::load(opts))
        .await
        .expect("the handshake is bounded")
        .expect("the agent starts")
}

async fn turn(model: &AcpModel, text: &str) -> Result<String, AcpError> {
    tokio::time::timeout(STEP, model.prompt(text))
        .await
        .expect("a turn is bounded")
}

#[tokio::test]
async fn message_chunks_only_later_turns_supersede_permissions_answered_requests_refused() {
    let Some(python) = python() else { return };
    let model = start(options(&python)).await;
    assert_eq!(model.session_id(), "sess-1");
    let client = model.client("acp-test").build().unwrap();
    let mut chat = client.conversation(&Toolkit::default());
    let first = tokio::time::timeout(STEP, chat.send("hello there"))
        .await
        .unwrap()
        .unwrap();
    // The thought chunk and the tool narration the agent sent are not in the reply.
    assert_eq!(first.text, "turn 1: hello there (marker ok)");
    assert_eq!(first.model, "acp-test");
    let second = tokio::time::timeout(STEP, chat.send("and now this"))
        .await
        .unwrap()
        .unwrap();
    // Same session (turn 2), and the prompt named the latest user turn as superseding.
    assert_eq!(second.text, "turn 2: and now this (marker ok)");
    assert_eq!(second.messages.len(), 4);

    // A permission request is answered at once with the first allow option (the agent
    // offers reject-it before allow-it); the turn is not held up waiting.
    assert_eq!(
        turn(&model, "may I? permission").await.unwrap(),
        "permission: allow-it"
    );
    // A request we do not serve (no fs capability) is refused, not left waiting.
    assert_eq!(
        turn(&model, "read a file: fs").await.unwrap(),
        "fs refused: -32601"
    );
}

#[tokio::test]
async fn cwd_mode_and_environment_reach_the_agent_and_drop_kills_it() {
    let Some(python) = python() else { return };
    let here = std::env::current_dir().unwrap();
    let model = start(
        options(&python)
            .cwd("tests")
            .mode("plan")
            .env("ACP_TEST_TAG", "t-42"),
    )
    .await;
    let reply = turn(&model, "whoami").await.unwrap();
    // A relative cwd goes out absolute.
    let want = format!("cwd={} mode=plan tag=t-42 pid=", here.join("tests").display());
    assert!(reply.starts_with(&want), "{reply}");

    // Dropping the model kills the agent.
    let pid: u32 = reply.rsplit("pid=").next().unwrap().parse().unwrap();
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|s| !s.lines().any(|l| l.starts_with("State:") && l.contains('Z')))
    };
    assert!(alive(pid));
    drop(model);
    let mut gone = false;
    for _ in 0..100 {
        if !alive(pid) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "agent {pid} still running 5 s after the model was dropped");
}

#[tokio::test]
async fn an_agent_that_crashes_mid_turn_fails_the_run_clearly() {
    let Some(python) = python() else { return };
    let model = start(options(&python)).await;
    let client = model.client("acp-test").build().unwrap();
    let err = tokio::time::timeout(STEP, client.run("crash now", &Toolkit::default()))
        .await
        .expect("no hang")
        .unwrap_err();
    let reason = "acp: the agent exited (exit status: 3); stderr: agent crashed on purpose";
    assert!(err.to_string().contains(reason), "{err}");
    assert!(!model.is_alive());
    // Later turns fail at once with the same reason.
    let again = turn(&model, "hello?").await.unwrap_err();
    assert!(matches!(again, AcpError::Closed(_)), "{again:?}");
    assert_eq!(again.to_string(), reason);
}

#[tokio::test]
async fn a_silent_agent_is_bounded_by_the_timeout_and_the_session_recovers() {
    let Some(python) = python() else { return };
    let model = start(options(&python).permission_timeout(Duration::from_millis(800))).await;
    let err = turn(&model, "hang").await.unwrap_err();
    assert!(matches!(err, AcpError::TurnTimeout { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "acp: the turn heard nothing from the agent for 800ms (hung, or waiting on something it was \
         never sent) — the turn was cancelled"
    );
    // The timeout sent session/cancel; the agent ended the hung turn, so the next one runs.
    assert_eq!(turn(&model, "after").await.unwrap(), "turn 2: after");
}

#[tokio::test]
async fn close_ends_the_session() {
    let Some(python) = python() else { return };
    let model = start(options(&python)).await;
    tokio::time::timeout(STEP, model.close()).await.unwrap();
    assert!(!model.is_alive());
    let err = turn(&model, "hi").await.unwrap_err();
    assert_eq!(err.to_string(), "acp: the ACP session was closed");
}

#[tokio::test]
async fn a_command_that_cannot_start_is_named() {
    let err = acp::load(AcpOptions::new("/nonexistent/acp-agent"))
        .await
        .unwrap_err();
    assert!(matches!(err, AcpError::Spawn { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("acp: cannot start \"/nonexistent/acp-agent\": No such file or directory"),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn a_program_that_exits_before_the_handshake_fails_the_load() {
    let err = tokio::time::timeout(
        STEP,
        acp::load(AcpOptions::new("sh").args(["-c", "echo nope >&2; exit 7"])),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "acp: the agent exited (exit status: 7); stderr: nope"
    );
}

#[tokio::test]
async fn a_program_that_never_answers_the_handshake_is_bounded() {
    let opts = AcpOptions::new("sleep")
        .arg("30")
        .handshake_timeout(Duration::from_millis(300));
    let err = tokio::time::timeout(STEP, acp::load(opts))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.to_string(), "acp: initialize timed out after 300ms");
}
