//! Procedural macros for toolnexus: `#[tool]`, `toolkit![]` and `agents!{}`.
//!
//! Use them through the `toolnexus` crate (`toolnexus::tool`, `toolnexus::toolkit`), whose
//! crate docs show them in use. The generated code reaches toolnexus by the path resolved
//! once per expansion (the `crate = path` option, else the caller's `Cargo.toml`), and its
//! dependencies only through that crate's `__private` re-exports, so a user needs no
//! direct serde or schemars dependency.

use proc_macro::TokenStream;

mod agents;
mod krate;
mod name;
mod tool;
mod toolkit;

/// Turn a function (`async fn` or `fn`) into a toolnexus tool.
///
/// The function stays as written; a same-named item in the type namespace gains `NAME`,
/// `tool()` (or `with_state(value)` when a parameter is `State<T>`) and implements
/// `toolnexus::ToolDef`. Options: `#[tool(name = "…", description = "…", crate = path)]`
/// (defaults: the function name, its doc comment, the crate as `Cargo.toml` names it).
/// Each parameter is one argument property, described by its doc comment or
/// `#[arg(description = "…")]`, optional when `Option<T>` or `#[arg(default)]` /
/// `#[arg(default = value)]`; a parameter typed `ToolContext`, `State<T>` or `Args<T>` is
/// toolnexus' own (checked by the compiler) unless marked `#[arg]`. Guide and tested
/// examples: the `toolnexus::native` module docs.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// `toolkit![search, refund]`: a `toolnexus::Toolkit` of `#[tool]` functions (paths allowed),
/// with a compile-time error naming both items when two share a tool name.
/// `toolkit![crate = path; search]` names the path toolnexus is reached by. See the
/// `toolnexus::native` module docs.
#[proc_macro]
pub fn toolkit(input: TokenStream) -> TokenStream {
    toolkit::expand(input.into()).into()
}

/// `agents! { tools: [lookup]; coordinator { does: "…", team: [explore] }, explore { does:
/// "…", uses: [lookup] } }`: a `toolnexus::agents::Registry` of agents declared in code,
/// refusing at compile time (spanned, worded as the runtime's `DefError`) a team member or
/// a `uses` tool that is not declared, a duplicate agent name, and a team cycle. Other
/// fields (`soul`, `soul_file`, `model`, `budget`, `wait_for`, `on_spawn`, `on_close`,
/// `hooks`, `on_metric`) take an expression for the `AgentDef` setter of that name.
/// Evaluates to `Result<Registry, DefError>` (a `soul_file` is read when it runs). Needs
/// toolnexus' `client` feature. See the `toolnexus::agents` module docs.
#[proc_macro]
pub fn agents(input: TokenStream) -> TokenStream {
    agents::expand(input.into()).into()
}
