//! ACP (the Agent Client Protocol) agents as a model source: a coding agent — Zed's agents,
//! Gemini CLI, any agent speaking ACP over stdio — answers the client's turns, and the loop,
//! the toolkit, adapters and suspension stay exactly as they are with any other model.
//!
//! [`load`] spawns the agent (its own process group, killed with it when the model is
//! dropped), runs `initialize` → `session/new` (→ `session/set_mode`) and returns an
//! [`AcpModel`]; [`AcpModel::client`] plugs it into a [`Client`] the way
//! [`Client::in_process`] plugs in a function.
//!
//! - Only `agent_message_chunk` text forms the reply: thoughts and tool narration would
//!   corrupt output the host parses.
//! - `session/request_permission` is answered at once with the first option whose kind
//!   starts with `allow` (an unanswered one hangs the agent); any other agent request is
//!   refused with `method not found`, never left waiting.
//! - The session holds the transcript already, so each turn's prompt ends with a marker
//!   naming the latest user turn as superseding everything before it.
//! - One turn at a time per session; a turn fails when the agent sends nothing for
//!   [`AcpOptions::permission_timeout`], and a crashed agent fails the turn at once with its
//!   exit status and the end of its stderr.
//!
//! ```no_run
//! use toolnexus::acp::{self, AcpOptions};
//! use toolnexus::Toolkit;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = acp::load(AcpOptions::new("gemini").arg("--experimental-acp")).await?;
//! let client = agent.client("gemini-acp").build()?;
//! let result = client.run("Summarise README.md in one line", &Toolkit::default()).await?;
//! println!("{}", result.text);
//! # Ok(()) }
//! ```

mod connection;
mod prompt;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AGENT_METHOD_NAMES, CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities,
    Implementation, InitializeRequest, NewSessionRequest, NewSessionResponse, PromptRequest,
    SetSessionModeRequest, TextContent,
};
use serde::Serialize;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use self::connection::{Connection, Reply};
use crate::client::{Client, ClientBuilder, GenerateRequest, Generation};

/// Bound on each handshake call (`initialize`, `session/new`, `session/set_mode`) by default.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a turn may go without hearing from the agent, by default.
pub const DEFAULT_PERMISSION_TIMEOUT: Duration = Duration::from_secs(5);

/// How to start and talk to one agent.
#[derive(Clone, Debug)]
pub struct AcpOptions {
    /// The agent's executable.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory and the session's `cwd`; made absolute (agents reject a
    /// relative one). Default: the current directory.
    pub cwd: Option<PathBuf>,
    /// Variables added to the inherited environment.
    pub env: Vec<(String, String)>,
    /// The ACP version offered in `initialize` (default 1).
    pub protocol_version: u16,
    /// A turn fails when the agent sends nothing for this long (default 5 s) — the safety
    /// net for an agent stuck on a permission request it never got answered, or hung.
    pub permission_timeout: Duration,
    /// A session mode to switch to after `session/new`.
    pub mode: Option<String>,
    /// Bound on each handshake call (default 30 s).
    pub handshake_timeout: Duration,
}

impl AcpOptions {
    /// Options to run `command`.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            protocol_version: 1,
            permission_timeout: DEFAULT_PERMISSION_TIMEOUT,
            mode: None,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        }
    }

    /// Add an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Add arguments.
    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Set the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Add an environment variable.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Offer another protocol version.
    pub fn protocol_version(mut self, version: u16) -> Self {
        self.protocol_version = version;
        self
    }

    /// Set the turn's silence bound.
    pub fn permission_timeout(mut self, timeout: Duration) -> Self {
        self.permission_timeout = timeout;
        self
    }

    /// Switch the session to `mode`.
    pub fn mode(mut self, mode: impl Into<String>) -> Self {
        self.mode = Some(mode.into());
        self
    }

    /// Bound each handshake call.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }
}

/// Why an agent could not be started or could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcpError {
    /// The working directory could not be resolved.
    #[error("acp: cannot resolve the working directory: {0}")]
    Cwd(#[source] std::io::Error),
    /// The agent could not be started.
    #[error("acp: cannot start \"{command}\": {source}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The agent answered a call with a JSON-RPC error.
    #[error("acp: {method} failed: error {code}: {message}")]
    Rpc {
        /// The method called.
        method: &'static str,
        /// The JSON-RPC error code.
        code: i32,
        /// The agent's message.
        message: String,
    },
    /// The agent's reply does not have the protocol's shape.
    #[error("acp: {method}: unexpected reply: {reason}")]
    Protocol {
        /// The method called.
        method: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A handshake call or a write was not answered in time.
    #[error("acp: {what} timed out after {}ms", after.as_millis())]
    Timeout {
        /// What timed out.
        what: String,
        /// The bound.
        after: Duration,
    },
    /// A turn heard nothing from the agent for `permission_timeout`; the turn was cancelled
    /// (`session/cancel`).
    #[error(
        "acp: the turn heard nothing from the agent for {}ms (hung, or waiting on something it \
         was never sent) — the turn was cancelled", after.as_millis()
    )]
    TurnTimeout {
        /// The silence bound.
        after: Duration,
    },
    /// A previous turn that was abandoned (timed out or dropped) has still not ended.
    #[error("acp: the agent has not finished an abandoned turn after {}ms", after.as_millis())]
    Busy {
        /// How long this turn waited for it.
        after: Duration,
    },
    /// The reply outgrew the bound on one turn's text.
    #[error("acp: the agent's reply exceeded {0} bytes")]
    ReplyTooLong(usize),
    /// The agent is gone (exited, crashed, closed its stdout, or the session was closed).
    #[error("acp: {0}")]
    Closed(String),
}

/// The session's turn slot.
#[derive(Default)]
struct Turns {
    /// A turn that was given up on, whose `session/prompt` reply is still due.
    abandoned: Option<oneshot::Receiver<Reply>>,
}

struct Session {
    conn: Arc<Connection>,
    session_id: String,
    permission_timeout: Duration,
    turns: tokio::sync::Mutex<Turns>,
}

/// One warm ACP session: one child process, one session id, alive across turns. Cheap to
/// clone; the child is killed with its process group when the last clone drops.
#[derive(Clone)]
pub struct AcpModel {
    inner: Arc<Session>,
}

impl std::fmt::Debug for AcpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpModel")
            .field("session_id", &self.inner.session_id)
            .finish_non_exhaustive()
    }
}

/// Spawn the agent and open a session: `initialize` → `session/new` (→ `session/set_mode`).
/// On any failure the child is stopped before the error returns.
pub async fn load(opts: AcpOptions) -> Result<AcpModel, AcpError> {
    let cwd = match &opts.cwd {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => std::env::current_dir().map_err(AcpError::Cwd)?.join(p),
        None => std::env::current_dir().map_err(AcpError::Cwd)?,
    };
    let spawned = crate::child::spawn(
        &opts.command,
        &opts.args,
        opts.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        Some(&cwd),
        Stdio::piped(),
    )
    .map_err(|source| AcpError::Spawn {
        command: opts.command.clone(),
        source,
    })?;
    let session_cell = Arc::new(Mutex::new(None));
    let conn = Connection::start(
        spawned.child,
        spawned.stdout,
        spawned.stdin,
        spawned.stderr,
        session_cell.clone(),
    );
    match handshake(&conn, &opts, cwd).await {
        Ok(session_id) => {
            *session_cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(session_id.clone());
            Ok(AcpModel {
                inner: Arc::new(Session {
                    conn,
                    session_id,
                    permission_timeout: opts.permission_timeout,
                    turns: tokio::sync::Mutex::default(),
                }),
            })
        }
        Err(e) => {
            conn.close().await;
            Err(e)
        }
    }
}

async fn handshake(conn: &Connection, opts: &AcpOptions, cwd: PathBuf) -> Result<String, AcpError> {
    let limit = opts.handshake_timeout;
    let fs = FileSystemCapabilities::new()
        .read_text_file(false)
        .write_text_file(false);
    let init = InitializeRequest::new(ProtocolVersion::from(opts.protocol_version))
        .client_capabilities(ClientCapabilities::new().fs(fs))
        .client_info(Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")));
    call(conn, AGENT_METHOD_NAMES.initialize, &init, limit).await?;
    let reply = call(
        conn,
        AGENT_METHOD_NAMES.session_new,
        &NewSessionRequest::new(cwd),
        limit,
    )
    .await?;
    let created: NewSessionResponse = serde_json::from_str(reply.get()).map_err(|e| AcpError::Protocol {
        method: AGENT_METHOD_NAMES.session_new,
        reason: e.to_string(),
    })?;
    let session_id = created.session_id.0.to_string();
    if let Some(mode) = &opts.mode {
        let set = SetSessionModeRequest::new(session_id.clone(), mode.clone());
        call(conn, AGENT_METHOD_NAMES.session_set_mode, &set, limit).await?;
    }
    Ok(session_id)
}

/// One request and its reply, bounded by `limit`.
async fn call(
    conn: &Connection,
    method: &'static str,
    params: &impl Serialize,
    limit: Duration,
) -> Result<Box<serde_json::value::RawValue>, AcpError> {
    let (id, rx) = conn.register()?;
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    if let Err(e) = conn.send(&request, limit).await {
        conn.forget(id);
        return Err(e);
    }
    match tokio::time::timeout(limit, rx).await {
        Ok(reply) => settle(conn, method, reply),
        Err(_) => {
            conn.forget(id);
            Err(AcpError::Timeout {
                what: method.to_owned(),
                after: limit,
            })
        }
    }
}

/// A reply (or a closed channel) as this crate's result.
fn settle(
    conn: &Connection,
    method: &'static str,
    reply: Result<Reply, oneshot::error::RecvError>,
) -> Result<Box<serde_json::value::RawValue>, AcpError> {
    match reply {
        Ok(Ok(result)) => Ok(result),
        // The connection's own failure (the agent is gone) is reported as such.
        Ok(Err(e)) if e.code == (-32000).into() && conn.closed().is_some() => {
            Err(AcpError::Closed(conn.closed().unwrap_or_default()))
        }
        Ok(Err(e)) => Err(AcpError::Rpc {
            method,
            code: e.code.into(),
            message: e.message,
        }),
        Err(_) => Err(AcpError::Closed(conn.closed().unwrap_or_default())),
    }
}

/// A turn in flight. Dropped before it finished (timed out, or the caller's future was
/// dropped), it leaves its reply due and cancels the agent's turn.
struct TurnGuard<'a> {
    session: &'a Session,
    turns: &'a mut Turns,
    rx: Option<oneshot::Receiver<Reply>>,
}

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        self.session.conn.lock().reply = None;
        if let Some(rx) = self.rx.take() {
            self.turns.abandoned = Some(rx);
            let cancel = serde_json::to_value(CancelNotification::new(self.session.session_id.clone()))
                .unwrap_or_default();
            let note =
                json!({"jsonrpc": "2.0", "method": AGENT_METHOD_NAMES.session_cancel, "params": cancel});
            let conn = self.session.conn.clone();
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let _ = conn.send(&note, Duration::from_secs(5)).await;
                });
            }
        }
    }
}

impl AcpModel {
    /// The agent's session id.
    pub fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    /// `true` until the agent exits or the session is closed.
    pub fn is_alive(&self) -> bool {
        self.inner.conn.closed().is_none()
    }

    /// A client whose model is this agent, built like [`Client::in_process`]: set any other
    /// option on the returned builder. A failed turn ends the run with the turn's error.
    pub fn client(&self, model: impl Into<String>) -> ClientBuilder {
        let me = self.clone();
        Client::in_process(model, move |req| {
            let me = me.clone();
            async move { me.generate(req).await.map_err(|e| e.to_string()) }
        })
    }

    /// One turn: the transcript rendered as one prompt, sent as one `session/prompt`; the
    /// reply is the turn's `agent_message_chunk` text.
    pub async fn generate(&self, request: GenerateRequest) -> Result<Generation, AcpError> {
        self.prompt(&prompt::render(&request.messages))
            .await
            .map(Generation::text)
    }

    /// Send `text` as one turn's prompt, verbatim, and return the reply text.
    pub async fn prompt(&self, text: &str) -> Result<String, AcpError> {
        let session = &*self.inner;
        let mut turns = session.turns.lock().await;
        self.settle_abandoned(&mut turns).await?;
        let conn = &session.conn;
        let (id, rx) = conn.register()?;
        {
            let mut st = conn.lock();
            st.reply = Some(String::new());
            st.overflow = false;
            st.last_heard = Some(Instant::now());
        }
        let mut guard = TurnGuard {
            session,
            turns: &mut turns,
            rx: Some(rx),
        };
        let params = PromptRequest::new(
            session.session_id.clone(),
            vec![ContentBlock::Text(TextContent::new(text))],
        );
        let request = json!({"jsonrpc": "2.0", "id": id, "method": AGENT_METHOD_NAMES.session_prompt, "params": params});
        if let Err(e) = conn.send(&request, session.permission_timeout).await {
            // Never delivered: nothing to wait for or cancel.
            guard.rx = None;
            conn.forget(id);
            return Err(e);
        }
        let reply = self.wait_turn(&mut guard).await?;
        guard.rx = None;
        let (text, overflow) = {
            let mut st = conn.lock();
            (st.reply.take().unwrap_or_default(), st.overflow)
        };
        drop(guard);
        settle(conn, AGENT_METHOD_NAMES.session_prompt, Ok(reply))?;
        if overflow {
            return Err(AcpError::ReplyTooLong(connection::MAX_REPLY));
        }
        Ok(text)
    }

    /// Wait for the turn's reply while the agent keeps talking; give up after
    /// `permission_timeout` of silence.
    async fn wait_turn(&self, guard: &mut TurnGuard<'_>) -> Result<Reply, AcpError> {
        let conn = &self.inner.conn;
        let limit = self.inner.permission_timeout;
        let Some(rx) = guard.rx.as_mut() else {
            return Err(AcpError::Closed("the turn was already settled".into()));
        };
        loop {
            let heard = conn.lock().last_heard.unwrap_or_else(Instant::now);
            tokio::select! {
                reply = &mut *rx => {
                    return match reply {
                        Ok(r) => Ok(r),
                        Err(_) => Err(AcpError::Closed(conn.closed().unwrap_or_default())),
                    };
                }
                () = tokio::time::sleep_until(heard + limit) => {
                    let last = conn.lock().last_heard.unwrap_or(heard);
                    if last + limit <= Instant::now() {
                        return Err(AcpError::TurnTimeout { after: limit });
                    }
                }
            }
        }
    }

    /// Before a new turn, let an abandoned one end (its reply, or the agent's exit), bounded
    /// by `permission_timeout`.
    async fn settle_abandoned(&self, turns: &mut Turns) -> Result<(), AcpError> {
        let Some(mut rx) = turns.abandoned.take() else {
            return Ok(());
        };
        let limit = self.inner.permission_timeout;
        match tokio::time::timeout(limit, &mut rx).await {
            Ok(_) => Ok(()),
            Err(_) => {
                turns.abandoned = Some(rx);
                Err(AcpError::Busy { after: limit })
            }
        }
    }

    /// Close the agent's stdin, give it a moment to exit, then kill its process group.
    /// Idempotent; later turns fail with [`AcpError::Closed`].
    pub async fn close(&self) {
        self.inner.conn.close().await;
    }
}
