//! Sub-agents (SPEC §7D) against the embedded mock model on 127.0.0.1: a coordinator
//! delegates to two explorers in parallel through the `task` tool; one explorer's tool
//! needs an approval nobody in the tree can give, so the whole tree parks and the run
//! returns `pending`; the host answers, and `resume` replays the explorer from its
//! checkpoint, then the coordinator, whose `task` calls reattach to the children they
//! already have instead of spawning new ones.
//!
//! Run: `cargo run --example subagents`

use serde_json::Value;
use toolnexus::agents::{AgentRuntime, Budget, TaskStatus};
use toolnexus::client::{Client, Style};
use toolnexus::{Answer, Request, ToolContext, ToolResult, agents, tool};
use toolnexus_mock::{MockModel, Scenario};

/// Search the public docs.
#[tool]
fn lookup(q: String) -> String {
    format!("docs({q})")
}

/// Read the team's private notes (needs a human's approval).
#[tool]
fn read_notes(ctx: ToolContext) -> ToolResult {
    match ctx.answer {
        Some(a) if a.ok => ToolResult::success("notes: the cache is keyed by tenant"),
        Some(_) => ToolResult::failure("access declined"),
        None => ToolResult::suspend(Request::new("approval", "May explore read the private notes?")),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await?;

    // The team, checked at compile time: `team: [explorer]` or `uses: [lokup]` would not build.
    let registry = agents! {
        tools: [lookup, read_notes];
        coordinator { does: "splits the question and delegates", team: [explore], budget: Budget::new().max_children(4) },
        explore { does: "read-only research", uses: [lookup, read_notes], soul: "You research; you never write." },
    }?;

    let rt = AgentRuntime::builder(
        Client::builder()
            .base_url(model.base_url())
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("not-needed-for-the-mock"),
    )
    .build(registry)?;

    // The Planner mock calls every tool its prompt names: two `task` calls, in parallel.
    let prompt = r#"task {"agent":"explore","prompt":"lookup {\"q\":\"cache\"}"} task {"agent":"explore","prompt":"read_notes"}"#;
    let first = rt.run("coordinator", prompt).await?;
    println!("first run: status={} text={:?}", first.status, first.text);
    assert_eq!(first.status, TaskStatus::Pending);
    let request = first.pending.expect("a pending run carries its request");
    assert_eq!(request.kind, "approval");
    assert_eq!(request.prompt, "May explore read the private notes?");
    let path = request
        .data
        .as_ref()
        .map(|d| d["path"].clone())
        .unwrap_or_default();
    println!("parked: {request:?}");
    assert_eq!(path, serde_json::json!(["root", "coordinator.1"]));
    for v in rt.list() {
        println!("  {} {}", v.id, v.state);
    }

    // The host decides (a human, a policy, another process: Request/Answer are plain data).
    let answer = Answer {
        id: request.id.clone(),
        ok: true,
        data: None,
        reason: None,
    };
    let done = rt.resume(answer).await?;
    println!("resumed: status={} text={:?}", done.status, done.text);
    assert_eq!(done.status, TaskStatus::Done);
    assert_eq!(
        done.text,
        "Here is what the tools returned:\n- task: Here is what the tools returned:\n- task: Here is what the tools returned:"
    );

    // What each explorer found, read back off the runtime's one conversation store.
    let store = rt.conversation_store();
    let last = |t: Option<Vec<Value>>| t.and_then(|t| t.last().cloned()).map(|m| m["content"].clone());
    let found_1 = last(store.get("root/coordinator.1/explore.1").await?);
    let found_2 = last(store.get("root/coordinator.1/explore.2").await?);
    println!("explore.1: {found_1:?}\nexplore.2: {found_2:?}");
    assert_eq!(
        found_1.unwrap(),
        "Here is what the tools returned:\n- lookup: docs(cache)"
    );
    assert_eq!(
        found_2.unwrap(),
        "Here is what the tools returned:\n- read_notes: notes: the cache is keyed by tenant"
    );

    // Reattachment: two children, never a third; both closed after their task.
    let ids: Vec<String> = rt
        .list()
        .into_iter()
        .map(|v| format!("{} {}", v.id, v.state))
        .collect();
    assert_eq!(
        ids,
        [
            "root/coordinator.1 idle",
            "root/coordinator.1/explore.1 closed",
            "root/coordinator.1/explore.2 closed"
        ]
    );
    assert!(
        rt.trace()
            .iter()
            .any(|l| l.contains("task replay → REATTACH to root/coordinator.1/explore.1"))
    );
    rt.close(&rt.root()).await;
    assert!(rt.is_quiescent());
    println!("ok");
    Ok(())
}
