//! How much of the server one client may hold: connections, time and request bytes.
//!
//! The connection-level bounds (the cap, the header and idle timeouts) are enforced by the
//! accept loop in `conn`; the body bounds by [`read_body`], a middleware that reads each
//! request body whole before any route sees it.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::log::note_rpc;
use super::plain;

/// Connections open at once unless configured.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// How long a client may take to send a request head unless configured.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request body may take to arrive unless configured.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection may sit silent between requests unless configured.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest request body unless configured (4 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Bounds on what clients may hold, so that no client — idle, slow or large — can starve
/// the others.
///
/// ```
/// use std::time::Duration;
/// use toolnexus::serve::Limits;
///
/// let limits = Limits { max_connections: 32, idle_timeout: Duration::from_secs(15), ..Limits::default() };
/// assert_eq!(limits.max_body_bytes, 4 * 1024 * 1024);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once. A connection beyond it closes the connection that has been
    /// idle longest (no request in progress, nothing sent since its last response); when
    /// every connection is busy it waits until one ends.
    pub max_connections: usize,
    /// How long a client may take to send a request's head, counted from its first byte;
    /// a slower sender is disconnected.
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive after its head; longer is HTTP 408.
    pub body_read_timeout: Duration,
    /// A connection that sends nothing for this long while no request of it is in
    /// progress — a fresh one, or one kept alive after its last response — is closed.
    pub idle_timeout: Duration,
    /// The largest request body; larger is HTTP 413.
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Reads the body whole, within [`Limits::max_body_bytes`] and
/// [`Limits::body_read_timeout`], notes its JSON-RPC method for the request log, and hands
/// the routes a body that is already in memory.
pub(super) async fn read_body(State(limits): State<Arc<Limits>>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let too_large = || {
        plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body exceeds the {}-byte limit",
                limits.max_body_bytes
            ),
        )
    };
    // A declared length over the limit is refused before a byte of it is read.
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return too_large();
    }
    let read = Limited::new(body, limits.max_body_bytes).collect();
    let bytes = match tokio::time::timeout(limits.body_read_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large(),
        Ok(Err(e)) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("the request body could not be read: {e}"),
            );
        }
        Err(_) => {
            return plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {} ms",
                    limits.body_read_timeout.as_millis()
                ),
            );
        }
    };
    note_rpc(&mut parts.extensions, &bytes);
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
