//! A small MCP server with the exact edge cases toolnexus's MCP client must handle:
//! pagination, `structuredContent`, `isError`, names with `.`/`/`, images, `$schema`/`$defs`
//! schemas, a hang, a crash mid-call, elicitation, and process-tree probes.
//!
//! Usage: `toolnexus-testserver MODE [--page-size N] [--extra N] [--dup-cursor]` where MODE is
//! `stdio`, `bench` (the cross-port benchmark's `get_weather`/`add`/`echo` over stdio), `http ADDR` (prints `listening http://ADDR/mcp` on stdout), `hang-init` (reads
//! stdin, never answers) or `exit-init` (exits at once with status 3).

pub mod bench;

/// This process's stdin/stdout as an MCP transport. When they are pipes (how a client
/// starts a stdio server) they are driven by the runtime's reactor; tokio's `stdin()` and
/// `stdout()` hand every read and write to a blocking thread instead, two thread hand-offs
/// per message. Anything else (a terminal, a file) falls back to those.
pub fn stdio() -> (
    Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use tokio::net::unix::pipe;
        let reader = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Receiver::from_owned_fd);
        let writer = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Sender::from_owned_fd);
        if let (Ok(r), Ok(w)) = (reader, writer) {
            return (Box::new(r), Box::new(w));
        }
    }
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 1×1 transparent PNG.
pub const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// How the server lists its tools.
#[derive(Clone, Debug)]
pub struct Options {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Extra generated tools `extra_000…` to make the listing long.
    pub extra: usize,
    /// Always answer with the same `nextCursor` (a broken server).
    pub dup_cursor: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            page_size: 4,
            extra: 0,
            dup_cursor: false,
        }
    }
}

/// The server handler.
#[derive(Clone)]
pub struct TestServer {
    tools: Arc<Vec<Tool>>,
    options: Options,
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    serde_json::from_value(json!({"name": name, "description": description, "inputSchema": schema}))
        .expect("a valid tool definition")
}

fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

impl TestServer {
    /// A server with the fixed tools plus `options.extra` generated ones.
    pub fn new(options: Options) -> Self {
        let mut tools = vec![
            tool(
                "echo",
                "Echo the text back",
                obj(json!({"text": {"type": "string"}})),
            ),
            tool(
                "add",
                "Add two numbers (structured result)",
                obj(json!({"a": {"type": "number"}, "b": {"type": "number"}})),
            ),
            tool("fail", "Always fails", obj(json!({}))),
            tool("weird.name/with:chars", "A name providers reject", obj(json!({}))),
            tool("image", "Returns a 1x1 PNG", obj(json!({}))),
            tool("hang", "Never answers", obj(json!({}))),
            tool("crash", "Exits the process mid-call", obj(json!({}))),
            tool("pid", "This server's process id", obj(json!({}))),
            tool(
                "spawn_grandchild",
                "Starts `sleep 300` and returns its pid",
                obj(json!({})),
            ),
            tool(
                "env",
                "Reads an environment variable",
                obj(json!({"name": {"type": "string"}})),
            ),
            tool("cwd", "The working directory", obj(json!({}))),
            tool(
                "header",
                "Reads an HTTP request header (HTTP mode)",
                obj(json!({"name": {"type": "string"}})),
            ),
            tool("ask", "Elicits a city (form mode)", obj(json!({}))),
            tool("login", "Elicits a login (URL mode)", obj(json!({}))),
            tool(
                "defs",
                "A pydantic-style schema",
                json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {"point": {"$ref": "#/$defs/Point"}},
                    "required": ["point"],
                    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}}
                }),
            ),
        ];
        tools.extend((0..options.extra).map(|i| tool(&format!("extra_{i:03}"), "generated", obj(json!({})))));
        Self {
            tools: Arc::new(tools),
            options,
        }
    }
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s.into())])
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new("toolnexus-testserver", "0.1.0"))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) if self.options.dup_cursor => c.len(),
            Some(c) => c
                .parse()
                .map_err(|_| ErrorData::invalid_params("bad cursor", None))?,
        };
        let end = (start + self.options.page_size.max(1)).min(self.tools.len());
        let mut page = ListToolsResult::with_all_items(self.tools[start.min(end)..end].to_vec());
        page.next_cursor = if self.options.dup_cursor {
            Some("same".into())
        } else {
            (end < self.tools.len()).then(|| end.to_string())
        };
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => text(args.get("text").and_then(Value::as_str).unwrap_or_default()),
            "add" => {
                let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                let sum = n("a") + n("b");
                let mut r = text(format!("sum is {sum}"));
                r.structured_content = Some(json!({"sum": sum, "inputs": [n("a"), n("b")]}));
                r
            }
            "fail" => CallToolResult::error(vec![
                ContentBlock::text("something broke"),
                ContentBlock::text("details: none"),
            ]),
            "weird.name/with:chars" => text("weird ok"),
            "image" => CallToolResult::success(vec![ContentBlock::image(PNG_1X1, "image/png")]),
            "hang" => std::future::pending().await,
            "crash" => std::process::exit(3),
            "pid" => text(std::process::id().to_string()),
            "spawn_grandchild" => match std::process::Command::new("sleep").arg("300").spawn() {
                Ok(child) => text(child.id().to_string()),
                Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
            },
            "env" => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
                text(std::env::var(name).unwrap_or_else(|_| "<unset>".into()))
            }
            "cwd" => text(
                std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default(),
            ),
            "header" => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
                let value = context
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.headers.get(name))
                    .and_then(|v| v.to_str().ok());
                text(value.unwrap_or("<absent>"))
            }
            "ask" | "login" => elicit(&request.name, &context).await,
            "defs" => text(Value::Object(args).to_string()),
            name if name.starts_with("extra_") => text(name),
            name => return Err(ErrorData::invalid_params(format!("Unknown tool: {name}"), None)),
        };
        Ok(result.into())
    }
}

async fn elicit(tool: &str, context: &RequestContext<RoleServer>) -> CallToolResult {
    let advertised = context
        .peer
        .peer_info()
        .and_then(|info| info.capabilities.elicitation.clone())
        .is_some();
    if !advertised {
        return text("elicitation not advertised");
    }
    let params = if tool == "ask" {
        json!({"mode": "form", "message": "Which city?",
               "requestedSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}})
    } else {
        json!({"mode": "url", "message": "Log in to continue", "url": "https://login.example/authorize", "elicitationId": "elc-1"})
    };
    let params: ElicitRequestParams = serde_json::from_value(params).expect("valid elicitation params");
    match context.peer.create_elicitation(params).await {
        Ok(result) => text(serde_json::to_string(&result).unwrap_or_default()),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("elicitation failed: {e}"))]),
    }
}

fn parse_args(args: &[String]) -> Options {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        match a.as_str() {
            "--page-size" => o.page_size = num(),
            "--extra" => o.extra = num(),
            "--dup-cursor" => o.dup_cursor = true,
            _ => {}
        }
    }
    o
}

/// Serve `server` over streamable HTTP on `listener` at `/mcp` until the process ends.
pub async fn serve_http(listener: tokio::net::TcpListener, server: TestServer) {
    let service: StreamableHttpService<TestServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let _ = axum::serve(listener, router).await;
}

/// The binary's entry point (see the crate docs for the modes).
pub fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("stdio");
    if mode == "bench" {
        // The same single-threaded server the `bench` example re-executes itself as.
        bench::serve_stdio();
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        match mode {
            "stdio" => {
                let server = TestServer::new(parse_args(&args[1.min(args.len())..]));
                if let Ok(running) = server.serve(stdio()).await {
                    let _ = running.waiting().await;
                }
            }
            "http" => {
                let addr = args.get(1).map(String::as_str).unwrap_or("127.0.0.1:0");
                let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
                println!(
                    "listening http://{}/mcp",
                    listener.local_addr().expect("an address")
                );
                serve_http(listener, TestServer::new(parse_args(&args[2.min(args.len())..]))).await;
            }
            "hang-init" => {
                use tokio::io::AsyncReadExt;
                let mut sink = Vec::new();
                let _ = tokio::io::stdin().read_to_end(&mut sink).await;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            "exit-init" => std::process::exit(3),
            other => {
                eprintln!("unknown mode {other}");
                std::process::exit(2);
            }
        }
    });
}
