//! The Python MCP SDKs `.ci/run` installs (in the workspace's `target/`), for tests of the real
//! binary against real peers; `None` after a visible skip (a failure in CI) when one is missing.
#![allow(dead_code)] // each test binary uses its own part

use std::path::PathBuf;
use std::process::Command;

#[path = "../../../tests/peer/mod.rs"]
mod peer;

/// `$VAR`, else the workspace's `target/VENV/bin/python`, if it can run `probe`.
fn python(var: &str, venv: &str, probe: &str, what: &str) -> Option<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var(var).unwrap_or_else(|_| {
        root.join("target")
            .join(venv)
            .join("bin/python")
            .display()
            .to_string()
    });
    let ok = Command::new(&python).args(["-c", probe]).output();
    if ok.is_ok_and(|o| o.status.success()) {
        return Some(python);
    }
    peer::missing(&format!(
        "`{python}` cannot import {what} (set {var} to a venv python with it)"
    ));
    None
}

/// The Python with the `mcp` 2.x SDK, whose server is `tests/peers/mcp/server.py`.
pub fn python_mcp2() -> Option<String> {
    python(
        "TOOLNEXUS_PYTHON_MCP2",
        "ci-venv-mcp2",
        "import mcp.server.mcpserver",
        "the Python `mcp` 2.x SDK (`pip install mcp==2.3.0`)",
    )
}

/// The Python with the `mcp` 1.x client, which `tests/peers/mcp/gateway_client.py` uses.
pub fn python_mcp1() -> Option<String> {
    python(
        "TOOLNEXUS_PYTHON",
        "ci-venv",
        "from mcp.client.streamable_http import streamablehttp_client",
        "the Python `mcp` 1.x client (`pip install mcp==1.30.0`)",
    )
}

/// `tests/peers/mcp/NAME` in the workspace.
pub fn peer_script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/peers/mcp")
        .join(name)
        .display()
        .to_string()
}
