//! `serve(agent)` (SPEC §7D): an agent served over A2A on 127.0.0.1 and called by this
//! crate's own A2A client, its run on the embedded scripted model.

use std::time::Duration;

use toolnexus::a2a::{A2aConfig, Agent as RemoteAgent, AgentOptions};
use toolnexus::agents::{AgentRuntime, agent};
use toolnexus::client::{Client, Style};
use toolnexus::serve::ServeOptions;
use toolnexus::{ToolContext, tool};
use toolnexus_mock::{MockModel, Scenario};

/// Look a term up.
#[tool]
fn lookup(q: String) -> String {
    format!("docs({q})")
}

#[tokio::test]
async fn a_served_agent_answers_a_send_message_with_its_runs_final_text() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let rt = AgentRuntime::builder(
        Client::builder()
            .base_url(model.base_url())
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("k"),
    );
    let explore = agent("explore", "read-only research").uses([lookup::tool()]);
    let served = explore
        .serve(rt, A2aConfig::default(), "127.0.0.1:0", ServeOptions::default())
        .await
        .unwrap();
    let card = served.a2a().unwrap().card();
    assert_eq!(card.skills[0].description, "read-only research");
    assert_eq!(card.name, "explore");
    let base = served.url().to_owned();

    let remote = RemoteAgent::resolve(
        format!("{base}/.well-known/agent-card.json"),
        AgentOptions::default().poll_every(Duration::from_millis(10)),
    )
    .await
    .unwrap();
    assert_eq!(remote.name(), "explore");
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        remote.send(r#"lookup {"q":"cache"}"#, ToolContext::default()),
    )
    .await
    .unwrap();
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        r.output,
        "Here is what the tools returned:\n- lookup: docs(cache)"
    );
    served.stop().await;
}
