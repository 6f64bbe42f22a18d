//! No orphans: whatever stops the `toolnexus` binary — SIGINT, SIGTERM, or a SIGKILL it
//! cannot handle — its MCP servers and everything they started are gone after it. The server
//! here is the stubborn kind: it ignores stdin EOF, SIGINT and SIGTERM, and leaves a
//! background child holding its stdout.
#![cfg(target_os = "linux")]

mod support;

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Fixture {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Fixture {
    fn new(mode: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut command = support::script_server(
            dir.path(),
            &[r#"{"name":"hang","inputSchema":{"type":"object"}}"#],
        );
        command.push(mode.into());
        let config = dir.path().join("mcp.json");
        let entry = serde_json::json!({"mcpServers": {"stubborn": {"command": command, "timeout": 60_000}}});
        std::fs::write(&config, entry.to_string()).unwrap();
        Fixture { dir, config }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `toolnexus ARGS… --no-builtins --config mcp.json`, stdin kept open.
    fn start(&self, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_toolnexus"))
            .args(args)
            .args(["--no-builtins", "--config", self.config.to_str().unwrap()])
            .env("OPENAI_API_KEY", "test-key")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn toolnexus")
    }

    /// The server's pid (its process group's id) and its background child's, once `ready`
    /// exists.
    fn wait_ready(&self, ready: &str) -> (u32, u32) {
        let ready = self.path(ready);
        poll(|| ready.exists(), &format!("{} never appeared", ready.display()));
        let pid = |name: &str| -> u32 {
            std::fs::read_to_string(self.path(name))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        (pid("server.pid"), pid("child.pid"))
    }
}

/// Polls `done` every 20 ms for at most 10 s.
fn poll(mut done: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The live (not zombie) processes whose process group is `group`.
fn group_members(group: u32) -> Vec<u32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        if fields[0] != "Z" && fields[2] == group.to_string() {
            members.push(pid);
        }
    }
    members
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name} {pid}");
}

/// Stops `cli` with `sig`, then asserts the server's whole group is gone (and kills it if
/// not, so a failing test leaves no orphan either). Returns the CLI's exit code and stderr.
fn stop(mut cli: Child, sig: &str, (server, child): (u32, u32)) -> (Option<i32>, String) {
    assert!(alive(server) && alive(child), "the server and its child run");
    assert!(group_members(server).contains(&child), "one group");
    // Held open until the CLI has exited: `wait` would close it, and a REPL reading EOF
    // could end on its own before the signal is handled.
    let stdin = cli.stdin.take();
    signal(cli.id(), sig);
    let status = cli.wait().unwrap();
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !group_members(server).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = group_members(server);
    if !left.is_empty() {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{server}")])
            .status();
    }
    // Read only now: a survivor would hold the inherited stderr open forever.
    let mut err = String::new();
    if let Some(mut stderr) = cli.stderr.take() {
        stderr.read_to_string(&mut err).unwrap();
    }
    assert!(
        left.is_empty(),
        "after SIG{sig}: left behind {left:?} (stderr: {err})"
    );
    assert!(!alive(server) && !alive(child));
    (status.code(), err)
}

#[test]
fn sigint_during_a_run_stops_the_servers_and_exits_130() {
    let fx = Fixture::new("answer");
    let mut cli = fx.start(&["run", "--base-url", "http://127.0.0.1:9", "--model", "m"]);
    let pids = fx.wait_ready("asked");
    // The REPL's prompt: the toolkit is built and the CLI waits for a line.
    let mut stderr = cli.stderr.take().unwrap();
    let mut prompt = [0u8; 2];
    stderr.read_exact(&mut prompt).unwrap();
    assert_eq!(&prompt, b"> ");
    let (code, _) = stop(cli, "INT", pids);
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(err, "toolnexus: stopped by SIGINT\n");
}

#[test]
fn sigterm_during_a_call_stops_the_servers_and_exits_143() {
    let fx = Fixture::new("answer");
    let mut cli = fx.start(&["call", "stubborn_hang"]);
    let pids = fx.wait_ready("called");
    let mut out = cli.stdout.take().unwrap();
    let (code, err) = stop(cli, "TERM", pids);
    assert_eq!(code, Some(143), "{err}");
    assert_eq!(err, "toolnexus: stopped by SIGTERM\n");
    let mut printed = String::new();
    out.read_to_string(&mut printed).unwrap();
    assert_eq!(printed, "", "no result was printed");
}

#[test]
fn sigint_while_a_server_is_starting_stops_it_and_exits_130() {
    let fx = Fixture::new("mute");
    let cli = fx.start(&["tools"]);
    let pids = fx.wait_ready("asked");
    let (code, err) = stop(cli, "INT", pids);
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(err, "toolnexus: stopped by SIGINT\n");
}

#[test]
fn sigkill_of_the_cli_leaves_no_server_or_server_child_behind() {
    for (mode, args, ready) in [
        ("answer", &["call", "stubborn_hang"][..], "called"),
        ("mute", &["tools"][..], "asked"),
    ] {
        let fx = Fixture::new(mode);
        let cli = fx.start(args);
        let pids = fx.wait_ready(ready);
        let (code, _) = stop(cli, "KILL", pids);
        assert_eq!(code, None, "killed by the signal");
    }
}

/// A server spawned with its group's watcher still serves, and a normal exit leaves nothing.
#[test]
fn a_normal_exit_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = support::script_server(dir.path(), &[r#"{"name":"hang","inputSchema":{}}"#]);
    // Answers, then exits when stdin closes, like a well-behaved server.
    command.extend(["answer".into(), "polite".into()]);
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"polite": {"command": command}}}).to_string(),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["tools", "--no-builtins", "--format", "names", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "polite_hang\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let server: u32 = std::fs::read_to_string(dir.path().join("server.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    poll(|| group_members(server).is_empty(), "the group is gone");
}
