//! The path the generated code reaches `toolnexus` by, resolved once per expansion: the
//! `crate = path` the user wrote, else the name the calling crate's `Cargo.toml` gives the
//! dependency (renamed ones included, as rig-derive does), else `::toolnexus`.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Ident, Path};

/// The runtime crate's path, as tokens to splice before `::Tool`, `::ToolDef`, ….
#[derive(Clone)]
pub(crate) struct Krate(TokenStream);

impl Krate {
    /// `explicit` when given, else found in the caller's manifest.
    pub(crate) fn resolve(explicit: Option<&Path>) -> Self {
        if let Some(path) = explicit {
            return Krate(path.to_token_stream());
        }
        let tokens = match crate_name("toolnexus") {
            Ok(FoundCrate::Name(name)) => {
                let ident = Ident::new(&name, Span::call_site());
                quote!(::#ident)
            }
            // Inside toolnexus itself (its unit tests and doc tests): the crate declares
            // `extern crate self as toolnexus`, so one spelling serves both.
            Ok(FoundCrate::Itself) | Err(_) => quote!(::toolnexus),
        };
        Krate(tokens)
    }

    /// The first segment of the path (`toolnexus` in `::toolnexus`): a parameter type whose
    /// path starts with it is one of the crate's.
    pub(crate) fn first_segment(&self) -> String {
        let path = self.0.to_string().replace(' ', "");
        let path = path.trim_start_matches("::");
        path.split("::").next().unwrap_or_default().to_owned()
    }

    /// The path of `item` inside the crate's hidden re-exports, as the string a
    /// `#[serde(crate = "…")]` attribute takes.
    pub(crate) fn private_str(&self, item: &str) -> String {
        let path = self.0.to_string().replace(' ', "");
        format!("{path}::__private::{item}")
    }
}

impl ToTokens for Krate {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.0.to_tokens(tokens);
    }
}
