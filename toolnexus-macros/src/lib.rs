//! Procedural macros for [toolnexus](https://docs.rs/toolnexus): `#[tool]` and `toolkit![]`.
use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn tool(_attr: TokenStream, item: TokenStream) -> TokenStream { item }

#[proc_macro]
pub fn toolkit(_input: TokenStream) -> TokenStream { TokenStream::new() }
