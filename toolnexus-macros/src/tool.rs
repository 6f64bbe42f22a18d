//! `#[tool]`: parse → validate → expand. Every attribute and signature error is collected in
//! one pass; with errors the function is still emitted, plus a stub tool definition, so one
//! mistake does not cascade into errors at every use of the tool.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, Ident, ItemFn, Lit, LitStr, Meta, Pat, PathArguments,
    ReturnType, Type,
};

/// Errors gathered across the whole item, reported together.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, err: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }
}

#[derive(Default)]
struct Options {
    name: Option<LitStr>,
    description: Option<LitStr>,
}

/// A parameter of the tool function, by role.
enum Param {
    /// `ToolContext`: the call's context, passed through.
    Context,
    /// `State<T>`: a clone of the value given to `with_state`.
    State(Type),
    /// `Args<T>`: the whole argument object as one struct.
    Args(Type),
    /// `name: T`: one property of the generated argument struct.
    Field(Box<Field>),
}

struct Field {
    ident: Ident,
    ty: Type,
    /// Doc comments and forwarded `#[serde]`/`#[schemars]` attributes.
    attrs: Vec<Attribute>,
    description: Option<LitStr>,
    default: Option<Default>,
}

enum Default {
    /// `#[arg(default)]`: `Default::default()`.
    Trait,
    /// `#[arg(default = expr)]`.
    Value(Expr),
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let options = parse_options(attr, &mut errors);
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "`#[tool]` goes on a function, like `async fn search(query: String) -> String`",
            );
            let err = err.to_compile_error();
            return quote! { #err #item };
        }
    };
    let params = take_params(&mut func, &mut errors);
    check_signature(&func, &params, &mut errors);
    let name = match &options.name {
        Some(lit) => {
            if let Some(problem) = crate::name::problem(&lit.value()) {
                errors.push(syn::Error::new(lit.span(), problem));
            }
            lit.value()
        }
        None => {
            let ident = func.sig.ident.unraw().to_string();
            if let Some(problem) = crate::name::problem(&ident) {
                errors.push(syn::Error::new(
                    func.sig.ident.span(),
                    format!("{problem}; set a valid one with #[tool(name = \"...\")]"),
                ));
            }
            ident
        }
    };
    let description = options
        .description
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| doc_text(&func.attrs));

    let definition = match errors.0 {
        None => definition(&func, &params, &name, &description),
        // A method sits in an `impl`, where no stub items can go.
        Some(err) if has_receiver(&func) => err.to_compile_error(),
        Some(err) => {
            let stub = stub(&func, &name);
            let err = err.to_compile_error();
            quote! { #err #stub }
        }
    };
    quote! {
        #func
        #definition
    }
}

fn parse_options(attr: TokenStream, errors: &mut Errors) -> Options {
    let mut options = Options::default();
    let mut found = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
        let slot =
            match key.as_str() {
                "name" => &mut options.name,
                "description" => &mut options.description,
                _ => {
                    found.push(meta.error(
                        "unknown `#[tool]` option; expected `name = \"...\"` or `description = \"...\"`",
                    ));
                    if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<Expr>()?;
                    }
                    return Ok(());
                }
            };
        let value: Expr = meta.value()?.parse()?;
        match string_literal(&value) {
            Some(_) if slot.is_some() => {
                found.push(syn::Error::new_spanned(
                    &meta.path,
                    format!("duplicate `{key}` option"),
                ));
            }
            Some(lit) => *slot = Some(lit),
            None => found.push(syn::Error::new_spanned(
                &value,
                format!("`{key}` takes a string literal, like `{key} = \"...\"`"),
            )),
        }
        Ok(())
    });
    if let Err(err) = parser.parse2(attr) {
        found.push(err);
    }
    found.into_iter().for_each(|e| errors.push(e));
    options
}

fn string_literal(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
        _ => None,
    }
}

/// The text of the `///` comments: one leading space per line removed, trimmed.
fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => string_literal(&nv.value),
            _ => None,
        })
        .map(|s| {
            let line = s.value();
            line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned()
        })
        .collect();
    lines.join("\n").trim().to_owned()
}

fn has_receiver(func: &ItemFn) -> bool {
    matches!(func.sig.inputs.first(), Some(FnArg::Receiver(_)))
}

/// The last path segment's name and, when it has exactly one, its type argument.
fn last_segment(ty: &Type) -> Option<(&Ident, Option<&Type>)> {
    let Type::Path(path) = ty else { return None };
    let segment = path.path.segments.last()?;
    let arg = match &segment.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(GenericArgument::Type(t)) => Some(t),
            _ => None,
        },
        _ => None,
    };
    Some((&segment.ident, arg))
}

/// Classify the parameters and strip the attributes only the macro reads (`#[arg]`, doc
/// comments, `#[serde]`, `#[schemars]`) from the emitted function.
fn take_params(func: &mut ItemFn, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for input in func.sig.inputs.iter_mut() {
        let FnArg::Typed(typed) = input else {
            errors.push(syn::Error::new_spanned(
                &*input,
                "`#[tool]` goes on a free function, not a method: `self` cannot come from a model's arguments",
            ));
            continue;
        };
        let (ours, kept): (Vec<Attribute>, Vec<Attribute>) =
            std::mem::take(&mut typed.attrs).into_iter().partition(|a| {
                ["arg", "doc", "serde", "schemars"]
                    .iter()
                    .any(|n| a.path().is_ident(n))
            });
        typed.attrs = kept;
        let role = last_segment(&typed.ty).and_then(|(ident, arg)| match (ident.to_string().as_str(), arg) {
            ("ToolContext", None) => Some(Param::Context),
            ("State", Some(inner)) => Some(Param::State(inner.clone())),
            ("Args", Some(inner)) => Some(Param::Args(inner.clone())),
            _ => None,
        });
        if let Some(role) = role {
            if let Some(attr) = ours.first() {
                errors.push(syn::Error::new_spanned(
                    attr,
                    "argument attributes apply to parameters filled from the model's arguments, not to this one",
                ));
            }
            params.push(role);
            continue;
        }
        let ident = match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "a `#[tool]` parameter must be a plain name, like `query: String`: the name is the argument's name",
                ));
                continue;
            }
        };
        let mut field = Field {
            ident,
            ty: (*typed.ty).clone(),
            attrs: Vec::new(),
            description: None,
            default: None,
        };
        for attr in ours {
            if attr.path().is_ident("arg") {
                parse_arg(&attr, &mut field, errors);
            } else {
                field.attrs.push(attr);
            }
        }
        params.push(Param::Field(Box::new(field)));
    }
    params
}

fn parse_arg(attr: &Attribute, field: &mut Field, errors: &mut Errors) {
    let mut found = Vec::new();
    let result = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("description") {
            let value: Expr = meta.value()?.parse()?;
            match string_literal(&value) {
                Some(lit) => field.description = Some(lit),
                None => found.push(syn::Error::new_spanned(
                    &value,
                    "`description` takes a string literal, like `description = \"...\"`",
                )),
            }
        } else if meta.path.is_ident("default") {
            field.default = Some(if meta.input.peek(syn::Token![=]) {
                Default::Value(meta.value()?.parse()?)
            } else {
                Default::Trait
            });
        } else {
            found.push(meta.error(
                "unknown `#[arg]` option; expected `description = \"...\"`, `default` or `default = value`",
            ));
            if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<Expr>()?;
            }
        }
        Ok(())
    });
    if let Err(err) = result {
        found.push(err);
    }
    found.into_iter().for_each(|e| errors.push(e));
}

fn check_signature(func: &ItemFn, params: &[Param], errors: &mut Errors) {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "a `#[tool]` function cannot be generic: the model's arguments need one concrete type",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            variadic,
            "a `#[tool]` function cannot be variadic",
        ));
    }
    let count = |f: fn(&Param) -> bool| params.iter().filter(|p| f(p)).count();
    let typed = || sig.inputs.iter().filter(|i| matches!(i, FnArg::Typed(_)));
    if count(|p| matches!(p, Param::Context)) > 1 {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            "a `#[tool]` function takes at most one `ToolContext`",
        ));
    }
    if count(|p| matches!(p, Param::State(_))) > 1 {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            "a `#[tool]` function takes at most one `State<T>`; put several values in one struct",
        ));
    }
    let args = count(|p| matches!(p, Param::Args(_)));
    if args > 0 && args + count(|p| matches!(p, Param::Field(_))) > 1 {
        let at = typed()
            .zip(params)
            .find(|(_, p)| matches!(p, Param::Args(_)))
            .map_or_else(|| sig.inputs.span(), |(i, _)| i.span());
        errors.push(syn::Error::new(
            at,
            "an `Args<T>` parameter takes the whole argument object, so it is the only argument parameter",
        ));
    }
}

fn definition(func: &ItemFn, params: &[Param], name: &str, description: &str) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let doc = format!("The `#[tool]` definition of [`{ident}`](fn@{ident}): the tool named `{name}`.");
    let state = params.iter().find_map(|p| match p {
        Param::State(t) => Some(t),
        _ => None,
    });
    let build = build(func, params, state.is_some(), description);
    let constructors = match state {
        None => quote! {
            /// The tool, built once (a clone is cheap).
            pub fn tool() -> ::toolnexus::Tool {
                static TOOL: ::std::sync::OnceLock<::toolnexus::Tool> = ::std::sync::OnceLock::new();
                TOOL.get_or_init(|| #build).clone()
            }
        },
        Some(state_ty) => quote! {
            /// The tool, whose `State` parameter receives a clone of `state` on each call.
            pub fn with_state(__state: #state_ty) -> ::toolnexus::Tool {
                #build
            }
        },
    };
    let tool_def = state.is_none().then(|| {
        quote! {
            impl ::toolnexus::ToolDef for #ident {
                const NAME: &'static str = #name;
                fn tool() -> ::toolnexus::Tool {
                    Self::tool()
                }
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[allow(dead_code)]
        impl #ident {
            /// The tool name.
            pub const NAME: &'static str = #name;
            #constructors
        }

        #tool_def
    }
}

/// The expression building the tool: argument struct, schema (computed once), and the
/// closure that parses the arguments and calls the function.
fn build(func: &ItemFn, params: &[Param], stateful: bool, description: &str) -> TokenStream {
    let ident = &func.sig.ident;
    let mut items = Vec::new();
    let args_ty = match params.iter().find_map(|p| match p {
        Param::Args(t) => Some(t),
        _ => None,
    }) {
        Some(t) => quote! { #t },
        None => {
            let fields = params.iter().filter_map(|p| match p {
                Param::Field(f) => Some(field(f, &mut items)),
                _ => None,
            });
            let fields: Vec<TokenStream> = fields.collect();
            items.push(quote! {
                #[derive(::toolnexus::__private::serde::Deserialize, ::toolnexus::__private::schemars::JsonSchema)]
                #[serde(crate = "::toolnexus::__private::serde")]
                #[schemars(crate = "::toolnexus::__private::schemars")]
                struct __Args {
                    #(#fields,)*
                }
            });
            quote! { __Args }
        }
    };
    let call_args = params.iter().map(|p| match p {
        Param::Context => quote! { __ctx.clone() },
        Param::State(_) => quote! { ::toolnexus::State(__state.clone()) },
        Param::Args(_) => quote! { ::toolnexus::Args(__args) },
        Param::Field(f) => {
            let ident = &f.ident;
            quote! { __args.#ident }
        }
    });
    let call = match func.sig.asyncness {
        Some(_) => quote! { #ident(#(#call_args),*).await },
        None => quote! { #ident(#(#call_args),*) },
    };
    // Spanned at the return type, so an unsupported one is reported there.
    let convert = match &func.sig.output {
        ReturnType::Type(_, ty) if !matches!(**ty, Type::ImplTrait(_)) => {
            quote_spanned! {ty.span()=> <#ty as ::toolnexus::IntoToolResult>::into_tool_result(__out) }
        }
        ReturnType::Type(..) => quote! { ::toolnexus::IntoToolResult::into_tool_result(__out) },
        ReturnType::Default => quote! { ::toolnexus::IntoToolResult::into_tool_result(__out) },
    };
    let clone_state = stateful.then(|| quote! { let __state = __state.clone(); });
    quote! {{
        #(#items)*
        static SCHEMA: ::std::sync::OnceLock<::toolnexus::__private::serde_json::Value> =
            ::std::sync::OnceLock::new();
        let __schema = SCHEMA.get_or_init(::toolnexus::schema::schema_for::<#args_ty>).clone();
        ::toolnexus::Tool::new(Self::NAME, move |__args: ::toolnexus::__private::serde_json::Value, __ctx: ::toolnexus::ToolContext| {
            #clone_state
            async move {
                let __args: #args_ty = match ::toolnexus::native::parse_args(Self::NAME, __args) {
                    ::core::result::Result::Ok(args) => args,
                    ::core::result::Result::Err(failure) => return failure,
                };
                let __out = #call;
                #convert
            }
        })
        .with_description(#description)
        .with_schema(__schema)
        .with_source(::toolnexus::ToolSource::Native)
    }}
}

/// One field of the generated argument struct (pushing its default function to `items`).
fn field(f: &Field, items: &mut Vec<TokenStream>) -> TokenStream {
    let Field {
        ident,
        ty,
        attrs,
        description,
        default,
    } = f;
    let description = description
        .as_ref()
        .map(|d| quote! { #[schemars(description = #d)] });
    let default = default.as_ref().map(|d| match d {
        Default::Trait => quote! { #[serde(default)] },
        Default::Value(value) => {
            let fn_name = format_ident!("__default_{}", ident.unraw());
            let path = fn_name.to_string();
            // A string literal default fills a `String` field.
            let value = match string_literal(value) {
                Some(lit) => quote! { ::core::convert::From::from(#lit) },
                None => quote! { #value },
            };
            items.push(quote! { fn #fn_name() -> #ty { #value } });
            quote! { #[serde(default = #path)] }
        }
    });
    quote! {
        #(#attrs)*
        #description
        #default
        #ident: #ty
    }
}

/// With errors: the same items, with bodies that are never run, so uses of the tool
/// elsewhere still type-check and only the real mistakes are reported.
fn stub(func: &ItemFn, name: &str) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    quote! {
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}
        #[allow(dead_code)]
        impl #ident {
            pub const NAME: &'static str = #name;
            pub fn tool() -> ::toolnexus::Tool {
                ::core::unreachable!()
            }
            pub fn with_state<T>(_: T) -> ::toolnexus::Tool {
                ::core::unreachable!()
            }
        }
        impl ::toolnexus::ToolDef for #ident {
            const NAME: &'static str = #name;
            fn tool() -> ::toolnexus::Tool {
                ::core::unreachable!()
            }
        }
    }
}
