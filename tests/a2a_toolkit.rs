//! A2A agents in a toolkit (SPEC §7A, §4): `ToolkitOptions::agent`, the config file's
//! `agents` block with MCP's enabled precedence, isolation of an agent that cannot be
//! resolved (a `failed` status, never a build error), the assembly order, and
//! `Toolkit::add_agent` on a built toolkit.

mod a2a_support;

use std::sync::Arc;
use std::time::Duration;

use a2a_support::{Peer, Script, ok, spec_card};
use serde_json::{Value, json};
use toolnexus::a2a::{AgentOptions, AgentStatus};
use toolnexus::{Tool, ToolContext, ToolResult, ToolSource, Toolkit, ToolkitOptions};

/// Completes every task at once with "done: <text>".
fn instant() -> Script {
    Arc::new(|_, b| {
        let text = b
            .pointer("/params/message/parts/0/text")
            .and_then(Value::as_str)
            .unwrap_or("");
        ok(
            b,
            json!({"id": "t", "status": {"state": "completed"},
            "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": format!("done: {text}")}]}]}),
        )
    })
}

#[tokio::test]
async fn agents_from_options_and_config_with_isolation_and_precedence() {
    let travel = Peer::start(spec_card(json!([{"id": "book"}, {"id": "cancel"}])), instant()).await;
    let mut weather_card = spec_card(json!([{"id": "forecast", "description": "Forecasts"}]));
    weather_card["name"] = json!("weather");
    let weather = Peer::start(weather_card, instant()).await;
    // A host tool named like an agent tool comes later in the order: the agent's wins.
    let shadow = Tool::new("weather_forecast", |_, _| async { ToolResult::success("host") });
    let config = json!({"agents": {
        "travel": {"card": travel.card_url(), "pollEvery": 20},
        "off": {"card": travel.card_url(), "enabled": true, "disabled": true},
        "down": {"card": "http://127.0.0.1:1/.well-known/agent-card.json", "timeout": 2000}
    }});
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .builtins(false)
            .config(config)
            .agent(weather.card_url(), AgentOptions::default())
            .extra_tool(shadow),
    )
    .await
    .unwrap();
    assert_eq!(
        tk.tool_names(),
        ["Travel_Agent_book", "Travel_Agent_cancel", "weather_forecast"]
    );
    assert_eq!(tk.get("weather_forecast").unwrap().source(), ToolSource::A2a);
    assert_eq!(tk.get("weather_forecast").unwrap().description(), "Forecasts");

    let status = tk.agent_status();
    assert_eq!(status["travel"], AgentStatus::Connected);
    assert_eq!(status["off"], AgentStatus::Disabled);
    assert_eq!(status[&weather.card_url()], AgentStatus::Connected);
    let reason = status["down"].reason().unwrap();
    assert!(
        reason.starts_with("cannot fetch agent card http://127.0.0.1:1/.well-known/agent-card.json: "),
        "{reason}"
    );
    assert!(reason.contains("Connection refused"), "{reason}");
    assert_eq!(status.len(), 4);
    // The disabled entry was never fetched: the travel card was read once.
    assert_eq!(travel.card_headers().len(), 1);

    let r = tk
        .execute(
            "Travel_Agent_book",
            json!({"task": "Rome"}),
            ToolContext::default(),
        )
        .await;
    assert_eq!((r.output.as_str(), r.is_error), ("done: Rome", false));
}

#[tokio::test]
async fn a_malformed_agents_block_is_a_build_error_naming_the_entry() {
    let err = Toolkit::build(
        ToolkitOptions::default()
            .builtins(false)
            .config(json!({"agents": {"travel": {"card": "http://x/c", "headers": {"Authorization": 1}}}})),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed config <value>: agents.travel: `headers.Authorization` must be a string"
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    std::fs::write(
        &file,
        r#"{"agents": {"a": {"card": "http://x/c", "pollEvery": -5}}}"#,
    )
    .unwrap();
    let err = Toolkit::build(ToolkitOptions::default().builtins(false).config(file.as_path()))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "malformed config {}: agents.a: `pollEvery` must be a positive number of milliseconds",
            file.display()
        )
    );
}

#[tokio::test]
async fn add_agent_extends_a_built_toolkit() {
    let peer = Peer::start(spec_card(json!([{"id": "book"}])), instant()).await;
    let mut tk = Toolkit::build(ToolkitOptions::default().builtins(false))
        .await
        .unwrap();
    assert!(tk.is_empty());
    let options = AgentOptions::default().poll_every(Duration::from_millis(20));
    let added = tk.add_agent(peer.card_url(), options.clone()).await.unwrap();
    assert_eq!(added, ["Travel_Agent_book"]);
    assert_eq!(tk.tool_names(), ["Travel_Agent_book"]);
    assert_eq!(tk.agent_status()[&peer.card_url()], AgentStatus::Connected);
    // The same agent again: its names are taken, nothing is replaced.
    assert!(
        tk.add_agent(peer.card_url(), options.clone())
            .await
            .unwrap()
            .is_empty()
    );
    let r = tk
        .execute(
            "Travel_Agent_book",
            json!({"task": "Oslo"}),
            ToolContext::default(),
        )
        .await;
    assert_eq!(r.output, "done: Oslo");

    let down = "http://127.0.0.1:1/.well-known/agent-card.json";
    let err = tk.add_agent(down, options).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("cannot fetch agent card {down}: ")),
        "{err}"
    );
    assert_eq!(tk.agent_status()[down].as_str(), "failed");
    assert_eq!(tk.tool_names(), ["Travel_Agent_book"]);
}
