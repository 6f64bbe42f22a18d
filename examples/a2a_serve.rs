//! A toolkit served as an A2A agent (SPEC §7B) next to its MCP profile on one listener: the
//! card lists the toolkit's skills (never its tools), `SendMessage` returns a `submitted`
//! task at once and the embedded scripted model fulfils it in the background, `GetTask`
//! polls it, `CancelTask` stops one, an A2A 1.0 caller gets the 1.0 shapes, and shutdown
//! records what could not finish.
//!
//! Run: `cargo run --example a2a_serve`

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::a2a::{A2aConfig, TaskEvent};
use toolnexus::client::Style;
use toolnexus::mcp::serve::McpServeConfig;
use toolnexus::serve::{A2aProfile, ServeOptions, serve};
use toolnexus::{Toolkit, ToolkitOptions, tool, toolkit};

/// Look an order up by id.
#[tool]
async fn lookup_order(id: String) -> String {
    format!("order {id}: shipped")
}

/// Wait for a parcel (takes a long time).
#[tool]
async fn wait_for_parcel() -> String {
    tokio::time::sleep(Duration::from_secs(600)).await;
    "arrived".into()
}

async fn rpc(base: &str, method: &str, params: Value, version: Option<&str>) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(v) = version {
        request = request.header("A2A-Version", v);
    }
    request.send().await.unwrap().json().await.unwrap()
}

async fn until(base: &str, id: &str, state: &str) -> Value {
    for _ in 0..200 {
        let task = rpc(base, "GetTask", json!({"id": id}), None).await["result"].clone();
        if task["status"]["state"] == state {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached {state}");
}

fn message(text: &str) -> Value {
    json!({"message": {"role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": text}]}})
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .builtins(false)
            .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/skills"))
            .extra_tools(toolkit![lookup_order, wait_for_parcel].tools().cloned()),
    )
    .await?;

    // One listener: the A2A routes and the MCP profile at /mcp.
    let config = A2aConfig {
        name: Some("order-desk".into()),
        on_task: Some(Arc::new(|e: &TaskEvent| {
            let (turns, tools) = e.result.as_ref().map_or((0, 0), |r| (r.turns, r.tool_call_count));
            println!(
                "on_task: {} {} ({turns} turns, {tools} tool calls, {:.1} ms)",
                e.id, e.state, e.ms
            );
        })),
        ..A2aConfig::default()
    };
    let options = ServeOptions {
        mcp: Some(McpServeConfig::default()),
        a2a: Some(A2aProfile::new(client, config)),
        ..ServeOptions::default()
    };
    let handle = serve(&tk, "127.0.0.1:0", options).await?;
    let base = handle.url().to_owned();
    let agent = handle.a2a().expect("the A2A profile is mounted").clone();
    println!("serving the A2A agent at {base}/ and MCP at {base}/mcp");

    let card: Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await?
        .json()
        .await?;
    println!("card: {card}");
    assert_eq!(card["name"], "order-desk");
    assert_eq!(card["skills"][0]["id"], "hello-world"); // skills, never raw tools
    assert_eq!(card["url"], format!("{base}/"));

    // Submit: the task comes back `submitted` at once, the model works in the background.
    let submitted = rpc(
        &base,
        "SendMessage",
        message(r#"lookup_order {"id":"A-17"}"#),
        None,
    )
    .await;
    println!("SendMessage -> {}", submitted["result"]);
    assert_eq!(submitted["result"]["status"]["state"], "submitted");
    let id = submitted["result"]["id"].as_str().unwrap().to_owned();
    let done = until(&base, &id, "completed").await;
    let text = done["artifacts"][0]["parts"][0]["text"].as_str().unwrap();
    println!("GetTask -> completed: {text:?}");
    assert_eq!(
        text,
        "Here is what the tools returned:\n- lookup_order: order A-17: shipped"
    );

    // A long task, cancelled while its tool call runs.
    let long = rpc(&base, "SendMessage", message("wait_for_parcel"), None).await;
    let long_id = long["result"]["id"].as_str().unwrap().to_owned();
    until(&base, &long_id, "working").await;
    let canceled = rpc(&base, "CancelTask", json!({"id": long_id}), None).await;
    println!("CancelTask -> {}", canceled["result"]["status"]);
    assert_eq!(canceled["result"]["status"]["state"], "canceled");

    // An A2A 1.0 caller (the a2a-sdk / @a2a-js/sdk dialect) that asks SendMessage to block.
    let v1 = json!({"message": {"role": "ROLE_USER", "messageId": "m-2", "parts": [{"text": "hello"}]}});
    let answer = rpc(&base, "SendMessage", v1, Some("1.0")).await;
    println!("SendMessage (A2A 1.0) -> {}", answer["result"]["task"]["status"]);
    assert_eq!(
        answer["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        answer["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "You said: hello"
    );

    // The JSON-RPC errors of SPEC §7B.
    let missing = rpc(&base, "GetTask", json!({"id": "no-such-task"}), None).await;
    assert_eq!(missing["error"]["code"], -32001);
    assert_eq!(
        rpc(&base, "tasks/list", json!({}), None).await["error"]["code"],
        -32601
    );

    // Shutdown: a task still running after the grace period is recorded `failed`.
    let last = rpc(&base, "SendMessage", message("wait_for_parcel"), None).await;
    let last_id = last["result"]["id"].as_str().unwrap().to_owned();
    until(&base, &last_id, "working").await;
    agent.shutdown(Duration::from_millis(200)).await;
    let failed = agent.store().get(&last_id).await?.unwrap();
    println!("after shutdown: {} {}", failed.status.state, failed.status_text());
    assert_eq!(
        failed.status_text(),
        "the agent shut down before the task finished"
    );
    handle.stop().await;
    tk.close().await;
    Ok(())
}
