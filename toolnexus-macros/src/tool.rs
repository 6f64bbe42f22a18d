//! `#[tool]`: parse → validate → expand. Every attribute and signature error is collected in
//! one pass; with errors the function is still emitted, plus a stub tool definition, so one
//! mistake does not cascade into errors at every use of the tool.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, Ident, ItemFn, Lit, LitStr, Meta, Pat, Path,
    PathArguments, ReturnType, Type,
};

use crate::krate::Krate;

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
    krate: Option<Path>,
}

/// A parameter of the tool function, by role.
enum Param {
    /// `ToolContext`: the call's context, passed through.
    Context(Type),
    /// `State<T>` (the parameter's type, and `T`): a clone of the value given to `with_state`.
    State(Type, Type),
    /// `Args<T>` (the parameter's type, and `T`): the whole argument object as one struct.
    Args(Type, Type),
    /// `name: T`: one property of the generated argument struct.
    Field(Box<Field>),
}

impl Param {
    /// Where the parameter is: its type, or its name for an argument.
    fn span(&self) -> Span {
        match self {
            Param::Context(ty) | Param::State(ty, _) | Param::Args(ty, _) => ty.span(),
            Param::Field(f) => f.ident.span(),
        }
    }
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
    let krate = Krate::resolve(options.krate.as_ref());
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let err = syn::Error::new_spanned(
                &item,
                "`#[tool]` goes on a function, like `async fn search(query: String) -> String`",
            );
            let err = err.to_compile_error();
            return quote! { #err #item };
        }
    };
    let params = take_params(&mut func, &krate, &mut errors);
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
    let description = match &options.description {
        Some(lit) => lit.to_token_stream(),
        None => doc_text(&func.attrs),
    };

    let definition = match errors.0 {
        None => definition(&func, &params, &name, &description, &krate),
        // A method sits in an `impl`, where no stub items can go.
        Some(err) if has_receiver(&func) => err.to_compile_error(),
        Some(err) => {
            let stub = stub(&func, &name, &krate);
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
        let key = meta
            .path
            .get_ident()
            .map(|i| i.unraw().to_string())
            .unwrap_or_default();
        if meta.path.is_ident("crate") {
            if !meta.input.peek(syn::Token![=]) {
                found.push(meta.error(
                    "`crate` takes the path toolnexus is reached by, like `crate = my_deps::toolnexus`",
                ));
                return Ok(());
            }
            let value: Expr = meta.value()?.parse()?;
            let path = match &value {
                Expr::Path(p) if p.qself.is_none() => Some(p.path.clone()),
                _ => string_literal(&value).and_then(|lit| lit.parse::<Path>().ok()),
            };
            match path {
                Some(_) if options.krate.is_some() => {
                    found.push(syn::Error::new_spanned(&meta.path, "duplicate `crate` option"))
                }
                Some(path) => options.krate = Some(path),
                None => found.push(syn::Error::new_spanned(
                    &value,
                    "`crate` takes the path toolnexus is reached by, like `crate = my_deps::toolnexus`",
                )),
            }
            return Ok(());
        }
        let slot = match key.as_str() {
            "name" => &mut options.name,
            "description" => &mut options.description,
            _ => {
                found.push(meta.error(
                    "unknown `#[tool]` option; expected `name = \"...\"`, `description = \"...\"` or `crate = path`",
                ));
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<Expr>()?;
                }
                return Ok(());
            }
        };
        if !meta.input.peek(syn::Token![=]) {
            found.push(meta.error(format!("`{key}` takes a string literal, like `{key} = \"...\"`")));
            return Ok(());
        }
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

/// The description from the doc comments, as an expression of type `&str`: one leading
/// space per line removed, lines joined with `\n`, trimmed. A `#[doc = include_str!(..)]`
/// (any non-literal doc) is kept as written, and the whole is trimmed when the tool is built.
fn doc_text(attrs: &[Attribute]) -> TokenStream {
    let docs: Vec<&Expr> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .collect();
    let line = |lit: &LitStr| {
        let line = lit.value();
        line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned()
    };
    let literal: Option<Vec<String>> = docs
        .iter()
        .map(|e| string_literal(e).map(|lit| line(&lit)))
        .collect();
    if let Some(lines) = literal {
        let text = lines.join("\n").trim().to_owned();
        return quote!(#text);
    }
    let parts = docs.iter().enumerate().map(|(i, e)| {
        let sep = (i > 0).then(|| quote!("\n",));
        match string_literal(e) {
            Some(lit) => {
                let text = line(&lit);
                quote!(#sep #text,)
            }
            None => quote!(#sep #e,),
        }
    });
    quote!(::core::concat!(#(#parts)*).trim())
}

fn has_receiver(func: &ItemFn) -> bool {
    matches!(func.sig.inputs.first(), Some(FnArg::Receiver(_)))
}

/// The role of a parameter by its type: `ToolContext`, `State<T>` or `Args<T>`, written bare
/// (checked to be toolnexus' own by the generated code: a user type of the same name is a
/// compile error that says to mark it `#[arg]`) or as a path starting at the toolnexus crate
/// (`toolnexus::State<T>`); a path through another crate or module (`db::State`) is a
/// model's argument like any other type.
fn role(ty: &Type, krate: &Krate) -> Option<Param> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let segments = &path.path.segments;
    let ours = if segments.len() == 1 && path.path.leading_colon.is_none() {
        true
    } else {
        let first = segments.first().map(|s| s.ident.unraw().to_string());
        first.as_deref() == Some(krate.first_segment().as_str())
    };
    let last = segments.last()?;
    if !ours {
        return None;
    }
    let arg = match &last.arguments {
        PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(GenericArgument::Type(t)) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    };
    match (last.ident.to_string().as_str(), arg) {
        ("ToolContext", None) if last.arguments.is_none() => Some(Param::Context(ty.clone())),
        ("State", Some(inner)) => Some(Param::State(ty.clone(), inner)),
        ("Args", Some(inner)) => Some(Param::Args(ty.clone(), inner)),
        _ => None,
    }
}

/// Classify the parameters and strip the attributes only the macro reads (`#[arg]`, doc
/// comments, `#[serde]`, `#[schemars]`) from the emitted function.
fn take_params(func: &mut ItemFn, krate: &Krate, errors: &mut Errors) -> Vec<Param> {
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
        // `#[arg]` marks a parameter the model fills, whatever its type is called.
        let marked = ours.iter().any(|a| a.path().is_ident("arg"));
        if let Some(role) = role(&typed.ty, krate).filter(|_| !marked) {
            if let Some(attr) = ours.first() {
                errors.push(syn::Error::new_spanned(
                    attr,
                    "argument attributes apply to parameters the model fills, not to this one; mark the parameter `#[arg]` if the model fills it",
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
    // A bare `#[arg]` only marks the parameter as the model's.
    if matches!(attr.meta, Meta::Path(_)) {
        return;
    }
    let mut found = Vec::new();
    let result = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("description") {
            let value: Expr = meta.value()?.parse()?;
            match string_literal(&value) {
                Some(_) if field.description.is_some() => found.push(syn::Error::new_spanned(
                    &meta.path,
                    "duplicate `description` option",
                )),
                Some(lit) => field.description = Some(lit),
                None => found.push(syn::Error::new_spanned(
                    &value,
                    "`description` takes a string literal, like `description = \"...\"`",
                )),
            }
        } else if meta.path.is_ident("default") {
            let default = if meta.input.peek(syn::Token![=]) {
                Default::Value(meta.value()?.parse()?)
            } else {
                Default::Trait
            };
            if field.default.is_some() {
                found.push(syn::Error::new_spanned(&meta.path, "duplicate `default` option"));
            }
            field.default = Some(default);
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
    let at =
        |pick: fn(&Param) -> bool, nth: usize| params.iter().filter(|p| pick(p)).nth(nth).map(Param::span);
    let count = |pick: fn(&Param) -> bool| params.iter().filter(|p| pick(p)).count();
    let is_context: fn(&Param) -> bool = |p| matches!(p, Param::Context(_));
    let is_state: fn(&Param) -> bool = |p| matches!(p, Param::State(..));
    let is_args: fn(&Param) -> bool = |p| matches!(p, Param::Args(..));
    let is_field: fn(&Param) -> bool = |p| matches!(p, Param::Field(_));
    if let Some(second) = at(is_context, 1) {
        errors.push(syn::Error::new(
            second,
            "a `#[tool]` function takes at most one `ToolContext`",
        ));
    }
    if let Some(second) = at(is_state, 1) {
        errors.push(syn::Error::new(
            second,
            "a `#[tool]` function takes at most one `State<T>`; put several values in one struct",
        ));
    }
    if count(is_args) > 0 && count(is_args) + count(is_field) > 1 {
        let first = at(is_args, 0).unwrap_or_else(|| sig.inputs.span());
        errors.push(syn::Error::new(
            first,
            "an `Args<T>` parameter takes the whole argument object, so it is the only argument parameter",
        ));
    }
}

fn definition(
    func: &ItemFn,
    params: &[Param],
    name: &str,
    description: &TokenStream,
    krate: &Krate,
) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let doc = format!("The `#[tool]` definition of [`{ident}`](fn@{ident}): the tool named `{name}`.");
    let state = params.iter().find_map(|p| match p {
        Param::State(_, inner) => Some(inner),
        _ => None,
    });
    let build = build(func, params, state.is_some(), description, krate);
    let (constructor, tool_def) = match state {
        None => (
            quote! {
                /// The tool, built once (a clone is cheap).
                pub fn tool() -> #krate::Tool {
                    static TOOL: ::std::sync::OnceLock<#krate::Tool> = ::std::sync::OnceLock::new();
                    TOOL.get_or_init(|| #build).clone()
                }
            },
            quote! {
                impl #krate::ToolDef for #ident {
                    const NAME: &'static str = #name;
                    type Builder = Self;
                }
                impl #krate::BuildTool for #ident {
                    fn tool() -> #krate::Tool {
                        Self::tool()
                    }
                }
            },
        ),
        Some(state_ty) => (
            quote! {
                /// The tool, whose `State` parameter receives a clone of `state` on each call.
                pub fn with_state(__state: #state_ty) -> #krate::Tool {
                    #build
                }
            },
            quote! {
                impl #krate::ToolDef for #ident {
                    const NAME: &'static str = #name;
                    type Builder = #krate::native::NeedsState<Self>;
                }
            },
        ),
    };
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[allow(dead_code)]
        impl #ident {
            /// The tool name.
            pub const NAME: &'static str = #name;
            #constructor
        }

        #tool_def
    }
}

/// The expression building the tool: argument struct, schema (computed once), and the
/// closure that parses the arguments and calls the function.
fn build(
    func: &ItemFn,
    params: &[Param],
    stateful: bool,
    description: &TokenStream,
    krate: &Krate,
) -> TokenStream {
    let ident = &func.sig.ident;
    let mut items = Vec::new();
    let args_ty = match params.iter().find_map(|p| match p {
        Param::Args(_, inner) => Some(inner),
        _ => None,
    }) {
        Some(t) => quote! { #t },
        None => {
            let fields: Vec<TokenStream> = params
                .iter()
                .filter_map(|p| match p {
                    Param::Field(f) => Some(field(f, &mut items)),
                    _ => None,
                })
                .collect();
            let serde_path = krate.private_str("serde");
            let schemars_path = krate.private_str("schemars");
            items.push(quote! {
                #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
                #[serde(crate = #serde_path)]
                #[schemars(crate = #schemars_path)]
                struct __Args {
                    #(#fields,)*
                }
            });
            quote! { __Args }
        }
    };
    // A special parameter is built through a trait only toolnexus' type implements, so a
    // user's type of the same name fails here, at the parameter, with what to do.
    let call_args = params.iter().map(|p| match p {
        Param::Context(ty) => quote_spanned! {ty.span()=>
            <#ty as #krate::native::FromContext>::from_context(&__ctx)
        },
        Param::State(ty, inner) => quote_spanned! {ty.span()=>
            <#ty as #krate::native::FromState<#inner>>::from_state(&__state)
        },
        Param::Args(ty, inner) => quote_spanned! {ty.span()=>
            <#ty as #krate::native::FromArgs<#inner>>::from_args(__args)
        },
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
            quote_spanned! {ty.span()=> <#ty as #krate::IntoToolResult>::into_tool_result(__out) }
        }
        _ => quote! { #krate::IntoToolResult::into_tool_result(__out) },
    };
    let clone_state = stateful.then(|| quote! { let __state = __state.clone(); });
    quote! {{
        #(#items)*
        static SCHEMA: ::std::sync::OnceLock<#krate::__private::serde_json::Value> =
            ::std::sync::OnceLock::new();
        let __schema = SCHEMA.get_or_init(#krate::schema::schema_for::<#args_ty>).clone();
        #krate::Tool::new(Self::NAME, move |__args: #krate::__private::serde_json::Value, __ctx: #krate::ToolContext| {
            #clone_state
            async move {
                let __args: #args_ty = match #krate::native::parse_args(Self::NAME, __args) {
                    ::core::result::Result::Ok(args) => args,
                    ::core::result::Result::Err(failure) => return failure,
                };
                let __out = #call;
                #convert
            }
        })
        .with_description(#description)
        .with_schema(__schema)
        .with_source(#krate::ToolSource::Native)
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
fn stub(func: &ItemFn, name: &str, krate: &Krate) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    quote! {
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}
        #[allow(dead_code)]
        impl #ident {
            pub const NAME: &'static str = #name;
            pub fn tool() -> #krate::Tool {
                ::core::unreachable!()
            }
            pub fn with_state<T>(_: T) -> #krate::Tool {
                ::core::unreachable!()
            }
        }
        impl #krate::ToolDef for #ident {
            const NAME: &'static str = #name;
            type Builder = Self;
        }
        impl #krate::BuildTool for #ident {
            fn tool() -> #krate::Tool {
                ::core::unreachable!()
            }
        }
    }
}
