//! `client.stream(…)`: the agent loop as a stream of events — text deltas, each tool call
//! and its result, usage, and `Done` with the final result — against the embedded mock model
//! on 127.0.0.1 (which streams real OpenAI SSE).
//!
//! Run: `cargo run --example streaming`

mod support;

use futures::StreamExt;
use toolnexus::client::Style;
use toolnexus::client::{RunOptions, RunStatus, StreamEvent};
use toolnexus::{tool, toolkit};

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
    // The embedded mock model on 127.0.0.1 and an OpenAI-style client of it (examples/support).
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let tk = toolkit![get_weather, add];

    let prompt = r#"get_weather {"city":"Paris"} then add {"a":2,"b":3}"#;
    let mut events = Box::pin(client.stream(prompt, RunOptions::new(&tk)));
    let mut kinds = Vec::new();
    let mut streamed = String::new();
    let mut done = None;
    while let Some(event) = events.next().await {
        match event? {
            StreamEvent::Text { delta } => {
                println!("text      {delta:?}");
                streamed.push_str(&delta);
                kinds.push("text");
            }
            StreamEvent::ToolCall { id, name, args } => {
                println!("tool_call {id} {name} {args}");
                kinds.push("tool_call");
            }
            StreamEvent::ToolResult {
                id,
                name,
                output,
                is_error,
            } => {
                println!("result    {id} {name} -> {output:?} (error: {is_error})");
                kinds.push("tool_result");
            }
            StreamEvent::Progress { name, progress, .. } => {
                println!("progress  {name} {}", progress.progress);
                kinds.push("progress");
            }
            StreamEvent::Pending { request } => {
                println!("pending   {}", request.prompt);
                kinds.push("pending");
            }
            StreamEvent::Usage { usage } => {
                println!("usage     {usage:?}");
                kinds.push("usage");
            }
            StreamEvent::Done { result } => {
                println!("done      status={:?} turns={}", result.status, result.turns);
                kinds.push("done");
                done = Some(result);
            }
        }
    }
    let result = done.ok_or("the stream ended without a Done event")?;
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.turns, 3);
    assert_eq!(
        result.text,
        "Here is what the tools returned:\n- get_weather: Sunny, 22C in Paris\n- add: 5"
    );
    // The text deltas add up to the final answer.
    assert_eq!(streamed, result.text);
    // Each tool call is announced before its result; Done comes last.
    kinds.dedup();
    println!("event kinds: {kinds:?}");
    assert_eq!(
        kinds,
        [
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
            "text",
            "usage",
            "done"
        ]
    );
    Ok(())
}
