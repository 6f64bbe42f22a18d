//! `#[tool]` and `toolkit![]` end to end: generated schemas (exact snapshots), argument
//! errors, sync and async functions, context passthrough, shared state, name overrides.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use toolnexus::schemars::JsonSchema;
use toolnexus::{Args, Json, State, ToolContext, ToolDef, ToolResult, ToolSource, Toolkit, tool, toolkit};

/// How results are ordered.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
#[schemars(crate = "toolnexus::schemars")]
#[serde(rename_all = "snake_case")]
enum Order {
    /// Best match first.
    Relevance,
    Newest,
}

/// A price window.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
#[schemars(crate = "toolnexus::schemars")]
struct PriceRange {
    /// Lowest price, in cents.
    min: u32,
    max: Option<u32>,
}

fn default_limit() -> u32 {
    10
}

/// Catalog search arguments.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
#[schemars(crate = "toolnexus::schemars")]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// Only these categories.
    #[serde(default)]
    categories: Vec<String>,
    price: Option<PriceRange>,
    order: Option<Order>,
    /// At most this many results.
    #[serde(default = "default_limit")]
    limit: u32,
}

/// Search the catalog.
///
/// Returns one line per product.
#[tool]
async fn search(Args(args): Args<SearchArgs>) -> Json<serde_json::Value> {
    Json(json!({
        "query": args.query,
        "categories": args.categories,
        "min": args.price.as_ref().map(|p| p.min),
        "order": format!("{:?}", args.order),
        "limit": args.limit,
    }))
}

const SEARCH_SCHEMA: &str = concat!(
    r#"{"type":"object","properties":{"#,
    r#""query":{"type":"string","description":"What to look for."},"#,
    r#""categories":{"type":"array","items":{"type":"string"},"description":"Only these categories.","default":[]},"#,
    r#""price":{"type":"object","properties":{"min":{"type":"integer","description":"Lowest price, in cents.","minimum":0},"#,
    r#""max":{"type":"integer","minimum":0}},"required":["min"],"description":"A price window."},"#,
    r#""order":{"type":"string","enum":["newest","relevance"],"description":"How results are ordered."},"#,
    r#""limit":{"type":"integer","default":10,"minimum":0,"description":"At most this many results."}},"#,
    r#""required":["query"],"description":"Catalog search arguments."}"#
);

#[test]
fn schema_of_an_args_struct_is_inlined_and_tidy() {
    let tool = search::tool();
    assert_eq!(tool.name(), "search");
    assert_eq!(<search as ToolDef>::NAME, "search");
    assert_eq!(
        tool.description(),
        "Search the catalog.\n\nReturns one line per product."
    );
    assert_eq!(tool.source(), ToolSource::Native);
    assert_eq!(tool.input_schema().to_string(), SEARCH_SCHEMA);
}

#[test]
fn provider_renderings_of_nested_optional_and_enum_fields() {
    let tools = [search::tool()];
    // OpenAI and Anthropic get the schema verbatim.
    assert_eq!(
        toolnexus::adapter::to_openai(&tools)[0]["function"]["parameters"].to_string(),
        SEARCH_SCHEMA
    );
    assert_eq!(
        toolnexus::adapter::to_gemini(&tools)[0]["functionDeclarations"][0]["parameters"].to_string(),
        SEARCH_SCHEMA,
        "already inside Gemini's subset"
    );
    assert_eq!(
        toolnexus::adapter::to_openai_strict(&tools)[0]["function"]["parameters"].to_string(),
        concat!(
            r#"{"type":"object","properties":{"#,
            r#""query":{"type":"string","description":"What to look for."},"#,
            r#""categories":{"type":["array","null"],"items":{"type":"string"},"description":"Only these categories.","default":[]},"#,
            r#""price":{"type":["object","null"],"properties":{"min":{"type":"integer","description":"Lowest price, in cents.","minimum":0},"#,
            r#""max":{"type":["integer","null"],"minimum":0}},"required":["min","max"],"description":"A price window.","additionalProperties":false},"#,
            r#""order":{"type":["string","null"],"enum":["newest","relevance",null],"description":"How results are ordered."},"#,
            r#""limit":{"type":["integer","null"],"default":10,"minimum":0,"description":"At most this many results."}},"#,
            r#""required":["query","categories","price","order","limit"],"description":"Catalog search arguments.","additionalProperties":false}"#
        )
    );
}

#[tokio::test]
async fn args_struct_is_deserialized() {
    let r = search::tool()
        .execute(
            json!({"query": "lamp", "price": {"min": 5}, "order": "newest"}),
            ToolContext::default(),
        )
        .await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"{\"query\":\"lamp\",\"categories\":[],\"min\":5,\"order\":\"Some(Newest)\",\"limit\":10}","isError":false}"#
    );
}

#[tokio::test]
async fn bad_arguments_name_the_field_and_the_expected_type() {
    let tool = search::tool();
    let call = |args| tool.execute(args, ToolContext::default());
    assert_eq!(
        call(json!({"price": {"min": 1}})).await.to_json(),
        r#"{"output":"invalid arguments for tool \"search\": missing field `query`","isError":true}"#
    );
    assert_eq!(
        call(json!({"query": "x", "price": {"min": "cheap"}}))
            .await
            .output,
        "invalid arguments for tool \"search\": invalid type: string \"cheap\", expected u32 at field `price.min`"
    );
    assert_eq!(
        call(json!({"query": "x", "order": "oldest"})).await.output,
        "invalid arguments for tool \"search\": unknown variant `oldest`, expected `relevance` or `newest` at field `order`"
    );
    assert_eq!(
        call(json!({"query": "x", "categories": ["a", 1]})).await.output,
        "invalid arguments for tool \"search\": invalid type: integer `1`, expected a string at field `categories[1]`"
    );
    assert_eq!(
        call(json!(["lamp"])).await.output,
        "invalid arguments for tool \"search\": expected a JSON object of named arguments, got an array"
    );
}

static ADD_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    ADD_CALLS.fetch_add(1, Ordering::SeqCst);
    a + b
}

#[tokio::test]
async fn a_bad_argument_never_calls_the_function() {
    let tk = toolkit![add];
    let before = ADD_CALLS.load(Ordering::SeqCst);
    let r = tk.execute("add", json!({"a": 1}), ToolContext::default()).await;
    assert_eq!(r.output, "invalid arguments for tool \"add\": missing field `b`");
    let r = tk
        .execute("add", json!({"a": "x", "b": 2}), ToolContext::default())
        .await;
    assert_eq!(
        r.output,
        "invalid arguments for tool \"add\": invalid type: string \"x\", expected i64 at field `a`"
    );
    assert_eq!(ADD_CALLS.load(Ordering::SeqCst), before);
    let r = tk
        .execute("add", json!({"a": 2, "b": 40}), ToolContext::default())
        .await;
    assert_eq!(r.to_json(), r#"{"output":"42","isError":false}"#);
    assert_eq!(ADD_CALLS.load(Ordering::SeqCst), before + 1);
}

/// Refund an order.
#[tool(description = "Refund an order, in full or in part")]
fn refund(
    /// The order id.
    order: String,
    /// Cents to refund; the whole order when absent.
    amount: Option<u64>,
    #[arg(description = "Why the customer wants it", default = "unspecified")] reason: String,
    #[arg(default)] notify: bool,
) -> Result<String, String> {
    if order.is_empty() {
        return Err("order must not be empty".into());
    }
    Ok(format!("refunded {order} {amount:?} ({reason}) notify={notify}"))
}

#[test]
fn schema_of_plain_parameters() {
    let tool = refund::tool();
    assert_eq!(tool.description(), "Refund an order, in full or in part");
    assert_eq!(
        tool.input_schema().to_string(),
        concat!(
            r#"{"type":"object","properties":{"order":{"type":"string","description":"The order id."},"#,
            r#""amount":{"type":"integer","description":"Cents to refund; the whole order when absent.","minimum":0},"#,
            r#""reason":{"type":"string","description":"Why the customer wants it","default":"unspecified"},"#,
            r#""notify":{"type":"boolean","default":false}},"required":["order"]}"#
        )
    );
}

#[tokio::test]
async fn plain_parameters_defaults_and_results() {
    let tk = toolkit![refund];
    let call = |args| tk.execute("refund", args, ToolContext::default());
    assert_eq!(
        call(json!({"order": "A1"})).await.to_json(),
        r#"{"output":"refunded A1 None (unspecified) notify=false","isError":false}"#
    );
    assert_eq!(
        call(json!({"order": "A1", "amount": 250, "reason": "late", "notify": true}))
            .await
            .output,
        "refunded A1 Some(250) (late) notify=true"
    );
    assert_eq!(
        call(json!({"order": ""})).await.to_json(),
        r#"{"output":"order must not be empty","isError":true}"#
    );
}

/// Wait, unless cancelled first.
#[tool(name = "wait-for")]
async fn wait(millis: u64, ctx: ToolContext) -> ToolResult {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(millis)) => {
            ToolResult::success("waited").with_meta("call", ctx.call_id.clone().unwrap_or_default())
        }
        () = ctx.cancel.cancelled() => ToolResult::failure("stopped"),
    }
}

#[tokio::test]
async fn async_tool_receives_the_context() {
    let tk = toolkit![wait, add];
    assert_eq!(tk.tool_names(), ["add", "wait-for"]);
    assert_eq!(<wait as ToolDef>::NAME, "wait-for");
    let ctx = ToolContext::default().with_call_id("call_7");
    let r = tk.execute("wait-for", json!({"millis": 1}), ctx).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"waited","isError":false,"metadata":{"call":"call_7"}}"#
    );
    // The schema leaves the context out.
    assert_eq!(
        tk.get("wait-for").unwrap().input_schema().to_string(),
        r#"{"type":"object","properties":{"millis":{"type":"integer","minimum":0}},"required":["millis"]}"#
    );
    let ctx = ToolContext::default();
    ctx.cancel.cancel();
    let r = tk.execute("wait-for", json!({"millis": 60_000}), ctx).await;
    assert!(r.is_error);
}

/// Stands in for a connection pool shared by every call.
struct Db {
    rows: Vec<&'static str>,
    queries: AtomicUsize,
}

/// Look a row up by index.
#[tool]
async fn lookup(State(db): State<Arc<Db>>, index: usize) -> Option<String> {
    db.queries.fetch_add(1, Ordering::SeqCst);
    db.rows.get(index).map(|r| r.to_string())
}

#[tokio::test]
async fn state_is_shared_by_every_call() {
    let db = Arc::new(Db {
        rows: vec!["alpha", "beta"],
        queries: AtomicUsize::new(0),
    });
    let mut tk: Toolkit = toolkit![add];
    tk.add_tools([lookup::with_state(db.clone())]);
    let r = tk
        .execute("lookup", json!({"index": 1}), ToolContext::default())
        .await;
    assert_eq!(r.to_json(), r#"{"output":"beta","isError":false}"#);
    let r = tk
        .execute("lookup", json!({"index": 9}), ToolContext::default())
        .await;
    assert_eq!(r.to_json(), r#"{"output":"","isError":false}"#);
    assert_eq!(db.queries.load(Ordering::SeqCst), 2);
    assert_eq!(lookup::NAME, "lookup");
    assert_eq!(
        tk.get("lookup").unwrap().input_schema().to_string(),
        r#"{"type":"object","properties":{"index":{"type":"integer","minimum":0}},"required":["index"]}"#
    );
}

/// Say hello.
#[tool]
fn ping() -> &'static str {
    "pong"
}

#[tokio::test]
async fn a_tool_without_parameters_accepts_no_or_null_arguments() {
    let tool = ping::tool();
    assert_eq!(tool.input_schema().to_string(), r#"{"type":"object"}"#);
    assert_eq!(
        tool.execute(json!({}), ToolContext::default()).await.output,
        "pong"
    );
    assert_eq!(
        tool.execute(serde_json::Value::Null, ToolContext::default())
            .await
            .output,
        "pong"
    );
    assert_eq!(
        toolnexus::adapter::to_gemini(&[tool])[0]["functionDeclarations"][0]["parameters"].to_string(),
        r#"{"type":"object"}"#
    );
}

#[test]
fn toolkit_sorts_and_renders_like_any_toolkit() {
    let tk = toolkit![search, refund, add, ping,];
    assert_eq!(tk.tool_names(), ["add", "ping", "refund", "search"]);
    let empty: Toolkit = toolkit![];
    assert!(empty.is_empty());
    // tool() is built once: the same schema allocation is shared by every clone.
    assert!(std::ptr::eq(
        add::tool().input_schema(),
        add::tool().input_schema()
    ));
}
