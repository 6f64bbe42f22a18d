//! Procedural macros for [toolnexus](https://docs.rs/toolnexus): `#[tool]` and `toolkit![]`.
//!
//! Use them through the `toolnexus` crate (`toolnexus::tool`, `toolnexus::toolkit`), whose
//! crate docs show them in use; the generated code reaches its dependencies only through
//! `::toolnexus::__private`, so a user needs no direct serde or schemars dependency.

use proc_macro::TokenStream;

mod name;
mod tool;
mod toolkit;

/// Turn a function (`async fn` or `fn`) into a toolnexus tool.
///
/// The function stays as written; a same-named item in the type namespace gains `NAME`,
/// `tool()` (or `with_state(value)` when a parameter is `State<T>`) and implements
/// `toolnexus::ToolDef`. Options: `#[tool(name = "…", description = "…")]` (defaults: the
/// function name and its doc comment). Each parameter is one argument property, described by
/// its doc comment or `#[arg(description = "…")]`, optional when `Option<T>` or
/// `#[arg(default)]` / `#[arg(default = value)]`; `ToolContext`, `State<T>` and a single
/// `Args<T>` parameter are recognised by type name. Guide and tested examples: the
/// `toolnexus::native` module docs.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// `toolkit![search, refund]`: a `toolnexus::Toolkit` of `#[tool]` functions (paths allowed),
/// with a compile-time error naming both items when two share a tool name. See the
/// `toolnexus::native` module docs.
#[proc_macro]
pub fn toolkit(input: TokenStream) -> TokenStream {
    toolkit::expand(input.into()).into()
}
