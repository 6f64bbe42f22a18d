//! `toolkit![a, b]` gathers `#[tool]` functions into a [`toolnexus::Toolkit`] (sorted by
//! name, duplicate names rejected at compile time) and renders it in each provider's
//! function-calling shape: OpenAI, Anthropic and Gemini. No model is called.
//!
//! Run: `cargo run --example toolkit_macro`

use serde_json::json;
use toolnexus::{ToolContext, tool, toolkit};

/// Look up the current weather for a city.
#[tool]
async fn get_weather(
    /// The city name.
    city: String,
) -> String {
    format!("Sunny, 22C in {city}")
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() {
    let tk = toolkit![get_weather, add];
    println!("tools: {:?}", tk.tool_names());
    assert_eq!(tk.tool_names(), ["add", "get_weather"]);

    let openai = serde_json::to_string(&tk.to_openai()).unwrap();
    let anthropic = serde_json::to_string(&tk.to_anthropic()).unwrap();
    let gemini = serde_json::to_string(&tk.to_gemini()).unwrap();
    println!("to_openai:    {openai}");
    println!("to_anthropic: {anthropic}");
    println!("to_gemini:    {gemini}");

    let add_schema = r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#;
    let weather_schema = r#"{"type":"object","properties":{"city":{"type":"string","description":"The city name."}},"required":["city"]}"#;
    assert_eq!(
        openai,
        format!(
            r#"[{{"type":"function","function":{{"name":"add","description":"Add two integers.","parameters":{add_schema}}}}},{{"type":"function","function":{{"name":"get_weather","description":"Look up the current weather for a city.","parameters":{weather_schema}}}}}]"#
        )
    );
    assert_eq!(
        anthropic,
        format!(
            r#"[{{"name":"add","description":"Add two integers.","input_schema":{add_schema}}},{{"name":"get_weather","description":"Look up the current weather for a city.","input_schema":{weather_schema}}}]"#
        )
    );
    assert_eq!(
        gemini,
        format!(
            r#"[{{"functionDeclarations":[{{"name":"add","description":"Add two integers.","parameters":{add_schema}}},{{"name":"get_weather","description":"Look up the current weather for a city.","parameters":{weather_schema}}}]}}]"#
        )
    );

    // The toolkit executes by name, like any toolkit.
    let r = tk
        .execute("add", json!({"a": 20, "b": 22}), ToolContext::default())
        .await;
    println!("add -> {}", r.to_json());
    assert_eq!(r.output, "42");
    let r = tk.execute("nope", json!({}), ToolContext::default()).await;
    println!("nope -> {}", r.to_json());
    assert_eq!(r.to_json(), r#"{"output":"unknown tool: nope","isError":true}"#);
}
