//! Native tools (SPEC §6): plain Rust functions as [`Tool`]s (source `native`).
//!
//! # `#[tool]` and `toolkit![]`
//!
//! ```
//! use serde_json::json;
//! use toolnexus::{tool, toolkit, ToolContext};
//!
//! /// Search the catalog.
//! #[tool]
//! async fn search(
//!     /// What to look for.
//!     query: String,
//!     /// At most this many results.
//!     #[arg(default = 10)]
//!     limit: u32,
//! ) -> String {
//!     format!("{limit} results for {query}")
//! }
//!
//! /// Refund an order.
//! #[tool(name = "refund_order")]
//! fn refund(order: String, reason: Option<String>) -> Result<String, String> {
//!     match reason {
//!         Some(reason) => Ok(format!("refunded {order}: {reason}")),
//!         None => Err(format!("say why {order} should be refunded")),
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let tk = toolkit![search, refund];
//! assert_eq!(tk.tool_names(), ["refund_order", "search"]);
//! assert_eq!(
//!     serde_json::to_string(&tk.get("search").unwrap().input_schema()).unwrap(),
//!     r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","default":10,"minimum":0,"description":"At most this many results."}},"required":["query"]}"#
//! );
//! let r = tk.execute("search", json!({"query": "lamp"}), ToolContext::default()).await;
//! assert_eq!(r.to_json(), r#"{"output":"10 results for lamp","isError":false}"#);
//! let r = tk.execute("refund_order", json!({"order": "A1"}), ToolContext::default()).await;
//! assert_eq!(r.to_json(), r#"{"output":"say why A1 should be refunded","isError":true}"#);
//! // A bad argument never reaches the function: the model reads what to fix.
//! let r = tk.execute("search", json!({"query": 7}), ToolContext::default()).await;
//! assert_eq!(r.output, "invalid arguments for tool \"search\": invalid type: integer `7`, expected a string at field `query`");
//! # });
//! ```
//!
//! - **Name**: the function's name, or `#[tool(name = "…")]`. It must match
//!   `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` (what OpenAI, Anthropic, Gemini and MCP hosts all
//!   accept); anything else is a compile error at the name.
//! - **Description**: the doc comment (`#[doc = include_str!("…")]` included), or
//!   `#[tool(description = "…")]`.
//! - **Arguments**: each parameter is one property of the input schema (generated once,
//!   see [`schema`](crate::schema)): its doc comment (or `#[arg(description = "…")]`) is the
//!   description, an `Option<T>` parameter is not required, and `#[arg(default)]` /
//!   `#[arg(default = value)]` make one optional with a default. `#[serde(…)]` and
//!   `#[schemars(…)]` attributes on a parameter are forwarded to the generated field.
//!   Alternatively a single `Args<T>` parameter takes the whole object as your own struct
//!   deriving `Deserialize` and `JsonSchema` (add `#[schemars(crate = "toolnexus::schemars")]`
//!   to derive it through toolnexus' schemars, with no schemars dependency of your own).
//! - **Context**: a `ToolContext` parameter receives the call's context (cancellation,
//!   timeout, call id, a resolved suspension's answer); it is not part of the schema.
//! - **Which parameter is which**: a parameter whose type is written `ToolContext`,
//!   `State<T>` or `Args<T>` — bare, or as a path through toolnexus
//!   (`toolnexus::State<T>`) — is toolnexus' own; the compiler checks it is, so a type of
//!   your own by that name is an error at the parameter saying to mark it `#[arg]`. A
//!   parameter marked `#[arg]`, or whose type is a path through another module
//!   (`session::State`), is one of the model's arguments.
//! - **Crate path**: the generated code reaches toolnexus by the name your `Cargo.toml`
//!   gives the dependency; through a re-export, say where: `#[tool(crate = deps::toolnexus)]`
//!   and `toolkit![crate = deps::toolnexus; search]`.
//! - **Return**: anything that implements [`IntoToolResult`] (table below); an `async fn`
//!   is awaited, a plain `fn` runs inline on the executor (move blocking work to
//!   `tokio::task::spawn_blocking`).
//!
//! `#[tool] fn search` keeps the function as written and adds a same-named item in the type
//! namespace: `search::tool()` returns the [`Tool`], `search::NAME` its name, and it
//! implements [`ToolDef`] and [`BuildTool`], which `toolkit![search, refund]` uses to build
//! a [`Toolkit`](crate::Toolkit) — rejecting at compile time two tools with the same name.
//!
//! # Shared state
//!
//! A parameter of type [`State<T>`] receives a clone of the value the tool was built with:
//! such a tool is built with the generated `with_state(value)` instead of `tool()`, and added
//! with [`Toolkit::add_tools`](crate::Toolkit::add_tools). Share with an `Arc`: every call
//! clones the `Arc`, not the data.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolnexus::{tool, toolkit, State, ToolContext};
//!
//! struct Db { customers: Vec<String> }
//!
//! /// Look a customer up by index.
//! #[tool]
//! async fn customer(State(db): State<Arc<Db>>, index: usize) -> Option<String> {
//!     db.customers.get(index).cloned()
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let db = Arc::new(Db { customers: vec!["Ada".into()] });
//! let mut tk = toolkit![];
//! tk.add_tools([customer::with_state(db.clone())]);
//! let r = tk.execute("customer", json!({"index": 0}), ToolContext::default()).await;
//! assert_eq!(r.output, "Ada");
//! # });
//! ```
//!
//! Without the macro, `move` the state into a [`native_tool`] closure.
//!
//! # Return values
//!
//! Either form — `#[tool]` or [`native_tool`] (schema given by hand) — returns anything that
//! implements [`IntoToolResult`], normalized the way the other ports' `native-tool` does:
//!
//! | returned                                   | becomes                                   |
//! |--------------------------------------------|-------------------------------------------|
//! | `String`, `&str`, `Cow<str>`               | success with that text                    |
//! | `()`, `None`                               | success with `""`                         |
//! | `Some(x)`                                  | `x`, normalized                           |
//! | `Ok(x)` / `Err(e)` (`e: Display`)          | `x`, normalized / failure with `e`'s text |
//! | numbers, `bool`                            | success with their text (`42`, `true`)    |
//! | [`Json(x)`](Json) (`x: Serialize`)         | success with the compact JSON text        |
//! | `serde_json::Value` object with `"output"` | that result, `isError` coerced to a bool  |
//! | any other `serde_json::Value`              | success with the compact JSON text        |
//! | [`ToolResult`]                             | itself                                    |
//!
//! ```
//! use serde_json::json;
//! use toolnexus::native::native_tool;
//! use toolnexus::ToolContext;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let upper = native_tool(
//!     "upper",
//!     "Uppercase a text",
//!     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//!     |args: serde_json::Value, _ctx: ToolContext| async move {
//!         match args["text"].as_str() {
//!             Some(text) => Ok(text.to_uppercase()),
//!             None => Err("missing required argument: text"),
//!         }
//!     },
//! );
//! let r = upper.execute(json!({"text": "hi"}), ToolContext::default()).await;
//! assert_eq!(r.to_json(), r#"{"output":"HI","isError":false}"#);
//! let r = upper.execute(json!({}), ToolContext::default()).await;
//! assert_eq!(r.to_json(), r#"{"output":"missing required argument: text","isError":true}"#);
//! # });
//! ```

use std::borrow::Cow;
use std::fmt::Display;
use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::ContentPart;
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource};

/// A value a tool function may return; see the [module docs](self) for the table.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type is not a tool result",
    note = "return a `String`/`&str`, `()`, a number or `bool`, `Option<T>`, `Result<T, E: Display>`, `ToolResult`, `toolnexus::Json<T: Serialize>` or a `serde_json::Value`"
)]
pub trait IntoToolResult {
    /// Normalize into the uniform result.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> ToolResult {
        ToolResult {
            output: self,
            ..ToolResult::default()
        }
    }
}

impl IntoToolResult for &str {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success(self)
    }
}

impl IntoToolResult for Cow<'_, str> {
    fn into_tool_result(self) -> ToolResult {
        self.into_owned().into_tool_result()
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::success("")
    }
}

impl<T: IntoToolResult> IntoToolResult for Option<T> {
    fn into_tool_result(self) -> ToolResult {
        self.map_or_else(|| ToolResult::success(""), T::into_tool_result)
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(err) => ToolResult::failure(err),
        }
    }
}

macro_rules! display_results {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> ToolResult {
                ToolResult::success(self)
            }
        }
    )*};
}
display_results!(
    bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

/// Return `Json(value)` from a tool to hand the model `value`'s compact JSON text.
///
/// ```
/// use toolnexus::native::{IntoToolResult, Json};
///
/// let r = Json(vec![1, 2]).into_tool_result();
/// assert_eq!(r.output, "[1,2]");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> ToolResult {
        match serde_json::to_string(&self.0) {
            Ok(text) => text.into_tool_result(),
            Err(err) => ToolResult::failure(format!("could not serialize the tool's result: {err}")),
        }
    }
}

impl IntoToolResult for Value {
    /// An object carrying `"output"` is a result already (as in the other ports): its
    /// output is kept (non-strings as their JSON text), `isError` is `true` only when it is
    /// the JSON `true`, and `metadata` (an object) and `parts` (valid content parts) are
    /// kept. Any other value is its compact JSON text.
    fn into_tool_result(self) -> ToolResult {
        let Value::Object(mut map) = self else {
            return ToolResult::success(self);
        };
        let Some(output) = map.remove("output") else {
            return ToolResult::success(Value::Object(map));
        };
        let output = match output {
            Value::String(s) => s,
            other => other.to_string(),
        };
        let mut result = if map.get("isError") == Some(&Value::Bool(true)) {
            ToolResult::failure(output)
        } else {
            ToolResult::success(output)
        };
        if let Some(Value::Object(metadata)) = map.remove("metadata") {
            // A `pending` request in it is the suspension slot, as on the wire.
            result = result.with_metadata(metadata);
        }
        let parts: Option<Vec<ContentPart>> =
            map.remove("parts").and_then(|p| serde_json::from_value(p).ok());
        result.with_parts(parts.unwrap_or_default())
    }
}

/// A native tool (source `native`) from a function of the raw JSON arguments and the
/// context. `schema` is handed to the adapters verbatim; `f`'s return value is normalized
/// with [`IntoToolResult`]. To capture shared state, `move` it into the closure (see the
/// [module docs](crate::native#shared-state)).
pub fn native_tool<F, Fut, R>(
    name: impl Into<String>,
    description: impl Into<String>,
    schema: Value,
    f: F,
) -> Tool
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    Tool::new(name, move |args, ctx| {
        let fut = f(args, ctx);
        async move { fut.await.into_tool_result() }
    })
    .with_description(description)
    .with_schema(schema)
    .with_source(ToolSource::Native)
}

/// Deserialize a model's arguments into `T`. On a bad argument the `Err` is the failure to
/// hand back — it names the tool, the field (as a path such as `filter.limit`) and what
/// was expected, so the model can correct its call. A missing (`null`) argument object
/// counts as `{}`, since some models send nothing for a tool without parameters.
///
/// ```
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, Debug)]
/// struct Add { a: i64, b: i64 }
///
/// let err = toolnexus::native::parse_args::<Add>("add", json!({"a": 1})).unwrap_err();
/// assert_eq!(err.output, "invalid arguments for tool \"add\": missing field `b`");
/// let err = toolnexus::native::parse_args::<Add>("add", json!({"a": "x", "b": 2})).unwrap_err();
/// assert_eq!(
///     err.output,
///     "invalid arguments for tool \"add\": invalid type: string \"x\", expected i64 at field `a`"
/// );
/// ```
// The `Err` is the failure handed straight back to the model; boxing it would only add an
// allocation on the error path.
#[allow(clippy::result_large_err)]
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolResult> {
    let args = match args {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(_) => args,
        other => {
            return Err(ToolResult::failure(format!(
                "invalid arguments for tool \"{tool}\": expected a JSON object of named arguments, got {}",
                json_kind(&other)
            )));
        }
    };
    // Fast path without path tracking; only a failing call pays for the second, tracked pass.
    if let Ok(parsed) = T::deserialize(&args) {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(args).map_err(|err| {
        let at = if err.path().iter().len() == 0 {
            String::new()
        } else {
            format!(" at field `{}`", err.path())
        };
        ToolResult::failure(format!(
            "invalid arguments for tool \"{tool}\": {}{at}",
            err.inner()
        ))
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What `#[tool]` implements for the item it generates beside the function, so
/// `toolkit![search]` can find the tool from the function's name.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `#[tool]` function",
    label = "not a `#[tool]`",
    note = "annotate the function with `#[toolnexus::tool]`; `toolkit![...]` takes the names of `#[tool]` functions"
)]
pub trait ToolDef {
    /// The tool name, checked at compile time.
    const NAME: &'static str;
    /// What builds the tool from nothing ([`BuildTool`]): the item itself, or for a tool
    /// with a `State<_>` parameter, which is built with `with_state(value)`,
    /// [`NeedsState<Self>`], which cannot.
    type Builder;
}

/// Builds a `#[tool]` without a `State<_>` parameter: what `toolkit![...]` calls.
#[diagnostic::on_unimplemented(
    message = "this tool takes a `State<_>` parameter, so `toolkit![...]` cannot build it",
    label = "needs its state",
    note = "build it with `with_state(value)` on the tool's name, like `lookup::with_state(db.clone())`, and add it with `Toolkit::add_tools`"
)]
pub trait BuildTool {
    /// The tool (built once, then cloned: cheap).
    fn tool() -> Tool;
}

/// The [`ToolDef::Builder`] of a tool with a `State<_>` parameter: it implements no
/// [`BuildTool`], so listing the tool in `toolkit![...]` says how to build it instead.
#[derive(Debug)]
pub struct NeedsState<T>(std::marker::PhantomData<T>);

/// How `#[tool]` passes a parameter written `ToolContext`: only toolnexus' `ToolContext`
/// implements it, so a user type of that name is reported at the parameter.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `toolnexus::ToolContext`",
    label = "a `#[tool]` parameter named by its type `ToolContext` receives the call's context",
    note = "mark the parameter `#[arg]` if the model's arguments fill it"
)]
pub trait FromContext {
    /// The parameter's value for this call.
    fn from_context(ctx: &ToolContext) -> Self;
}

impl FromContext for ToolContext {
    fn from_context(ctx: &ToolContext) -> Self {
        ctx.clone()
    }
}

/// How `#[tool]` passes a parameter written `State<T>` (see [`FromContext`]).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `toolnexus::State<_>`",
    label = "a `#[tool]` parameter of type `State<T>` receives the tool's shared state",
    note = "mark the parameter `#[arg]` if the model's arguments fill it"
)]
pub trait FromState<T> {
    /// The parameter's value for this call.
    fn from_state(state: &T) -> Self;
}

impl<T: Clone> FromState<T> for State<T> {
    fn from_state(state: &T) -> Self {
        State(state.clone())
    }
}

/// How `#[tool]` passes a parameter written `Args<T>` (see [`FromContext`]).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `toolnexus::Args<_>`",
    label = "a `#[tool]` parameter of type `Args<T>` takes the whole argument object",
    note = "mark the parameter `#[arg]` if the model's arguments fill it"
)]
pub trait FromArgs<T> {
    /// The parameter's value for this call.
    fn from_args(args: T) -> Self;
}

impl<T> FromArgs<T> for Args<T> {
    fn from_args(args: T) -> Self {
        Args(args)
    }
}

/// Byte equality usable in a `const`: `toolkit![]` asserts with it that tool names differ.
#[doc(hidden)]
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Wrap the single argument of a `#[tool]` function in `Args` to take the whole argument
/// object as one struct deriving `Deserialize` and `JsonSchema`, instead of one parameter
/// per property.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

/// A `#[tool]` parameter of type `State<T>` receives a clone of the value given to the
/// generated `with_state(value)`; see the [module docs](crate::native#shared-state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn out<R: IntoToolResult>(r: R) -> String {
        r.into_tool_result().to_json()
    }

    #[test]
    fn normalizes_every_supported_return() {
        assert_eq!(out("hi"), r#"{"output":"hi","isError":false}"#);
        assert_eq!(out(String::from("hi")), r#"{"output":"hi","isError":false}"#);
        assert_eq!(out(()), r#"{"output":"","isError":false}"#);
        assert_eq!(out(None::<String>), r#"{"output":"","isError":false}"#);
        assert_eq!(out(Some(7u8)), r#"{"output":"7","isError":false}"#);
        assert_eq!(out(42), r#"{"output":"42","isError":false}"#);
        assert_eq!(out(2.5), r#"{"output":"2.5","isError":false}"#);
        assert_eq!(out(true), r#"{"output":"true","isError":false}"#);
        assert_eq!(
            out(Ok::<_, String>("done")),
            r#"{"output":"done","isError":false}"#
        );
        assert_eq!(
            out(Err::<(), _>("no such row")),
            r#"{"output":"no such row","isError":true}"#
        );
        assert_eq!(
            out(Json(json!({"b": 1, "a": [true]}))),
            r#"{"output":"{\"b\":1,\"a\":[true]}","isError":false}"#
        );
        assert_eq!(out(ToolResult::failure("x")), r#"{"output":"x","isError":true}"#);
    }

    #[test]
    fn values_carrying_output_pass_through() {
        assert_eq!(
            out(json!({"output": "x", "isError": "yes"})),
            r#"{"output":"x","isError":false}"#
        );
        assert_eq!(
            out(json!({"output": 5, "isError": true, "metadata": {"k": 1}})),
            r#"{"output":"5","isError":true,"metadata":{"k":1}}"#
        );
        assert_eq!(
            out(json!({"output": "o", "parts": [{"type": "text", "text": "t"}]})),
            r#"{"output":"o","isError":false,"parts":[{"type":"text","text":"t"}]}"#
        );
        assert_eq!(
            out(json!({"rows": 2})),
            r#"{"output":"{\"rows\":2}","isError":false}"#
        );
        assert_eq!(out(json!([1, "a"])), r#"{"output":"[1,\"a\"]","isError":false}"#);
        assert_eq!(out(json!("plain")), r#"{"output":"\"plain\"","isError":false}"#);
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Filter {
        limit: u32,
    }
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Query {
        q: String,
        filter: Option<Filter>,
    }

    #[test]
    fn bad_arguments_name_the_field_and_type() {
        let fail = |args| parse_args::<Query>("search", args).unwrap_err().output;
        assert_eq!(
            fail(json!({})),
            "invalid arguments for tool \"search\": missing field `q`"
        );
        assert_eq!(
            fail(json!({"q": "x", "filter": {"limit": -1}})),
            "invalid arguments for tool \"search\": invalid value: integer `-1`, expected u32 at field `filter.limit`"
        );
        assert_eq!(
            fail(json!("q")),
            "invalid arguments for tool \"search\": expected a JSON object of named arguments, got a string"
        );
        assert_eq!(
            parse_args::<Query>("search", json!({"q": "x", "extra": 1})).unwrap(),
            Query {
                q: "x".into(),
                filter: None
            }
        );
        #[derive(serde::Deserialize)]
        struct Empty {}
        assert!(parse_args::<Empty>("t", Value::Null).is_ok());
    }

    #[tokio::test]
    async fn native_tool_is_native_and_normalizes() {
        let t = native_tool("n", "d", json!({"type": "object"}), |_, _| async { 3 });
        assert_eq!(t.source(), ToolSource::Native);
        assert_eq!(t.description(), "d");
        assert_eq!(t.execute(json!({}), ToolContext::default()).await.output, "3");
    }
}
