use toolnexus::{State, tool};

#[tool]
fn search(State(a): State<u32>, query: String, State(b): State<String>) -> String {
    format!("{a} {b} {query}")
}

fn main() {}
