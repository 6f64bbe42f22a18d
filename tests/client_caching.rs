//! Prompt caching (issue 22): opt-in Anthropic `cache_control` breakpoints and OpenAI
//! `prompt_cache_key`, asserted on the exact bodies the provider receives; a client without
//! it sends the bytes it always did; cache usage reaches `RunResult.usage` and the metrics.

mod client_mock;

use client_mock::{Mock, Reply, bounded, python_bodies as py};
use serde_json::json;
use toolnexus::client::{PromptCache, RunOptions, StreamEvent, Usage};

/// `add` then a final answer, in Anthropic shapes.
fn anthropic_script() -> [serde_json::Value; 2] {
    [
        client_mock::anthropic_calls(&[
            ("t1", "add", json!({"a":2,"b":3})),
            ("t2", "echo", json!({"text":"hi"})),
        ]),
        client_mock::anthropic_text("5 and hi"),
    ]
}

const ANTHROPIC_CACHED_1: &str = r#"{"model":"claude-test","max_tokens":4096,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"add 2 3 and echo hi","cache_control":{"type":"ephemeral"}}]}],"tools":[{"name":"add","description":"Add two numbers","input_schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},{"name":"echo","description":"Echo text","input_schema":{"type":"object","properties":{"text":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}]}"#;
const ANTHROPIC_CACHED_2: &str = r#"{"model":"claude-test","max_tokens":4096,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"add 2 3 and echo hi"},{"role":"assistant","content":[{"type":"text","text":"Working."},{"type":"tool_use","id":"t1","name":"add","input":{"a":2,"b":3}},{"type":"tool_use","id":"t2","name":"echo","input":{"text":"hi"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"5","is_error":false},{"type":"tool_result","tool_use_id":"t2","content":"echo:hi","is_error":false,"cache_control":{"type":"ephemeral"}}]}],"tools":[{"name":"add","description":"Add two numbers","input_schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},{"name":"echo","description":"Echo text","input_schema":{"type":"object","properties":{"text":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}]}"#;

#[tokio::test]
async fn anthropic_breakpoints_after_tools_system_and_latest_message_only_when_asked() {
    let tk = client_mock::toolkit(None);
    // Without caching: the bytes of today (pinned to the Python port's).
    let plain = Mock::json(anthropic_script()).await;
    let client = client_mock::client("anthropic", &plain.base)
        .system_prompt("Be brief.")
        .build()
        .unwrap();
    bounded(client.run("add 2 3 and echo hi", &tk)).await.unwrap();
    assert_eq!(plain.bodies(), [py::ANTHROPIC_RUN_1, py::ANTHROPIC_RUN_2]);

    let cached = Mock::json(anthropic_script()).await;
    let client = client_mock::client("anthropic", &cached.base)
        .system_prompt("Be brief.")
        .prompt_cache(PromptCache::new())
        .build()
        .unwrap();
    let r = bounded(client.run("add 2 3 and echo hi", &tk)).await.unwrap();
    assert_eq!(cached.bodies(), [ANTHROPIC_CACHED_1, ANTHROPIC_CACHED_2]);
    // The marks are on the wire only: the transcript is the uncached one.
    assert_eq!(
        r.messages[0],
        json!({"role": "user", "content": "add 2 3 and echo hi"})
    );
    assert!(
        !serde_json::to_string(&r.messages)
            .unwrap()
            .contains("cache_control")
    );

    // The one-hour lifetime, on a streamed run.
    let sse = Mock::start(vec![Reply::sse(&[
        (Some("message_start"), json!({"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":0,"cache_read_input_tokens":40,"cache_creation_input_tokens":7}}}).to_string()),
        (Some("content_block_start"), json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}).to_string()),
        (Some("content_block_delta"), json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}).to_string()),
        (Some("message_delta"), json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}).to_string()),
    ])])
    .await;
    let client = client_mock::client("anthropic", &sse.base)
        .prompt_cache(PromptCache::new().long_ttl(true))
        .build()
        .unwrap();
    let events: Vec<_> = bounded(futures::StreamExt::collect::<Vec<_>>(
        client.stream("hi", RunOptions::default()),
    ))
    .await;
    assert_eq!(
        sse.bodies(),
        [
            r#"{"model":"claude-test","max_tokens":4096,"system":"","messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],"stream":true}"#
        ]
    );
    let Some(Ok(StreamEvent::Done { result })) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        result.usage,
        Usage {
            prompt_tokens: 3,
            completion_tokens: 1,
            total_tokens: 4,
            cache_read_tokens: 40,
            cache_creation_tokens: 7,
        }
    );
}

#[tokio::test]
async fn openai_gets_a_prompt_cache_key_and_nothing_else() {
    let script = || {
        [
            client_mock::openai_calls(&[
                ("c1", "add", r#"{"a":2,"b":3}"#),
                ("c2", "echo", r#"{"text":"hi"}"#),
            ]),
            client_mock::openai_text("5 and hi"),
        ]
    };
    let tk = client_mock::toolkit(None);
    let plain = Mock::json(script()).await;
    let client = client_mock::client("openai", &format!("{}/v1", plain.base))
        .system_prompt("Be brief.")
        .build()
        .unwrap();
    bounded(client.run("add 2 3 and echo hi", &tk)).await.unwrap();
    assert_eq!(plain.bodies(), [py::OPENAI_RUN_1, py::OPENAI_RUN_2]);

    let keyed = Mock::json(script()).await;
    let client = client_mock::client("openai", &format!("{}/v1", keyed.base))
        .system_prompt("Be brief.")
        .prompt_cache(PromptCache::new().key("user-42"))
        .build()
        .unwrap();
    bounded(client.run("add 2 3 and echo hi", &tk)).await.unwrap();
    let with_key = |body: &str| format!(r#"{},"prompt_cache_key":"user-42"}}"#, &body[..body.len() - 1]);
    assert_eq!(
        keyed.bodies(),
        [with_key(py::OPENAI_RUN_1), with_key(py::OPENAI_RUN_2)]
    );

    // Caching without a key changes nothing on the OpenAI wire.
    let keyless = Mock::json(script()).await;
    let client = client_mock::client("openai", &format!("{}/v1", keyless.base))
        .system_prompt("Be brief.")
        .prompt_cache(PromptCache::new())
        .build()
        .unwrap();
    bounded(client.run("add 2 3 and echo hi", &tk)).await.unwrap();
    assert_eq!(keyless.bodies(), [py::OPENAI_RUN_1, py::OPENAI_RUN_2]);
}

#[tokio::test]
async fn cache_usage_reaches_the_result_and_the_metrics() {
    let mock = Mock::json([
        json!({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
            {"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":1,\"b\":1}"}}]}}],
            "usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105,"prompt_tokens_details":{"cached_tokens":64}}}),
        json!({"choices":[{"message":{"role":"assistant","content":"2"}}],
            "usage":{"prompt_tokens":120,"completion_tokens":1,"total_tokens":121,"prompt_tokens_details":{"cached_tokens":96}}}),
    ])
    .await;
    let client = client_mock::client("openai", &mock.base)
        .prompt_cache(PromptCache::new().key("k"))
        .build()
        .unwrap();
    let r = bounded(client.run("add", &client_mock::toolkit(None)))
        .await
        .unwrap();
    assert_eq!(
        r.usage,
        Usage {
            prompt_tokens: 220,
            completion_tokens: 6,
            total_tokens: 226,
            cache_read_tokens: 160,
            cache_creation_tokens: 0,
        }
    );
    assert_eq!(
        serde_json::to_value(r.usage).unwrap(),
        json!({"prompt_tokens": 220, "completion_tokens": 6, "total_tokens": 226, "cache_read_tokens": 160})
    );
    let text = client.metrics();
    assert!(
        text.contains("toolnexus_llm_tokens_total{type=\"cache_read\"} 160\n"),
        "{text}"
    );
    assert!(!text.contains("cache_creation"), "{text}");

    let mock = Mock::json([json!({"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
        "usage":{"input_tokens":4,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":900}})])
    .await;
    let client = client_mock::client("anthropic", &mock.base)
        .prompt_cache(PromptCache::new())
        .build()
        .unwrap();
    let r = bounded(client.run("hi", &toolnexus::Toolkit::default()))
        .await
        .unwrap();
    assert_eq!(
        (r.usage.cache_read_tokens, r.usage.cache_creation_tokens),
        (0, 900)
    );
    let text = client.metrics();
    assert!(
        text.contains("toolnexus_llm_tokens_total{type=\"cache_creation\"} 900\n"),
        "{text}"
    );
    assert!(!text.contains("type=\"cache_read\""), "{text}");
}
