use toolnexus::tool;

#[tool]
struct Search {
    query: String,
}

fn main() {}
