//! One transport type for every way of reaching a server (a child's stdio, streamable HTTP,
//! legacy HTTP+SSE). rmcp's session engine is generic over its transport, so with one type it
//! is compiled once rather than once per transport: about 80 KB less machine code, which a
//! process keeps resident (BENCHMARKS.md, "Where our resident memory goes").

use std::io;

use futures::future::Either;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use tokio::process::{ChildStdin, ChildStdout};

use super::sse::Sse;
use super::stdio::Stdio;

/// The transport of one session.
pub(super) enum Wire {
    Stdio(Stdio<ChildStdout, ChildStdin>),
    Streamable(StreamableHttpClientTransport<reqwest::Client>),
    Sse(Sse),
}

impl Transport<RoleClient> for Wire {
    type Error = io::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = io::Result<()>> + Send + 'static {
        // Each transport does its synchronous part (registering a call, building the request)
        // now, as it would unwrapped; the future returned awaits the one made.
        match self {
            Self::Stdio(t) => Either::Left(t.send(item)),
            Self::Streamable(t) => {
                let sent = t.send(item);
                Either::Right(Either::Left(async move { sent.await.map_err(io::Error::other) }))
            }
            Self::Sse(t) => Either::Right(Either::Right(t.send(item))),
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        match self {
            Self::Stdio(t) => t.receive().await,
            Self::Streamable(t) => t.receive().await,
            Self::Sse(t) => t.receive().await,
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        match self {
            Self::Stdio(t) => t.close().await,
            Self::Streamable(t) => t.close().await.map_err(io::Error::other),
            Self::Sse(t) => t.close().await,
        }
    }
}
