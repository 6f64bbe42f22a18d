//! The legacy HTTP+SSE transport (MCP 2024-11-05), client side: `GET` the server's URL for
//! an event stream whose first `endpoint` event names where to `POST`; every message to the
//! server is one POST there, every message from it a `message` event on the stream. rmcp has
//! no client for it, and many deployed servers still speak only this.
//!
//! A URL config tries streamable HTTP first; [`legacy_signal`] says whether its failure is
//! the one the MCP specification names for falling back (a 4xx answer to the `initialize`
//! POST), and only then is this transport tried.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::json;

/// A longer event is not buffered: the stream ends (and the session with it).
const MAX_EVENT: usize = 16 * 1024 * 1024;

type Events = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<std::io::Error>>> + Send>>;

/// The transport over one open event stream and its POST endpoint.
pub(super) struct Sse {
    client: reqwest::Client,
    headers: HeaderMap,
    endpoint: url::Url,
    events: Option<Events>,
}

impl Sse {
    /// Open the event stream at `url` and wait (bounded by `limit`) for its `endpoint`
    /// event. The endpoint must be on the stream's own origin: the configured headers (a
    /// bearer token) go to it.
    pub(super) async fn connect(
        client: reqwest::Client,
        url: &str,
        headers: HeaderMap,
        limit: Duration,
    ) -> Result<Self, String> {
        let base = url::Url::parse(url).map_err(|e| format!("invalid url {url}: {e}"))?;
        let open = async {
            let response = client
                .get(base.clone())
                .headers(headers.clone())
                .header(ACCEPT, "text/event-stream")
                .send()
                .await
                .map_err(|e| format!("SSE: GET {url} failed: {e}"))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("SSE: GET {url} answered {status}"));
            }
            let mut events = bounded_events(response);
            loop {
                match events.next().await {
                    Some(Ok(ev)) if ev.event == "endpoint" => return Ok((ev.data, events)),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(format!("SSE: reading the event stream failed: {e}")),
                    None => return Err("SSE: the stream ended before naming its endpoint".to_owned()),
                }
            }
        };
        let (endpoint, events) = tokio::time::timeout(limit, open)
            .await
            .map_err(|_| format!("SSE: no endpoint event within {}ms", limit.as_millis()))??;
        let endpoint = base
            .join(endpoint.trim())
            .map_err(|e| format!("SSE: invalid endpoint {endpoint:?}: {e}"))?;
        if endpoint.origin() != base.origin() {
            return Err(format!(
                "SSE: the endpoint {endpoint} is not on {url}'s origin; refusing to send to it"
            ));
        }
        Ok(Sse {
            client,
            headers,
            endpoint,
            events: Some(events),
        })
    }
}

/// The response's events; the stream ends if one event grows past [`MAX_EVENT`].
fn bounded_events(response: reqwest::Response) -> Events {
    let mut pending = 0usize;
    let bytes = response
        .bytes_stream()
        .map(|chunk| chunk.map_err(std::io::Error::other))
        .take_while(move |chunk| {
            // Bytes since the last blank line (an event's end), counted per chunk: a
            // boundary split across two chunks only delays the reset by one event.
            let keep = match chunk {
                Ok(bytes) => {
                    let ends_event =
                        bytes.windows(2).any(|w| w == b"\n\n") || bytes.windows(4).any(|w| w == b"\r\n\r\n");
                    pending = if ends_event {
                        0
                    } else {
                        pending.saturating_add(bytes.len())
                    };
                    if pending > MAX_EVENT {
                        tracing::warn!("an MCP SSE event exceeded {MAX_EVENT} bytes; closing the stream");
                    }
                    pending <= MAX_EVENT
                }
                Err(_) => true,
            };
            std::future::ready(keep)
        });
    Box::pin(bytes.eventsource())
}

impl Transport<RoleClient> for Sse {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .json(&item);
        let closed = self.events.is_none();
        async move {
            if closed {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the SSE transport is closed",
                ));
            }
            let response = request.send().await.map_err(std::io::Error::other)?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!("SSE: POST answered {status}")))
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let events = self.events.as_mut()?;
        loop {
            match events.next().await? {
                Ok(ev) if ev.event.is_empty() || ev.event == "message" => {
                    match serde_json::from_str::<ServerJsonRpcMessage>(&ev.data) {
                        Ok(msg) => return Some(msg),
                        Err(e) => tracing::debug!("ignoring an MCP SSE message that does not parse: {e}"),
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!("reading the MCP SSE stream failed: {e}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> std::io::Result<()> {
        // Dropping the response body closes the GET: the server ends the session.
        self.events = None;
        Ok(())
    }
}

/// Whether `url` answers an `initialize` POST the way an HTTP+SSE-only server does: with a
/// 4xx (typically 404 or 405, the MCP specification's signal to fall back). Bounded by `limit`.
pub(super) async fn legacy_signal(
    client: &reqwest::Client,
    url: &str,
    headers: &HeaderMap,
    limit: Duration,
) -> bool {
    let probe = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "toolnexus", "version": env!("CARGO_PKG_VERSION")}}});
    let sent = client
        .post(url)
        .headers(headers.clone())
        .header(ACCEPT, "application/json, text/event-stream")
        .json(&probe)
        .timeout(limit)
        .send()
        .await;
    sent.is_ok_and(|r| r.status().is_client_error())
}
