use toolnexus::tool;

// An option without a value is a parse error at the option.
#[tool(name)]
fn search(query: String) -> String {
    query
}

fn main() {}
