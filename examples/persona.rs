//! A persona (SPEC §7E) across two sessions, against the embedded mock model on 127.0.0.1:
//! the first session stores a fact about the user with the `memory` tool; it is not in that
//! session's prompt (a frozen snapshot), and the second session, loading the directory
//! again, recalls it.
//!
//! Run: `cargo run --example persona`

use toolnexus::Toolkit;
use toolnexus::client::{Client, Style};
use toolnexus::persona::Persona;
use toolnexus_mock::{MockModel, Scenario};

/// A session: the directory loaded now, a client whose system prompt is its soul, and the
/// `memory` tool over the same directory.
fn session(persona: &Persona, model: &MockModel) -> Result<(Client, Toolkit), Box<dyn std::error::Error>> {
    let client = Client::builder()
        .base_url(model.base_url())
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("not-needed-for-the-mock")
        .system_prompt(persona.soul())
        .build()?;
    Ok((client, Toolkit::new([persona.memory_tool()])))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The mock's persona script answers a question naming no tool from the system prompt.
    let model = MockModel::start("127.0.0.1:0", Scenario::Persona).await?;
    let home = tempfile::tempdir()?;
    std::fs::write(
        home.path().join("SOUL.md"),
        "You are Ava, a calm support assistant.",
    )?;

    // Session 1: the model saves a fact about the user.
    let first = Persona::from_dir(home.path())?;
    println!("session 1: {first}");
    let (client, tk) = session(&first, &model)?;
    let r = client
        .run(
            r#"memory {"action":"add","target":"user","text":"Prefers dark roast"}"#,
            &tk,
        )
        .await?;
    println!("  saved   -> {:?}", r.text);
    assert_eq!(
        r.text,
        "Here is what the tools returned:\n- memory: saved to USER.md (added); it loads at the start of your next session"
    );
    let user_md = std::fs::read_to_string(home.path().join("USER.md"))?;
    assert_eq!(user_md, "- Prefers dark roast\n");
    // Same session: the prompt is the snapshot taken at its start.
    let r = client.run("what do you remember about me?", &tk).await?;
    println!("  recall  -> {:?}", r.text);
    assert_eq!(r.text, "I remember nothing yet.");

    // Session 2: the directory is read again, USER.md included.
    let second = Persona::from_dir(home.path())?;
    println!("session 2: {second}");
    assert_eq!(second.sections(), ["SOUL.md", "USER.md"]);
    let (client, tk) = session(&second, &model)?;
    let r = client.run("what do you remember about me?", &tk).await?;
    println!("  recall  -> {:?}", r.text);
    assert_eq!(r.text, "I remember: Prefers dark roast");
    Ok(())
}
