//! A user's own `State`, `ToolContext` or `Args` is one of the model's arguments when it is
//! marked `#[arg]` or named through its own module.

use serde_json::json;
use toolnexus::{ToolContext, tool, toolkit};

mod session {
    /// The user's own type, named like toolnexus' `State`.
    #[derive(serde::Deserialize, toolnexus::schemars::JsonSchema)]
    #[schemars(crate = "toolnexus::schemars")]
    pub struct State<T> {
        pub value: T,
    }
}
use session::State;

#[tool]
fn remember(#[arg] state: State<String>) -> String {
    state.value
}

#[tool]
fn recall(state: session::State<u32>, #[arg(description = "Times")] times: u32) -> u32 {
    state.value * times
}

fn main() {
    let tk = toolkit![remember, recall];
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let r = rt.block_on(tk.execute("remember", json!({"state": {"value": "v"}}), ToolContext::default()));
    assert_eq!(r.output, "v");
    let r = rt.block_on(tk.execute("recall", json!({"state": {"value": 2}, "times": 3}), ToolContext::default()));
    assert_eq!(r.output, "6");
    assert!(tk.get("remember").unwrap().input_schema()["required"] == json!(["state"]));
}
