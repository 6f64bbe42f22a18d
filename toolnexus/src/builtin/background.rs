//! Background shells, the opt-in extra [`Extra::BackgroundShells`](super::Extra): `bash`
//! with `run_in_background: true` starts the command and returns its shell id at once;
//! `bash_output` returns what it printed since the last read and whether it still runs;
//! `kill_shell` stops it and everything it started. Names, wording and metadata are the
//! upstream crate's.
//!
//! Each command runs in a process group of its own, started exactly as a foreground `bash`
//! command is. What it prints is kept the way `bash` keeps a foreground command's output
//! (the first and last 32 KiB of what is unread, and how much was cut between them), at
//! most [`MAX_RUNNING`] run at once and at most [`MAX_KEPT`] are remembered. Every group still
//! running is stopped by [`Toolkit::close`](crate::Toolkit::close) (SIGTERM, a grace period,
//! SIGKILL) and, failing that, killed when the last tool holding the shells is dropped.

use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::net::unix::pipe::Receiver;
use tokio::process::Child;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::args::Args;
use super::bash::Capture;
use super::bash::unix::{KILL_GRACE, exit_code, signal_group, spawn};
use super::{builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;
use crate::toolkit::Closeable;

/// The most background shells running at once.
pub(super) const MAX_RUNNING: usize = 8;

/// The most background shells remembered, running or not: starting one more forgets the
/// oldest that has finished.
pub(super) const MAX_KEPT: usize = 32;

/// Where a background shell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Exited(i32),
    Killed,
}

impl Status {
    /// The `status` metadata: its first word.
    fn word(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Exited(_) => "exited",
            Status::Killed => "killed",
        }
    }

    /// As `bash_output` and `kill_shell` word it.
    fn describe(self) -> String {
        match self {
            Status::Exited(code) => format!("exited with code {code}"),
            other => other.word().to_owned(),
        }
    }
}

/// What one background shell has printed and not yet been read, and where it is.
struct State {
    unread: Capture,
    status: Status,
    /// Set by `kill_shell` (or close) before it signals, so the exit reads as a kill.
    killing: bool,
}

/// One background shell.
struct Job {
    id: String,
    /// The group's id: the shell's pid.
    pgid: i32,
    state: Mutex<State>,
    /// Turns `true` once the shell has exited and its output pipe has closed: nothing it
    /// started is left holding it.
    done: watch::Receiver<bool>,
    /// The task reading its output and reaping it.
    task: AbortHandle,
}

impl Job {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn status(&self) -> Status {
        self.state().status
    }

    /// Whether the shell, or something it started, may still run: the shell has not exited,
    /// or its output pipe is still held open.
    fn alive(&self) -> bool {
        !*self.done.borrow()
    }

    /// Wait until [`alive`](Self::alive) is false, at most for `KILL_GRACE`; `true` if so.
    async fn exited_within_grace(&self) -> bool {
        let mut done = self.done.clone();
        tokio::time::timeout(KILL_GRACE, done.wait_for(|d| *d))
            .await
            .is_ok()
    }

    /// Stop the whole group: SIGTERM, a grace period, then SIGKILL. `false` when it had
    /// already finished, and nothing it started still held its output.
    async fn kill(&self) -> bool {
        if !self.alive() {
            return false;
        }
        self.state().killing = true;
        signal_group(self.pgid, libc::SIGTERM);
        if !self.exited_within_grace().await {
            signal_group(self.pgid, libc::SIGKILL);
            // A shell that left its group is out of reach of killpg; don't wait forever.
            self.exited_within_grace().await;
        }
        true
    }
}

/// The background shells of one set of built-ins.
#[derive(Default)]
pub(super) struct Shells {
    inner: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    /// The number in the last id handed out.
    last: u64,
    /// Oldest first.
    jobs: Vec<Arc<Job>>,
    /// No new shell starts once the toolkit is closed.
    closed: bool,
}

impl Shells {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.registry().jobs.iter().find(|j| j.id == id).cloned()
    }

    /// Start `argv… command` in `workdir` in the background; returns its id.
    pub(super) fn start(
        &self,
        argv: &[String],
        command: &str,
        workdir: &std::path::Path,
    ) -> Result<String, String> {
        let mut registry = self.registry();
        if registry.closed {
            return Err("bash: the background shells are closed".into());
        }
        let running = registry.jobs.iter().filter(|j| j.alive()).count();
        if running >= MAX_RUNNING {
            return Err(format!(
                "bash: {MAX_RUNNING} background shells are already running; stop one with kill_shell first"
            ));
        }
        if registry.jobs.len() >= MAX_KEPT
            && let Some(i) = registry.jobs.iter().position(|j| !j.alive())
        {
            registry.jobs.remove(i);
        }
        let (child, reader) = spawn(argv, command, workdir)?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or("bash: the background shell exited before it could be tracked")?;
        registry.last += 1;
        let id = format!("bg{}", registry.last);
        let (done_tx, done) = watch::channel(false);
        let job = Arc::new_cyclic(|weak: &std::sync::Weak<Job>| {
            let task = tokio::spawn(follow(weak.clone(), child, reader, done_tx)).abort_handle();
            Job {
                id: id.clone(),
                pgid,
                state: Mutex::new(State {
                    unread: Capture::default(),
                    status: Status::Running,
                    killing: false,
                }),
                done,
                task,
            }
        });
        registry.jobs.push(job);
        Ok(id)
    }

    /// Stop every shell still running, concurrently, and refuse new ones. Idempotent.
    pub(super) async fn close_all(&self) {
        let jobs = {
            let mut registry = self.registry();
            registry.closed = true;
            registry.jobs.clone()
        };
        futures::future::join_all(jobs.iter().map(|j| j.kill())).await;
    }
}

impl Closeable for Shells {
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.close_all())
    }
}

impl Drop for Shells {
    /// The last holder is gone without a close: kill what still runs, at once.
    fn drop(&mut self) {
        let registry = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        for job in &registry.jobs {
            if job.alive() {
                signal_group(job.pgid, libc::SIGKILL);
            }
            job.task.abort();
        }
    }
}

/// Read a background shell's output into its job until the pipe closes, recording its exit
/// status when it exits. Holds the job weakly: a job forgotten is not kept alive by this.
async fn follow(
    job: std::sync::Weak<Job>,
    mut child: Child,
    mut reader: Receiver,
    done: watch::Sender<bool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let push = |bytes: &[u8]| {
        if let Some(job) = job.upgrade() {
            job.state().unread.push(bytes);
        }
    };
    let mut eof = false;
    let mut exited = false;
    while !(eof && exited) {
        tokio::select! {
            read = reader.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => push(&buf[..n]),
            },
            status = child.wait(), if !exited => {
                exited = true;
                // What the shell wrote is in the pipe by now; take it before the status shows.
                while !eof {
                    match reader.try_read(&mut buf) {
                        Ok(0) => eof = true,
                        Ok(n) => push(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => eof = true,
                    }
                }
                if let Some(job) = job.upgrade() {
                    let mut state = job.state();
                    state.status = match status {
                        Ok(_) if state.killing => Status::Killed,
                        Ok(status) => Status::Exited(exit_code(status)),
                        Err(_) => Status::Killed,
                    };
                }
            },
        }
    }
    let _ = done.send(true);
}

/// `bash_output`'s and `kill_shell`'s arguments.
#[derive(JsonSchema)]
struct IdArgs {
    /// The background shell id bash returned
    id: String,
}

impl IdArgs {
    fn parse(tool: &'static str, args: &Value) -> Result<Self, String> {
        Ok(Self {
            id: Args::new(tool, args)?.str("id")?.to_owned(),
        })
    }
}

fn job(shells: &Shells, tool: &str, id: &str) -> Result<Arc<Job>, String> {
    shells
        .get(id)
        .ok_or_else(|| format!("{tool}: no background shell {id:?}"))
}

pub(super) fn output_tool(shells: Arc<Shells>) -> Tool {
    builtin(
        "bash_output",
        "Read the output a background bash command (started with run_in_background) produced since the last read, and whether it is still running.",
        input_schema::<IdArgs>(),
        move |args, _| {
            let shells = shells.clone();
            async move {
                let IdArgs { id } = IdArgs::parse("bash_output", &args)?;
                let job = job(&shells, "bash_output", &id)?;
                let (unread, status) = {
                    let mut state = job.state();
                    (std::mem::take(&mut state.unread), state.status)
                };
                let (text, cut) = unread.into_text();
                let mut meta = Map::new();
                meta.insert("id".into(), json!(id));
                meta.insert("status".into(), json!(status.word()));
                if let Status::Exited(code) = status {
                    meta.insert("exitCode".into(), json!(code));
                }
                if cut > 0 {
                    meta.insert("outputCut".into(), json!(cut));
                }
                let output = format!("{text}\n[status: {}]", status.describe());
                Ok(ToolResult::success(output).with_metadata(meta))
            }
        },
    )
}

pub(super) fn kill_tool(shells: Arc<Shells>) -> Tool {
    builtin(
        "kill_shell",
        "Stop a background bash command and everything it started.",
        input_schema::<IdArgs>(),
        move |args, _| {
            let shells = shells.clone();
            async move {
                let IdArgs { id } = IdArgs::parse("kill_shell", &args)?;
                let job = job(&shells, "kill_shell", &id)?;
                let killed = job.kill().await;
                let output = match job.status() {
                    _ if killed => format!("Killed background shell {id}"),
                    Status::Exited(code) => {
                        format!("Background shell {id} had already exited with code {code}")
                    }
                    _ => format!("Background shell {id} was already killed"),
                };
                Ok(ToolResult::success(output)
                    .with_meta("id", id)
                    .with_meta("killed", killed))
            }
        },
    )
}
