//! Suspension (human in the loop), against the embedded mock model on 127.0.0.1. The
//! built-in `question` tool suspends with a `kind: "question"` request.
//!
//! 1. Inline: a `wait_for` hook answers the question and the run just continues.
//! 2. Durable: without `wait_for` the run halts with `status: pending`; the `RunResult` is
//!    serialized (as a host would persist it), and a *second* client instance resumes it
//!    later with `run_with_answer`.
//!
//! Run: `cargo run --example suspension`

use toolnexus::builtin;
use toolnexus::client::Style;
use toolnexus::client::{Client, ClientBuilder, RunOptions, RunResult, RunStatus};
use toolnexus::{Answer, Request, Toolkit};
use toolnexus_mock::{MockModel, Scenario};

const PROMPT: &str = r#"question {"questions":[{"question":"Which city?","options":["Paris","Oslo"]}]}"#;

fn builder(model: &MockModel) -> ClientBuilder {
    Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed-for-the-mock")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await?;
    let tk = Toolkit::new(builtin::all().into_iter().filter(|t| t.name() == "question"));

    // 1. wait_for resolves the question inline.
    let client = builder(&model)
        .wait_for_fn(|request: Request| async move {
            println!("wait_for: kind={} prompt={:?}", request.kind, request.prompt);
            assert_eq!(request.kind, "question");
            assert_eq!(request.prompt, "Which city? (options: Paris, Oslo)");
            Answer::output(request.id, "Paris")
        })
        .build()?;
    let r = client.run(PROMPT, &tk).await?;
    println!("inline: status={:?} text={:?}", r.status, r.text);
    assert_eq!(r.status, RunStatus::Done);
    assert_eq!(r.tool_calls[0].output, r#"{"output":"Paris"}"#);
    assert_eq!(
        r.text,
        "Here is what the tools returned:\n- question: {\"output\":\"Paris\"}"
    );

    // 2a. No wait_for: the run halts, and the host persists the halted run.
    let first = builder(&model).build()?;
    let halted = first.run(PROMPT, &tk).await?;
    println!("halted: status={:?} text={:?}", halted.status, halted.text);
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.text, "Which city? (options: Paris, Oslo)");
    let saved: String = serde_json::to_string(&halted)?;
    drop(first);

    // 2b. Later — another client instance, maybe another process — loads it and resumes.
    let restored: RunResult = serde_json::from_str(&saved)?;
    let pending = restored
        .pending
        .as_ref()
        .ok_or("a pending run carries its request")?;
    println!("pending request: {}", serde_json::to_string(pending)?);
    assert_eq!(pending.kind, "question");
    let second = builder(&model).build()?;
    let answer = Answer::output(&pending.id, "Oslo");
    let resumed = second
        .run_with_answer(
            pending,
            &answer,
            RunOptions::new(&tk).history(restored.messages.clone()),
        )
        .await?;
    println!("resumed: status={:?} text={:?}", resumed.status, resumed.text);
    assert_eq!(resumed.status, RunStatus::Done);
    assert_eq!(
        resumed.text,
        "Here is what the tools returned:\n- question: {\"output\":\"Oslo\"}"
    );
    Ok(())
}
