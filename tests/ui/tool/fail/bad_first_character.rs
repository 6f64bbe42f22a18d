use toolnexus::tool;

#[tool(name = "9lives")]
fn search(query: String) -> String {
    query
}

fn main() {}
