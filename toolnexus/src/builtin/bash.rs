//! `bash`: run one shell command in its own process group, returning combined
//! stdout+stderr. A timeout (default 60 s) stops the whole group — the command and
//! everything it started — first politely (SIGTERM), then after a grace period for good.

#[cfg(not(unix))]
use serde_json::Value;
use serde_json::json;

use super::builtin;
#[cfg(not(unix))]
use crate::result::ToolResult;
use crate::tool::Tool;

pub(super) fn tool() -> Tool {
    builtin(
        "bash",
        "Run a shell command and return its combined stdout+stderr. Non-zero exit is an error.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command to run"},
                "workdir": {"type": "string", "description": "Working directory (default: process cwd)"},
                "timeout": {"type": "number", "description": "Timeout in milliseconds (default 60000)"},
                "description": {"type": "string", "description": "Human-readable description of the command"},
            },
            "required": ["command"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

#[cfg(unix)]
use unix::run;

/// Process groups and `killpg` are POSIX; other platforms get a clear error for now.
#[cfg(not(unix))]
async fn run(_args: Value) -> Result<ToolResult, String> {
    Err("bash: this build of toolnexus runs bash on Unix-like systems only".into())
}

#[cfg(unix)]
mod unix {
    use std::path::Path;
    use std::process::{ExitStatus, Stdio};
    use std::time::Duration;

    use serde_json::{Map, Value, json};
    use tokio::io::AsyncReadExt as _;
    use tokio::process::{Child, Command};

    use crate::builtin::args::Args;
    use crate::result::ToolResult;

    /// Used when the call gives no `timeout`.
    const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;

    /// Between "please stop" (SIGTERM) and "stop" (SIGKILL); the same in every port, so a
    /// timeout means the same thing everywhere.
    const KILL_GRACE: Duration = Duration::from_millis(2000);

    /// The interpreter and its "run this string" flag.
    fn shell() -> [&'static str; 2] {
        // The absolute path first: a bare `sh` is a PATH lookup, which may find another binary.
        if Path::new("/bin/sh").exists() {
            ["/bin/sh", "-c"]
        } else {
            ["sh", "-c"]
        }
    }

    pub(super) async fn run(args: Value) -> Result<ToolResult, String> {
        let a = Args::new("bash", &args)?;
        let command = a.str("command")?;
        let workdir = a.opt_str("workdir")?;
        a.opt_str("description")?;
        let timeout_ms = a.opt_num("timeout")?.unwrap_or(DEFAULT_TIMEOUT_MS).max(0.0);
        if let Some(dir) = workdir
            && !Path::new(dir).is_dir()
        {
            return Err(if Path::new(dir).exists() {
                format!("bash: workdir {dir} is not a directory")
            } else {
                format!("bash: workdir not found: {dir}")
            });
        }
        let [sh, flag] = shell();
        let mut meta = Map::new();
        meta.insert("shell".into(), json!(format!("{sh} {flag}")));

        let (reader, writer) = tokio::net::unix::pipe::pipe()
            .and_then(|(tx, rx)| Ok((rx, tx.into_blocking_fd()?)))
            .map_err(|e| format!("bash: cannot create a pipe: {e}"))?;
        let mut cmd = Command::new(sh);
        cmd.arg(flag).arg(command).stdin(Stdio::null());
        // One pipe behind both streams keeps stdout and stderr interleaved as written.
        let stderr = writer
            .try_clone()
            .map_err(|e| format!("bash: cannot create a pipe: {e}"))?;
        cmd.stdout(writer).stderr(stderr).process_group(0);
        if let Some(dir) = workdir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| format!("bash: cannot start {sh}: {e}"))?;
        // Our copies of the write end must close, or the output never reaches end-of-file.
        drop(cmd);
        let mut group = Group::new(&child);
        let mut reader = reader;
        let mut out = Vec::new();

        let limit = Duration::from_secs_f64(timeout_ms / 1000.0);
        let finished = tokio::time::timeout(limit, finish(&mut reader, &mut out, &mut child)).await;
        let status = match finished {
            Ok(status) => status,
            Err(_) => {
                let killed = group.stop(&mut reader, &mut out, &mut child).await;
                meta.insert("timedOut".into(), json!(true));
                meta.insert("killedTree".into(), json!(killed));
                let out = String::from_utf8_lossy(&out);
                return Ok(ToolResult::failure(format!(
                    "bash: command timed out after {}ms\n{out}",
                    timeout_ms as u64
                ))
                .with_metadata(meta));
            }
        };
        group.release();
        let status = status.map_err(|e| format!("bash: {e}"))?;
        let code = exit_code(status);
        meta.insert("exitCode".into(), json!(code));
        let out = String::from_utf8_lossy(&out);
        Ok(if code == 0 {
            ToolResult::success(out).with_metadata(meta)
        } else {
            ToolResult::failure(format!("{out}\nbash: command exited with code {code}")).with_metadata(meta)
        })
    }

    /// Read the output to end-of-file and reap the child. Cancel-safe: nothing read is lost
    /// if this is dropped and called again.
    async fn finish(
        reader: &mut tokio::net::unix::pipe::Receiver,
        out: &mut Vec<u8>,
        child: &mut Child,
    ) -> std::io::Result<ExitStatus> {
        let drain = async {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                }
            }
        };
        let ((), status) = tokio::join!(drain, child.wait());
        status
    }

    /// The exit code, or minus the signal number for a signalled child (Python's `returncode`).
    fn exit_code(status: ExitStatus) -> i32 {
        use std::os::unix::process::ExitStatusExt as _;
        status
            .code()
            .or_else(|| status.signal().map(|s| -s))
            .unwrap_or(-1)
    }

    /// The child's process group, stopped if the call ends without the command finishing —
    /// on timeout, or when the caller drops the call (cancellation, an outer timeout).
    struct Group {
        pgid: Option<i32>,
    }

    impl Group {
        fn new(child: &Child) -> Self {
            Self {
                pgid: child.id().and_then(|id| i32::try_from(id).ok()),
            }
        }

        /// Send `signal` to the whole group; `true` if it was delivered.
        fn signal(&self, signal: i32) -> bool {
            // SAFETY: killpg only sends a signal; the group id is our own child's.
            self.pgid
                .is_some_and(|pgid| unsafe { libc::killpg(pgid, signal) } == 0)
        }

        /// SIGTERM, a grace period, then SIGKILL; collects what output arrives meanwhile.
        /// Returns whether the group was signalled.
        async fn stop(
            &mut self,
            reader: &mut tokio::net::unix::pipe::Receiver,
            out: &mut Vec<u8>,
            child: &mut Child,
        ) -> bool {
            let mut killed = self.signal(libc::SIGTERM);
            if tokio::time::timeout(KILL_GRACE, finish(reader, out, child))
                .await
                .is_err()
            {
                killed = self.signal(libc::SIGKILL) || killed;
                // A process that left the group may still hold the pipe; don't wait on it forever.
                if tokio::time::timeout(KILL_GRACE, finish(reader, out, child))
                    .await
                    .is_err()
                {
                    let _ = child.start_kill();
                }
            }
            self.pgid = None;
            killed
        }

        /// The command finished on its own: nothing to stop.
        fn release(&mut self) {
            self.pgid = None;
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if self.pgid.is_none() || !self.signal(libc::SIGTERM) {
                return;
            }
            let pgid = self.pgid.take();
            let insist = move || {
                if let Some(pgid) = pgid {
                    // SAFETY: as in `signal`.
                    unsafe { libc::killpg(pgid, libc::SIGKILL) };
                }
            };
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        tokio::time::sleep(KILL_GRACE).await;
                        insist();
                    });
                }
                Err(_) => insist(),
            }
        }
    }
}
