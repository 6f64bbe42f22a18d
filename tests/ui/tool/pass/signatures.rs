//! Every parameter and return form a `#[tool]` function may have, run once each.

use serde_json::{Value, json};
use toolnexus::{Json, ToolContext, ToolResult, Toolkit, tool};

/// Search the catalog.
#[tool]
async fn search(
    /// What to look for.
    query: String,
    /// At most this many.
    #[arg(default = 10)]
    limit: u32,
    #[arg(description = "Sort order", default = "relevance")] order: String,
    #[arg(default)] exact: bool,
    page: Option<u32>,
    #[serde(rename = "inStock")] in_stock: Option<bool>,
    #[schemars(range(max = 5))] stars: Option<u8>,
) -> String {
    format!("{query} {limit} {order} {exact} {page:?} {in_stock:?} {stars:?}")
}

#[tool]
fn nothing() {}

#[tool]
fn ping() -> &'static str {
    "pong"
}

#[tool]
fn maybe(found: bool) -> Option<String> {
    found.then(|| "found".to_owned())
}

#[tool]
fn checked(ok: bool) -> Result<u32, String> {
    if ok { Ok(7) } else { Err("not ok".into()) }
}

#[tool]
fn as_json() -> Json<Vec<u32>> {
    Json(vec![1, 2])
}

#[tool]
fn as_value() -> Value {
    json!({"a": 1})
}

#[tool]
fn as_result(ctx: ToolContext) -> ToolResult {
    ToolResult::success(ctx.call_id.unwrap_or_default())
}

#[tool(name = "float_tool", description = "Halve a number")]
fn half(x: f64) -> f64 {
    x / 2.0
}

#[tool]
fn r#match(r#type: String) -> String {
    r#type
}

#[tool]
pub(crate) fn visible() -> bool {
    true
}

fn main() {
    let tk = Toolkit::new([
        search::tool(),
        nothing::tool(),
        ping::tool(),
        maybe::tool(),
        checked::tool(),
        as_json::tool(),
        as_value::tool(),
        as_result::tool(),
        half::tool(),
        r#match::tool(),
        visible::tool(),
    ]);
    assert_eq!(
        tk.get("search").unwrap().input_schema().to_string(),
        r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","default":10,"minimum":0,"description":"At most this many."},"order":{"type":"string","description":"Sort order","default":"relevance"},"exact":{"type":"boolean","default":false},"page":{"type":"integer","minimum":0},"inStock":{"type":"boolean"},"stars":{"type":"integer","maximum":5,"minimum":0}},"required":["query"]}"#
    );
    assert_eq!(tk.get("search").unwrap().description(), "Search the catalog.");
    assert_eq!(tk.get("float_tool").unwrap().description(), "Halve a number");
    assert_eq!(r#match::NAME, "match");
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let out = |name: &str, args: Value| {
        let ctx = ToolContext::default().with_call_id("c1");
        rt.block_on(tk.execute(name, args, ctx)).to_json()
    };
    assert_eq!(
        out("search", json!({"query": "lamp", "inStock": true})),
        r#"{"output":"lamp 10 relevance false None Some(true) None","isError":false}"#
    );
    assert_eq!(out("nothing", json!({})), r#"{"output":"","isError":false}"#);
    assert_eq!(out("ping", json!(null)), r#"{"output":"pong","isError":false}"#);
    assert_eq!(out("maybe", json!({"found": false})), r#"{"output":"","isError":false}"#);
    assert_eq!(out("checked", json!({"ok": false})), r#"{"output":"not ok","isError":true}"#);
    assert_eq!(out("as_json", json!({})), r#"{"output":"[1,2]","isError":false}"#);
    assert_eq!(out("as_value", json!({})), r#"{"output":"{\"a\":1}","isError":false}"#);
    assert_eq!(out("as_result", json!({})), r#"{"output":"c1","isError":false}"#);
    assert_eq!(out("float_tool", json!({"x": 3})), r#"{"output":"1.5","isError":false}"#);
    assert_eq!(out("match", json!({"type": "t"})), r#"{"output":"t","isError":false}"#);
}
