//! Procedural macros for [toolnexus](https://docs.rs/toolnexus): `#[tool]` and `toolkit![]`.
//!
//! Use them through the `toolnexus` crate (`toolnexus::tool`, `toolnexus::toolkit`), whose
//! crate docs show them in use; the generated code reaches its dependencies only through
//! `::toolnexus::__private`, so a user needs no direct serde or schemars dependency.

use proc_macro::TokenStream;

mod name;
mod tool;
mod toolkit;

/// Turn a function into a toolnexus tool. See the `toolnexus` crate docs.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Build a `Toolkit` from `#[tool]` functions, checking at compile time that their tool
/// names are distinct. See the `toolnexus` crate docs.
#[proc_macro]
pub fn toolkit(input: TokenStream) -> TokenStream {
    toolkit::expand(input.into()).into()
}
