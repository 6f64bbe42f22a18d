//! A `State<T>` parameter (bare, or by its full path) with a `ToolContext`, built with
//! `with_state`.

use std::sync::Arc;

use serde_json::json;
use toolnexus::{State, ToolContext, Toolkit, tool};

struct Db {
    customers: Vec<String>,
}

#[tool]
async fn customer(State(db): State<Arc<Db>>, ctx: ToolContext, index: usize) -> Option<String> {
    let who = db.customers.get(index)?;
    Some(format!("{who} ({})", ctx.call_id.unwrap_or_default()))
}

#[tool]
fn count(db: toolnexus::State<Arc<Db>>, context: toolnexus::ToolContext) -> usize {
    let _ = context;
    db.0.customers.len()
}

fn main() {
    let db = Arc::new(Db {
        customers: vec!["Ada".into()],
    });
    let mut tk = Toolkit::default();
    tk.add_tools([customer::with_state(db.clone()), count::with_state(db)]);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let ctx = ToolContext::default().with_call_id("c7");
    let r = rt.block_on(tk.execute("customer", json!({"index": 0}), ctx));
    assert_eq!(r.output, "Ada (c7)");
    let r = rt.block_on(tk.execute("count", json!({}), ToolContext::default()));
    assert_eq!(r.output, "1");
    assert_eq!(
        tk.get("customer").unwrap().input_schema().to_string(),
        r#"{"type":"object","properties":{"index":{"type":"integer","minimum":0}},"required":["index"]}"#
    );
}
