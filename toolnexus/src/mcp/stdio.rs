//! The stdio transport to a child MCP server: newline-delimited JSON-RPC over its pipes, with
//! rmcp's protocol engine on top.
//!
//! rmcp's own `AsyncRwTransport` decodes every line as the untagged `ServerResult`, which
//! tries each earlier result shape — building a serde error message for every miss —
//! before it reaches `CallToolResult`: ~48 K instructions per tool call, more than the rest
//! of the call put together. This transport remembers which of its requests are
//! `tools/call` and decodes their responses straight into `CallToolResult`. Every other
//! line, and a call response that does not fit that shape, takes rmcp's decoding, so the
//! messages the service sees are the same.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcVersion2_0, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::child::{Line, LineReader};

/// A longer line is dropped (and logged) rather than buffered; the session stays up.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// Call ids still awaiting a response are forgotten past this many (a call cancelled by
/// its timeout is never answered); a forgotten call only loses the fast decoding.
const MAX_PENDING_CALLS: usize = 4096;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The JSON-RPC transport over a server's stdout (read) and stdin (write).
pub(super) struct Stdio<R, W> {
    /// The server's stdout; lines longer than [`MAX_LINE`] (lowered by tests) are dropped.
    read: LineReader<R>,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    /// Ids of our `tools/call` requests still awaiting their response.
    calls: Mutex<HashSet<RequestId>>,
}

impl<R: AsyncRead + Unpin, W> Stdio<R, W> {
    pub(super) fn new(read: R, write: W) -> Self {
        Stdio {
            read: LineReader::new(read, MAX_LINE),
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            calls: Mutex::default(),
        }
    }

    fn pending_calls(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        // A plain set of ids stays consistent even if a holder panicked.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One line to a message; `None` for a blank line or one that is not a message. Those
    /// are skipped and logged at debug: answering a malformed message could start an error
    /// storm with a noisy server.
    fn decode(&self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
        if line.trim_ascii().is_empty() {
            return None;
        }
        if let Some(msg) = self.call_response(line) {
            return Some(msg);
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
            Ok(msg) => {
                let answered = match &msg {
                    JsonRpcMessage::Response(r) => Some(&r.id),
                    JsonRpcMessage::Error(e) => e.id.as_ref(),
                    _ => None,
                };
                if let Some(id) = answered {
                    self.pending_calls().remove(id);
                }
                Some(msg)
            }
            Err(e) => {
                tracing::debug!("ignoring a message from the MCP server that does not parse: {e}");
                None
            }
        }
    }

    /// The fast path: a successful response to one of our `tools/call` requests.
    fn call_response(&self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Reply<'a> {
            #[allow(dead_code)] // checked by deserializing: it must be "2.0"
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId,
            #[serde(borrow)]
            result: &'a RawValue,
        }
        // With no call awaiting an answer (initialize, tools/list) the line is not scanned twice.
        if self.pending_calls().is_empty() {
            return None;
        }
        let reply: Reply = serde_json::from_slice(line).ok()?;
        if !self.pending_calls().remove(&reply.id) {
            return None;
        }
        let result = serde_json::from_str::<CallToolResult>(reply.result.get()).ok()?;
        Some(ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(result),
            reply.id,
        ))
    }
}

impl<R, W> Transport<RoleClient> for Stdio<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        if let JsonRpcMessage::Request(r) = &item
            && matches!(r.request, ClientRequest::CallToolRequest(_))
        {
            let mut calls = self.pending_calls();
            if calls.len() >= MAX_PENDING_CALLS {
                calls.clear();
            }
            calls.insert(r.id.clone());
        }
        let bytes = serde_json::to_vec(&item).map(|mut b| {
            b.push(b'\n');
            b
        });
        let write = Arc::clone(&self.write);
        async move {
            let bytes = bytes.map_err(std::io::Error::other)?;
            match write.lock().await.as_mut() {
                // One write per message: the child reads whole lines.
                Some(w) => {
                    w.write_all(&bytes).await?;
                    w.flush().await
                }
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                )),
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            match self.read.read_line().await {
                Line::Complete => {}
                Line::Oversized => {
                    let limit = self.read.max_line();
                    tracing::warn!("dropped a message from the MCP server longer than {limit} bytes");
                    continue;
                }
                Line::Eof => return None,
                Line::Failed(e) => {
                    tracing::warn!("reading from the MCP server failed: {e}");
                    return None;
                }
            }
            let msg = self.decode(self.read.line());
            if msg.is_some() {
                return msg;
            }
        }
    }

    async fn close(&mut self) -> std::io::Result<()> {
        // Dropping stdin is the EOF that tells a stdio server to exit.
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ListToolsRequest};
    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, DuplexStream, duplex};

    use super::*;

    /// A transport wired to an in-memory "server": what the test writes to `to_client`
    /// arrives as the server's stdout; what the transport sends can be read from `from_client`.
    fn wired() -> (Stdio<DuplexStream, DuplexStream>, DuplexStream, DuplexStream) {
        let (server_stdout, to_client) = duplex(1 << 16);
        let (client_stdin, from_client) = duplex(1 << 16);
        (Stdio::new(server_stdout, client_stdin), to_client, from_client)
    }

    fn call(id: i64) -> ClientJsonRpcMessage {
        let request = CallToolRequest::new(CallToolRequestParams::new("add"));
        ClientJsonRpcMessage::request(ClientRequest::CallToolRequest(request), RequestId::Number(id))
    }

    async fn receive_json(t: &mut Stdio<DuplexStream, DuplexStream>) -> Value {
        serde_json::to_value(t.receive().await.expect("a message")).unwrap()
    }

    #[tokio::test]
    async fn a_call_response_decodes_straight_to_call_tool_result_like_rmcp_would() {
        let (mut t, mut server, mut sent) = wired();
        t.send(call(7)).await.unwrap();
        let mut line = vec![0; 512];
        let n = sent.read(&mut line).await.unwrap();
        let request: Value = serde_json::from_slice(&line[..n]).unwrap();
        assert_eq!(
            request,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add"}})
        );
        assert!(line[..n].ends_with(b"}\n"), "one line per message");

        let reply =
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"4"}],"isError":false}}"#;
        server.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        let msg = t.receive().await.unwrap();
        let JsonRpcMessage::Response(r) = &msg else {
            panic!("{msg:?}")
        };
        assert!(matches!(&r.result, ServerResult::CallToolResult(c) if c.is_error == Some(false)));
        let rmcp: ServerJsonRpcMessage = serde_json::from_str(reply).unwrap();
        assert_eq!(
            serde_json::to_value(&msg).unwrap(),
            serde_json::to_value(&rmcp).unwrap()
        );
        assert!(t.pending_calls().is_empty(), "an answered call is forgotten");
    }

    #[tokio::test]
    async fn everything_else_takes_rmcps_decoding() {
        let (mut t, mut server, _sent) = wired();
        // A pending call answered with a shape that is not a call result: rmcp's reading.
        t.send(call(1)).await.unwrap();
        // A response to a request that was not a call.
        let list = ClientRequest::ListToolsRequest(ListToolsRequest::default());
        t.send(ClientJsonRpcMessage::request(list, RequestId::Number(2)))
            .await
            .unwrap();
        t.send(call(3)).await.unwrap();
        let lines = concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
            "\n",
        );
        server.write_all(lines.as_bytes()).await.unwrap();
        let msg = t.receive().await.unwrap();
        assert!(
            matches!(&msg, JsonRpcMessage::Response(r) if matches!(r.result, ServerResult::EmptyResult(_))),
            "{msg:?}"
        );
        let msg = t.receive().await.unwrap();
        assert!(
            matches!(&msg, JsonRpcMessage::Response(r) if matches!(r.result, ServerResult::ListToolsResult(_))),
            "{msg:?}"
        );
        assert_eq!(
            receive_json(&mut t).await,
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown tool: nope"}})
        );
        assert!(matches!(t.receive().await, Some(JsonRpcMessage::Notification(_))));
        assert!(
            t.pending_calls().is_empty(),
            "answered or failed calls are forgotten"
        );
    }

    #[tokio::test]
    async fn noise_is_skipped_and_an_overlong_line_dropped_without_ending_the_session() {
        let (mut t, mut server, _sent) = wired();
        t.read.set_max_line(64);
        t.send(call(5)).await.unwrap();
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{{\"pad\":\"{}\"}}}}",
            "a".repeat(200)
        );
        let lines = format!(
            "\n   \r\n{{ not json\nnot json at all\n{long}\n\u{feff}{}\r\n",
            r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#
        );
        server.write_all(lines.as_bytes()).await.unwrap();
        drop(server);
        let msg = t.receive().await.unwrap();
        assert!(
            matches!(&msg, JsonRpcMessage::Response(r) if r.id == RequestId::Number(5) && matches!(r.result, ServerResult::CallToolResult(_))),
            "{msg:?}"
        );
        assert!(t.receive().await.is_none(), "EOF ends the stream");
    }

    #[tokio::test]
    async fn lines_split_across_reads_are_reassembled_or_dropped_whole() {
        let (mut t, mut server, _sent) = wired();
        t.read.set_max_line(64);
        let reader = tokio::spawn(async move { t.receive().await });
        let long = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"pad":"{}"}}}}"#,
            "a".repeat(100)
        );
        let line = r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#;
        // Each piece is read on its own: the over-long line is dropped across two reads.
        for piece in [&long[..70], &long[70..], "\n", &line[..20], &line[20..], "\n"] {
            server.write_all(piece.as_bytes()).await.unwrap();
            tokio::task::yield_now().await;
        }
        let msg = reader.await.unwrap().unwrap();
        assert!(
            matches!(&msg, JsonRpcMessage::Response(r) if r.id == RequestId::Number(9)),
            "{msg:?}"
        );
    }

    #[tokio::test]
    async fn closing_ends_stdin_and_later_sends_fail() {
        let (mut t, _server, mut sent) = wired();
        t.close().await.unwrap();
        let mut rest = Vec::new();
        sent.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "the server sees EOF");
        let e = t.send(call(1)).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotConnected);
    }

    #[test]
    fn unanswered_calls_are_bounded() {
        let (mut t, _server, _sent) = wired();
        for id in 0..=MAX_PENDING_CALLS as i64 {
            // Only the bookkeeping matters here: the writes are never awaited.
            drop(t.send(call(id)));
        }
        assert_eq!(t.pending_calls().len(), 1);
    }
}
