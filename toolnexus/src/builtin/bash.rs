//! `bash`: run one shell command in its own process group, returning combined
//! stdout+stderr. A timeout (default 60 s) stops the whole group — the command and
//! everything it started — first politely (SIGTERM), then after a grace period for good.
//!
//! Bounded: the output kept is capped while it arrives (the first and last
//! [`KEEP_BYTES`] bytes, and how much was cut between them), and the call returns when the
//! shell exits even if a background job it started still holds the output pipe open.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::workspace::Workspace;
use super::{builtin, input_schema};
use crate::context::TimeoutUnit;
use crate::result::ToolResult;
use crate::tool::Tool;

/// What the model sees of a command's output: at most this many bytes from its start and
/// as many from its end.
pub(super) const KEEP_BYTES: usize = 32 * 1024;

const DESCRIPTION: &str =
    "Run a shell command and return its combined stdout+stderr. Non-zero exit is an error.";

/// `bash`'s arguments.
#[derive(JsonSchema)]
struct BashArgs {
    /// The shell command to run
    command: String,
    /// Working directory (default: process cwd)
    workdir: Option<String>,
    /// Timeout in milliseconds (default 60000)
    #[schemars(with = "Option<f64>")]
    timeout: Option<std::time::Duration>,
    /// Human-readable description of the command
    description: Option<String>,
}

/// `bash`'s arguments with the background shells on.
#[derive(JsonSchema)]
struct BackgroundBashArgs {
    #[schemars(flatten)]
    bash: BashArgs,
    /// Start the command and return at once with a background shell id; read it with bash_output, stop it with kill_shell. No timeout applies.
    run_in_background: Option<bool>,
}

impl BackgroundBashArgs {
    /// Parsed whether or not the background shells are on: `run_in_background: true`
    /// without them is refused rather than run in the foreground.
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("bash", args)?;
        Ok(Self {
            bash: BashArgs {
                command: a.str("command")?.to_owned(),
                workdir: a.opt_str("workdir")?.map(str::to_owned),
                timeout: a.opt_timeout("timeout", TimeoutUnit::Millis)?,
                description: a.opt_str("description")?.map(str::to_owned),
            },
            run_in_background: a.opt_bool("run_in_background")?,
        })
    }
}

/// The interpreter `bash` runs a command with (`argv[0] argv[1..] <command>`).
#[derive(Clone, Debug)]
pub(super) enum Shell {
    /// The host's, from `BuiltinsConfig::shell`, verbatim.
    Given(Vec<String>),
    /// bash, found at this path.
    Bash(PathBuf),
    /// No bash on this machine: POSIX sh at this path.
    Posix(PathBuf),
    /// No shell at all.
    Missing,
}

impl Shell {
    /// The configured shell, else the one found on this machine (looked for once).
    pub(super) fn from_config(given: Option<&[String]>) -> Self {
        static DETECTED: OnceLock<Shell> = OnceLock::new();
        match given {
            Some(argv) => Shell::Given(argv.to_vec()),
            None => DETECTED
                .get_or_init(|| Shell::detect(std::env::var_os("PATH").as_deref()))
                .clone(),
        }
    }

    /// bash on `path` (absolute entries only: a relative one would run whatever `bash` the
    /// current directory holds) or in `/bin`, `/usr/bin`; else `/bin/sh`.
    fn detect(path: Option<&OsStr>) -> Self {
        let dirs = path
            .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
            .unwrap_or_default();
        let standard = [PathBuf::from("/bin"), PathBuf::from("/usr/bin")];
        let bash = dirs
            .iter()
            .chain(&standard)
            .filter(|d| d.is_absolute())
            .map(|d| d.join("bash"))
            .find(|p| is_executable(p));
        match bash {
            Some(bash) => Shell::Bash(bash),
            None if is_executable(Path::new("/bin/sh")) => Shell::Posix("/bin/sh".into()),
            None => Shell::Missing,
        }
    }

    /// The argv prefix, or why there is none.
    pub(super) fn argv(&self) -> Result<Vec<String>, String> {
        let with_c = |p: &Path| vec![p.display().to_string(), "-c".to_owned()];
        match self {
            Shell::Given(argv) if argv.first().is_some_and(|p| !p.is_empty()) => Ok(argv.clone()),
            Shell::Given(_) => Err(
                "the configured shell is empty; set builtins.shell to e.g. [\"/bin/bash\", \"-c\"]".into(),
            ),
            Shell::Bash(p) | Shell::Posix(p) => Ok(with_c(p)),
            Shell::Missing => Err(
                "no shell interpreter found (tried: bash on PATH, /bin/bash, /usr/bin/bash, /bin/sh); \
                 set builtins.shell, or turn the bash tool off"
                    .into(),
            ),
        }
    }

    /// The tool description: the other ports' words, plus a warning when only POSIX sh runs.
    fn description(&self) -> Cow<'static, str> {
        match self {
            Shell::Posix(p) => format!(
                "{DESCRIPTION} Commands run with {} (POSIX sh, not bash): bash-only syntax such as [[ ]] fails.",
                p.display()
            )
            .into(),
            _ => DESCRIPTION.into(),
        }
    }
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

/// Where background commands go: the shells when the extra is on.
#[cfg(unix)]
pub(super) type Background = Option<Arc<super::background::Shells>>;
#[cfg(not(unix))]
pub(super) type Background = Option<std::convert::Infallible>;

pub(super) fn tool(ws: Arc<Workspace>, shell: Shell, background: Background) -> Tool {
    let description = shell.description();
    let schema = if background.is_some() {
        input_schema::<BackgroundBashArgs>()
    } else {
        input_schema::<BashArgs>()
    };
    builtin("bash", &description, schema, move |args, _| {
        run(ws.clone(), shell.clone(), background.clone(), args)
    })
}

/// Process groups and `killpg` are POSIX; other platforms get a clear error for now.
#[cfg(not(unix))]
async fn run(
    _ws: Arc<Workspace>,
    _shell: Shell,
    _bg: Background,
    _args: Value,
) -> Result<ToolResult, String> {
    Err("bash: this build of toolnexus runs bash on Unix-like systems only".into())
}

#[cfg(unix)]
async fn run(
    ws: Arc<Workspace>,
    shell: Shell,
    background: Background,
    args: Value,
) -> Result<ToolResult, String> {
    let BackgroundBashArgs {
        bash: args,
        run_in_background,
    } = BackgroundBashArgs::parse(&args)?;
    let shells = match (run_in_background == Some(true), background) {
        (false, _) => None,
        (true, Some(shells)) => Some(shells),
        (true, None) => {
            return Err("bash: run_in_background needs the background_shells extra (builtins.extras)".into());
        }
    };
    let argv = shell.argv().map_err(|e| format!("bash: {e}"))?;
    let (workdir, shown) = match &args.workdir {
        Some(dir) => (ws.resolve("bash", dir)?, dir.clone()),
        None => ws.dir("bash")?,
    };
    if !workdir.is_dir() {
        return Err(if workdir.exists() {
            format!("bash: workdir {shown} is not a directory")
        } else {
            format!("bash: workdir not found: {shown}")
        });
    }
    let _ = args.description;
    if let Some(shells) = shells {
        let id = shells.start(&argv, &args.command, &workdir)?;
        return Ok(ToolResult::success(format!(
            "Started background shell {id}. Read its output with bash_output, stop it with kill_shell."
        ))
        .with_meta("shell", argv.join(" "))
        .with_meta("backgroundId", id));
    }
    unix::run(
        &argv,
        &args.command,
        &workdir,
        args.timeout.unwrap_or(unix::DEFAULT_TIMEOUT),
    )
    .await
}

/// The output kept while a command runs: its first [`KEEP_BYTES`], its last
/// [`KEEP_BYTES`], and the count of bytes dropped between them — so a command printing
/// without end costs bounded memory.
#[derive(Default)]
pub(super) struct Capture {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    cut: u64,
}

impl Capture {
    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        let room = KEEP_BYTES - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() >= KEEP_BYTES {
            self.cut += (self.tail.len() + bytes.len() - KEEP_BYTES) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - KEEP_BYTES..]);
            return;
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(KEEP_BYTES);
        self.tail.drain(..over);
        self.cut += over as u64;
    }

    /// The text, with a line saying how much was cut from the middle (cut at character
    /// boundaries, so no replacement character appears at the seams).
    pub(super) fn into_text(self) -> (String, u64) {
        let Capture { mut head, tail, cut } = self;
        if cut == 0 {
            head.extend(tail);
            return (String::from_utf8_lossy(&head).into_owned(), 0);
        }
        let mut tail = Vec::from(tail);
        // A character split by the cut: drop its pieces, on both sides.
        if let Err(e) = std::str::from_utf8(&head)
            && e.error_len().is_none()
        {
            head.truncate(e.valid_up_to());
        }
        let partial = tail.iter().take(3).take_while(|b| (**b & 0xC0) == 0x80).count();
        tail.drain(..partial);
        let text = format!(
            "{}\n… [{cut} bytes of output cut; the first and last {KEEP_BYTES} bytes are kept] …\n{}",
            String::from_utf8_lossy(&head),
            String::from_utf8_lossy(&tail)
        );
        (text, cut)
    }
}

#[cfg(unix)]
pub(super) mod unix {
    use std::path::Path;
    use std::process::{ExitStatus, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::{Map, json};
    use tokio::io::AsyncReadExt as _;
    use tokio::net::unix::pipe::Receiver;
    use tokio::process::{Child, Command};

    use super::Capture;
    use crate::result::ToolResult;

    /// Used when the call gives no `timeout`.
    pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_millis(60_000);

    /// Between "please stop" (SIGTERM) and "stop" (SIGKILL); the same in every port, so a
    /// timeout means the same thing everywhere.
    pub(in crate::builtin) const KILL_GRACE: Duration = Duration::from_millis(2000);

    /// After the shell exits, how long what is left in the pipe may take to read (a
    /// background job still writing into it could otherwise keep the call going).
    const AFTER_EXIT: Duration = Duration::from_millis(100);

    pub(super) async fn run(
        argv: &[String],
        command: &str,
        workdir: &Path,
        timeout: Duration,
    ) -> Result<ToolResult, String> {
        let mut meta = Map::new();
        meta.insert("shell".into(), json!(argv.join(" ")));

        let (mut child, reader) = spawn(argv, command, workdir)?;
        let mut group = Group::new(&child);
        let mut output = Output {
            reader,
            capture: Capture::default(),
            eof: false,
        };

        let finished = tokio::time::timeout(timeout, output.finish(&mut child)).await;
        let status = match finished {
            Ok(status) => {
                group.release();
                status.map_err(|e| format!("bash: {e}"))?
            }
            Err(_) => {
                let killed = group.stop(&mut output, &mut child).await;
                meta.insert("timedOut".into(), json!(true));
                meta.insert("killedTree".into(), json!(killed));
                let (out, cut) = output.into_text();
                note_cut(&mut meta, cut);
                let head = format!("bash: command timed out after {}ms", timeout.as_millis());
                return Ok(ToolResult::failure(join_lines(&head, &out)).with_metadata(meta));
            }
        };
        let code = exit_code(status);
        meta.insert("exitCode".into(), json!(code));
        let (out, cut) = output.into_text();
        note_cut(&mut meta, cut);
        Ok(if code == 0 {
            ToolResult::success(out).with_metadata(meta)
        } else {
            let tail = format!("bash: command exited with code {code}");
            ToolResult::failure(join_lines(&out, &tail)).with_metadata(meta)
        })
    }

    /// Start `argv… command` in `workdir`, in a process group of its own (its id is the
    /// child's pid), stdin `/dev/null`, stdout and stderr into one pipe; returns the child and
    /// the pipe's read end.
    pub(in crate::builtin) fn spawn(
        argv: &[String],
        command: &str,
        workdir: &Path,
    ) -> Result<(Child, Receiver), String> {
        let (reader, writer) = tokio::net::unix::pipe::pipe()
            .and_then(|(tx, rx)| Ok((rx, tx.into_blocking_fd()?)))
            .map_err(|e| format!("bash: cannot create a pipe: {e}"))?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).arg(command).stdin(Stdio::null());
        // One pipe behind both streams keeps stdout and stderr interleaved as written.
        let stderr = writer
            .try_clone()
            .map_err(|e| format!("bash: cannot create a pipe: {e}"))?;
        cmd.stdout(writer)
            .stderr(stderr)
            .process_group(0)
            .current_dir(workdir);
        let child = cmd
            .spawn()
            .map_err(|e| format!("bash: cannot start {}: {e}", argv[0]))?;
        // Our copies of the write end must close, or the output never reaches end-of-file.
        drop(cmd);
        Ok((child, reader))
    }

    /// Send `signal` to process group `pgid`; `true` if it was delivered.
    pub(in crate::builtin) fn signal_group(pgid: i32, signal: i32) -> bool {
        // SAFETY: killpg only sends a signal; the callers pass their own child's group id.
        unsafe { libc::killpg(pgid, signal) == 0 }
    }

    /// `a` and `b` on separate lines, or just the one that is not empty (no stray newline).
    fn join_lines(a: &str, b: &str) -> String {
        match (a.is_empty(), b.is_empty()) {
            (true, _) => b.to_owned(),
            (_, true) => a.to_owned(),
            _ => format!("{a}\n{b}"),
        }
    }

    fn note_cut(meta: &mut Map<String, serde_json::Value>, cut: u64) {
        if cut > 0 {
            meta.insert("outputCut".into(), json!(cut));
        }
    }

    /// The read end of the command's output pipe and what was read from it.
    struct Output {
        reader: Receiver,
        capture: Capture,
        eof: bool,
    }

    impl Output {
        /// Read the output until the shell exits, reap it, then take what it left in the
        /// pipe. Cancel-safe: nothing read is lost if this is dropped and called again.
        async fn finish(&mut self, child: &mut Child) -> std::io::Result<ExitStatus> {
            let mut buf = vec![0u8; 64 * 1024];
            let status = loop {
                tokio::select! {
                    read = self.reader.read(&mut buf), if !self.eof => match read {
                        Ok(0) | Err(_) => self.eof = true,
                        Ok(n) => self.capture.push(&buf[..n]),
                    },
                    status = child.wait() => break status?,
                }
            };
            // Everything the shell wrote is in the pipe by now (a write completes before
            // the writer can exit); a background job may still hold it open, so read only
            // what is there, for a bounded time.
            let deadline = Instant::now() + AFTER_EXIT;
            while !self.eof && Instant::now() < deadline {
                match self.reader.try_read(&mut buf) {
                    Ok(0) => self.eof = true,
                    Ok(n) => self.capture.push(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => self.eof = true,
                }
            }
            Ok(status)
        }

        /// The text read; a pipe still held open by a background job is drained (and
        /// discarded) by a task of its own, so that job does not die of SIGPIPE.
        fn into_text(self) -> (String, u64) {
            if !self.eof
                && let Ok(rt) = tokio::runtime::Handle::try_current()
            {
                let mut reader = self.reader;
                rt.spawn(async move {
                    let mut sink = [0u8; 8192];
                    while matches!(reader.read(&mut sink).await, Ok(n) if n > 0) {}
                });
            }
            self.capture.into_text()
        }
    }

    /// The exit code, or minus the signal number for a signalled child (Python's `returncode`).
    pub(in crate::builtin) fn exit_code(status: ExitStatus) -> i32 {
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
            self.pgid.is_some_and(|pgid| signal_group(pgid, signal))
        }

        /// SIGTERM, a grace period, then SIGKILL; collects what output arrives meanwhile.
        /// Returns whether the group was signalled.
        async fn stop(&mut self, output: &mut Output, child: &mut Child) -> bool {
            let mut killed = self.signal(libc::SIGTERM);
            if tokio::time::timeout(KILL_GRACE, output.finish(child))
                .await
                .is_err()
            {
                killed = self.signal(libc::SIGKILL) || killed;
                // A process that left the group may keep the shell alive; don't wait forever.
                if tokio::time::timeout(KILL_GRACE, output.finish(child))
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
                    signal_group(pgid, libc::SIGKILL);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail_and_counts_the_cut() {
        let mut c = Capture::default();
        c.push(b"short");
        assert_eq!(c.into_text(), ("short".to_owned(), 0));

        let mut c = Capture::default();
        let total = 3 * KEEP_BYTES + 17;
        let data: Vec<u8> = (0..total).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in data.chunks(1000) {
            c.push(chunk);
        }
        let (text, cut) = c.into_text();
        assert_eq!(cut, (total - 2 * KEEP_BYTES) as u64);
        let marker =
            format!("\n… [{cut} bytes of output cut; the first and last {KEEP_BYTES} bytes are kept] …\n");
        let want = [
            std::str::from_utf8(&data[..KEEP_BYTES]).unwrap(),
            &marker,
            std::str::from_utf8(&data[total - KEEP_BYTES..]).unwrap(),
        ]
        .concat();
        assert_eq!(text, want);

        // One huge push behaves like many small ones.
        let mut one = Capture::default();
        one.push(&data);
        assert_eq!(one.into_text(), (want, cut));
    }

    #[test]
    fn capture_cuts_at_character_boundaries() {
        let mut c = Capture::default();
        // 'é' is two bytes; "x" before and "y" after put a character across each seam.
        c.push(b"x");
        c.push("é".repeat(KEEP_BYTES * 2).as_bytes());
        c.push(b"y");
        let (text, cut) = c.into_text();
        assert_eq!(cut, (2 + 2 * KEEP_BYTES) as u64);
        let want = format!(
            "x{}\n… [{cut} bytes of output cut; the first and last {KEEP_BYTES} bytes are kept] …\n{}y",
            "é".repeat((KEEP_BYTES - 1) / 2),
            "é".repeat((KEEP_BYTES - 2) / 2)
        );
        assert_eq!(text, want);
    }

    #[test]
    fn detection_prefers_bash_on_an_absolute_path_entry_then_sh() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("bash");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert!(matches!(Shell::detect(Some(&path)), Shell::Bash(p) if p == fake));
        // A relative PATH entry is never searched.
        let relative = std::env::join_paths(["."]).unwrap();
        let found = Shell::detect(Some(&relative));
        assert!(!matches!(&found, Shell::Bash(p) if p.is_relative()), "{found:?}");
        let sh = Shell::Posix("/bin/sh".into());
        assert_eq!(sh.argv().unwrap(), ["/bin/sh", "-c"]);
        assert!(sh.description().ends_with(
            "Commands run with /bin/sh (POSIX sh, not bash): bash-only syntax such as [[ ]] fails."
        ));
        assert_eq!(Shell::Bash("/usr/bin/bash".into()).description(), DESCRIPTION);
        assert!(
            Shell::Missing
                .argv()
                .unwrap_err()
                .starts_with("no shell interpreter found")
        );
        assert!(Shell::Given(vec![]).argv().is_err());
    }
}
