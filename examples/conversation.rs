//! Multi-turn memory, two ways, against the embedded mock model on 127.0.0.1:
//! `client.conversation(&toolkit)` keeps a transcript across `send`s, and
//! `client.ask(prompt, id, …)` keeps one per conversation id in the client's store
//! (in memory by default; `FileStore` persists it).
//!
//! Run: `cargo run --example conversation`

mod support;

use toolnexus::client::RunOptions;
use toolnexus::client::Style;
use toolnexus::{tool, toolkit};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The embedded mock model on 127.0.0.1 and an OpenAI-style client of it (examples/support).
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let tk = toolkit![add];

    // A conversation object: each send continues the transcript.
    let mut convo = client.conversation(&tk);
    let r = convo.send(r#"add {"a":2,"b":3}"#).await?;
    println!(
        "turn 1: {:?} ({} messages so far)",
        r.text,
        convo.messages().len()
    );
    assert_eq!(r.text, "Here is what the tools returned:\n- add: 5");
    // user, assistant tool call, tool result, assistant answer
    assert_eq!(convo.messages().len(), 4);
    let r = convo.send("thanks").await?;
    println!(
        "turn 2: {:?} ({} messages so far)",
        r.text,
        convo.messages().len()
    );
    assert_eq!(r.text, "You said: thanks");
    assert_eq!(convo.messages().len(), 6);
    assert_eq!(convo.messages()[0]["content"], r#"add {"a":2,"b":3}"#);

    // ask with an id: the store keeps each thread apart.
    client
        .ask(r#"add {"a":1,"b":1}"#, "alice", RunOptions::new(&tk))
        .await?;
    let r = client.ask("and now?", "alice", RunOptions::new(&tk)).await?;
    println!("alice: {:?} ({} messages)", r.text, r.messages.len());
    assert_eq!(r.text, "You said: and now?");
    assert_eq!(r.messages.len(), 6);
    let r = client.ask("hello", "bob", RunOptions::new(&tk)).await?;
    println!("bob:   {:?} ({} messages)", r.text, r.messages.len());
    assert_eq!(r.text, "You said: hello");
    assert_eq!(r.messages.len(), 2);

    let alice = client.store().get("alice").await?.unwrap_or_default();
    assert_eq!(alice.len(), 6);
    assert_eq!(alice[2]["content"], "2");
    println!("stored thread \"alice\": {}", serde_json::to_string(&alice)?);
    Ok(())
}
