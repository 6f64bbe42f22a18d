//! Child processes that speak newline-delimited JSON on their stdio (MCP stdio servers, ACP
//! agents): each is spawned as the leader of its own process group, so a kill reaches every
//! process it started, is killed with that group when dropped, and is read one bounded line
//! at a time.

use std::io;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

/// How long a child gets to exit on its own after its stdin closes, and then after the kill.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// A spawned child: the leader of its own process group, killed with it on drop.
pub(crate) struct ChildGuard(Box<dyn ChildWrapper>);

impl ChildGuard {
    /// Give the child a moment to exit on stdin EOF, then kill whatever is left of its
    /// group and reap it.
    pub(crate) async fn shutdown(mut self) {
        let _ = tokio::time::timeout(EXIT_GRACE, self.0.wait()).await;
        let _ = self.0.start_kill();
        let _ = tokio::time::timeout(EXIT_GRACE, self.0.wait()).await;
    }

    /// `true` once the child process has exited (a non-blocking check).
    #[cfg(feature = "mcp")]
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(Some(_)))
    }

    #[cfg(feature = "acp")]
    /// The exit status, waiting at most `grace` for the child to finish exiting; `None`
    /// while it still runs.
    pub(crate) async fn exit_status(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(grace, self.0.wait()).await.ok()?.ok()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// A child with its pipes taken.
pub(crate) struct Spawned {
    pub(crate) child: ChildGuard,
    pub(crate) stdout: ChildStdout,
    pub(crate) stdin: ChildStdin,
    /// Present when the child was spawned with `stderr: Stdio::piped()`.
    #[cfg(feature = "acp")]
    pub(crate) stderr: Option<tokio::process::ChildStderr>,
}

/// Spawn `program args…` with piped stdin/stdout, `env` added to the inherited environment,
/// in `cwd` when given.
pub(crate) fn spawn<'a>(
    program: &str,
    args: &[String],
    env: impl Iterator<Item = (&'a str, &'a str)>,
    cwd: Option<&Path>,
    stderr: Stdio,
) -> io::Result<Spawned> {
    let mut cmd = CommandWrap::with_new(program, |c| {
        c.args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
    });
    cmd.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let mut child = cmd.spawn()?;
    let stdout = child.stdout().take();
    let stdin = child.stdin().take();
    #[cfg(feature = "acp")]
    let stderr = child.stderr().take();
    let child = ChildGuard(child);
    match (stdout, stdin) {
        (Some(stdout), Some(stdin)) => Ok(Spawned {
            child,
            stdout,
            stdin,
            #[cfg(feature = "acp")]
            stderr,
        }),
        _ => Err(io::Error::other("no stdio pipes")),
    }
}

/// What one [`LineReader::read_line`] found.
pub(crate) enum Line {
    /// A whole line (with its `\n`, unless the stream ended without one) is in
    /// [`LineReader::line`].
    Complete,
    /// A line longer than the limit was dropped whole.
    Oversized,
    /// The stream ended.
    Eof,
    /// Reading failed.
    Failed(io::Error),
}

/// Newline-delimited reading that never holds more than `max_line` bytes of one line.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    /// The line being read; kept across calls because a read may be cancelled mid-line.
    line: Vec<u8>,
    max_line: usize,
    /// Dropping the rest of an over-long line.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(read: R, max_line: usize) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            max_line,
            discarding: false,
        }
    }

    /// The longest line kept.
    #[cfg(feature = "mcp")]
    pub(crate) fn max_line(&self) -> usize {
        self.max_line
    }

    #[cfg(test)]
    pub(crate) fn set_max_line(&mut self, max_line: usize) {
        self.max_line = max_line;
    }

    /// The line the last [`Line::Complete`] read.
    pub(crate) fn line(&self) -> &[u8] {
        &self.line
    }

    /// Read up to and including the next `\n` into [`line`](Self::line), replacing the
    /// previous line. Cancel-safe: bytes move from the reader's buffer into the line with no
    /// await in between.
    pub(crate) async fn read_line(&mut self) -> Line {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) => return Line::Eof,
                Ok(bytes) => bytes,
                Err(e) => return Line::Failed(e),
            };
            if self.line.last() == Some(&b'\n') {
                self.line.clear();
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let ends = newline.is_some();
            let outcome = if self.discarding {
                self.discarding = !ends;
                None
            } else if self.line.len() + take > self.max_line {
                self.line.clear();
                self.discarding = !ends;
                Some(Line::Oversized)
            } else {
                self.line.extend_from_slice(&available[..take]);
                ends.then_some(Line::Complete)
            };
            self.read.consume(take);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }
}
