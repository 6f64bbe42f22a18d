//! A scripted provider on 127.0.0.1 for the client tests: a tokio TcpListener that records
//! every request (path, headers, body) and answers from a script, each response in ONE
//! write with TCP_NODELAY, one request per connection.
#![allow(dead_code)] // each test binary uses a different subset

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One scripted response.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Wait this long before answering (timeout/cancel tests).
    pub delay: Option<Duration>,
}

impl Reply {
    pub fn json(v: Value) -> Self {
        Self::status(200, &v.to_string()).header("content-type", "application/json")
    }
    /// An SSE body from `data:` payloads (each a JSON value or `[DONE]`).
    pub fn sse(events: &[(Option<&str>, String)]) -> Self {
        let mut body = String::new();
        for (name, data) in events {
            if let Some(n) = name {
                body.push_str(&format!("event: {n}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Self::status(200, &body).header("content-type", "text/event-stream")
    }
    /// An OpenAI streaming body: each chunk as a `data:` event, then `data: [DONE]`.
    pub fn openai_sse(chunks: impl IntoIterator<Item = Value>) -> Self {
        let mut events: Vec<(Option<&str>, String)> =
            chunks.into_iter().map(|c| (None, c.to_string())).collect();
        events.push((None, "[DONE]".into()));
        Self::sse(&events)
    }
    pub fn status(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
            delay: None,
        }
    }
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_owned(), v.to_owned()));
        self
    }
    pub fn status_code(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
    pub fn delayed(mut self, d: Duration) -> Self {
        self.delay = Some(d);
        self
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct Mock {
    pub base: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

impl Mock {
    pub async fn start(script: Vec<Reply>) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
        let rec = recorded.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let rec = rec.clone();
                let script = script.clone();
                tokio::spawn(async move {
                    sock.set_nodelay(true).ok();
                    let Some(req) = read_request(&mut sock).await else {
                        return;
                    };
                    rec.lock().unwrap().push(req);
                    let reply = script
                        .lock()
                        .unwrap()
                        .pop_front()
                        .unwrap_or_else(|| Reply::status(500, "script exhausted"));
                    if let Some(d) = reply.delay {
                        tokio::time::sleep(d).await;
                    }
                    let mut out = format!(
                        "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                        reply.status,
                        reply.body.len()
                    );
                    for (k, v) in &reply.headers {
                        out.push_str(&format!("{k}: {v}\r\n"));
                    }
                    out.push_str("\r\n");
                    out.push_str(&reply.body);
                    let _ = sock.write_all(out.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Mock { base, recorded }
    }

    /// A mock answering each request with the next of `bodies` as JSON.
    pub async fn json(bodies: impl IntoIterator<Item = Value>) -> Mock {
        Self::start(bodies.into_iter().map(Reply::json).collect()).await
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }

    /// The request bodies, in arrival order.
    pub fn bodies(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.body).collect()
    }

    /// The `i`th request body, parsed.
    pub fn json_body(&self, i: usize) -> Value {
        serde_json::from_str(&self.bodies()[i]).unwrap()
    }
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        path,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}

pub mod python_bodies;

use futures::StreamExt;
use serde_json::json;
use toolnexus::client::{Client, RunOptions, StreamEvent};
use toolnexus::{CancellationToken, Tool, ToolContext, ToolResult, Toolkit};

/// `add` and `echo`, the tools of the captured Python scenarios. Both wait on `barrier`
/// (when given), so a sequential loop would never get past the first call.
pub fn toolkit(barrier: Option<Arc<tokio::sync::Barrier>>) -> Toolkit {
    let b1 = barrier.clone();
    let add = Tool::new("add", move |args: Value, _: ToolContext| {
        let b = b1.clone();
        async move {
            if let Some(b) = b {
                b.wait().await;
            }
            ToolResult::success(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))
        }
    })
    .with_description("Add two numbers")
    .with_schema(json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}));
    let echo = Tool::new("echo", move |args: Value, _: ToolContext| {
        let b = barrier.clone();
        async move {
            if let Some(b) = b {
                b.wait().await;
            }
            ToolResult::success(format!("echo:{}", args["text"].as_str().unwrap_or("")))
        }
    })
    .with_description("Echo text")
    .with_schema(json!({"type":"object","properties":{"text":{"type":"string"}}}));
    Toolkit::new([add, echo])
}

pub fn openai_calls(calls: &[(&str, &str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    json!({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":calls}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})
}

pub fn openai_text(text: &str) -> Value {
    json!({"choices":[{"message":{"role":"assistant","content":text}}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}})
}

pub fn anthropic_calls(calls: &[(&str, &str, Value)]) -> Value {
    let mut content = vec![json!({"type":"text","text":"Working."})];
    content.extend(
        calls
            .iter()
            .map(|(id, name, input)| json!({"type":"tool_use","id":id,"name":name,"input":input})),
    );
    json!({"content":content,"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}})
}

pub fn anthropic_text(text: &str) -> Value {
    json!({"content":[{"type":"text","text":text}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":3}})
}

pub fn client(style: &str, base: &str) -> toolnexus::client::ClientBuilder {
    Client::builder()
        .base_url(base)
        .style(style.parse().expect("openai or anthropic"))
        .model(if style == "openai" {
            "gpt-test"
        } else {
            "claude-test"
        })
        .api_key("sk-test-key")
        .retry_base(Duration::from_millis(1))
}

/// How long one run may take before the test counts it as hung.
pub const BOUND: Duration = Duration::from_secs(10);

/// `fut`'s output; a hang past `BOUND` fails the test instead of stalling it.
pub async fn bounded<T>(fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, fut).await.expect("done within BOUND")
}

/// Every event of one streamed run over `tk`, each unwrapped, within `BOUND`.
pub async fn stream_events(client: &Client, prompt: &str, tk: &Toolkit) -> Vec<StreamEvent> {
    bounded(
        client
            .stream(prompt, RunOptions::new(tk))
            .map(|e| e.unwrap())
            .collect(),
    )
    .await
}

/// A token that cancels itself after `delay`, to abort a call in flight.
pub fn cancel_after(delay: Duration) -> CancellationToken {
    let token = CancellationToken::new();
    let trigger = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        trigger.cancel();
    });
    token
}
