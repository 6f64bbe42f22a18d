use toolnexus::{tool, toolkit};

#[tool]
fn search(query: String) -> String {
    query
}

fn main() {
    let _ = toolkit![search refund];
    let _ = toolkit!["search"];
}
