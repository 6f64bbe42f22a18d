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
    let mut request = TranslateRequest::new(list("messages")).tools(list("tools"));
    if let Some(choice) = r.get("tool_choice") {
        request = request.tool_choice(choice.clone());
    }
    if let Some(system) = r["system"].as_str() {
        request = request.system(system);
    }
    if let Some(n) = r["max_tokens"].as_u64() {
        request = request.max_tokens(n as u32);
    }
    request
}

fn draft_of(case: &Value, request: &TranslateRequest) -> Draft {
    let style = case["style"].as_str().unwrap().parse().unwrap();
    Draft::new(style, request, case["client"]["system_prompt"].as_str())
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

/// A conversation of one user message, "hi".
fn say_hi() -> TranslateRequest {
    TranslateRequest::new(vec![json!({"role": "user", "content": "hi"})])
}

#[test]
fn toolkit_declarations_come_first_in_both_styles() {
    let request = say_hi().toolkit(&toolkit()).tools(vec![
        json!({"type": "function", "function": {"name": "caller_tool"}}),
    ]);
    let names = |tools: &[Value], f: fn(&Value) -> &Value| -> Vec<String> {
        tools.iter().map(|t| f(t).as_str().unwrap().to_string()).collect()
    };
    let openai = Draft::new(Style::OpenAi, &request, None);
    assert_eq!(
        names(&openai.tools, |t| &t["function"]["name"]),
        ["kit_tool", "caller_tool"]
    );
    assert_eq!(openai.tools[0], toolkit().to_openai()[0]);
    let anthropic = Draft::new(Style::Anthropic, &request, None);
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
    let draft = Draft::new(Style::Anthropic, &TranslateRequest::default(), None);
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
            Draft::new(Style::OpenAi, &req, None)
        } else {
            Draft::new(Style::Anthropic, &req, None)
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
    let draft = Draft::new(Style::Anthropic, &TranslateRequest::new(junk), None);
    assert_eq!(
        serde_json::to_value(&draft.messages).unwrap(),
        json!([{"role": "user", "content": [{"type": "tool_result", "content": "", "tool_use_id": "7"}]}])
    );
}

// ---- Client::translate over a real HTTP server on 127.0.0.1 ----

mod client_mock;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use client_mock::{Mock, Reply, cancel_after};
use toolnexus::client::hooks::{Hooks, LlmOverride};
use toolnexus::client::translate::TranslatedToolCall;
use toolnexus::client::{Client, ClientError, MetricEvent};
use toolnexus::client::{Style, Usage};

/// Counts of each hook's invocations: before_llm, after_llm, before_tool, after_tool.
#[derive(Default)]
struct HookCounts([AtomicUsize; 4]);

impl HookCounts {
    fn get(&self) -> [usize; 4] {
        [0, 1, 2, 3].map(|i| self.0[i].load(Ordering::SeqCst))
    }
}

fn counting_hooks(counts: &Arc<HookCounts>) -> Hooks {
    let c: [Arc<HookCounts>; 4] = std::array::from_fn(|_| counts.clone());
    let [c0, c1, c2, c3] = c;
    Hooks::new()
        .before_llm(move |req| {
            c0.0[0].fetch_add(1, Ordering::SeqCst);
            assert_eq!(req.turn, 0);
            async { Ok(None) }
        })
        .after_llm(move |_| {
            c1.0[1].fetch_add(1, Ordering::SeqCst);
            async {}
        })
        .before_tool(move |_| {
            c2.0[2].fetch_add(1, Ordering::SeqCst);
            async { None }
        })
        .after_tool(move |_| {
            c3.0[3].fetch_add(1, Ordering::SeqCst);
            async { None }
        })
}

type Events = Arc<Mutex<Vec<MetricEvent>>>;

fn client(base: &str, style: &str, hooks: Hooks, events: &Events) -> toolnexus::client::ClientBuilder {
    let events = events.clone();
    Client::builder()
        .base_url(base)
        .style(style.parse().expect("openai or anthropic"))
        .model("test-model")
        .api_key("sk-test")
        .retry_base(Duration::from_millis(1))
        .hooks(hooks)
        .on_metric(move |e| events.lock().unwrap().push(e.clone()))
}

fn only_llm_event(events: &Events) -> (bool, u64, u64) {
    let events = events.lock().unwrap();
    assert_eq!(events.len(), 1, "exactly one metric event: {events:?}");
    match &events[0] {
        MetricEvent::Llm {
            model,
            ok,
            prompt_tokens,
            completion_tokens,
            ..
        } => {
            assert_eq!(model, "test-model");
            (*ok, *prompt_tokens, *completion_tokens)
        }
        other => panic!("expected an llm event, got {other:?}"),
    }
}

#[tokio::test]
async fn openai_translate_sends_one_exact_request_and_executes_nothing() {
    let mock = Mock::json([json!({
        "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "kit_tool", "arguments": "{\"q\":1}"}},
            {"id": "call_2", "type": "function", "function": {"name": "caller_tool", "arguments": "{}"}}
        ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })])
    .await;
    let counts = Arc::new(HookCounts::default());
    let events = Events::default();
    let client = client(
        &format!("{}/v1", mock.base),
        "openai",
        counting_hooks(&counts),
        &events,
    )
    .system_prompt("client prompt")
    .build()
    .unwrap();
    let request = TranslateRequest::new(vec![json!({"role": "user", "content": "go"})])
        .toolkit(&toolkit())
        .tools(vec![
            json!({"type": "function", "function": {"name": "caller_tool"}}),
        ])
        .tool_choice(json!("auto"))
        .max_tokens(50);

    let result = client.translate(request).await.unwrap();

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    let kit = serde_json::to_string(&toolkit().to_openai()[0]).unwrap();
    assert_eq!(
        requests[0].body,
        format!(
            r#"{{"model":"test-model","messages":[{{"role":"system","content":"client prompt"}},{{"role":"user","content":"go"}}],"tools":[{kit},{{"type":"function","function":{{"name":"caller_tool"}}}}],"tool_choice":"auto","max_tokens":50}}"#
        )
    );
    assert_eq!(
        result.tool_calls,
        [
            TranslatedToolCall {
                id: "call_1".into(),
                name: "kit_tool".into(),
                arguments: "{\"q\":1}".into()
            },
            TranslatedToolCall {
                id: "call_2".into(),
                name: "caller_tool".into(),
                arguments: "{}".into()
            },
        ]
    );
    assert_eq!(result.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        result.usage,
        Usage {
            prompt_tokens: 11,
            completion_tokens: 7,
            total_tokens: 18,
            ..Usage::default()
        }
    );
    assert_eq!(result.model, "test-model");
    assert_eq!(result.raw.as_ref().unwrap()["usage"]["total_tokens"], 18);
    assert_eq!(counts.get(), [1, 1, 0, 0], "llm hooks once, tool hooks never");
    assert_eq!(only_llm_event(&events), (true, 11, 7));
    let metrics = client.metrics();
    assert!(metrics.contains("toolnexus_llm_requests_total{model=\"test-model\",status=\"ok\"} 1\n"));
    assert!(
        !metrics.contains("toolnexus_tool_calls_total{"),
        "no tool ran:\n{metrics}"
    );
}

#[tokio::test]
async fn anthropic_translate_merges_request_params_and_honours_before_llm_overrides() {
    let mock = Mock::json([json!({
        "content": [{"type": "text", "text": "Paris is sunny."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 4}
    })])
    .await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let hooks = Hooks::new().before_llm(move |req| {
        seen2.lock().unwrap().push((
            req.messages.clone(),
            req.tools.clone(),
            req.model.clone(),
            req.turn,
        ));
        let mut messages = req.messages;
        messages.push(json!({"role": "user", "content": "(injected)"}));
        async move {
            Ok(Some(LlmOverride {
                messages: Some(messages),
                tools: None,
                model: Some("claude-override".into()),
            }))
        }
    });
    let events = Events::default();
    let mut params = serde_json::Map::new();
    params.insert("max_tokens".into(), json!(77));
    params.insert("temperature".into(), json!(0));
    let client = client(&mock.base, "anthropic", hooks, &events)
        .request_params(params)
        .build()
        .unwrap();
    let request = TranslateRequest::new(vec![
        json!({"role": "developer", "content": "Be brief."}),
        json!({"role": "user", "content": "Weather?"}),
        json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "sunny"}),
    ])
    .tools(vec![json!({"type": "function", "function": {"name": "get_weather", "description": "d"}})])
    .tool_choice(json!({"type": "function", "function": {"name": "get_weather"}}));

    let result = client.translate(request).await.unwrap();

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].header("authorization"), None);
    assert_eq!(
        requests[0].body,
        concat!(
            r#"{"model":"claude-override","max_tokens":77,"messages":["#,
            r#"{"role":"user","content":"Weather?"},"#,
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"get_weather","input":{"city":"Paris"}}]},"#,
            r#"{"role":"user","content":[{"type":"tool_result","content":"sunny","tool_use_id":"c1"}]},"#,
            r#"{"role":"user","content":"(injected)"}],"#,
            r#""system":"Be brief.","tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object","properties":{}}}],"#,
            r#""tool_choice":{"type":"tool","name":"get_weather"},"temperature":0}"#
        )
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].0.len(),
        3,
        "the hook sees the converted Anthropic messages"
    );
    assert_eq!(seen[0].1[0]["name"], "get_weather");
    assert_eq!((seen[0].2.as_str(), seen[0].3), ("test-model", 0));
    assert_eq!(result.text, "Paris is sunny.");
    assert!(result.tool_calls.is_empty());
    assert_eq!(result.finish_reason, FinishReason::Stop);
    assert_eq!(
        result.usage,
        Usage {
            prompt_tokens: 20,
            completion_tokens: 4,
            total_tokens: 24,
            ..Usage::default()
        }
    );
    assert_eq!(result.model, "claude-override");
}

#[tokio::test]
async fn translate_retries_429_with_retry_after_zero_then_succeeds() {
    let mock = Mock::start(vec![
        Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "0"),
        Reply::json(json!({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 2, "completion_tokens": 1}})),
    ])
    .await;
    let counts = Arc::new(HookCounts::default());
    let events = Events::default();
    let client = client(&mock.base, "openai", counting_hooks(&counts), &events)
        .build()
        .unwrap();

    let result = client.translate(say_hi()).await.unwrap();

    assert_eq!(result.text, "ok");
    assert_eq!(result.usage.total_tokens, 3);
    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 2, "one retry");
    assert_eq!(bodies[0], bodies[1]);
    assert_eq!(
        bodies[0],
        r#"{"model":"test-model","messages":[{"role":"user","content":"hi"}]}"#
    );
    assert_eq!(
        counts.get(),
        [1, 1, 0, 0],
        "hooks fire once per translate, not per attempt"
    );
    assert_eq!(only_llm_event(&events), (true, 2, 1));
}

#[tokio::test]
async fn translate_fails_at_once_on_401_and_records_an_llm_error() {
    let mock = Mock::start(vec![Reply::status(
        401,
        r#"{"error":{"message":"invalid api key"}}"#,
    )])
    .await;
    let counts = Arc::new(HookCounts::default());
    let events = Events::default();
    let client = client(&mock.base, "anthropic", counting_hooks(&counts), &events)
        .build()
        .unwrap();

    let err = client.translate(say_hi()).await.unwrap_err();

    match err {
        ClientError::Provider {
            status, ref message, ..
        } => {
            assert_eq!(status, 401);
            assert_eq!(message, "invalid api key");
        }
        other => panic!("expected a provider error, got {other:?}"),
    }
    assert_eq!(mock.requests().len(), 1, "401 is never retried");
    assert_eq!(counts.get(), [1, 0, 0, 0], "after_llm only sees responses");
    assert_eq!(only_llm_event(&events), (false, 0, 0));
    assert!(
        client
            .metrics()
            .contains("toolnexus_llm_requests_total{model=\"test-model\",status=\"error\"} 1\n")
    );
}

#[tokio::test]
async fn before_llm_can_abort_before_anything_is_sent() {
    let mock = Mock::start(vec![]).await;
    let events = Events::default();
    let hooks = Hooks::new().before_llm(|_| async { Err("route gate: model not allowed".into()) });
    let client = client(&mock.base, "openai", hooks, &events).build().unwrap();

    let err = client.translate(say_hi()).await.unwrap_err();

    assert!(
        matches!(err, ClientError::Hook(ref m) if m.to_string() == "route gate: model not allowed"),
        "{err:?}"
    );
    assert!(mock.requests().is_empty());
    assert!(events.lock().unwrap().is_empty());
}

#[tokio::test]
async fn cancelling_aborts_the_in_flight_call() {
    let mock = Mock::start(vec![
        Reply::json(json!({"choices": [{"message": {"content": "late"}}]})).delayed(Duration::from_secs(30)),
    ])
    .await;
    let events = Events::default();
    let client = client(&mock.base, "openai", Hooks::new(), &events)
        .build()
        .unwrap();
    let cancel = cancel_after(Duration::from_millis(100));
    let started = Instant::now();

    let err = client.translate(say_hi().cancel(cancel)).await.unwrap_err();

    assert!(matches!(err, ClientError::Cancelled), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "aborted, not waited out"
    );
    assert_eq!(mock.requests().len(), 1, "a cancel is never retried");
}

#[tokio::test]
async fn the_whole_call_timeout_applies() {
    let mock = Mock::start(vec![
        Reply::json(json!({"content": [{"type": "text", "text": "late"}]})).delayed(Duration::from_secs(30)),
    ])
    .await;
    let events = Events::default();
    let client = client(&mock.base, "anthropic", Hooks::new(), &events)
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let started = Instant::now();

    let err = client.translate(say_hi()).await.unwrap_err();

    assert!(
        matches!(err, ClientError::Timeout(t) if t == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(mock.requests().len(), 1);
}
