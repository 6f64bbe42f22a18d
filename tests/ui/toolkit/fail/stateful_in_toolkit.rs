use std::sync::Arc;
use toolnexus::{State, tool, toolkit};

#[tool]
fn lookup(State(db): State<Arc<Vec<String>>>, index: usize) -> Option<String> {
    db.get(index).cloned()
}

fn main() {
    let _ = toolkit![lookup];
}
