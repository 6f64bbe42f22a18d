//! The mock over a real loopback socket: raw HTTP/1.1 in, the exact JSON body out.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolnexus_mock::{MockModel, Scenario};

async fn post(model: &MockModel, path: &str, body: &Value) -> (String, String) {
    let mut tcp = tokio::net::TcpStream::connect(model.addr()).await.unwrap();
    let body = body.to_string();
    let req = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut raw = String::new();
    tcp.read_to_string(&mut raw).await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    (head.to_owned(), body.to_owned())
}

#[tokio::test]
async fn openai_and_anthropic_wires() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Bench).await.unwrap();
    assert!(model.base_url().starts_with("http://127.0.0.1:"));
    let req = json!({"model": "m1", "messages": [{"role": "user", "content": "hi"}],
                     "tools": [{"type": "function", "function": {"name": "add"}}]});
    let (head, body) = post(&model, "/v1/chat/completions", &req).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["model"], "m1");
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28})
    );

    let (_, body) = post(&model, "/v1/messages", &req).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["stop_reason"], "tool_use");
    assert_eq!(
        v["content"][1],
        json!({"type": "tool_use", "id": "call_add_1", "name": "add", "input": {"a": 2, "b": 2}})
    );

    let (head, _) = post(&model, "/v1/chat/completions", &json!({"messages": 3})).await;
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
}

/// The benchmark script's bodies, byte for byte, on both wires: turn 1 (two parallel calls,
/// names resolved by suffix) and turn 2 (the final answer once a tool result is in).
#[tokio::test]
async fn bench_bodies_are_byte_exact() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Bench).await.unwrap();
    let turn1 = json!({"model": "m1", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "b_add"}},
                  {"type": "function", "function": {"name": "b_get_weather"}}]});
    let turn2 = json!({"model": "m1", "messages": [{"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "x", "content": "y"}]});
    let expected = [
        (
            "/v1/chat/completions",
            &turn1,
            r#"{"id":"chatcmpl-mock","object":"chat.completion","created":0,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_weather_1","type":"function","function":{"name":"b_get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_add_1","type":"function","function":{"name":"b_add","arguments":"{\"a\":2,\"b\":2}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}"#,
        ),
        (
            "/v1/chat/completions",
            &turn2,
            r#"{"id":"chatcmpl-mock","object":"chat.completion","created":0,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"The weather in Paris is Sunny, 22C. And 2 + 2 = 4."},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}"#,
        ),
        (
            "/v1/messages",
            &turn1,
            r#"{"id":"msg_mock","type":"message","role":"assistant","model":"m1","content":[{"type":"tool_use","id":"call_weather_1","name":"b_get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_add_1","name":"b_add","input":{"a":2,"b":2}}],"stop_reason":"tool_use","usage":{"input_tokens":20,"output_tokens":8}}"#,
        ),
        (
            "/v1/messages",
            &turn2,
            r#"{"id":"msg_mock","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"The weather in Paris is Sunny, 22C. And 2 + 2 = 4."}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":8}}"#,
        ),
    ];
    for (path, req, want) in expected {
        let (head, body) = post(&model, path, req).await;
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        assert_eq!(body, want, "{path}");
    }
}

#[tokio::test]
async fn streaming_is_server_sent_events() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let req = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hello"}]});
    let (head, body) = post(&model, "/v1/chat/completions", &req).await;
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    let text: String = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "You said: hello");
}
