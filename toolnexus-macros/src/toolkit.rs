//! `toolkit![a, b, …]`: a `Toolkit` of `#[tool]` functions, with a compile-time check that
//! their tool names are pairwise distinct.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::Parser as _;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Path, Token};

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let items = match Punctuated::<Path, Token![,]>::parse_terminated.parse2(input) {
        Ok(items) => items.into_iter().collect::<Vec<_>>(),
        Err(err) => {
            let message = format!(
                "{err}: `toolkit![...]` takes the names of `#[tool]` functions, like `toolkit![search, refund]`"
            );
            return syn::Error::new(err.span(), message).to_compile_error();
        }
    };
    if items.is_empty() {
        return quote! { ::toolnexus::Toolkit::default() };
    }
    let names = items
        .iter()
        .map(|p| quote_spanned! {p.span()=> <#p as ::toolnexus::ToolDef>::NAME });
    let count = items.len();
    // One assertion per pair, spanned at the later item, so the error names both.
    let mut checks = Vec::new();
    for (j, later) in items.iter().enumerate() {
        for (i, earlier) in items.iter().enumerate().take(j) {
            let message = format!(
                "duplicate tool name in toolkit![]: `{}` and `{}` have the same tool name; rename one with #[tool(name = \"...\")]",
                path_text(earlier),
                path_text(later)
            );
            checks.push(quote_spanned! {later.span()=>
                const _: () = ::core::assert!(!::toolnexus::__private::same_name(__NAMES[#i], __NAMES[#j]), #message);
            });
        }
    }
    let tools = items
        .iter()
        .map(|p| quote_spanned! {p.span()=> <#p as ::toolnexus::ToolDef>::tool() });
    quote! {{
        const __NAMES: [&str; #count] = [#(#names),*];
        #(#checks)*
        ::toolnexus::Toolkit::new([#(#tools),*])
    }}
}

fn path_text(path: &Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}
