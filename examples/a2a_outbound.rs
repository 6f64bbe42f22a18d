//! Remote A2A agents as tools (SPEC §7A). A small "remote" agent — a toolkit served as an
//! A2A agent on 127.0.0.1, standing in for one across the network — is named in a config's
//! `agents` block beside one that is down. The toolkit gets one tool per skill of the live
//! agent (`sanitize(card.name) + "_" + skill id`), the dead one is isolated in
//! `agent_status()`, a call submits a task and polls it to the end, and the embedded scripted
//! model calls the agent's tool like any other. A call that outlives its budget is a timeout,
//! and the remote task is cancelled.
//!
//! Run: `cargo run --example a2a_outbound`

mod support;

use std::time::Duration;

use serde_json::json;
use toolnexus::a2a::{A2aConfig, AgentOptions, AgentStatus};
use toolnexus::client::Style;
use toolnexus::serve::{A2aProfile, ServeOptions, serve};
use toolnexus::{ToolContext, Toolkit, ToolkitOptions, tool, toolkit};

/// Translate a phrase into French.
#[tool]
async fn translate(text: String) -> String {
    match text.as_str() {
        "good morning" => "bonjour".into(),
        other => format!("(no translation for {other:?})"),
    }
}

/// Think for a long time.
#[tool]
async fn ponder() -> String {
    tokio::time::sleep(Duration::from_secs(600)).await;
    "42".into()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The "remote" agent: skills on its card, its own model and tools behind it.
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let remote_tk = Toolkit::build(
        ToolkitOptions::default()
            .builtins(false)
            .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills"))
            .extra_tools(toolkit![translate, ponder].tools().cloned()),
    )
    .await?;
    let config = A2aConfig {
        name: Some("Polyglot".into()),
        ..A2aConfig::default()
    };
    let options = ServeOptions {
        a2a: Some(A2aProfile::new(client.clone(), config)),
        ..ServeOptions::default()
    };
    let served = serve(&remote_tk, "127.0.0.1:0", options).await?;
    let remote = served.a2a().expect("the A2A profile is mounted").clone();
    let card = format!("{}/.well-known/agent-card.json", served.url());

    // Our toolkit: the agents block of a config file, one agent down.
    let tk = Toolkit::build(ToolkitOptions::default().builtins(false).config(json!({"agents": {
        "polyglot": {"card": card, "pollEvery": 20, "headers": {"Authorization": "Bearer ${POLYGLOT_TOKEN}"}},
        "offline": {"card": "http://127.0.0.1:1/.well-known/agent-card.json", "timeout": 2000}
    }})))
    .await?;
    println!("tools: {:?}", tk.tool_names());
    for (id, status) in tk.agent_status() {
        println!(
            "agent_status[{id}] = {status}{}",
            status.reason().map(|r| format!(" ({r})")).unwrap_or_default()
        );
    }
    assert_eq!(tk.tool_names(), ["Polyglot_hello-world"]);
    assert_eq!(tk.agent_status()["polyglot"], AgentStatus::Connected);
    assert_eq!(tk.agent_status()["offline"].as_str(), "failed");

    // A call: SendMessage, then GetTask until the remote task ends.
    let r = tk
        .execute(
            "Polyglot_hello-world",
            json!({"task": r#"translate {"text":"good morning"}"#}),
            ToolContext::default(),
        )
        .await;
    println!("Polyglot_hello-world -> {}", r.to_json());
    assert_eq!(r.output, "Here is what the tools returned:\n- translate: bonjour");
    let meta = r.metadata.as_ref().unwrap();
    assert_eq!(
        (&meta["agent"], &meta["state"]),
        (&json!("Polyglot"), &json!("completed"))
    );

    // The model calls the agent's tool like any other (the planner names it by suffix).
    let result = client.run(r#"hello-world {"task":"say hi"}"#, &tk).await?;
    println!("model: {:?}", result.text);
    assert_eq!(result.tool_calls[0].name, "Polyglot_hello-world");
    assert_eq!(result.tool_calls[0].output, "You said: say hi");

    // A task that outlives its budget: a timeout, and the remote task is cancelled.
    let mut impatient = Toolkit::default();
    let options = AgentOptions::default()
        .timeout(Duration::from_millis(300))
        .poll_every(Duration::from_millis(20));
    impatient.add_agent(&card, options).await?;
    let r = impatient
        .execute(
            "Polyglot_hello-world",
            json!({"task": "ponder"}),
            ToolContext::default(),
        )
        .await;
    println!("with a 300 ms budget -> {}", r.output);
    let id = r.metadata.as_ref().unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        r.output,
        format!("A2A task {id} timed out after 300ms (state=working)")
    );
    for _ in 0..100 {
        if remote
            .store()
            .get(&id)
            .await?
            .is_some_and(|t| t.status.state.as_str() == "canceled")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let remote_task = remote.store().get(&id).await?.unwrap();
    println!("the remote task is now {}", remote_task.status.state);
    assert_eq!(remote_task.status.state.as_str(), "canceled");
    tk.close().await;
    served.stop().await;
    Ok(())
}
