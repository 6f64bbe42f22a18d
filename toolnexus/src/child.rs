//! Child processes that speak newline-delimited JSON on their stdio (MCP stdio servers, ACP
//! agents): each is spawned as the leader of its own process group, so a kill reaches every
//! process it started, is killed with that group when dropped — on Linux also when this
//! process dies without dropping it (see [`lifeline`]) — and is read one bounded line at a
//! time.

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
pub(crate) struct ChildGuard {
    child: Box<dyn ChildWrapper>,
    /// Held only to be closed with this process; see [`lifeline`].
    #[cfg(target_os = "linux")]
    _lifeline: std::os::fd::OwnedFd,
}

impl ChildGuard {
    /// Give the child a moment to exit on stdin EOF, then kill whatever is left of its
    /// group and reap it.
    pub(crate) async fn shutdown(mut self) {
        let _ = tokio::time::timeout(EXIT_GRACE, self.child.wait()).await;
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(EXIT_GRACE, self.child.wait()).await;
    }

    /// `true` once the child process has exited (a non-blocking check).
    #[cfg(feature = "mcp")]
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    #[cfg(feature = "acp")]
    /// The exit status, waiting at most `grace` for the child to finish exiting; `None`
    /// while it still runs.
    pub(crate) async fn exit_status(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(grace, self.child.wait()).await.ok()?.ok()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
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
    #[cfg(target_os = "linux")]
    let (watched, lifeline) = lifeline::pipe()?;
    let mut cmd = CommandWrap::with_new(program, |c| {
        c.args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        if let Some(dir) = cwd {
            c.current_dir(dir);
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd as _;
            let watched = watched.as_raw_fd();
            // SAFETY: `watch` makes only async-signal-safe calls (see its comment).
            unsafe { c.pre_exec(move || lifeline::watch(watched)) };
        }
    });
    cmd.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let mut child = cmd.spawn()?;
    let stdout = child.stdout().take();
    let stdin = child.stdin().take();
    #[cfg(feature = "acp")]
    let stderr = child.stderr().take();
    #[cfg(target_os = "linux")]
    let child = {
        // Only the watcher keeps the read end; ours would keep the pipe from ever ending.
        drop(watched);
        ChildGuard {
            child,
            _lifeline: lifeline,
        }
    };
    #[cfg(not(target_os = "linux"))]
    let child = ChildGuard { child };
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

/// A child's process group dies with this process, however it ends — `kill -9` included.
///
/// Each child's group gets a watcher: a process forked in the child before it runs the
/// program, which blocks reading a pipe whose only write end this process holds (in the
/// child's [`ChildGuard`]). When this process dies the kernel closes that end, the read
/// returns end-of-file, and the watcher kills its whole group — the server and anything it
/// started in the background. `PR_SET_PDEATHSIG` alone would not do: it reaches only the
/// child itself (its own children are reparented and live on), and it fires when the
/// *thread* that spawned the child exits, which in a runtime can be a pool thread retiring
/// while the process, and the server, should live on.
#[cfg(target_os = "linux")]
mod lifeline {
    use std::io;
    use std::os::fd::{FromRawFd as _, OwnedFd, RawFd};

    /// A close-on-exec pipe: `(read, write)`.
    pub(super) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 just opened both; nothing else owns them.
        Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
    }

    /// Runs in the child between fork and exec: make the child its group's leader (the
    /// group the watcher kills is then the child's, never ours) and fork the watcher.
    ///
    /// # Safety
    /// Called after `fork` in a possibly multi-threaded parent: only async-signal-safe
    /// functions (setpgid, getpid, fork, close, read, kill, _exit), no allocation, no locks.
    pub(super) unsafe fn watch(watched: RawFd) -> io::Result<()> {
        // SAFETY: each call below is async-signal-safe and touches only our own descriptors
        // and process group.
        unsafe {
            if libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let group = libc::getpid();
            match libc::fork() {
                -1 => Err(io::Error::last_os_error()),
                0 => {
                    // Keep nothing but the read end: a copy of the child's stdout or of
                    // another lifeline's write end would hold that pipe open.
                    close_all_but(watched);
                    let mut byte = 0u8;
                    loop {
                        let n = libc::read(watched, (&raw mut byte).cast(), 1);
                        if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                            break;
                        }
                    }
                    libc::kill(-group, libc::SIGKILL);
                    libc::_exit(0)
                }
                // The child execs the program; its copy of the read end is close-on-exec.
                _ => Ok(()),
            }
        }
    }

    /// Closes every descriptor except `keep` (`close_range`, or one by one before Linux 5.9).
    unsafe fn close_all_but(keep: RawFd) {
        let keep = keep as libc::c_uint;
        // SAFETY: closing descriptors in the watcher, which uses none but `keep`.
        unsafe {
            let below = keep == 0 || libc::syscall(libc::SYS_close_range, 0, keep - 1, 0) == 0;
            let above = libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0) == 0;
            if !(below && above) {
                for fd in (0..65_536).filter(|fd| *fd != keep as RawFd) {
                    libc::close(fd);
                }
            }
        }
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
