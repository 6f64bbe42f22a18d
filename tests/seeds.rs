//! The seed examples (success/failure/with-parts, to-openai, tool) in Rust, with the same
//! observable results.

use serde_json::{Map, Value, json};
use toolnexus::{
    ContentPart, Request, Tool, ToolContext, ToolResult, ToolSource, Toolkit, adapter, native_tool,
};

fn meta(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

// ── 000 success / failure / with-parts ──────────────────────────────────────────────────

#[test]
fn seed_000_both_results_and_why_output_is_text() {
    assert_eq!(
        ToolResult::success("hi").to_json(),
        r#"{"output":"hi","isError":false}"#
    );
    assert_eq!(
        ToolResult::failure("no such row").to_json(),
        r#"{"output":"no such row","isError":true}"#
    );
    assert_eq!(ToolResult::success(42).output, "42");
    let with = ToolResult::success("x").with_metadata(meta(json!({"name": "s"})));
    assert_eq!(with.metadata, Some(meta(json!({"name": "s"}))));
    assert_eq!(ToolResult::success("x").metadata, None);
    assert_eq!(
        ToolResult::success("x").to_json(),
        r#"{"output":"x","isError":false}"#
    );
    assert_eq!(
        ToolResult::failure("x")
            .with_metadata(meta(json!({"k": 1})))
            .to_json(),
        r#"{"output":"x","isError":true,"metadata":{"k":1}}"#
    );
}

#[tokio::test]
async fn seed_000_a_failure_is_a_value_the_loop_keeps_going_with() {
    let lookup = Tool::new("lookup", |args: Value, _| async move {
        match args.get("id").and_then(Value::as_str) {
            Some(id) => ToolResult::success(format!("customer {id}")),
            None => ToolResult::failure("missing required argument: id"),
        }
    })
    .with_description("Look a customer up by id");
    let tk = Toolkit::new([lookup]);
    let r = tk.execute("lookup", json!({}), ToolContext::default()).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"missing required argument: id","isError":true}"#
    );
    let r = tk
        .execute("lookup", json!({"id": "42"}), ToolContext::default())
        .await;
    assert_eq!(r.to_json(), r#"{"output":"customer 42","isError":false}"#);
}

#[test]
fn seed_000_metadata_carries_a_suspension() {
    let approval = Request::new("input", "Approve the refund?").with_data(Map::new());
    let pending = serde_json::to_value(&approval).unwrap();
    let result = ToolResult::failure("Waiting for a response.").with_meta("pending", pending.clone());
    assert!(result.is_error);
    assert_eq!(result.output, "Waiting for a response.");
    // On the wire it is `metadata.pending`; in Rust, the typed slot.
    let wire: Value = serde_json::from_str(&result.to_json()).unwrap();
    assert_eq!(wire["metadata"]["pending"], pending);
    assert_eq!(result.pending(), Some(&approval));
    assert_eq!(ToolResult::success("done").pending(), None);
}

#[tokio::test]
async fn seed_000_non_text_output_goes_in_parts() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("fixture.png");
    // 82 bytes, like the seed's fixture: the PNG signature, then padding.
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.resize(82, 0);
    std::fs::write(&png, bytes).unwrap();
    let shot = Tool::new("screenshot", move |_, _| {
        let png = png.clone();
        async move {
            match ContentPart::from_path(&png, None) {
                Ok(part) => ToolResult::success(part.summary()).with_parts([part]),
                Err(err) => ToolResult::failure(err),
            }
        }
    })
    .with_description("Take a screenshot");
    let r = shot.execute(json!({}), ToolContext::default()).await;
    assert_eq!(r.output, "image (image/png, 82 bytes)");
    assert!(!r.is_error);
    assert_eq!(r.parts.len(), 1);
    let wire: Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(wire["parts"][0]["mimeType"], "image/png");

    // An empty parts list changes nothing.
    assert_eq!(
        ToolResult::success("hi").with_parts([]).to_json(),
        r#"{"output":"hi","isError":false}"#
    );
    // A failure carries parts too.
    let bad = ToolResult::failure("render timed out").with_parts([ContentPart::text("partial")]);
    assert!(bad.is_error);
    assert_eq!(bad.parts.len(), 1);
}

// ── 001 to-openai ───────────────────────────────────────────────────────────────────────

fn search_and_refund() -> (Tool, Tool) {
    let search = native_tool(
        "search",
        "Search the catalog",
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        |args: Value, _| async move { format!("results for {}", args["q"].as_str().unwrap_or_default()) },
    );
    let refund = native_tool(
        "refund",
        "Refund an order",
        json!({"type": "object"}),
        |args: Value, _| async move { format!("refunded {}", args["order"].as_str().unwrap_or_default()) },
    );
    (search, refund)
}

#[test]
fn seed_001_a_hand_picked_subset_in_a_hand_picked_order() {
    let (search, refund) = search_and_refund();
    assert_eq!(
        serde_json::to_string(&adapter::to_openai(&[search.clone(), refund.clone()])).unwrap(),
        concat!(
            r#"[{"type":"function","function":{"name":"search","description":"Search the catalog","#,
            r#""parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}},"#,
            r#"{"type":"function","function":{"name":"refund","description":"Refund an order","parameters":{"type":"object"}}}]"#
        )
    );
    // A toolkit sorts by name.
    let names: Vec<Value> = Toolkit::new([search, refund])
        .to_openai()
        .iter()
        .map(|t| t["function"]["name"].clone())
        .collect();
    assert_eq!(names, [json!("refund"), json!("search")]);
    assert_eq!(adapter::to_openai(&[]), Vec::<Value>::new());
    assert_eq!(adapter::to_anthropic(&[]), Vec::<Value>::new());
    assert_eq!(
        serde_json::to_string(&adapter::to_gemini(&[])).unwrap(),
        r#"[{"functionDeclarations":[]}]"#
    );
}

#[test]
fn seed_001_defaults_never_render_null() {
    let bare = Tool::new("bare", |_, _| async { ToolResult::success("") });
    assert_eq!(
        serde_json::to_string(&adapter::to_openai(&[bare])).unwrap(),
        r#"[{"type":"function","function":{"name":"bare","description":"","parameters":{"type":"object"}}}]"#
    );
}

#[tokio::test]
async fn seed_001_closing_the_loop_from_a_model_reply() {
    let (search, refund) = search_and_refund();
    let tk = Toolkit::new([search, refund]);
    // What comes back per tool call: a name and a JSON string of arguments.
    let call = json!({"id": "call_1", "function": {"name": "search", "arguments": "{\"q\":\"lamp\"}"}});
    let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    let res = tk
        .execute(
            call["function"]["name"].as_str().unwrap(),
            args,
            ToolContext::default(),
        )
        .await;
    let message = json!({"role": "tool", "tool_call_id": call["id"], "content": res.output});
    assert_eq!(
        message.to_string(),
        r#"{"role":"tool","tool_call_id":"call_1","content":"results for lamp"}"#
    );
}

// ── 004 tool ────────────────────────────────────────────────────────────────────────────

#[tokio::test]
async fn seed_004_a_tool_written_by_hand() {
    let greet = Tool::new("greet", |args: Value, _| async move {
        ToolResult::success(format!("Hello, {}", args["name"].as_str().unwrap_or_default()))
    })
    .with_description("Greet someone by name")
    .with_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
    .with_source(ToolSource::Native);
    assert_eq!(greet.source().as_str(), "native");
    let tk = Toolkit::new([greet]);
    let r = tk
        .execute("greet", json!({"name": "Muthu"}), ToolContext::default())
        .await;
    assert_eq!(r.to_json(), r#"{"output":"Hello, Muthu","isError":false}"#);
    assert_eq!(tk.tool_names(), ["greet"]);

    let defaults = Tool::new("get_weather", |_, _| async { ToolResult::success("") });
    assert_eq!(
        (defaults.description(), defaults.input_schema(), defaults.source()),
        ("", &json!({"type": "object"}), ToolSource::Custom)
    );
}

#[tokio::test]
async fn seed_004_later_wins() {
    let builtin_read =
        Tool::new("read", |_, _| async { ToolResult::success("builtin") }).with_source(ToolSource::Builtin);
    let mcp_read =
        Tool::new("read", |_, _| async { ToolResult::success("mcp") }).with_source(ToolSource::Mcp);
    let mut tk = Toolkit::new([builtin_read]);
    tk.add_tools([mcp_read]);
    assert_eq!(tk.len(), 1);
    assert_eq!(
        tk.execute("read", json!({}), ToolContext::default()).await.output,
        "mcp"
    );
}

#[tokio::test]
async fn seed_004_a_panicking_tool_is_still_a_well_behaved_tool() {
    let tk = Toolkit::new([Tool::new("boom", |_, _| async { panic!("kaboom") })]);
    assert_eq!(
        tk.execute("boom", json!({}), ToolContext::default())
            .await
            .to_json(),
        r#"{"output":"tool \"boom\" panicked: kaboom","isError":true}"#
    );
    assert_eq!(
        tk.execute("nope", json!({}), ToolContext::default())
            .await
            .to_json(),
        r#"{"output":"unknown tool: nope","isError":true}"#
    );
}
