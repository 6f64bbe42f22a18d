//! `agents! { … }`: a team of agents declared in code, checked at compile time the way
//! `toolkit![]` checks tool names — every team member and every `uses` tool must be
//! declared, agent names are unique, and teams do not loop. Each refusal is a spanned
//! error worded exactly as the runtime's `DefError` for agents loaded from files.
//!
//! ```text
//! agents! {
//!     tools: [lookup];
//!     coordinator { does: "splits and delegates", team: [explore] },
//!     explore { does: "read-only research", uses: [lookup], model: "m-explore" },
//! }
//! ```
//! expands to `toolnexus::agents::Registry::new([AgentDef::new("coordinator", …)…, …])`,
//! a `Result<Registry, DefError>` (a `soul_file` is still read, and can fail, at run time).

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::{ParseStream, Parser as _};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Path, Token, braced, bracketed};

use crate::krate::Krate;

/// The fields an agent may set with an expression, forwarded to the `AgentDef` setter of
/// the same name.
const SETTERS: [&str; 9] = [
    "soul",
    "soul_file",
    "model",
    "budget",
    "wait_for",
    "on_spawn",
    "on_close",
    "hooks",
    "on_metric",
];

struct Agent {
    name: Ident,
    does: Option<Expr>,
    uses: Vec<Ident>,
    team: Vec<Ident>,
    setters: Vec<(Ident, Expr)>,
}

struct Input {
    krate: Option<Path>,
    tools: Vec<Path>,
    agents: Vec<Agent>,
}

fn idents(input: ParseStream) -> syn::Result<Vec<Ident>> {
    let content;
    bracketed!(content in input);
    Ok(Punctuated::<Ident, Token![,]>::parse_terminated(&content)?
        .into_iter()
        .collect())
}

fn parse_agent(input: ParseStream) -> syn::Result<Agent> {
    let name: Ident = input.parse()?;
    let body;
    braced!(body in input);
    let mut agent = Agent {
        name,
        does: None,
        uses: Vec::new(),
        team: Vec::new(),
        setters: Vec::new(),
    };
    while !body.is_empty() {
        let key: Ident = body.parse()?;
        body.parse::<Token![:]>()?;
        match key.to_string().as_str() {
            "does" => agent.does = Some(body.parse()?),
            "uses" => agent.uses = idents(&body)?,
            "team" => agent.team = idents(&body)?,
            k if SETTERS.contains(&k) => agent.setters.push((key, body.parse()?)),
            k => {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown agent field `{k}`; expected one of does, uses, team, {}",
                        SETTERS.join(", ")
                    ),
                ));
            }
        }
        if !body.is_empty() {
            body.parse::<Token![,]>()?;
        }
    }
    Ok(agent)
}

fn parse(input: ParseStream) -> syn::Result<Input> {
    let mut krate = None;
    let mut tools = Vec::new();
    loop {
        if input.peek(Token![crate]) && input.peek2(Token![=]) {
            input.parse::<Token![crate]>()?;
            input.parse::<Token![=]>()?;
            krate = Some(input.parse()?);
            input.parse::<Token![;]>()?;
        } else if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
            let key: Ident = input.parse()?;
            if key != "tools" {
                return Err(syn::Error::new(
                    key.span(),
                    "expected `tools: [...];` or an agent `name { ... }`",
                ));
            }
            input.parse::<Token![:]>()?;
            let content;
            bracketed!(content in input);
            tools = Punctuated::<Path, Token![,]>::parse_terminated(&content)?
                .into_iter()
                .collect();
            input.parse::<Token![;]>()?;
        } else {
            break;
        }
    }
    let agents = Punctuated::<Agent, Token![,]>::parse_terminated_with(input, parse_agent)?
        .into_iter()
        .collect();
    Ok(Input { krate, tools, agents })
}

/// Every declaration mistake, spanned at the offending name.
fn check(input: &Input) -> Vec<syn::Error> {
    let mut errors = Vec::new();
    let mut seen: BTreeMap<String, &Ident> = BTreeMap::new();
    for a in &input.agents {
        let name = a.name.to_string();
        if seen.insert(name.clone(), &a.name).is_some() {
            errors.push(syn::Error::new(
                a.name.span(),
                format!("duplicate agent name `{name}`"),
            ));
        }
        if a.does.is_none() {
            errors.push(syn::Error::new(
                a.name.span(),
                format!("agent `{name}` needs `does: \"...\"`, the line a delegating model routes by"),
            ));
        }
    }
    let tool_names: Vec<String> = input
        .tools
        .iter()
        .filter_map(|p| p.segments.last().map(|s| s.ident.to_string()))
        .collect();
    for a in &input.agents {
        for m in &a.team {
            if !seen.contains_key(&m.to_string()) {
                errors.push(syn::Error::new(
                    m.span(),
                    format!(
                        "agent `{}` lists `{m}` in its team, but no agent `{m}` is declared",
                        a.name
                    ),
                ));
            }
        }
        for t in &a.uses {
            if !tool_names.contains(&t.to_string()) {
                errors.push(syn::Error::new(
                    t.span(),
                    format!("agent `{}` uses `{t}`, but no tool `{t}` is declared", a.name),
                ));
            }
        }
    }
    if errors.is_empty()
        && let Some((cycle, at)) = find_cycle(&input.agents)
    {
        errors.push(syn::Error::new(
            at.span(),
            format!("team cycle: {}", cycle.join(" → ")),
        ));
    }
    errors
}

/// The first team loop in declaration order, and the member that closes it.
fn find_cycle(agents: &[Agent]) -> Option<(Vec<String>, &Ident)> {
    fn visit<'a>(
        agents: &'a [Agent],
        at: &'a Agent,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<(Vec<String>, &'a Ident)> {
        let name = at.name.to_string();
        if done.contains(&name) {
            return None;
        }
        path.push(name.clone());
        for m in &at.team {
            let member = m.to_string();
            if let Some(i) = path.iter().position(|p| *p == member) {
                let mut cycle = path[i..].to_vec();
                cycle.push(member);
                return Some((cycle, m));
            }
            if let Some(next) = agents.iter().find(|a| a.name == *m)
                && let Some(found) = visit(agents, next, path, done)
            {
                return Some(found);
            }
        }
        path.pop();
        done.push(name);
        None
    }
    let mut done = Vec::new();
    agents
        .iter()
        .find_map(|a| visit(agents, a, &mut Vec::new(), &mut done))
}

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let input = match parse.parse2(input) {
        Ok(input) => input,
        Err(err) => {
            let message = format!(
                "{err}: `agents! {{ ... }}` takes `tools: [a, b];` then agents like `explore {{ does: \"...\", uses: [a], team: [other] }}`"
            );
            return syn::Error::new(err.span(), message).to_compile_error();
        }
    };
    let errors = check(&input);
    if !errors.is_empty() {
        // Only the errors: the declaration is wrong, so no registry code is generated.
        return errors.into_iter().map(|e| e.to_compile_error()).collect();
    }
    let krate = Krate::resolve(input.krate.as_ref());
    let defs = input.agents.iter().map(|a| {
        let name = a.name.to_string();
        let does = a.does.as_ref().expect("checked");
        let team = (!a.team.is_empty()).then(|| {
            let names = a.team.iter().map(|m| m.to_string());
            quote! { .team([#(#names),*]) }
        });
        let uses = a.uses.iter().map(|t| {
            let path = input
                .tools
                .iter()
                .find(|p| p.segments.last().is_some_and(|s| s.ident == *t))
                .expect("checked");
            quote_spanned! {t.span()=> <<#path as #krate::ToolDef>::Builder as #krate::BuildTool>::tool() }
        });
        let uses = (!a.uses.is_empty()).then(|| quote! { .uses([#(#uses),*]) });
        let setters = a.setters.iter().map(|(k, v)| quote! { .#k(#v) });
        quote! {
            #krate::agents::AgentDef::new(#name, #does) #uses #team #(#setters)*
        }
    });
    quote! {
        #krate::agents::Registry::new([#(#defs),*])
    }
}
