//! `Client::translate`: hand in an OpenAI-shaped conversation and tool list, get exactly one
//! provider call in the client's style — here Anthropic Messages — and an OpenAI-shaped answer
//! back. Nothing executes: the caller owns the loop and runs the tools itself. The provider
//! is the embedded mock model on 127.0.0.1, which also speaks `/v1/messages`.
//!
//! Run: `cargo run --example translate`

mod support;

use serde_json::{Value, json};
use toolnexus::client::Style;
use toolnexus::client::translate::{Draft, FinishReason, TranslateRequest};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The embedded mock model on 127.0.0.1 and an Anthropic-style client of it (examples/support).
    let (_model, client) = support::mock_client(Style::Anthropic).await?;

    // What an OpenAI-speaking caller already has.
    let tools = vec![json!({"type": "function", "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    }})];
    let mut messages = vec![
        json!({"role": "system", "content": "Be terse."}),
        json!({"role": "user", "content": r#"get_weather {"city":"Paris"}"#}),
    ];
    let request = TranslateRequest::new(messages.clone()).tools(tools.clone());

    // The Anthropic body it becomes (the pure conversion translate uses).
    let body = Value::Object(Draft::new(Style::Anthropic, &request, None).body("mock-model"));
    println!("anthropic request body: {body}");
    assert_eq!(body["system"], "Be terse.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": r#"get_weather {"city":"Paris"}"#}])
    );
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["input_schema"],
        tools[0]["function"]["parameters"]
    );

    // Turn 1: the model asks for a tool, answered in OpenAI shape.
    let first = client.translate(request).await?;
    println!(
        "turn 1: finish={} tool_calls={}",
        first.finish_reason.as_str(),
        serde_json::to_string(&first.tool_calls_json())?
    );
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(first.text, "");
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].name, "get_weather");
    assert_eq!(first.tool_calls[0].arguments, r#"{"city":"Paris"}"#);

    // The caller runs the tool itself and appends OpenAI-shaped messages.
    let call = &first.tool_calls[0];
    messages.push(json!({"role": "assistant", "content": null, "tool_calls": first.tool_calls_json()}));
    messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": "Sunny, 22C"}));

    // Turn 2: the model answers with text.
    let second = client
        .translate(TranslateRequest::new(messages).tools(tools))
        .await?;
    println!(
        "turn 2: finish={} text={:?} usage={:?}",
        second.finish_reason.as_str(),
        second.text,
        second.usage
    );
    assert_eq!(second.finish_reason, FinishReason::Stop);
    assert!(second.tool_calls.is_empty());
    assert_eq!(
        second.text,
        "Here is what the tools returned:\n- get_weather: Sunny, 22C"
    );
    assert_eq!(
        second.usage.total_tokens,
        second.usage.prompt_tokens + second.usage.completion_tokens
    );
    Ok(())
}
