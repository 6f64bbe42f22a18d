//! Native tools (SPEC §6): plain Rust functions as [`Tool`]s (source `native`).
//!
//! Two forms build the same uniform tool: the [`#[tool]`](crate::tool) attribute (schema
//! inferred from the arguments) and the [`native_tool`] function (schema given by hand).
//! Either way the function returns anything that implements [`IntoToolResult`], which
//! normalizes it the way the other ports' `native-tool` does:
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
        ToolResult {
            output: match output {
                Value::String(s) => s,
                other => other.to_string(),
            },
            is_error: map.get("isError") == Some(&Value::Bool(true)),
            metadata: match map.remove("metadata") {
                Some(Value::Object(m)) => Some(m),
                _ => None,
            },
            parts: map
                .remove("parts")
                .and_then(|p| serde_json::from_value(p).ok())
                .unwrap_or_default(),
        }
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
    note = "annotate the function with `#[toolnexus::tool]`; `toolkit![...]` takes the names of `#[tool]` functions",
    note = "a tool with a `State<_>` parameter is built with `{Self}::with_state(value)` and added with `Toolkit::add_tools`"
)]
pub trait ToolDef {
    /// The tool name, checked at compile time.
    const NAME: &'static str;
    /// The tool (built once, then cloned: cheap).
    fn tool() -> Tool;
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
