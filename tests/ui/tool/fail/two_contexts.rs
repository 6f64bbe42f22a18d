use toolnexus::{ToolContext, tool};

#[tool]
fn search(first: ToolContext, query: String, second: ToolContext) -> String {
    let _ = (first, second);
    query
}

fn main() {}
