//! The Gemini client style (issue 22): a full tool loop over the `generateContent` wire,
//! against `toolnexus-mock`'s Gemini dialect (checking the key) and a recording server for
//! the exact bodies.

mod client_mock;

use client_mock::{Mock, Reply, bounded};
use futures::StreamExt;
use serde_json::{Value, json};
use toolnexus::client::{
    Client, ClientBuilder, ClientError, RunOptions, RunStatus, StreamEvent, Style, Usage,
};
use toolnexus_mock::{MockModel, Scenario};

fn gemini(base: &str) -> ClientBuilder {
    Client::builder()
        .base_url(base)
        .style(Style::Gemini)
        .model("gemini-test")
        .api_key("sk-gemini-key")
        .retries(0)
}

fn calls_reply(calls: &[(&str, &str, Value)]) -> Value {
    let parts: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"functionCall": {"id": id, "name": name, "args": args}}))
        .collect();
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}})
}

fn text_reply(text: &str) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
           "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 3, "totalTokenCount": 23, "cachedContentTokenCount": 8}})
}

const DECLS: &str = r#"[{"functionDeclarations":[{"name":"add","description":"Add two numbers","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},{"name":"echo","description":"Echo text","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}]}]"#;

#[tokio::test]
async fn a_tool_loop_on_the_generate_content_wire_exact_bodies() {
    let mock = Mock::json([
        calls_reply(&[
            ("fc1", "add", json!({"a": 2, "b": 3})),
            ("fc2", "echo", json!({"text": "hi"})),
        ]),
        text_reply("5 and hi"),
    ])
    .await;
    let client = gemini(&format!("{}/v1beta", mock.base))
        .system_prompt("Be brief.")
        .build()
        .unwrap();
    let r = bounded(client.run("add 2 3 and echo hi", &client_mock::toolkit(None)))
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.status, r.turns),
        ("5 and hi", RunStatus::Done, 2)
    );
    assert_eq!(
        r.usage,
        Usage {
            prompt_tokens: 30,
            completion_tokens: 8,
            total_tokens: 38,
            cache_read_tokens: 8,
            cache_creation_tokens: 0,
        }
    );
    let outputs: Vec<(&str, &str)> = r
        .tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.output.as_str()))
        .collect();
    assert_eq!(outputs, [("add", "5"), ("echo", "echo:hi")]);

    let reqs = mock.requests();
    assert_eq!(reqs[0].path, "/v1beta/models/gemini-test:generateContent");
    assert_eq!(reqs[0].header("x-goog-api-key"), Some("sk-gemini-key"));
    assert_eq!(reqs[0].header("authorization"), None);
    assert_eq!(
        reqs[0].body,
        format!(
            r#"{{"contents":[{{"role":"user","parts":[{{"text":"add 2 3 and echo hi"}}]}}],"systemInstruction":{{"parts":[{{"text":"Be brief."}}]}},"tools":{DECLS}}}"#
        )
    );
    assert_eq!(
        reqs[1].body,
        format!(
            r#"{{"contents":[{{"role":"user","parts":[{{"text":"add 2 3 and echo hi"}}]}},{{"role":"model","parts":[{{"functionCall":{{"id":"fc1","name":"add","args":{{"a":2,"b":3}}}}}},{{"functionCall":{{"id":"fc2","name":"echo","args":{{"text":"hi"}}}}}}]}},{{"role":"user","parts":[{{"functionResponse":{{"name":"add","response":{{"output":"5"}},"id":"fc1"}}}},{{"functionResponse":{{"name":"echo","response":{{"output":"echo:hi"}},"id":"fc2"}}}}]}}],"systemInstruction":{{"parts":[{{"text":"Be brief."}}]}},"tools":{DECLS}}}"#
        )
    );
    // The transcript keeps Gemini's shapes; passed back, it continues the conversation.
    assert_eq!(r.messages.len(), 4);
    assert_eq!(r.messages[3]["role"], "model");
}

#[tokio::test]
async fn the_planner_drives_tools_over_gemini_streamed_and_not() {
    let mock = MockModel::start_with_api_key("127.0.0.1:0", Scenario::Planner, "sk-gemini-key")
        .await
        .unwrap();
    let tk = client_mock::toolkit(None);
    let client = gemini(&mock.gemini_base_url()).build().unwrap();
    let prompt = r#"add {"a":2,"b":3} and echo {"text":"hi"} then add {"a":1,"b":1}"#;
    let r = bounded(client.run(prompt, &tk)).await.unwrap();
    assert_eq!(
        r.text,
        "Here is what the tools returned:\n- add: 5\n- echo: echo:hi\n- add: 2"
    );
    assert_eq!((r.turns, r.tool_call_count), (3, 3));
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0);

    let events: Vec<StreamEvent> = bounded(
        client
            .stream(prompt, RunOptions::new(&tk))
            .map(|e| e.unwrap())
            .collect(),
    )
    .await;
    let calls: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall { id, name, args } => Some(format!("{id} {name} {args}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            r#"call_1_1 add {"a":2,"b":3}"#,
            r#"call_1_2 echo {"text":"hi"}"#,
            r#"call_2_1 add {"a":1,"b":1}"#
        ]
    );
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Text { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), r.text);
    assert!(deltas.len() > 1, "{deltas:?}");

    // The key is checked; the model list is Gemini's.
    let wrong = gemini(&mock.gemini_base_url()).api_key("nope").build().unwrap();
    let err = bounded(wrong.run("hi", &tk)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "LLM 401: API key not valid. Please pass a valid API key."
    );
    let ids: Vec<String> = bounded(client.list_models())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["mock-bench", "mock-model", "mock-planner"]);
}

#[tokio::test]
async fn streaming_asks_for_sse_and_reads_chunks() {
    let chunk = |v: Value| v.to_string();
    let mock = Mock::start(vec![Reply::sse(&[
        (None, chunk(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}))),
        (None, chunk(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6}}))),
    ])])
    .await;
    let client = gemini(&format!("{}/v1beta?key=q", mock.base)).build().unwrap();
    let events: Vec<_> = bounded(client.stream("hi", RunOptions::default()).collect::<Vec<_>>()).await;
    assert_eq!(
        mock.requests()[0].path,
        "/v1beta/models/gemini-test:streamGenerateContent?key=q&alt=sse"
    );
    assert_eq!(
        mock.bodies()[0],
        r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#
    );
    let Some(Ok(StreamEvent::Done { result })) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(result.text, "Hello");
    assert_eq!(
        result.messages[1],
        json!({"role": "model", "parts": [{"text": "Hello"}]})
    );
    assert_eq!((result.usage.prompt_tokens, result.usage.total_tokens), (4, 6));
}

#[tokio::test]
async fn translate_refuses_the_gemini_style() {
    let client = gemini("http://127.0.0.1:9/v1beta").build().unwrap();
    let err = client
        .translate(toolnexus::client::translate::TranslateRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Unsupported(_)), "{err}");
}
