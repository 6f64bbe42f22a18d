//! `toolkit![]` forms: empty, paths into modules, a trailing comma, stateless tools mixed
//! with ones added by hand.

use toolnexus::{State, Toolkit, tool, toolkit};

mod orders {
    use toolnexus::tool;

    /// Refund an order.
    #[tool(name = "refund_order")]
    pub fn refund(order: String) -> String {
        order
    }
}

#[tool]
fn search(query: String) -> String {
    query
}

#[tool]
fn with_db(State(db): State<u32>) -> u32 {
    db
}

fn main() {
    let empty: Toolkit = toolkit![];
    assert!(empty.is_empty());
    let mut tk = toolkit![search, orders::refund,];
    tk.add_tools([with_db::with_state(7)]);
    assert_eq!(tk.tool_names(), ["refund_order", "search", "with_db"]);
    assert_eq!(<orders::refund as toolnexus::ToolDef>::NAME, "refund_order");
    assert_eq!(<with_db as toolnexus::ToolDef>::NAME, "with_db");
}
