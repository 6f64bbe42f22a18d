//! Context compaction (SPEC §7F) against the embedded mock model on 127.0.0.1: a long
//! conversation whose tool returns a lot of text stays under a token budget, because a
//! `before_llm` compactor summarizes the older turns and keeps the recent tail.
//!
//! Run: `cargo run --example compaction`

use serde_json::Value;
use toolnexus::client::{BoxError, Client, Style};
use toolnexus::compaction::{CompactorOptions, SUMMARY_PREFIX, compactor, estimate_tokens};
use toolnexus::{tool, toolkit};
use toolnexus_mock::{MockModel, Scenario};

/// Fetch a (long) report.
#[tool]
fn report(day: u32) -> String {
    format!("report for day {day}: {}", "all systems nominal. ".repeat(30))
}

const ASKED: &str = "the user asked: ";

/// A summarizer that needs no model: the questions asked so far, folding in the previous
/// summary (it is among the older messages the next time). With a real provider,
/// `toolnexus::compaction::client_summarizer(cheap_client)` asks a model instead.
async fn questions_asked(older: Vec<Value>) -> Result<String, BoxError> {
    let mut asked = Vec::new();
    for m in &older {
        let text = m["content"].as_str().unwrap_or_default();
        match m["role"].as_str() {
            Some("user") => asked.push(text),
            Some("system") => asked.extend(text.split_once(ASKED).map(|(_, earlier)| earlier)),
            _ => {}
        }
    }
    Ok(format!("{ASKED}{}", asked.join("; ")))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await?;
    const BUDGET: usize = 600;
    let compact = compactor(CompactorOptions::new(BUDGET, questions_asked).keep_tail(300));
    let client = Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed-for-the-mock")
        .system_prompt("You are Ava, an operations assistant.")
        .hooks(compact.hooks())
        .build()?;
    let tk = toolkit![report];

    let mut convo = client.conversation(&tk);
    let mut largest = 0;
    for day in 1..=8 {
        let r = convo.send(format!(r#"report {{"day":{day}}}"#)).await?;
        assert!(r.text.contains(&format!("report for day {day}")), "{}", r.text);
        let tokens = estimate_tokens(convo.messages());
        largest = largest.max(tokens);
        println!("day {day}: {} messages, ~{tokens} tokens", convo.messages().len());
    }
    let messages = convo.messages();
    // The system prompt is kept verbatim, the summary follows it, the tail is recent.
    assert_eq!(messages[0]["content"], "You are Ava, an operations assistant.");
    let summary = messages[1]["content"].as_str().unwrap_or_default();
    println!("summary: {summary:?}");
    assert!(summary.starts_with(SUMMARY_PREFIX), "{summary}");
    assert!(summary.contains(r#"report {"day":1}"#), "{summary}");
    // Eight days of reports are ~2,000 tokens; compaction keeps each request near the budget
    // (the last turn's own tool output rides on top until the next request compacts it).
    assert!(largest < 2 * BUDGET, "{largest}");
    println!("largest transcript: ~{largest} tokens for a budget of {BUDGET}");
    Ok(())
}
