//! `#[tool]` on an async and a sync function: the doc comment becomes the description, each
//! parameter one property of the generated JSON Schema, and a bad argument comes back as an
//! error result the model can act on — the function never runs.
//!
//! Run: `cargo run --example tool_macro`

use serde_json::json;
use toolnexus::{BuildTool, ToolContext, tool};

/// Look up the current weather for a city.
#[tool]
async fn get_weather(
    /// The city name, e.g. "Paris".
    city: String,
    /// Temperature unit: "C" or "F".
    #[arg(default = "C")]
    unit: String,
) -> String {
    // A real tool would await an HTTP call here.
    format!("Sunny, 22{unit} in {city}")
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() {
    let weather = get_weather::tool();
    let schema = serde_json::to_string(weather.input_schema()).unwrap();
    println!("{}: {}", weather.name(), weather.description());
    println!("  schema: {schema}");
    assert_eq!(get_weather::NAME, "get_weather");
    assert_eq!(weather.description(), "Look up the current weather for a city.");
    assert_eq!(
        schema,
        r#"{"type":"object","properties":{"city":{"type":"string","description":"The city name, e.g. \"Paris\"."},"unit":{"type":"string","description":"Temperature unit: \"C\" or \"F\".","default":"C"}},"required":["city"]}"#
    );

    let adder = <add as BuildTool>::tool();
    let schema = serde_json::to_string(adder.input_schema()).unwrap();
    println!("{}: {}", adder.name(), adder.description());
    println!("  schema: {schema}");
    assert_eq!(
        schema,
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#
    );

    // The async tool, with its default filled in.
    let r = weather
        .execute(json!({"city": "Paris"}), ToolContext::default())
        .await;
    println!("get_weather {{\"city\":\"Paris\"}} -> {}", r.to_json());
    assert_eq!(r.to_json(), r#"{"output":"Sunny, 22C in Paris","isError":false}"#);

    // The sync tool: its i64 return value becomes the output text.
    let r = adder
        .execute(json!({"a": 2, "b": 3}), ToolContext::default())
        .await;
    println!("add {{\"a\":2,\"b\":3}} -> {}", r.to_json());
    assert_eq!(r.to_json(), r#"{"output":"5","isError":false}"#);

    // A bad argument is an error result naming the field and the expected type.
    let r = adder
        .execute(json!({"a": "two", "b": 3}), ToolContext::default())
        .await;
    println!("add {{\"a\":\"two\",\"b\":3}} -> {}", r.to_json());
    assert!(r.is_error);
    assert_eq!(
        r.output,
        "invalid arguments for tool \"add\": invalid type: string \"two\", expected i64 at field `a`"
    );
    let r = weather.execute(json!({}), ToolContext::default()).await;
    println!("get_weather {{}} -> {}", r.to_json());
    assert_eq!(
        r.output,
        "invalid arguments for tool \"get_weather\": missing field `city`"
    );
}
