//! Tool tiers (issue 22): with 100 tools, each request declares only the core schemas plus
//! `tool_search` and `call_tool`; the model loads a schema with `tool_search` and calls the
//! tool through `call_tool`, which the loop unwraps into the real call.

mod client_mock;

use std::sync::Arc;

use client_mock::{Mock, bounded};
use serde_json::{Value, json};
use toolnexus::client::{Client, ToolTiers};
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};

/// `tool_000` … `tool_099`, each echoing its name and its `x`.
fn hundred_tools() -> Toolkit {
    Toolkit::new((0..100).map(|i| {
        let name = format!("tool_{i:03}");
        let echo = name.clone();
        Tool::new(name, move |args: Value, _: ToolContext| {
            let echo = echo.clone();
            async move { ToolResult::success(format!("{echo}:{}", args["x"])) }
        })
        .with_description(format!("Tool number {i}: does thing {i}.\nMore detail nobody needs up front."))
        .with_schema(json!({"type": "object", "properties": {"x": {"type": "number", "description": "the input"}}, "required": ["x"]}))
    }))
}

fn declared_names(body: &Value, style: &str) -> Vec<String> {
    let name = |t: &Value| {
        let n = if style == "openai" {
            &t["function"]["name"]
        } else {
            &t["name"]
        };
        n.as_str().unwrap().to_owned()
    };
    body["tools"].as_array().unwrap().iter().map(name).collect()
}

fn script() -> Vec<Value> {
    vec![
        client_mock::openai_calls(&[("s1", "tool_search", r#"{"query":"select:tool_042"}"#)]),
        client_mock::openai_calls(&[("c1", "call_tool", r#"{"name":"tool_042","arguments":{"x":7}}"#)]),
        client_mock::openai_text("tool_042 says 7"),
    ]
}

fn tiered(base: &str, style: &str) -> Client {
    client_mock::client(style, base)
        .tool_tiers(ToolTiers::new().core(["tool_000", "tool_001"]))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_hundred_tools_go_out_as_four_and_the_model_loads_and_calls_the_one_it_needs() {
    let tk = hundred_tools();
    let mock = Mock::json(script()).await;
    let client = tiered(&mock.base, "openai");
    let r = bounded(client.run("use tool 42 with 7", &tk)).await.unwrap();
    assert_eq!(r.text, "tool_042 says 7");

    let bodies: Vec<Value> = (0..3).map(|i| mock.json_body(i)).collect();
    for body in &bodies {
        assert_eq!(
            declared_names(body, "openai"),
            ["call_tool", "tool_000", "tool_001", "tool_search"]
        );
    }
    let search = &bodies[0]["tools"][3]["function"];
    let desc = search["description"].as_str().unwrap();
    assert!(desc.starts_with(
        "Load the full schema of tools that are not shown in full, then call them by name (or with call_tool). \
         Query by keywords, or \"select:a,b\" for exact names.\n\nAvailable tools:\n- tool_002 — Tool number 2: does thing 2.\n- tool_003 — "
    ), "{desc}");
    assert!(
        desc.ends_with("\n- tool_099 — Tool number 99: does thing 99."),
        "{desc}"
    );
    assert_eq!(desc.matches("\n- tool_").count(), 98);

    // The search result the model reads: the loaded schema, exactly.
    assert_eq!(
        bodies[1]["messages"][2],
        json!({"role": "tool", "tool_call_id": "s1", "content":
            "Loaded tools (call by name, or with call_tool):\n[{\"name\":\"tool_042\",\"description\":\"Tool number 42: does thing 42.\\nMore detail nobody needs up front.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\",\"description\":\"the input\"}},\"required\":[\"x\"]}}]"})
    );
    // call_tool ran the real tool; the transcript keeps the model's own call.
    assert_eq!(
        bodies[2]["messages"][4],
        json!({"role": "tool", "tool_call_id": "c1", "content": "tool_042:7"})
    );
    assert_eq!(
        bodies[2]["messages"][3]["tool_calls"][0]["function"]["name"],
        "call_tool"
    );
    let calls: Vec<(&str, &Value, &str, bool)> = r
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), &c.args, c.output.as_str(), c.is_error))
        .collect();
    assert_eq!(calls[0].0, "tool_search");
    assert_eq!(calls[1], ("tool_042", &json!({"x": 7}), "tool_042:7", false));
    assert!(client.metrics().contains(
        "toolnexus_tool_calls_total{tool=\"tool_042\",source=\"custom\",is_error=\"false\",pending=\"false\"} 1\n"
    ));

    // The same run without tiers declares all 100, and is several times the size.
    let plain = Mock::json(script()).await;
    let client_plain = client_mock::client("openai", &plain.base).build().unwrap();
    bounded(client_plain.run("use tool 42 with 7", &tk))
        .await
        .unwrap();
    assert_eq!(declared_names(&plain.json_body(0), "openai").len(), 100);
    let (full, tiers) = (plain.bodies()[0].len(), mock.bodies()[0].len());
    assert!(tiers * 2 < full, "tiered {tiers} bytes vs {full}");
}

#[tokio::test]
async fn the_plan_is_built_once_per_toolkit_and_anthropic_declares_the_same_four() {
    let tk = hundred_tools();
    let mock = Mock::json([
        client_mock::anthropic_text("a"),
        client_mock::anthropic_text("b"),
        client_mock::anthropic_text("c"),
    ])
    .await;
    let client = tiered(&mock.base, "anthropic");
    let before = client.tool_plan(&tk).unwrap();
    bounded(client.run("one", &tk)).await.unwrap();
    bounded(client.run("two", &tk.clone())).await.unwrap();
    let after = client.tool_plan(&tk).unwrap();
    assert!(Arc::ptr_eq(&before, &after), "one plan per toolkit");
    assert_eq!(
        (
            before.core().len(),
            before.listed().len(),
            before.deferred().len()
        ),
        (2, 98, 0)
    );
    for i in 0..2 {
        assert_eq!(
            declared_names(&mock.json_body(i), "anthropic"),
            ["call_tool", "tool_000", "tool_001", "tool_search"]
        );
    }
    // Another toolkit gets its own plan.
    let mut other = tk.clone();
    other.add_tools([Tool::new("extra", |_: Value, _| async {
        ToolResult::success("")
    })]);
    let plan = client.tool_plan(&other).unwrap();
    assert!(!Arc::ptr_eq(&before, &plan));
    assert_eq!(plan.listed().len(), 99);
    bounded(client.run("three", &other)).await.unwrap();
    assert!(Arc::ptr_eq(&plan, &client.tool_plan(&other).unwrap()));
    // Without tiers there is no plan.
    assert!(
        client_mock::client("anthropic", &mock.base)
            .build()
            .unwrap()
            .tool_plan(&tk)
            .is_none()
    );
}

#[tokio::test]
async fn a_call_tool_without_a_name_is_an_error_the_model_reads() {
    let mock = Mock::json([
        client_mock::openai_calls(&[("c1", "call_tool", r#"{"arguments":{"x":1}}"#)]),
        client_mock::openai_text("sorry"),
    ])
    .await;
    let client = tiered(&mock.base, "openai");
    let r = bounded(client.run("go", &hundred_tools())).await.unwrap();
    assert_eq!(
        (
            r.tool_calls[0].name.as_str(),
            r.tool_calls[0].is_error,
            r.tool_calls[0].output.as_str()
        ),
        (
            "call_tool",
            true,
            "call_tool: \"name\" is required — the name of a tool loaded with tool_search"
        )
    );
}
