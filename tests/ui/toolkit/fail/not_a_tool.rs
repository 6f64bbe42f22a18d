use toolnexus::{tool, toolkit};

#[tool]
fn search(query: String) -> String {
    query
}

struct Refund;

fn main() {
    let _ = toolkit![search, Refund];
}
