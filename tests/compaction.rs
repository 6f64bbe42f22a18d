//! Context compaction (SPEC §7F): the shared fixture (tests/fixtures/agents/compaction.json),
//! the dialect-neutral tool-pair rule, the fallbacks, bad summarizers and estimators, the
//! byte-identical no-op on a real client run against the embedded mock model, and property
//! tests over random transcripts in both dialects.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolnexus::client::transport::{HttpTransport, ReqwestTransport, from_fn};
use toolnexus::client::{BoxError, Client, RunOptions, Style};
use toolnexus::compaction::{
    CompactorOptions, FLUSH_REMINDER, SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX, client_summarizer, compactor,
    estimate_tokens,
};
use toolnexus::{Tool, ToolResult, Toolkit};
use toolnexus_mock::{MockModel, Scenario};

fn fixture() -> Value {
    let text = std::fs::read_to_string("tests/fixtures/agents/compaction.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The fixture's transcript: the system prompt, then `userTurns` groups of four messages.
fn fixture_transcript(f: &Value) -> Vec<Value> {
    let input = &f["input"];
    let mut messages = vec![json!({"role": "system", "content": input["systemPrompt"]})];
    for i in 0..input["generator"]["userTurns"].as_u64().unwrap() {
        messages.extend([
            json!({"role": "user", "content": format!("question {i} {}", "pad ".repeat(40))}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("c{i}"), "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": format!("result {i} {}", "data ".repeat(40))}),
            json!({"role": "assistant", "content": format!("answer {i}")}),
        ]);
    }
    messages
}

/// The fixture's deterministic summarizer.
fn counting(older: Vec<Value>) -> std::future::Ready<Result<String, BoxError>> {
    std::future::ready(Ok(format!("summarized {} messages", older.len())))
}

fn fixture_options(f: &Value) -> CompactorOptions {
    let o = &f["options"];
    CompactorOptions::new(o["maxTokens"].as_u64().unwrap() as usize, counting)
        .keep_tail(o["keepTail"].as_u64().unwrap() as usize)
}

/// Every tool result (a `tool` message or a `tool_result` block) answers a call made by an
/// earlier assistant message of the same transcript.
fn tool_pair_safe(messages: &[Value]) -> bool {
    let mut called = HashSet::new();
    for m in messages {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            called.insert(c["id"].as_str().unwrap_or("").to_owned());
        }
        for part in m["parts"].as_array().into_iter().flatten() {
            if let Some(id) = part.pointer("/functionCall/id").and_then(Value::as_str) {
                called.insert(id.to_owned());
            }
            if let Some(r) = part.get("functionResponse")
                && !called.contains(r["id"].as_str().unwrap_or(""))
            {
                return false;
            }
        }
        let blocks = m["content"].as_array().into_iter().flatten();
        for b in blocks {
            if b["type"] == "tool_use" {
                called.insert(b["id"].as_str().unwrap_or("").to_owned());
            }
            if b["type"] == "tool_result" && !called.contains(b["tool_use_id"].as_str().unwrap_or("")) {
                return false;
            }
        }
        if m["role"] == "tool" && !called.contains(m["tool_call_id"].as_str().unwrap_or("")) {
            return false;
        }
    }
    true
}

#[tokio::test]
async fn fixture_every_expect_key() {
    let f = fixture();
    let expect = &f["expect"];
    let input = fixture_transcript(&f);
    assert_eq!(input.len(), 121);
    let out = compactor(fixture_options(&f)).compact(&input).await;
    assert_eq!(expect["compacts"], true);
    let out = out.expect("compacts");
    // resultSmallerThanInput, by the fixture's estimator. The figures are the Python
    // port's on the same bytes (cross-port parity of the estimator and the split).
    assert_eq!(expect["resultSmallerThanInput"], true);
    assert_eq!(estimate_tokens(&input), 4752);
    assert_eq!(estimate_tokens(&out), 824);
    // leadingSystemMessage: first, verbatim, containing SOUL.
    let lead = &expect["leadingSystemMessage"];
    assert_eq!(out[0]["role"], lead["role"]);
    assert!(
        out[0]["content"]
            .as_str()
            .unwrap()
            .contains(lead["contentContains"].as_str().unwrap())
    );
    assert_eq!(lead["mustBeFirst"], true);
    assert_eq!(out[0], input[0]);
    // summarySystemMessagePresent + summaryContentPrefix: 100 older messages summarized.
    assert_eq!(expect["summarySystemMessagePresent"], true);
    assert_eq!(expect["summaryContentPrefix"], SUMMARY_PREFIX);
    assert_eq!(
        out[1],
        json!({"role": "system", "content": format!("{SUMMARY_PREFIX}summarized 100 messages")})
    );
    // firstNonSystemMessageRole, and the tail is the input's last 20 messages unchanged.
    let first = out.iter().find(|m| m["role"] != "system").unwrap();
    assert_eq!(first["role"], expect["firstNonSystemMessageRole"]);
    assert_eq!(out.len(), 22);
    assert_eq!(out[2..], input[101..]);
    assert_eq!(out[2]["content"], format!("question 25 {}", "pad ".repeat(40)));
    // toolPairSafe.
    assert!(
        expect["toolPairSafe"]
            .as_str()
            .unwrap()
            .contains("no orphaned tool result")
    );
    assert!(tool_pair_safe(&out));
}

#[tokio::test]
async fn fixture_flush_to_memory_variant_puts_the_reminder_before_the_tail() {
    let f = fixture();
    assert_eq!(
        f["expect"]["flushToMemoryVariant"]["option"],
        "flushToMemory=true"
    );
    let input = fixture_transcript(&f);
    let out = compactor(fixture_options(&f).flush_to_memory(true))
        .compact(&input)
        .await
        .unwrap();
    assert_eq!(out.len(), 23);
    assert_eq!(out[2], json!({"role": "system", "content": FLUSH_REMINDER}));
    assert!(FLUSH_REMINDER.contains("memory tool"));
    assert_eq!(out[3..], input[101..]);
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// An Anthropic tool round: the `tool_use` turn and the `user` turn carrying its result.
fn anthropic_round(id: &str, output: &str) -> [Value; 2] {
    [
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "lookup", "input": {}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]}),
    ]
}

#[tokio::test]
async fn an_anthropic_tool_result_turn_is_not_a_boundary() {
    // The budget would fit a tail starting at the tool_result turn; it must start at the
    // real user turn before its tool_use instead (safety over size).
    let mut input = vec![user(&"old ".repeat(200)), assistant("ok")];
    input.push(user("look it up"));
    input.extend(anthropic_round("t1", &"r".repeat(40)));
    input.push(assistant("done"));
    let tail_from_result = estimate_tokens(&input[4..]);
    let c = compactor(
        CompactorOptions::new(100, counting)
            .keep_tail(tail_from_result)
            .style(Style::Anthropic),
    );
    let out = c.compact(&input).await.unwrap();
    // No leading system message under Anthropic; the summary is a user turn.
    assert_eq!(
        out[0],
        json!({"role": "user", "content": format!("{SUMMARY_PREFIX}summarized 2 messages")})
    );
    assert_eq!(out[1..], input[2..]);
    assert!(tool_pair_safe(&out));
}

#[tokio::test]
async fn with_no_boundary_in_budget_the_most_recent_one_is_kept() {
    let input = vec![
        json!({"role": "system", "content": "S"}),
        user(&"a".repeat(400)),
        assistant(&"b".repeat(400)),
        user(&"c".repeat(400)),
        assistant(&"d".repeat(400)),
    ];
    let out = compactor(CompactorOptions::new(50, counting).keep_tail(5))
        .compact(&input)
        .await
        .unwrap();
    assert_eq!(out.len(), 4);
    assert_eq!(
        out[1]["content"],
        format!("{SUMMARY_PREFIX}summarized 2 messages")
    );
    assert_eq!(out[2..], input[3..]);
}

#[tokio::test]
async fn with_no_boundary_at_all_everything_after_the_system_prompt_is_summarized() {
    // One long agentic turn: its only user message is the first, which cannot start a tail.
    let mut input = vec![json!({"role": "system", "content": "S"}), user("go")];
    for i in 0..5 {
        input.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("c{i}"), "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}));
        input.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "x".repeat(300)}));
    }
    let out = compactor(CompactorOptions::new(100, counting))
        .compact(&input)
        .await
        .unwrap();
    assert_eq!(
        out,
        vec![
            input[0].clone(),
            json!({"role": "system", "content": format!("{SUMMARY_PREFIX}summarized 11 messages")})
        ]
    );
}

#[tokio::test]
async fn a_failing_summarizer_or_a_panicking_estimator_leaves_the_turn_uncompacted() {
    let input = fixture_transcript(&fixture());
    let failing = compactor(CompactorOptions::new(2000, |_older: Vec<Value>| async {
        Err::<String, BoxError>("summary model is down".into())
    }));
    assert_eq!(failing.compact(&input).await, None);
    let panicking_summary = compactor(CompactorOptions::new(2000, |_older: Vec<Value>| async {
        panic!("summarizer bug");
        #[allow(unreachable_code)]
        Ok::<String, BoxError>(String::new())
    }));
    assert_eq!(panicking_summary.compact(&input).await, None);
    let panicking_count =
        compactor(CompactorOptions::new(2000, counting).count_tokens(|_| panic!("tokenizer bug")));
    assert_eq!(panicking_count.compact(&input).await, None);
    // A summary longer than what it replaces would grow the transcript: not applied.
    let verbose = compactor(CompactorOptions::new(2000, |_older: Vec<Value>| async {
        Ok::<String, BoxError>("x".repeat(100_000))
    }));
    assert_eq!(verbose.compact(&input).await, None);
}

#[tokio::test]
async fn a_custom_estimator_is_called_on_whole_runs() {
    // One token per message: 121 messages, keep at most 9 → the tail is 2 groups (8).
    let input = fixture_transcript(&fixture());
    let out = compactor(
        CompactorOptions::new(120, counting)
            .keep_tail(9)
            .count_tokens(|m: &[Value]| m.len()),
    )
    .compact(&input)
    .await
    .unwrap();
    assert_eq!(out.len(), 10);
    assert_eq!(
        out[1]["content"],
        format!("{SUMMARY_PREFIX}summarized 112 messages")
    );
    assert_eq!(out[2..], input[113..]);
}

/// A client on the embedded mock model whose transport records every request body.
async fn recording_client(mock: &MockModel, bodies: Arc<Mutex<Vec<Vec<u8>>>>) -> Client {
    let inner: Arc<dyn HttpTransport> = Arc::new(ReqwestTransport::new(Duration::from_secs(5)));
    let http = from_fn(move |req| {
        bodies.lock().unwrap().push(req.body.to_vec());
        let inner = inner.clone();
        async move { inner.post(req).await }
    });
    Client::builder()
        .base_url(mock.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("test-key")
        .system_prompt("You are Ava.")
        .transport(http)
        .build()
        .unwrap()
}

fn lookup_toolkit() -> Toolkit {
    Toolkit::new([Tool::new("lookup", |_, _| async {
        ToolResult::success("data ".repeat(40))
    })])
}

/// Two turns of one conversation: the bodies sent, and the final transcript.
async fn two_turns(client: &Client, hooks: Option<toolnexus::client::Hooks>) -> Vec<Value> {
    let tk = lookup_toolkit();
    let mut history = Vec::new();
    for prompt in ["lookup then lookup", "and again: lookup"] {
        let mut opts = RunOptions::new(&tk).history(history);
        if let Some(h) = &hooks {
            opts = opts.hooks(h.clone());
        }
        history = client.run_with(prompt, opts).await.unwrap().messages;
    }
    history
}

#[tokio::test]
async fn under_budget_a_run_is_byte_identical_to_one_without_a_compactor() {
    let mock = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let (plain, compacted) = (Arc::default(), Arc::default());
    let a = two_turns(&recording_client(&mock, Arc::clone(&plain)).await, None).await;
    let c = compactor(CompactorOptions::new(100_000, counting));
    let b = two_turns(
        &recording_client(&mock, Arc::clone(&compacted)).await,
        Some(c.hooks()),
    )
    .await;
    assert_eq!(a, b);
    let (plain, compacted) = (plain.lock().unwrap(), compacted.lock().unwrap());
    assert_eq!(plain.len(), 5);
    assert_eq!(*plain, *compacted);
}

#[tokio::test]
async fn over_budget_the_model_sees_the_compacted_transcript_and_the_run_keeps_it() {
    let mock = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let client = recording_client(&mock, Arc::clone(&bodies)).await;
    let c = compactor(CompactorOptions::new(150, counting).keep_tail(60));
    let messages = two_turns(&client, Some(c.hooks())).await;
    assert!(tool_pair_safe(&messages));
    assert_eq!(messages[0], json!({"role": "system", "content": "You are Ava."}));
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .starts_with(SUMMARY_PREFIX)
    );
    // The last request carried the rewritten transcript, summary second.
    let last: Value = serde_json::from_slice(bodies.lock().unwrap().last().unwrap()).unwrap();
    assert_eq!(last["messages"][0]["content"], "You are Ava.");
    assert!(
        last["messages"][1]["content"]
            .as_str()
            .unwrap()
            .starts_with(SUMMARY_PREFIX)
    );
    assert!(estimate_tokens(last["messages"].as_array().unwrap()) < 300);
}

#[tokio::test]
async fn the_client_summarizer_asks_the_model_with_the_rendered_transcript() {
    let mock = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let client = recording_client(&mock, Arc::clone(&bodies)).await;
    let summarize = client_summarizer(client);
    let summary = summarize(vec![user("what is the plan?"), assistant("ship on Friday")])
        .await
        .unwrap();
    // The planner echoes a prompt that names no tool.
    assert_eq!(
        summary,
        format!("You said: {SUMMARY_INSTRUCTIONS}\n\nuser: what is the plan?\nassistant: ship on Friday")
    );
    let sent: Value = serde_json::from_slice(&bodies.lock().unwrap()[0]).unwrap();
    assert!(sent.get("tools").is_none(), "a plain completion: {sent}");
}

/// One random transcript: an optional system prompt, then user turns, tool rounds (one or
/// two parallel calls) and answers, in the given dialect.
fn transcript(style: Style) -> impl Strategy<Value = Vec<Value>> {
    let step = prop_oneof![
        (0usize..300).prop_map(|n| (0u8, n, 0usize)),
        (0usize..300, 1usize..3).prop_map(|(n, k)| (1u8, n, k)),
        (0usize..300).prop_map(|n| (2u8, n, 0usize)),
    ];
    (any::<bool>(), proptest::collection::vec(step, 0..40)).prop_map(move |(system, steps)| {
        let mut m = Vec::new();
        if system && style == Style::OpenAi {
            m.push(json!({"role": "system", "content": "SOUL"}));
        }
        for (j, (kind, n, k)) in steps.into_iter().enumerate() {
            let text = "é".repeat(n);
            match kind {
                0 => m.push(user(&text)),
                2 => m.push(assistant(&text)),
                _ => {
                    let ids: Vec<String> = (0..k).map(|i| format!("c{j}_{i}")).collect();
                    match style {
                        Style::OpenAi => {
                            let calls: Vec<Value> = ids
                                .iter()
                                .map(|id| {
                                    json!({"id": id, "type": "function",
                                "function": {"name": "lookup", "arguments": "{}"}})
                                })
                                .collect();
                            m.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                            for id in &ids {
                                m.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
                            }
                        }
                        Style::Anthropic => {
                            let uses: Vec<Value> = ids
                                .iter()
                                .map(|id| {
                                    json!({"type": "tool_use", "id": id,
                                "name": "lookup", "input": {}})
                                })
                                .collect();
                            let results: Vec<Value> = ids
                                .iter()
                                .map(|id| {
                                    json!({"type": "tool_result",
                                "tool_use_id": id, "content": text})
                                })
                                .collect();
                            m.push(json!({"role": "assistant", "content": uses}));
                            m.push(json!({"role": "user", "content": results}));
                        }
                        Style::Gemini => {
                            let calls: Vec<Value> = ids
                                .iter()
                                .map(|id| json!({"functionCall": {"id": id, "name": "lookup", "args": {}}}))
                                .collect();
                            let responses: Vec<Value> = ids
                                .iter()
                                .map(|id| {
                                    json!({"functionResponse": {"id": id, "name": "lookup",
                                "response": {"output": text}}})
                                })
                                .collect();
                            m.push(json!({"role": "model", "parts": calls}));
                            m.push(json!({"role": "user", "parts": responses}));
                        }
                    }
                }
            }
        }
        m
    })
}

fn check(
    style: Style,
    input: Vec<Value>,
    max_tokens: usize,
    keep_tail: usize,
    flush: bool,
) -> Result<(), TestCaseError> {
    let c = compactor(
        CompactorOptions::new(max_tokens, counting)
            .keep_tail(keep_tail)
            .flush_to_memory(flush)
            .style(style),
    );
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let Some(out) = rt.block_on(c.compact(&input)) else {
        return Ok(());
    };
    prop_assert!(estimate_tokens(&input) > max_tokens);
    prop_assert!(estimate_tokens(&out) < estimate_tokens(&input));
    prop_assert!(tool_pair_safe(&out), "orphaned tool result in {out:?}");
    if input.first().is_some_and(|m| m["role"] == "system") {
        prop_assert_eq!(&out[0], &input[0]);
    }
    // What follows the summary (and reminder) is a suffix of the input, starting at a user
    // turn that carries no tool result.
    let head = usize::from(input[0]["role"] == "system");
    let tail = &out[head + 1 + usize::from(flush)..];
    prop_assert_eq!(tail, &input[input.len() - tail.len()..]);
    if let Some(first) = tail.first() {
        prop_assert_eq!(&first["role"], "user");
        prop_assert!(first["content"].is_string() || first["parts"][0]["text"].is_string());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn openai_transcripts_stay_tool_pair_safe(input in transcript(Style::OpenAi), max in 0usize..3000,
                                              keep in 0usize..2000, flush in any::<bool>()) {
        check(Style::OpenAi, input, max, keep, flush)?;
    }

    #[test]
    fn anthropic_transcripts_stay_tool_pair_safe(input in transcript(Style::Anthropic), max in 0usize..3000,
                                                 keep in 0usize..2000, flush in any::<bool>()) {
        check(Style::Anthropic, input, max, keep, flush)?;
    }

    #[test]
    fn gemini_transcripts_stay_tool_pair_safe(input in transcript(Style::Gemini), max in 0usize..3000,
                                              keep in 0usize..2000, flush in any::<bool>()) {
        check(Style::Gemini, input, max, keep, flush)?;
    }
}
