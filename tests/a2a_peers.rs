//! Interoperability with the real A2A SDKs, both directions: the Python `a2a-sdk` 1.x and
//! the JavaScript `@a2a-js/sdk` 1.x clients call a toolkit we serve (a completed and a
//! failed task), and our outbound tools call an agent written with each SDK's server side
//! (one task completes, one fails, one never finishes: a timeout, then a `CancelTask` the
//! agent sees). The peer programs are in `tests/peers/a2a/`; `.ci/run` installs the SDKs.
//! Locally a missing SDK skips the test with a `SKIPPED` line; in CI it fails.

mod a2a_support;

use std::time::Duration;

use a2a_support::{PeerProcess, Served, node_sdk, peers_dir, python_sdk, run_client};
use serde_json::json;
use toolnexus::a2a::{A2aConfig, Agent, AgentOptions, Dialect};
use toolnexus::client::Client;
use toolnexus::client::Style;
use toolnexus::skill::SkillDef;
use toolnexus::{ToolContext, Toolkit, ToolkitOptions};
use toolnexus_mock::{MockModel, Scenario};

/// Our agent with one skill on the embedded model; with `key` the model requires that API
/// key and the client sends another, so every run fails.
async fn our_agent(key: Option<&str>) -> (MockModel, Served) {
    let model = match key {
        Some(key) => MockModel::start_with_api_key("127.0.0.1:0", Scenario::Planner, key).await,
        None => MockModel::start("127.0.0.1:0", Scenario::Planner).await,
    }
    .unwrap();
    let client = Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("sk-peer-test")
        .retries(0)
        .build()
        .unwrap();
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .builtins(false)
            .skill(SkillDef::new("pdf-tools", "Use pdftotext.").with_description("Read PDFs")),
    )
    .await
    .unwrap();
    let served = Served::start(&tk, client, A2aConfig::default()).await;
    (model, served)
}

async fn sdk_client_against_our_agent(program: &str, client_script: &str) {
    let script = peers_dir().join(client_script).display().to_string();
    let (_model, ok) = our_agent(None).await;
    let got = run_client(
        program,
        vec![script.clone(), ok.url.clone(), "hello from the SDK".into()],
    )
    .await;
    assert_eq!(
        got,
        json!({"card": {"name": "toolnexus-agent", "skills": ["pdf-tools"]},
               "submitted": "TASK_STATE_SUBMITTED", "state": "TASK_STATE_COMPLETED",
               "text": "You said: hello from the SDK", "status": ""})
    );

    let (_model, failing) = our_agent(Some("another-key")).await;
    let got = run_client(
        program,
        vec![script, failing.url.clone(), "this run fails".into()],
    )
    .await;
    assert_eq!(
        got,
        json!({"card": {"name": "toolnexus-agent", "skills": ["pdf-tools"]},
               "submitted": "TASK_STATE_SUBMITTED", "state": "TASK_STATE_FAILED",
               "text": "", "status": "LLM 401: Incorrect API key provided."})
    );
}

#[tokio::test]
async fn python_sdk_client_calls_our_agent() {
    let Some(python) = python_sdk() else { return };
    sdk_client_against_our_agent(&python, "py_client.py").await;
}

#[tokio::test]
async fn js_sdk_client_calls_our_agent() {
    let Some(node) = node_sdk() else { return };
    sdk_client_against_our_agent(&node, "js_client.mjs").await;
}

async fn our_tools_against_an_sdk_agent(
    program: &str,
    agent_script: &str,
    name: &str,
    prefix: &str,
    who: &str,
) {
    let script = peers_dir().join(agent_script).display().to_string();
    let (mut peer, url) = PeerProcess::start(program, &[&script]).await;
    let options = AgentOptions::default()
        .poll_every(Duration::from_millis(50))
        .timeout(Duration::from_millis(1500));
    let agent = Agent::resolve(format!("{url}/.well-known/agent-card.json"), options)
        .await
        .unwrap();
    assert_eq!((agent.name(), agent.dialect()), (name, Dialect::V1));
    let tools = agent.tools();
    assert_eq!(
        tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
        [format!("{name}_echo").replace(' ', "_")]
    );
    let tool = &tools[0];
    assert_eq!(tool.description(), "Echoes the task");

    let r = tool
        .execute(json!({"task": "hello there"}), ToolContext::default())
        .await;
    assert_eq!(
        (r.output.as_str(), r.is_error),
        (format!("{prefix} echo: hello there").as_str(), false)
    );
    let meta = r.metadata.clone().unwrap();
    assert_eq!(
        (&meta["agent"], &meta["state"]),
        (&json!(name), &json!("completed"))
    );

    let r = tool
        .execute(json!({"task": "fail please"}), ToolContext::default())
        .await;
    let id = r.metadata.as_ref().unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        r.output,
        format!("A2A task {id} failed: the {who} agent failed on purpose")
    );
    assert!(r.is_error);

    let r = tool
        .execute(json!({"task": "hang forever"}), ToolContext::default())
        .await;
    let meta = r.metadata.clone().unwrap();
    let id = meta["taskId"].as_str().unwrap().to_owned();
    assert_eq!(
        r.output,
        format!("A2A task {id} timed out after 1500ms (state=working)")
    );
    assert_eq!(meta["state"], "working");
    // The agent saw our CancelTask for exactly that task.
    assert_eq!(peer.expect_line("CANCEL ").await, format!("CANCEL {id}"));
}

#[tokio::test]
async fn our_tools_call_a_python_sdk_agent() {
    let Some(python) = python_sdk() else { return };
    our_tools_against_an_sdk_agent(&python, "py_agent.py", "py echo agent", "py", "Python").await;
}

#[tokio::test]
async fn our_tools_call_a_js_sdk_agent() {
    let Some(node) = node_sdk() else { return };
    our_tools_against_an_sdk_agent(&node, "js_agent.mjs", "js echo agent", "js", "JS").await;
}
