//! Shared helpers of the MCP integration tests: real peers (our test server binary, the npm
//! reference servers), process probes and bounded waits.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::mcp::{LoadOptions, McpConfig, McpStatus, load};
use toolnexus::{ToolContext, ToolResult, Toolkit};

/// The test MCP server binary (built by Cargo as a bin of this package).
pub const TESTSERVER: &str = env!("CARGO_BIN_EXE_mcp-testserver");

/// A config document with one stdio test server called `name`.
pub fn stdio_server(name: &str, args: &[&str], extra: Value) -> Value {
    let mut command = vec![json!(TESTSERVER), json!("stdio")];
    command.extend(args.iter().map(|a| json!(a)));
    let mut entry = json!({ "command": command });
    if let (Value::Object(e), Value::Object(x)) = (&mut entry, extra) {
        e.extend(x);
    }
    json!({ name: entry })
}

/// Load a `{"mcpServers": servers}` document into a fresh toolkit.
pub async fn toolkit_of(servers: Value) -> Toolkit {
    toolkit_with(servers, LoadOptions::default()).await
}

/// [`toolkit_of`] with load options (a `wait_for`, a cancel token).
pub async fn toolkit_with(servers: Value, opts: LoadOptions) -> Toolkit {
    let cfg = McpConfig::from_value(&json!({ "mcpServers": servers })).expect("valid config");
    let source = load(&cfg, opts).await.expect("not cancelled");
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    tk
}

/// Assert that `server` connected, showing every server's status when it did not.
#[track_caller]
pub fn assert_connected(tk: &Toolkit, server: &str) {
    assert_eq!(
        tk.mcp_status()[server],
        McpStatus::Connected,
        "{:?}",
        tk.mcp_status()
    );
}

/// Call a toolkit tool with default context.
pub async fn call(tk: &Toolkit, name: &str, args: Value) -> ToolResult {
    tk.execute(name, args, ToolContext::default()).await
}

/// `true` while `pid` runs, or has not finished exiting.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name: `pid (comm) S …`. A zombie whose
        // other threads are still exiting cannot be reaped yet, so its parent still sees it
        // running: it counts as dead once it is the last thread.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']) || threads(pid) > 1),
        Err(_) => false,
    }
}

/// The threads `pid` has left (`Threads:` of its status; 0 when it is gone).
fn threads(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:").map(|n| n.trim().parse().ok()))?
        })
        .unwrap_or(0)
}

/// Wait (bounded) until `pid` is no longer a live process.
pub fn wait_dead(pid: u32, bound: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < bound {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

/// A test server in HTTP mode on an ephemeral port; killed on drop.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// Start `toolnexus-testserver http 127.0.0.1:0` and read its URL line (bounded by the
    /// child: it prints the line right after binding, or exits).
    pub fn start() -> Self {
        let mut child = Command::new(TESTSERVER)
            .args(["http", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the test server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the listening line");
        let url = line
            .trim()
            .strip_prefix("listening ")
            .expect("a listening line")
            .to_owned();
        Self { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[path = "../peer/mod.rs"]
mod peer;
pub use peer::missing as peer_missing;

/// The `node_modules/.bin` of the npm reference servers, or `None` (see [`peer_missing`]).
pub fn npm_bin() -> Option<PathBuf> {
    let has = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("node") || !has("npx") {
        peer_missing("node/npx not found on PATH; the npm reference-server tests need them");
        return None;
    }
    let dir = std::env::var_os("TOOLNEXUS_NPM_MCP")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".npm-mcp"));
    let bin = dir.join("node_modules/.bin");
    if !(bin.join("mcp-server-everything").exists() && bin.join("mcp-server-filesystem").exists()) {
        peer_missing(&format!(
            "npm reference servers missing in {}: run `npm install --prefix {} \
             @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem` \
             (or set TOOLNEXUS_NPM_MCP)",
            dir.display(),
            dir.display()
        ));
        return None;
    }
    Some(bin)
}

/// The Python with the `mcp` 2.x SDK that runs the servers under `tests/peers/mcp`:
/// `TOOLNEXUS_PYTHON_MCP2`, else `target/ci-venv-mcp2/bin/python` (what `.ci/run` installs),
/// or `None` after [`peer_missing`].
pub fn python_mcp2() -> Option<String> {
    let python = std::env::var("TOOLNEXUS_PYTHON_MCP2").unwrap_or_else(|_| {
        let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ci-venv-mcp2/bin/python");
        venv.display().to_string()
    });
    let probe = Command::new(&python)
        .args(["-c", "import mcp.server.mcpserver"])
        .output();
    if probe.is_ok_and(|o| o.status.success()) {
        return Some(python);
    }
    peer_missing(&format!(
        "`{python}` cannot import the Python `mcp` 2.x SDK (set TOOLNEXUS_PYTHON_MCP2 to a venv \
         python with `pip install mcp==2.3.0`)"
    ));
    None
}

/// `tests/peers/mcp/server.py` (the Python SDK peer), logging its events to `log`.
pub fn py_server_command(python: &str, log: &std::path::Path) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp/server.py");
    json!([python, script.display().to_string(), log.display().to_string()])
}

/// The events `server.py` appended to `log` (one JSON object a line).
pub fn py_events(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event line"))
        .collect()
}

/// The Python with the `mcp` 1.x client (`streamablehttp_client`): `TOOLNEXUS_PYTHON`, else
/// `target/ci-venv/bin/python`, or `None` after [`peer_missing`].
pub fn python_mcp1() -> Option<String> {
    let python = std::env::var("TOOLNEXUS_PYTHON").unwrap_or_else(|_| {
        let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ci-venv/bin/python");
        venv.display().to_string()
    });
    let probe = Command::new(&python)
        .args([
            "-c",
            "from mcp.client.streamable_http import streamablehttp_client",
        ])
        .output();
    if probe.is_ok_and(|o| o.status.success()) {
        return Some(python);
    }
    peer_missing(&format!(
        "`{python}` cannot import the Python `mcp` 1.x client (set TOOLNEXUS_PYTHON to a venv \
         python with `pip install mcp==1.30.0`)"
    ));
    None
}
