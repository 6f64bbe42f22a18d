//! Skills: `Toolkit::build` discovers `examples/skills/**/SKILL.md`, puts a catalog of them in
//! `skills_prompt()` (for the system prompt) and exposes ONE `skill` tool that loads a skill's
//! body and a sample of its files on demand. Then the embedded mock model loads the skill
//! through that tool in a real agent run on 127.0.0.1.
//!
//! Run: `cargo run --example skills`

mod support;

use std::path::Path;

use serde_json::json;
use toolnexus::client::RunStatus;
use toolnexus::client::Style;
use toolnexus::{ToolContext, ToolSource, Toolkit, ToolkitOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let skills_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    // Only the skill source here: the built-in tools are switched off.
    let tk = Toolkit::build(ToolkitOptions::default().skills_dir(&skills_dir).builtins(false)).await?;
    println!("tools: {:?}", tk.tool_names());
    assert_eq!(tk.tool_names(), ["skill"]);
    assert_eq!(tk.get("skill").map(|t| t.source()), Some(ToolSource::Skill));

    println!("--- skills_prompt() ---\n{}\n---", tk.skills_prompt());
    assert_eq!(
        tk.skills_prompt(),
        "Skills provide specialized instructions and workflows for specific tasks.\n\
         Use the skill tool to load a skill when a task matches its description.\n\n\
         ## Available Skills\n\
         - **hello-world**: A tiny example skill. Use when you want to see how skill loading (progressive disclosure) works end to end."
    );

    // What the model gets when it calls the tool.
    let r = tk
        .execute("skill", json!({"name": "hello-world"}), ToolContext::default())
        .await;
    println!("--- skill {{\"name\":\"hello-world\"}} ---\n{}\n---", r.output);
    assert!(!r.is_error);
    let base = skills_dir.join("hello-world");
    assert!(
        r.output.starts_with(
            "<skill_content name=\"hello-world\">\n# Skill: hello-world\n\n# Hello World Skill\n"
        )
    );
    assert!(r.output.contains(&format!(
        "Base directory for this skill: file://{}\n",
        base.display()
    )));
    assert!(r.output.ends_with(&format!(
        "<skill_files>\n<file>{}</file>\n</skill_files>\n</skill_content>",
        base.join("scripts/greet.sh").display()
    )));

    // An unknown name is an error result listing what exists.
    let r = tk
        .execute("skill", json!({"name": "nope"}), ToolContext::default())
        .await;
    println!("skill {{\"name\":\"nope\"}} -> {}", r.to_json());
    assert_eq!(
        r.to_json(),
        r#"{"output":"Skill \"nope\" not found. Available skills: hello-world","isError":true}"#
    );

    // A model loads the skill itself: the mock calls `skill`, then summarizes the result.
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let result = client.run(r#"Load skill {"name":"hello-world"}"#, &tk).await?;
    println!("model: {}", result.text);
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tool_calls[0].name, "skill");
    assert_eq!(
        result.text,
        "Here is what the tools returned:\n- skill: <skill_content name=\"hello-world\">"
    );
    tk.close().await;
    Ok(())
}
