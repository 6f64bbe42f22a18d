use toolnexus::{tool, toolkit};

#[tool]
fn search(query: String) -> String {
    query
}

#[tool(name = "search")]
fn find(query: String) -> String {
    query
}

#[tool]
fn refund(order: String) -> String {
    order
}

fn main() {
    let _ = toolkit![search, refund, find];
}
