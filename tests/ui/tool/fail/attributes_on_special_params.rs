use toolnexus::{State, ToolContext, tool};

#[tool]
fn lookup(
    /// The call's context.
    ctx: ToolContext,
    #[serde(default)] State(db): State<Vec<String>>,
    index: usize,
) -> Option<String> {
    let _ = ctx;
    db.get(index).cloned()
}

fn main() {}
