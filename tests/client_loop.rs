//! The loop against a real HTTP server on 127.0.0.1 playing each provider: exact request
//! bodies per turn (pinned to the Python port's), results, usage, headers, concurrency.

mod client_mock;

use std::sync::Arc;

use client_mock::{Mock, Reply, bounded, python_bodies as py, stream_events};
use serde_json::json;
use toolnexus::client::{Client, RunResult, RunStatus, StreamEvent, Usage};

/// The usage of both scripted turns together: 10 + 20 prompt and 5 + 3 completion tokens.
const TWO_TURNS: Usage = Usage {
    prompt_tokens: 30,
    completion_tokens: 8,
    total_tokens: 38,
    cache_read_tokens: 0,
    cache_creation_tokens: 0,
};

/// One run of "add 2 3 and echo hi" whose tools both wait on one barrier: it only finishes
/// (within `BOUND`) when the turn's two calls run concurrently.
async fn run_add_and_echo_in_parallel(client: &Client) -> RunResult {
    let tk = client_mock::toolkit(Some(Arc::new(tokio::sync::Barrier::new(2))));
    bounded(client.run("add 2 3 and echo hi", &tk)).await.unwrap()
}

#[tokio::test]
async fn openai_two_parallel_tool_calls_then_a_final_answer() {
    let mock = Mock::json([
        client_mock::openai_calls(&[
            ("c1", "add", r#"{"a":2,"b":3}"#),
            ("c2", "echo", r#"{"text":"hi"}"#),
        ]),
        client_mock::openai_text("5 and hi"),
    ])
    .await;
    let client = client_mock::client("openai", &format!("{}/v1", mock.base))
        .system_prompt("Be brief.")
        .build()
        .unwrap();
    let r = run_add_and_echo_in_parallel(&client).await;
    assert_eq!(mock.bodies(), vec![py::OPENAI_RUN_1, py::OPENAI_RUN_2]);
    let req = &mock.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(r.text, "5 and hi");
    assert_eq!(r.status, RunStatus::Done);
    assert_eq!(
        (r.turns, r.tool_call_count, r.limit, r.pending.as_ref()),
        (2, 2, None, None)
    );
    assert_eq!(r.usage, TWO_TURNS);
    assert_eq!(r.model, "gpt-test");
    assert_eq!(
        serde_json::to_string(&r.tool_calls).unwrap(),
        r#"[{"name":"add","args":{"a":2,"b":3},"output":"5","is_error":false,"metadata":null},{"name":"echo","args":{"text":"hi"},"output":"echo:hi","is_error":false,"metadata":null}]"#
    );
    assert_eq!(r.messages.len(), 6);
}

#[tokio::test]
async fn anthropic_two_parallel_tool_calls_then_a_final_answer() {
    let mock = Mock::json([
        client_mock::anthropic_calls(&[
            ("t1", "add", json!({"a":2,"b":3})),
            ("t2", "echo", json!({"text":"hi"})),
        ]),
        client_mock::anthropic_text("5 and hi"),
    ])
    .await;
    // No `/v1` on the base: the client appends it.
    let client = client_mock::client("anthropic", &mock.base)
        .system_prompt("Be brief.")
        .build()
        .unwrap();
    let r = run_add_and_echo_in_parallel(&client).await;
    assert_eq!(mock.bodies(), vec![py::ANTHROPIC_RUN_1, py::ANTHROPIC_RUN_2]);
    let req = &mock.requests()[1];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some("sk-test-key"));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(
        (r.text.as_str(), r.status, r.turns),
        ("5 and hi", RunStatus::Done, 2)
    );
    assert_eq!(r.usage, TWO_TURNS);
    assert_eq!(r.tool_calls[1].output, "echo:hi");
}

#[tokio::test]
async fn openai_stream_assembles_tool_calls_by_index() {
    let turn1 = Reply::openai_sse([
        json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"add","arguments":""}}]}}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"echo","arguments":"{\"text\":"}}]}}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":2,\"b\":3}"}}]}}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"hi\"}"}}]}}]}),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
        json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}),
    ]);
    let turn2 = Reply::openai_sse([
        json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"5 and "}}]}),
        json!({"choices":[{"index":0,"delta":{"content":"hi"}}]}),
        json!({"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}),
    ]);
    let mock = Mock::start(vec![turn1, turn2]).await;
    let client = client_mock::client("openai", &format!("{}/v1", mock.base))
        .build()
        .unwrap();
    let tk = client_mock::toolkit(None);
    let events = stream_events(&client, "add 2 3 and echo hi", &tk).await;
    assert_eq!(mock.bodies(), vec![py::OPENAI_STREAM_1, py::OPENAI_STREAM_2]);
    let usage = TWO_TURNS;
    let StreamEvent::Done { result } = events.last().unwrap().clone() else {
        panic!("no done")
    };
    assert_eq!(
        (result.text.as_str(), result.status, result.usage),
        ("5 and hi", RunStatus::Done, usage)
    );
    assert_eq!(
        events[..events.len() - 1],
        [
            StreamEvent::ToolCall {
                id: "c1".into(),
                name: "add".into(),
                args: json!({"a":2,"b":3})
            },
            StreamEvent::ToolCall {
                id: "c2".into(),
                name: "echo".into(),
                args: json!({"text":"hi"})
            },
            StreamEvent::ToolResult {
                id: "c1".into(),
                name: "add".into(),
                output: "5".into(),
                is_error: false
            },
            StreamEvent::ToolResult {
                id: "c2".into(),
                name: "echo".into(),
                output: "echo:hi".into(),
                is_error: false
            },
            StreamEvent::Text {
                delta: "5 and ".into()
            },
            StreamEvent::Text { delta: "hi".into() },
            StreamEvent::Usage { usage },
        ]
    );
}

fn ev(name: &'static str, v: serde_json::Value) -> (Option<&'static str>, String) {
    let mut v = v;
    v["type"] = name.into();
    (Some(name), v.to_string())
}

#[tokio::test]
async fn anthropic_stream_reads_content_blocks_and_message_delta() {
    let turn1 = Reply::sse(&[
        ev(
            "message_start",
            json!({"message":{"usage":{"input_tokens":10,"output_tokens":0}}}),
        ),
        ev(
            "content_block_start",
            json!({"index":0,"content_block":{"type":"tool_use","id":"t1","name":"add","input":{}}}),
        ),
        ev(
            "content_block_delta",
            json!({"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":2,"}}),
        ),
        ev(
            "content_block_delta",
            json!({"index":0,"delta":{"type":"input_json_delta","partial_json":"\"b\":3}"}}),
        ),
        ev("content_block_stop", json!({"index":0})),
        ev(
            "message_delta",
            json!({"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}),
        ),
        ev("message_stop", json!({})),
    ]);
    let turn2 = Reply::sse(&[
        ev(
            "message_start",
            json!({"message":{"usage":{"input_tokens":20,"output_tokens":0}}}),
        ),
        ev(
            "content_block_start",
            json!({"index":0,"content_block":{"type":"text","text":""}}),
        ),
        ev(
            "content_block_delta",
            json!({"index":0,"delta":{"type":"text_delta","text":"5"}}),
        ),
        ev(
            "message_delta",
            json!({"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}),
        ),
        ev("message_stop", json!({})),
    ]);
    let mock = Mock::start(vec![turn1, turn2]).await;
    let client = client_mock::client("anthropic", &format!("{}/v1", mock.base))
        .build()
        .unwrap();
    let tk = client_mock::toolkit(None);
    let events = stream_events(&client, "add 2 3", &tk).await;
    assert_eq!(
        mock.bodies(),
        vec![py::ANTHROPIC_STREAM_1, py::ANTHROPIC_STREAM_2]
    );
    let usage = TWO_TURNS;
    assert_eq!(
        events[..events.len() - 1],
        [
            StreamEvent::ToolCall {
                id: "t1".into(),
                name: "add".into(),
                args: json!({"a":2,"b":3})
            },
            StreamEvent::ToolResult {
                id: "t1".into(),
                name: "add".into(),
                output: "5".into(),
                is_error: false
            },
            StreamEvent::Text { delta: "5".into() },
            StreamEvent::Usage { usage },
        ]
    );
    let StreamEvent::Done { result } = events.last().unwrap() else {
        panic!("no done")
    };
    assert_eq!((result.text.as_str(), result.usage), ("5", usage));
}
