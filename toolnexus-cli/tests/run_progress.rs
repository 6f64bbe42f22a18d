//! `toolnexus run` shows a tool's progress on stderr as `progress: TOOL N/TOTAL MESSAGE`:
//! the scripted mock model calls a tool of a real MCP server (the Python `mcp` 2.x SDK peer,
//! `tests/peers/mcp/server.py`) that reports progress.

use std::process::Command;

use toolnexus_mock::{MockModel, Scenario};

mod python;

use python::{peer_script, python_mcp2};

#[test]
fn a_tools_progress_is_shown_on_stderr() {
    let Some(python) = python_mcp2() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Planner))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    let config = serde_json::json!({"mcpServers": {"py": {
        "command": [python, peer_script("server.py"), log.display().to_string()],
        "timeout": 20000
    }}});
    let cfg = dir.path().join("mcp.json");
    std::fs::write(&cfg, config.to_string()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["run", "--base-url", &mock.base_url(), "--model", "mock-model"])
        .args(["--api-key-env", "OPENAI_API_KEY", "--no-builtins"])
        .args(["--config", cfg.to_str().unwrap()])
        .args(["--once", r#"py_slow {"steps":3,"delay_ms":50}"#])
        .env("OPENAI_API_KEY", "test-key")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    let progress: Vec<&str> = err.lines().filter(|l| l.starts_with("progress: ")).collect();
    // The server's last report races its answer (rmcp hands notifications to the handler on
    // tasks of their own; one after the answer is dropped): the first two are certain.
    assert_eq!(
        progress[..2],
        ["progress: py_slow 1/3 step 1", "progress: py_slow 2/3 step 2"],
        "{err}"
    );
    assert!(
        progress.len() == 2 || progress[2..] == ["progress: py_slow 3/3 step 3"],
        "{err}"
    );
    let call = err
        .find(r#"→ py_slow {"steps":3,"delay_ms":50}"#)
        .unwrap_or_else(|| panic!("the call is shown: {err}"));
    assert!(err.find("progress: ").unwrap() > call, "{err}");
    assert_eq!(
        out,
        "Here is what the tools returned:\n- py_slow: {\"result\":\"done after 3 steps\"}\n"
    );
}
