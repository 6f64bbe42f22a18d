//! `toolkit![a, b, …]`: a `Toolkit` of `#[tool]` functions, with a compile-time check that
//! their tool names are pairwise distinct. `toolkit![crate = path; a, b]` names the path
//! toolnexus is reached by, as `#[tool(crate = path)]` does.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::{ParseStream, Parser as _};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Path, Token};

use crate::krate::Krate;

struct Input {
    krate: Option<Path>,
    items: Vec<Path>,
}

fn parse(input: ParseStream) -> syn::Result<Input> {
    let krate = if input.peek(Token![crate]) && input.peek2(Token![=]) {
        input.parse::<Token![crate]>()?;
        input.parse::<Token![=]>()?;
        let path = input.parse::<Path>()?;
        input.parse::<Token![;]>()?;
        Some(path)
    } else {
        None
    };
    let items = Punctuated::<Path, Token![,]>::parse_terminated(input)?;
    Ok(Input {
        krate,
        items: items.into_iter().collect(),
    })
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let Input { krate, items } = match parse.parse2(input) {
        Ok(input) => input,
        Err(err) => {
            let message = format!(
                "{err}: `toolkit![...]` takes the names of `#[tool]` functions, like `toolkit![search, refund]`"
            );
            return syn::Error::new(err.span(), message).to_compile_error();
        }
    };
    let krate = Krate::resolve(krate.as_ref());
    if items.is_empty() {
        return quote! { #krate::Toolkit::default() };
    }
    let names = items
        .iter()
        .map(|p| quote_spanned! {p.span()=> <#p as #krate::ToolDef>::NAME });
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
                const _: () = ::core::assert!(!#krate::__private::same_name(__NAMES[#i], __NAMES[#j]), #message);
            });
        }
    }
    let tools = items.iter().map(
        |p| quote_spanned! {p.span()=> <<#p as #krate::ToolDef>::Builder as #krate::BuildTool>::tool() },
    );
    quote! {{
        const __NAMES: [&str; #count] = [#(#names),*];
        #(#checks)*
        #krate::Toolkit::new([#(#tools),*])
    }}
}

fn path_text(path: &Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}
