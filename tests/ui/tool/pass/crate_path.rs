//! `#[tool(crate = path)]` and `toolkit![crate = path; ..]` reach toolnexus through a
//! re-export, as a crate that renames or wraps the dependency needs.

mod deps {
    pub use toolnexus as tn;
}

/// Echo a text.
#[deps::tn::tool(crate = deps::tn)]
fn echo(text: String, ctx: deps::tn::ToolContext) -> String {
    let _ = ctx;
    text
}

fn main() {
    let tk = deps::tn::toolkit![crate = deps::tn; echo];
    assert_eq!(tk.tool_names(), ["echo"]);
    assert_eq!(tk.get("echo").unwrap().description(), "Echo a text.");
}
