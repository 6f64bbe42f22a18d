//! MCP both ways: one toolkit is served as an MCP server (streamable HTTP on 127.0.0.1,
//! the `serve` feature, behind a bearer token), and a second toolkit connects to it from an
//! ordinary MCP config — `{"mcpServers": {"gw": {"url": "http://…/mcp", "headers":
//! {"Authorization": "Bearer …"}}}}` — so its tools arrive prefixed `gw_`.
//! A server that cannot be reached is isolated and reported in `mcp_status()`. Finally the
//! embedded mock model calls a tool through the gateway.
//!
//! Run: `cargo run --example mcp_gateway`

mod support;

use serde_json::json;
use toolnexus::client::Style;
use toolnexus::mcp::McpStatus;
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::serve::{AuthToken, ServeOptions, serve};
use toolnexus::{ToolContext, Toolkit, ToolkitOptions, tool, toolkit};

/// Look up the current weather for a city.
#[tool]
async fn get_weather(city: String) -> String {
    format!("Sunny, 22C in {city}")
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The gateway: these native tools over MCP at http://127.0.0.1:PORT/mcp, for callers
    // that present the token (a real deployment reads it from its environment).
    let token = "example-token-7f3a9c";
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        auth_token: Some(AuthToken::new(token)),
        ..ServeOptions::default()
    };
    let handle = serve(&toolkit![get_weather, add], "127.0.0.1:0", options).await?;
    let url = handle.mcp_url().unwrap_or_default();
    println!("serving MCP at {url}");

    // Without the token, the gateway answers 401.
    let denied = reqwest::Client::new().post(&url).send().await?;
    println!("no token -> {}", denied.status());
    assert_eq!(denied.status(), 401);

    // A client toolkit built from an MCP config; "down" points at a closed port.
    let config = json!({"mcpServers": {
        "gw": {"url": url, "headers": {"Authorization": format!("Bearer {token}")}},
        "down": {"url": "http://127.0.0.1:1/mcp", "timeout": 2000}
    }});
    let tk = Toolkit::build(ToolkitOptions::default().config(config).builtins(false)).await?;
    println!("tools: {:?}", tk.tool_names());
    for (server, status) in tk.mcp_status() {
        match status.reason() {
            Some(reason) => println!("mcp_status[{server}] = {status} ({reason})"),
            None => println!("mcp_status[{server}] = {status}"),
        }
    }
    assert_eq!(tk.tool_names(), ["gw_add", "gw_get_weather"]);
    assert_eq!(tk.mcp_status()["gw"], McpStatus::Connected);
    assert_eq!(tk.mcp_status()["down"].as_str(), "failed");

    let r = tk
        .execute("gw_add", json!({"a": 2, "b": 40}), ToolContext::default())
        .await;
    println!("gw_add -> {}", r.to_json());
    assert_eq!(
        r.to_json(),
        r#"{"output":"42","isError":false,"metadata":{"server":"gw"}}"#
    );
    // The served schema survives the trip: a bad argument still fails at the tool.
    let r = tk
        .execute("gw_add", json!({"a": "two", "b": 40}), ToolContext::default())
        .await;
    println!("gw_add (bad) -> {}", r.to_json());
    assert!(r.is_error);
    assert_eq!(
        r.output,
        "invalid arguments for tool \"add\": invalid type: string \"two\", expected i64 at field `a`"
    );

    // An agent run: the model names `get_weather`, which resolves to `gw_get_weather`.
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let result = client.run(r#"get_weather {"city":"Oslo"}"#, &tk).await?;
    println!("model: {:?}", result.text);
    assert_eq!(result.tool_calls[0].name, "gw_get_weather");
    assert_eq!(
        result.text,
        "Here is what the tools returned:\n- gw_get_weather: Sunny, 22C in Oslo"
    );

    tk.close().await;
    handle.stop().await;
    Ok(())
}
