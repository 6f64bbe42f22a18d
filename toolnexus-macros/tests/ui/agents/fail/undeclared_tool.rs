use toolnexus::tool;

/// Look a term up.
#[tool]
fn lookup(q: String) -> String {
    q
}

fn main() {
    let _ = toolnexus::agents! {
        tools: [lookup];
        explore { does: "read-only research", uses: [lookup, fetch] },
    };
}
