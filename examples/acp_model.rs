//! An ACP (Agent Client Protocol) agent as the model: the test agent in
//! `tests/peers/acp/agent.py`, written with the Python ACP SDK, answers the client's turns
//! over stdio. The loop, toolkit and conversation memory are the client's own.
//!
//! Needs a Python with `pip install agent-client-protocol==0.12.1` (`.ci/run` makes one in
//! `target/ci-venv`; `TOOLNEXUS_PYTHON` names another).
//!
//! Run: `cargo run --example acp_model`

use std::path::Path;
use std::time::Duration;

use toolnexus::Toolkit;
use toolnexus::acp::{self, AcpOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var("TOOLNEXUS_PYTHON")
        .unwrap_or_else(|_| root.join("target/ci-venv/bin/python").display().to_string());
    let agent_script = root.join("tests/peers/acp/agent.py");

    // Spawn the agent and open a session (initialize → session/new → session/set_mode).
    let agent = acp::load(
        AcpOptions::new(&python)
            .arg(agent_script.display().to_string())
            .mode("ask")
            .permission_timeout(Duration::from_secs(10)),
    )
    .await
    .map_err(|e| format!("{e} (is the ACP SDK installed for {python}?)"))?;
    println!("session: {}", agent.session_id());

    // The agent is the model of an ordinary client.
    let client = agent.client("acp-test-agent").build()?;
    let mut chat = client.conversation(&Toolkit::default());
    let first = chat.send("What is ACP?").await?;
    println!("turn 1: {}", first.text);
    // The agent also streamed a thought and tool narration: neither is in the reply.
    assert_eq!(first.text, "turn 1: What is ACP? (marker ok)");
    let second = chat.send("And MCP?").await?;
    println!("turn 2: {}", second.text);
    assert_eq!(second.text, "turn 2: And MCP? (marker ok)");

    // The agent asks permission mid-turn; the client answers at once with the first
    // option whose kind starts with `allow`.
    let r = client
        .run("edit a file, with permission", &Toolkit::default())
        .await?;
    println!("turn 3: {}", r.text);
    assert_eq!(r.text, "permission: allow-it");

    let who = client.run("whoami", &Toolkit::default()).await?;
    println!("turn 4: {}", who.text);
    assert!(who.text.contains(" mode=ask "));

    agent.close().await;
    assert!(!agent.is_alive());
    Ok(())
}
