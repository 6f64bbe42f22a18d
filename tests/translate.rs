//! `translate` (SPEC §11) against the Python port's `Client.translate` (toolnexus 0.21.0).
//!
//! `tests/fixtures/translate_expected.json` is produced by the Python port itself:
//!     /work/ref/venv/bin/python tests/fixtures/translate_gen.py
//! which runs every case of `tests/fixtures/translate_cases.json` through one
//! `Client.translate` with a recording transport and records the URL path, the exact body
//! and the result. A case's `rust_finish_reason` marks where we follow the SPEC instead.

use serde_json::{Value, json};
use toolnexus::client::translate::{
    Draft, FinishReason, TranslateRequest, args_object, args_string, content_text, finish_reason_for,
    openai_tool_choice_to_anthropic,
};
use toolnexus::{Tool, Toolkit};

const CASES: &str = include_str!("fixtures/translate_cases.json");
const EXPECTED: &str = include_str!("fixtures/translate_expected.json");

fn request_of(case: &Value) -> TranslateRequest {
    let r = &case["request"];
    let list = |k: &str| r[k].as_array().cloned().unwrap_or_default();
    TranslateRequest {
        messages: list("messages"),
        tools: list("tools"),
        toolkit: None,
        tool_choice: r.get("tool_choice").cloned(),
        system: r["system"].as_str().map(str::to_string),
        max_tokens: r["max_tokens"].as_u64().map(|n| n as u32),
    }
}

fn draft_of(case: &Value, request: &TranslateRequest) -> Draft {
    let client_system = case["client"]["system_prompt"].as_str();
    match case["style"].as_str().unwrap() {
        "openai" => Draft::openai(request, client_system),
        _ => Draft::anthropic(request, client_system),
    }
}

#[test]
fn bodies_and_results_match_the_python_port() {
    let cases: Vec<Value> = serde_json::from_str(CASES).unwrap();
    let expected: Vec<Value> = serde_json::from_str(EXPECTED).unwrap();
    assert_eq!(cases.len(), expected.len());
    for (case, want) in cases.iter().zip(&expected) {
        let name = case["name"].as_str().unwrap();
        assert_eq!(want["name"], name);
        let draft = draft_of(case, &request_of(case));
        let url = draft.endpoint("http://127.0.0.1:9/v1");
        assert_eq!(
            url,
            format!("http://127.0.0.1:9/v1{}", want["path"].as_str().unwrap()),
            "{name}"
        );
        let body = serde_json::to_string(&draft.body("test-model")).unwrap();
        assert_eq!(body, want["body"].as_str().unwrap(), "{name}: body");

        let got = draft.parse(case["response"].clone(), "test-model");
        let mut want_result = want["result"].clone();
        if let Some(fr) = case.get("rust_finish_reason") {
            want_result["finish_reason"] = fr.clone();
        }
        let mut got_json = serde_json::to_value(&got).unwrap();
        assert_eq!(got_json["raw"], case["response"], "{name}: raw");
        got_json.as_object_mut().unwrap().remove("raw");
        assert_eq!(got_json, want_result, "{name}: result");
    }
}

fn toolkit() -> Toolkit {
    let t = Tool::new("kit_tool", |_, _| async {
        panic!("translate must never execute a tool")
    })
    .with_description("from the toolkit");
    Toolkit::new([t])
}

#[test]
fn toolkit_declarations_come_first_in_both_styles() {
    let request = TranslateRequest::new(vec![json!({"role": "user", "content": "hi"})])
        .with_toolkit(toolkit())
        .with_tools(vec![
            json!({"type": "function", "function": {"name": "caller_tool"}}),
        ]);
    let names = |tools: &[Value], f: fn(&Value) -> &Value| -> Vec<String> {
        tools.iter().map(|t| f(t).as_str().unwrap().to_string()).collect()
    };
    let openai = Draft::openai(&request, None);
    assert_eq!(
        names(&openai.tools, |t| &t["function"]["name"]),
        ["kit_tool", "caller_tool"]
    );
    assert_eq!(openai.tools[0], toolkit().to_openai()[0]);
    let anthropic = Draft::anthropic(&request, None);
    assert_eq!(
        names(&anthropic.tools, |t| &t["name"]),
        ["kit_tool", "caller_tool"]
    );
    assert_eq!(anthropic.tools[0], toolkit().to_anthropic()[0]);
    assert_eq!(
        anthropic.tools[1],
        json!({"name": "caller_tool", "input_schema": {"type": "object", "properties": {}}})
    );
}

#[test]
fn endpoints_follow_the_reference_rules() {
    let req = TranslateRequest::default();
    let (o, a) = (Draft::openai(&req, None), Draft::anthropic(&req, None));
    assert_eq!(
        o.endpoint("https://openrouter.ai/api/v1/"),
        "https://openrouter.ai/api/v1/chat/completions"
    );
    assert_eq!(o.endpoint("http://h:1"), "http://h:1/v1/chat/completions");
    assert_eq!(
        o.endpoint("http://h:1/openai/chat/x"),
        "http://h:1/openai/chat/x/chat/completions"
    );
    assert_eq!(
        a.endpoint("https://api.anthropic.com"),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        a.endpoint("https://api.anthropic.com/v1//"),
        "https://api.anthropic.com/v1/messages"
    );
}

#[test]
fn finish_reason_map() {
    assert_eq!(
        finish_reason_for(true, Some("max_tokens")),
        FinishReason::ToolCalls
    );
    assert_eq!(finish_reason_for(true, None), FinishReason::ToolCalls);
    assert_eq!(finish_reason_for(false, Some("max_tokens")), FinishReason::Length);
    assert_eq!(finish_reason_for(false, Some("length")), FinishReason::Length);
    assert_eq!(
        finish_reason_for(false, Some("refusal")),
        FinishReason::ContentFilter
    );
    assert_eq!(
        finish_reason_for(false, Some("content_filter")),
        FinishReason::ContentFilter
    );
    assert_eq!(finish_reason_for(false, Some("tool_use")), FinishReason::Stop);
    assert_eq!(finish_reason_for(false, Some("end_turn")), FinishReason::Stop);
    assert_eq!(finish_reason_for(false, None), FinishReason::Stop);
    assert_eq!(FinishReason::ContentFilter.as_str(), "content_filter");
    assert_eq!(
        serde_json::to_value(FinishReason::ToolCalls).unwrap(),
        "tool_calls"
    );
}

#[test]
fn arguments_in_both_wire_forms() {
    assert_eq!(
        args_object(&json!("{\"a\":1}")),
        json!({"a": 1}).as_object().unwrap().clone()
    );
    assert_eq!(
        args_object(&json!({"a": 1})),
        json!({"a": 1}).as_object().unwrap().clone()
    );
    for bad in [
        json!("{oops"),
        json!(""),
        json!("  "),
        json!("[1]"),
        json!("7"),
        json!(null),
        json!([1]),
    ] {
        assert!(args_object(&bad).is_empty(), "{bad}");
    }
    assert_eq!(
        args_string(&json!("{\"a\": 1}")),
        "{\"a\": 1}",
        "a string stays verbatim"
    );
    assert_eq!(
        args_string(&json!({"b": [1, 2], "a": "é"})),
        "{\"b\":[1,2],\"a\":\"é\"}"
    );
    assert_eq!(args_string(&json!(null)), "{}");
    assert_eq!(args_string(&json!(3)), "{}");
}

#[test]
fn content_flattening() {
    assert_eq!(content_text(&json!("plain")), "plain");
    assert_eq!(
        content_text(
            &json!([{"type": "text", "text": "a"}, {"type": "image_url"}, "x", {"type": "input_text", "text": "b"}])
        ),
        "ab"
    );
    assert_eq!(content_text(&json!(null)), "");
    assert_eq!(content_text(&json!(42)), "");
}

#[test]
fn tool_choice_mapping() {
    let cases = [
        (json!("required"), Some(json!({"type": "any"}))),
        (json!("any"), Some(json!({"type": "any"}))),
        (json!("none"), Some(json!({"type": "none"}))),
        (json!("auto"), None),
        (
            json!({"type": "function", "function": {"name": "f"}}),
            Some(json!({"type": "tool", "name": "f"})),
        ),
        (json!({"type": "function", "function": {"name": ""}}), None),
        (json!({"type": "function"}), None),
        (json!(true), None),
    ];
    for (choice, want) in cases {
        assert_eq!(openai_tool_choice_to_anthropic(&choice), want, "{choice}");
    }
}

#[test]
fn anthropic_tool_use_arguments_are_compact_json_in_provider_order() {
    let draft = Draft::anthropic(&TranslateRequest::default(), None);
    let calls: Vec<Value> = (0..20)
        .map(|i| json!({"type": "tool_use", "id": format!("t{i}"), "name": "n", "input": {"i": i, "s": "ü \"q\""}}))
        .collect();
    let r = draft.parse(json!({"content": calls, "stop_reason": "max_tokens"}), "m");
    assert_eq!(r.tool_calls.len(), 20, "none dropped");
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
    assert_eq!(r.tool_calls[7].id, "t7");
    // Compact like JSON.stringify; non-ASCII stays UTF-8 (Python's json.dumps would escape it).
    assert_eq!(r.tool_calls[7].arguments, r#"{"i":7,"s":"ü \"q\""}"#);
    assert_eq!(
        r.tool_calls_json()[7],
        json!({"id": "t7", "type": "function", "function": {"name": "n", "arguments": r.tool_calls[7].arguments}})
    );
}

#[test]
fn garbage_responses_never_panic() {
    for style in ["openai", "anthropic"] {
        let req = TranslateRequest::default();
        let draft = if style == "openai" {
            Draft::openai(&req, None)
        } else {
            Draft::anthropic(&req, None)
        };
        for raw in [
            json!(null),
            json!("text"),
            json!([1, 2]),
            json!({"choices": "x", "content": {"a": 1}, "usage": [1]}),
            json!({"choices": [null], "content": [null, 1, {"type": "tool_use", "input": [1]}]}),
            json!({"choices": [{"message": {"tool_calls": [1, {"function": 3}]}}], "usage": {"prompt_tokens": -1}}),
        ] {
            let r = draft.parse(raw.clone(), "m");
            assert_eq!(r.model, "m");
            assert_eq!(r.raw, Some(raw));
        }
    }
    // Messages of any shape convert without panicking.
    let junk = vec![
        json!(1),
        json!({"role": 5}),
        json!({"role": "tool", "content": {"x": 1}, "tool_call_id": 7}),
        json!({"role": "assistant", "tool_calls": "x"}),
    ];
    let draft = Draft::anthropic(&TranslateRequest::new(junk), None);
    assert_eq!(
        serde_json::to_value(&draft.messages).unwrap(),
        json!([{"role": "user", "content": [{"type": "tool_result", "content": "", "tool_use_id": "7"}]}])
    );
}
