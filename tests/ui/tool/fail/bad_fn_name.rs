use toolnexus::tool;

// The function name is the default tool name, so it is checked too.
#[tool]
fn café(order: String) -> String {
    order
}

fn main() {}
