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
