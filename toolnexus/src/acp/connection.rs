//! The wire: JSON-RPC 2.0, one object a line, over the agent's stdio. One reader task owns
//! the agent's stdout: it routes replies to their waiting calls by id, folds
//! `agent_message_chunk` text into the active turn, answers `session/request_permission` at
//! once, and refuses every other request so the agent never waits on us.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    CLIENT_METHOD_NAMES, ContentBlock, Error as RpcError, RequestPermissionOutcome,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::AcpError;
use crate::child::{ChildGuard, Line, LineReader};

/// A longer line from the agent is dropped (and logged); the session stays up.
pub(super) const MAX_LINE: usize = 16 * 1024 * 1024;
/// One turn's reply text stops growing here; the turn then fails.
pub(super) const MAX_REPLY: usize = 16 * 1024 * 1024;
/// The tail of the agent's stderr kept for error messages.
const STDERR_TAIL: usize = 2048;
/// How long an agent that closed its stdout gets to report its exit status (and finish
/// writing stderr); only an agent that closes stdout but lives on waits this long.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// A reply to one of our calls: its `result`, or the JSON-RPC error.
pub(super) type Reply = Result<Box<RawValue>, RpcError>;

/// What the reader shares with the callers.
#[derive(Default)]
pub(super) struct State {
    next_id: u64,
    pending: HashMap<u64, oneshot::Sender<Reply>>,
    /// The active turn's reply so far; `None` between turns (late chunks are dropped).
    pub(super) reply: Option<String>,
    /// The active turn's reply outgrew [`MAX_REPLY`].
    pub(super) overflow: bool,
    /// When the agent last sent anything.
    pub(super) last_heard: Option<Instant>,
    /// Why the connection is over, once it is.
    closed: Option<String>,
    stderr: Vec<u8>,
}

/// The live connection: the writer, the shared state and the child.
pub(super) struct Connection {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pub(super) state: Arc<Mutex<State>>,
    child: Arc<tokio::sync::Mutex<Option<ChildGuard>>>,
    reader: tokio::task::JoinHandle<()>,
    stderr: Option<tokio::task::AbortHandle>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
        if let Some(t) = &self.stderr {
            t.abort();
        }
        // Kill the process group now rather than when the aborted reader is next polled.
        if let Ok(mut child) = self.child.try_lock() {
            drop(child.take());
        }
    }
}

impl Connection {
    pub(super) fn start(
        child: ChildGuard,
        stdout: ChildStdout,
        stdin: ChildStdin,
        stderr: Option<ChildStderr>,
        session: Arc<Mutex<Option<String>>>,
    ) -> Arc<Self> {
        let state = Arc::new(Mutex::new(State::default()));
        let child = Arc::new(tokio::sync::Mutex::new(Some(child)));
        let stderr_task = stderr.map(|e| tokio::spawn(collect_stderr(e, state.clone())));
        let stderr = stderr_task.as_ref().map(tokio::task::JoinHandle::abort_handle);
        Arc::new_cyclic(|weak: &std::sync::Weak<Connection>| {
            let reader = tokio::spawn(read_loop(
                LineReader::new(stdout, MAX_LINE),
                weak.clone(),
                state.clone(),
                (child.clone(), stderr_task),
                session,
            ));
            Connection {
                stdin: tokio::sync::Mutex::new(Some(stdin)),
                state,
                child,
                reader,
                stderr,
            }
        })
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Register a call: its id and where its reply arrives.
    pub(super) fn register(&self) -> Result<(u64, oneshot::Receiver<Reply>), AcpError> {
        let mut st = self.lock();
        if let Some(reason) = &st.closed {
            return Err(AcpError::Closed(reason.clone()));
        }
        st.next_id += 1;
        let id = st.next_id;
        let (tx, rx) = oneshot::channel();
        st.pending.insert(id, tx);
        Ok((id, rx))
    }

    pub(super) fn forget(&self, id: u64) {
        self.lock().pending.remove(&id);
    }

    /// Why the connection is over, if it is.
    pub(super) fn closed(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    /// Write one message (one line), bounded by `limit`: a child that stops reading its
    /// stdin must not block a caller forever.
    pub(super) async fn send(&self, message: &Value, limit: Duration) -> Result<(), AcpError> {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        let write = async {
            let mut stdin = self.stdin.lock().await;
            let Some(w) = stdin.as_mut() else {
                return Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "closed"));
            };
            w.write_all(&line).await?;
            w.flush().await
        };
        match tokio::time::timeout(limit, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                // Most likely the agent is gone: its exit status and stderr say more than
                // the broken pipe does, once the reader has seen the end of its stdout.
                for _ in 0..50 {
                    if let Some(reason) = self.closed() {
                        return Err(AcpError::Closed(reason));
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(AcpError::Closed(format!(
                    "writing to the agent failed: {e}{}",
                    self.stderr_tail()
                )))
            }
            Err(_) => Err(AcpError::Timeout {
                what: "writing to the agent".into(),
                after: limit,
            }),
        }
    }

    /// `; stderr: …` with the end of what the agent wrote there, or nothing.
    pub(super) fn stderr_tail(&self) -> String {
        tail_note(&self.lock().stderr)
    }

    /// Close stdin (the agent's cue to exit), give it a moment, then kill its group.
    pub(super) async fn close(&self) {
        drop(self.stdin.lock().await.take());
        if let Some(child) = self.child.lock().await.take() {
            child.shutdown().await;
        }
        fail_all(&self.state, "the ACP session was closed".into());
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // Plain data: consistent even if a holder panicked.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn tail_note(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!("; stderr: {text}")
    }
}

/// End the connection: every waiting call gets `reason`.
fn fail_all(state: &Mutex<State>, reason: String) {
    let mut st = lock(state);
    if st.closed.is_none() {
        st.closed = Some(reason.clone());
    }
    for (_, tx) in st.pending.drain() {
        let _ = tx.send(Err(RpcError::new(-32000, reason.clone())));
    }
}

/// Keep the last [`STDERR_TAIL`] bytes the agent writes to stderr.
async fn collect_stderr(mut stderr: ChildStderr, state: Arc<Mutex<State>>) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut st = lock(&state);
        st.stderr.extend_from_slice(&buf[..n]);
        let excess = st.stderr.len().saturating_sub(STDERR_TAIL);
        st.stderr.drain(..excess);
    }
}

/// The envelope every incoming line is first read as.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<RpcError>,
}

async fn read_loop(
    mut lines: LineReader<ChildStdout>,
    conn: std::sync::Weak<Connection>,
    state: Arc<Mutex<State>>,
    (child, stderr): (
        Arc<tokio::sync::Mutex<Option<ChildGuard>>>,
        Option<tokio::task::JoinHandle<()>>,
    ),
    session: Arc<Mutex<Option<String>>>,
) {
    let why = loop {
        match lines.read_line().await {
            Line::Complete => {}
            Line::Oversized => {
                tracing::warn!("dropped a message from the ACP agent longer than {MAX_LINE} bytes");
                continue;
            }
            Line::Eof => break None,
            Line::Failed(e) => break Some(format!("reading from the agent failed: {e}")),
        }
        let Ok(msg) = serde_json::from_slice::<Incoming>(lines.line()) else {
            continue; // blank lines and noise
        };
        lock(&state).last_heard = Some(Instant::now());
        let Some(conn) = conn.upgrade() else {
            return;
        };
        handle(&conn, msg, &session).await;
    };
    // EOF: say how the agent ended, with what it last wrote to stderr.
    let status: Option<ExitStatus> = match child.lock().await.as_mut() {
        Some(c) => c.exit_status(EXIT_GRACE).await,
        None => None,
    };
    // Let the stderr reader catch up: its pipe closes when the agent's group is gone.
    if let Some(task) = stderr {
        let _ = tokio::time::timeout(EXIT_GRACE, task).await;
    }
    let mut reason = why.unwrap_or_else(|| match status {
        Some(s) => format!("the agent exited ({s})"),
        None => "the agent closed its stdout".to_owned(),
    });
    reason.push_str(&tail_note(&lock(&state).stderr));
    fail_all(&state, reason);
}

async fn handle(conn: &Connection, msg: Incoming<'_>, session: &Mutex<Option<String>>) {
    match (msg.method.as_deref(), msg.id) {
        (None, Some(id)) => {
            // A reply to one of our calls.
            let Some(id) = id.as_u64() else { return };
            let Some(tx) = conn.lock().pending.remove(&id) else {
                return;
            };
            let reply = match (msg.error, msg.result) {
                (Some(e), _) => Err(e),
                (None, Some(r)) => Ok(r.to_owned()),
                (None, None) => Ok(RawValue::from_string("null".into()).unwrap_or_else(|_| unreachable!())),
            };
            let _ = tx.send(reply);
        }
        (Some(m), None) if m == CLIENT_METHOD_NAMES.session_update => {
            let ours = session.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(text) = msg.params.and_then(|p| message_chunk(p, ours.as_deref())) {
                let mut st = conn.lock();
                let over = st
                    .reply
                    .as_ref()
                    .is_some_and(|r| r.len() + text.len() > MAX_REPLY);
                if over {
                    st.overflow = true;
                } else if let Some(reply) = st.reply.as_mut() {
                    reply.push_str(&text);
                }
            }
        }
        (Some(m), Some(id)) if m == CLIENT_METHOD_NAMES.session_request_permission => {
            let outcome = msg
                .params
                .and_then(first_allow)
                .map_or(RequestPermissionOutcome::Cancelled, |id| {
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
                });
            let result = serde_json::to_value(RequestPermissionResponse::new(outcome)).unwrap_or_default();
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            if let Err(e) = conn.send(&answer, Duration::from_secs(5)).await {
                tracing::warn!("could not answer the agent's permission request: {e}");
            }
        }
        (Some(m), Some(id)) => {
            // We declare no fs or terminal capability; a request we do not serve is refused
            // rather than left to hang the agent.
            tracing::debug!("refusing the agent's \"{m}\" request");
            let error = serde_json::to_value(RpcError::method_not_found()).unwrap_or_default();
            let answer = json!({"jsonrpc": "2.0", "id": id, "error": error});
            let _ = conn.send(&answer, Duration::from_secs(5)).await;
        }
        _ => {} // other notifications
    }
}

/// The text of an `agent_message_chunk` for our session; thoughts, tool narration, plans and
/// every other update are not the reply.
fn message_chunk(params: &RawValue, session: Option<&str>) -> Option<String> {
    // An update kind this schema version does not know does not parse, and is not a message
    // chunk either.
    let n: SessionNotification = serde_json::from_str(params.get()).ok()?;
    if session.is_some_and(|s| *n.session_id.0 != *s) {
        return None;
    }
    match n.update {
        SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
            ContentBlock::Text(t) => Some(t.text),
            _ => None,
        },
        _ => None,
    }
}

/// The first option whose kind starts with `allow`. Read as text: the kinds are an open
/// vocabulary (`allow_once`, `allow_always`, …) and a kind this schema does not know must
/// still be answered.
fn first_allow(params: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(default)]
        options: Vec<Value>,
    }
    let p: Params = serde_json::from_str(params.get()).ok()?;
    p.options.iter().find_map(|o| {
        let kind = o.get("kind")?.as_str()?;
        let id = o.get("optionId")?.as_str()?;
        kind.starts_with("allow").then(|| id.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(v: Value) -> Box<RawValue> {
        RawValue::from_string(v.to_string()).unwrap()
    }

    #[test]
    fn the_first_allow_option_is_chosen_whatever_its_exact_kind() {
        let p = raw(json!({"sessionId": "s", "toolCall": {}, "options": [
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            {"optionId": "later", "name": "?", "kind": "allow_for_this_session"},
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        ]}));
        assert_eq!(first_allow(&p).as_deref(), Some("later"));
        let p = raw(json!({"options": [{"optionId": "no", "kind": "reject_always"}]}));
        assert_eq!(first_allow(&p), None);
    }

    #[test]
    fn only_message_chunks_of_our_session_are_reply_text() {
        let chunk = |kind: &str, session: &str| {
            raw(
                json!({"sessionId": session, "update": {"sessionUpdate": kind, "content": {"type": "text", "text": "t"}}}),
            )
        };
        assert_eq!(
            message_chunk(&chunk("agent_message_chunk", "s1"), Some("s1")).as_deref(),
            Some("t")
        );
        assert_eq!(
            message_chunk(&chunk("agent_message_chunk", "s2"), Some("s1")),
            None
        );
        assert_eq!(
            message_chunk(&chunk("agent_thought_chunk", "s1"), Some("s1")),
            None
        );
        assert_eq!(
            message_chunk(&chunk("user_message_chunk", "s1"), Some("s1")),
            None
        );
        assert_eq!(
            message_chunk(&chunk("some_future_update", "s1"), Some("s1")),
            None
        );
    }
}
