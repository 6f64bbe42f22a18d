use toolnexus::tool;

#[tool(crate = 5)]
fn search(query: String) -> String {
    query
}

fn main() {}
