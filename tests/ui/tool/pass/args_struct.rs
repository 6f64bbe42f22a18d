//! One `Args<T>` parameter takes the whole argument object as the user's own struct.

use serde_json::json;
use toolnexus::schemars::JsonSchema;
use toolnexus::{Args, ToolContext, tool, toolkit};

#[derive(serde::Deserialize, JsonSchema)]
#[schemars(crate = "toolnexus::schemars")]
struct Query {
    /// What to look for.
    text: String,
    limit: Option<u32>,
}

#[tool]
async fn search(Args(q): Args<Query>, ctx: ToolContext) -> String {
    let _ = ctx;
    format!("{} {:?}", q.text, q.limit)
}

fn main() {
    let tk = toolkit![search];
    assert_eq!(
        tk.get("search").unwrap().input_schema().to_string(),
        r#"{"type":"object","properties":{"text":{"type":"string","description":"What to look for."},"limit":{"type":"integer","minimum":0}},"required":["text"]}"#
    );
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let r = rt.block_on(tk.execute("search", json!({"text": "lamp"}), ToolContext::default()));
    assert_eq!(r.output, "lamp None");
}
