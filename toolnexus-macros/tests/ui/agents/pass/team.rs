//! A team declared with `agents!` compiles to a `Registry` the runtime builds over, every
//! field form in use: shared tools, `uses`, `team`, a soul, a model and a budget.

use toolnexus::client::{Client, Style};
use toolnexus::agents::{AgentRuntime, Budget};
use toolnexus::tool;

/// Look a term up.
#[tool]
fn lookup(q: String) -> String {
    format!("data({q})")
}

fn main() {
    let registry = toolnexus::agents! {
        tools: [lookup];
        coordinator { does: "splits and delegates", team: [explore], model: "m-coord", budget: Budget::new().max_turns(4) },
        explore { does: "read-only research", uses: [lookup], soul: "You research." },
    }
    .expect("a checked team is a valid registry");
    assert_eq!(registry.names(), ["coordinator", "explore"]);
    assert_eq!(registry.get("coordinator").unwrap().team_names(), ["explore"]);
    assert_eq!(registry.get("explore").unwrap().model_name(), "inherit");
    let rt = AgentRuntime::builder(Client::builder().base_url("http://127.0.0.1:9/v1").style(Style::OpenAi).model("m").api_key("k")).build(registry).expect("the runtime builds over the team");
    assert_eq!(rt.registry().names(), ["coordinator", "explore"]);
}
