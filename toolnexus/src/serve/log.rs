//! One line per request: an `info` event on the `toolnexus::serve` target and, when set,
//! [`ServeOptions::on_request`](super::ServeOptions::on_request). It names what was asked
//! (HTTP method and path, the JSON-RPC method, the tool of a `tools/call`) and how it ended
//! (status, milliseconds, whether it failed) — never arguments, bodies or headers, which
//! may carry secrets.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Extensions, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde::de::IgnoredAny;

/// Client-chosen names longer than this are cut in the log.
const MAX_NAME: usize = 64;

/// One request served, as logged.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestEvent {
    /// The HTTP method.
    pub http_method: String,
    /// The path, without the query.
    pub path: String,
    /// The JSON-RPC method of the body (`tools/call`, `SendMessage`, …), if it had one.
    pub rpc_method: Option<String>,
    /// The tool a `tools/call` named.
    pub tool: Option<String>,
    /// The HTTP status answered.
    pub status: u16,
    /// Wall time in milliseconds.
    pub ms: f64,
    /// The request failed: an HTTP error status, a JSON-RPC error, or a tool result with
    /// `isError`.
    pub is_error: bool,
}

impl fmt::Display for RequestEvent {
    /// `POST /mcp tools/call echo 200 1.2ms ok`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.http_method, self.path)?;
        if let Some(rpc) = &self.rpc_method {
            write!(f, " {rpc}")?;
        }
        if let Some(tool) = &self.tool {
            write!(f, " {tool}")?;
        }
        let outcome = if self.is_error { "error" } else { "ok" };
        write!(f, " {} {:.1}ms {outcome}", self.status, self.ms)
    }
}

/// The per-request callback; a panic inside it is contained.
pub type OnRequest = Arc<dyn Fn(&RequestEvent) + Send + Sync>;

/// What the inner layers learn about a request for its log line.
#[derive(Default)]
struct Note {
    rpc_method: Option<String>,
    tool: Option<String>,
    /// Set by a route whose reply is an event stream (a stateful MCP session's `tools/call`),
    /// which cannot be peeked: the route reports the outcome itself.
    failed: bool,
}

type Slot = Arc<Mutex<Note>>;

#[derive(Deserialize)]
struct RpcPeek<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<ParamsPeek<'a>>,
}

#[derive(Deserialize)]
struct ParamsPeek<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct MethodPeek<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ReplyPeek {
    error: Option<IgnoredAny>,
    result: Option<ResultPeek>,
}

#[derive(Deserialize)]
struct ResultPeek {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

/// Names a client chose, made safe for one log line.
fn clean(name: &str) -> String {
    name.chars()
        .take(MAX_NAME)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Marks the request whose (HTTP) extensions are `extensions` as failed for its log line: how
/// a route answering with an event stream reports a `tools/call` whose result `isError`.
pub(crate) fn note_failed(extensions: &Extensions) {
    if let Some(slot) = extensions.get::<Slot>() {
        slot.lock().unwrap_or_else(|p| p.into_inner()).failed = true;
    }
}

/// The JSON-RPC method the request whose extensions are `extensions` carries, as noted
/// for its log line (the body limit layer reads every body whole before routing).
pub(crate) fn rpc_method(extensions: &Extensions) -> Option<String> {
    let slot = extensions.get::<Slot>()?;
    slot.lock().unwrap_or_else(|p| p.into_inner()).rpc_method.clone()
}

/// Records the JSON-RPC method (and a `tools/call`'s tool) of `body` for the log line.
pub(super) fn note_rpc(extensions: &mut Extensions, body: &[u8]) {
    let Some(slot) = extensions.get::<Slot>() else {
        return;
    };
    let (method, tool) = match serde_json::from_slice::<RpcPeek>(body) {
        Ok(peek) => (peek.method, peek.params.and_then(|p| p.name)),
        // `params` of another shape: the method alone.
        Err(_) => match serde_json::from_slice::<MethodPeek>(body) {
            Ok(peek) => (peek.method, None),
            Err(_) => return,
        },
    };
    let mut note = slot.lock().unwrap_or_else(|p| p.into_inner());
    note.tool = tool
        .filter(|_| method.as_deref() == Some("tools/call"))
        .map(|t| clean(&t));
    note.rpc_method = method.map(|m| clean(&m));
}

/// The outermost layer: times the request, lets the rest run, then logs it.
pub(super) async fn log_request(
    State(on_request): State<Option<OnRequest>>,
    mut request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let http_method = request.method().to_string();
    let path = clean(request.uri().path());
    let slot = Slot::default();
    request.extensions_mut().insert(slot.clone());
    let response = next.run(request).await;
    let rpc = slot
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .rpc_method
        .is_some();
    let status = response.status();
    let streamed = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut line = Line {
        on_request,
        http_method,
        path,
        status: status.as_u16(),
        started,
        slot,
        failed_reply: status.is_client_error() || status.is_server_error(),
    };
    if rpc && streamed {
        // An answer streamed as events is over when its body is: log it then (or when the
        // client drops it), with the outcome the route noted.
        let (parts, body) = response.into_parts();
        let stream = body.into_data_stream().map(move |frame| {
            let _ = &line;
            frame
        });
        return Response::from_parts(parts, Body::from_stream(stream));
    }
    let response = if rpc {
        let (response, failed) = peek_reply(response).await;
        line.failed_reply |= failed;
        response
    } else {
        response
    };
    drop(line);
    response
}

/// One request's log line, written when it is dropped: right after the answer for a whole
/// reply, at the end of the body for a streamed one.
struct Line {
    on_request: Option<OnRequest>,
    http_method: String,
    path: String,
    status: u16,
    started: Instant,
    slot: Slot,
    failed_reply: bool,
}

impl Drop for Line {
    fn drop(&mut self) {
        let note = std::mem::take(&mut *self.slot.lock().unwrap_or_else(|p| p.into_inner()));
        let event = RequestEvent {
            http_method: std::mem::take(&mut self.http_method),
            path: std::mem::take(&mut self.path),
            rpc_method: note.rpc_method,
            tool: note.tool,
            status: self.status,
            ms: self.started.elapsed().as_secs_f64() * 1000.0,
            is_error: self.failed_reply || note.failed,
        };
        tracing::info!(
            target: "toolnexus::serve",
            http_method = %event.http_method,
            path = %event.path,
            method = event.rpc_method.as_deref().unwrap_or("-"),
            tool = event.tool.as_deref().unwrap_or("-"),
            status = event.status,
            ms = event.ms,
            is_error = event.is_error,
            "request"
        );
        if let Some(on_request) = &self.on_request
            && std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_request(&event))).is_err()
        {
            tracing::warn!(target: "toolnexus::serve", "the on_request callback panicked");
        }
    }
}

/// Whether a JSON reply reports a failure (`error`, or `result.isError`); the reply is
/// handed on unchanged. Replies are our own routes' and already whole in memory.
async fn peek_reply(response: Response) -> (Response, bool) {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return (response, false);
    }
    let (parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await else {
        return (Response::from_parts(parts, Body::empty()), true);
    };
    let bytes = collected.to_bytes();
    let failed = serde_json::from_slice::<ReplyPeek>(&bytes)
        .is_ok_and(|r| r.error.is_some() || r.result.is_some_and(|r| r.is_error));
    (Response::from_parts(parts, Body::from(bytes)), failed)
}
