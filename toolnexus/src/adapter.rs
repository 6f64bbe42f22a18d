//! Provider adapters (SPEC §0.7, §4): the tool list rendered in each provider's
//! function-calling shape. Schema only — nothing here touches a network.
//!
//! Over a [`Toolkit`](crate::Toolkit) the order is sorted by name; over an explicit slice it
//! is the order given, which is how a caller pins a non-alphabetical order.
//!
//! ```
//! use toolnexus::{adapter, Tool, ToolResult};
//!
//! let search = Tool::new("search", |_, _| async { ToolResult::success("") })
//!     .with_description("Search the catalog");
//! let refund = Tool::new("refund", |_, _| async { ToolResult::success("") });
//! let tools = adapter::to_openai(&[search, refund]); // your order, not sorted
//! assert_eq!(
//!     serde_json::to_string(&tools).unwrap(),
//!     r#"[{"type":"function","function":{"name":"search","description":"Search the catalog","parameters":{"type":"object"}}},{"type":"function","function":{"name":"refund","description":"","parameters":{"type":"object"}}}]"#
//! );
//! assert_eq!(adapter::to_anthropic(&[]), Vec::<serde_json::Value>::new());
//! assert_eq!(serde_json::to_string(&adapter::to_gemini(&[])).unwrap(), r#"[{"functionDeclarations":[]}]"#);
//! ```
//!
//! `to_openai` and `to_anthropic` pass each schema verbatim, like the other ports;
//! [`to_gemini`] and the opt-in [`to_openai_strict`] render it into what that provider
//! accepts (rules in [`schema`](crate::schema)), leaving a schema already inside the subset
//! byte-for-byte unchanged.

use serde_json::{Value, json};

use crate::schema::{gemini_schema, openai_strict_schema};
use crate::tool::Tool;

/// OpenAI: `[{type:"function", function:{name, description, parameters}}]`.
pub fn to_openai<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Vec<Value> {
    tools
        .into_iter()
        .map(|t| openai_entry(t, t.input_schema().clone(), None))
        .collect()
}

/// One `{type:"function", function:{name, description, parameters[, strict]}}` entry.
fn openai_entry(t: &Tool, parameters: Value, strict: Option<bool>) -> Value {
    let mut function = json!({
        "name": t.name(),
        "description": t.description(),
        "parameters": parameters,
    });
    if let Some(strict) = strict {
        function["strict"] = json!(strict);
    }
    json!({"type": "function", "function": function})
}

/// OpenAI in strict mode: like [`to_openai`] plus `"strict": true`, with every object
/// schema closed (`additionalProperties: false`), every property required and the optional
/// ones nullable, as strict mode demands.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{adapter, Tool, ToolResult};
///
/// let search = Tool::new("search", |_, _| async { ToolResult::success("") }).with_schema(json!({
///     "type": "object",
///     "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
///     "required": ["q"]
/// }));
/// assert_eq!(
///     serde_json::to_string(&adapter::to_openai_strict(&[search])).unwrap(),
///     concat!(
///         r#"[{"type":"function","function":{"name":"search","description":"","parameters":"#,
///         r#"{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":["integer","null"]}},"#,
///         r#""required":["q","limit"],"additionalProperties":false},"strict":true}}]"#
///     )
/// );
/// ```
pub fn to_openai_strict<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Vec<Value> {
    tools
        .into_iter()
        .map(|t| openai_entry(t, openai_strict_schema(t.input_schema()), Some(true)))
        .collect()
}

/// Anthropic: `[{name, description, input_schema}]`.
pub fn to_anthropic<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Vec<Value> {
    tools
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name(),
                "description": t.description(),
                "input_schema": t.input_schema(),
            })
        })
        .collect()
}

/// Gemini: one wrapper `[{functionDeclarations:[{name, description, parameters}]}]`, also
/// when there are no tools (like the other ports). Each schema goes through
/// [`gemini_schema`] (Gemini's OpenAPI subset).
pub fn to_gemini<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> Vec<Value> {
    let declarations: Vec<Value> = tools
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name(),
                "description": t.description(),
                "parameters": gemini_schema(t.input_schema()),
            })
        })
        .collect();
    vec![json!({ "functionDeclarations": declarations })]
}
