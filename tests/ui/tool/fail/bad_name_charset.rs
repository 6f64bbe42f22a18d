use toolnexus::tool;

/// Spaces and dots are outside what every provider accepts.
#[tool(name = "search docs.v2")]
fn search(query: String) -> String {
    query
}

fn main() {}
