//! The benchmark peer: the three tools every toolnexus port's benchmark discovers over
//! stdio (`get_weather`, `add`, `echo`), with the same schemas and answers, so a run
//! measures the client and not the server.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};

/// Serves `get_weather`, `add` and `echo`.
#[derive(Clone, Copy, Debug, Default)]
pub struct BenchServer;

impl ServerHandler for BenchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new("toolnexus-bench-tools", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = json!([
            {"name": "get_weather", "description": "Get the current weather for a city.",
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            {"name": "add", "description": "Add two integers.",
             "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]}},
            {"name": "echo", "description": "Echo the given text back.",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
        ]);
        let tools =
            serde_json::from_value(tools).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let text = match request.name.as_ref() {
            "get_weather" => {
                let city = args.get("city").and_then(Value::as_str).unwrap_or_default();
                format!("The weather in {city} is Sunny, 22C.")
            }
            "add" => {
                let n = |k: &str| args.get(k).and_then(Value::as_i64).unwrap_or(0);
                (n("a") + n("b")).to_string()
            }
            "echo" => args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            name => return Err(ErrorData::invalid_params(format!("unknown tool: {name}"), None)),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Serve [`BenchServer`] on this process's stdin/stdout until the client goes away (what
/// `toolnexus-testserver bench` runs; also callable from any binary that re-executes itself
/// as its own MCP server).
pub fn serve_stdio() {
    use rmcp::ServiceExt as _;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        if let Ok(running) = BenchServer.serve(crate::stdio()).await {
            let _ = running.waiting().await;
        }
    });
}
