//! [`Tool`] (SPEC §1): the one uniform abstraction every source produces.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures::FutureExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::result::ToolResult;

/// A boxed, sendable future yielding a [`ToolResult`].
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolResult> + Send + 'static>>;

type ExecuteFn = dyn Fn(Value, ToolContext) -> ToolFuture + Send + Sync;

/// Where a tool came from. A provenance label for filtering and metrics, not behaviour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSource {
    /// Built by hand with [`Tool::new`].
    #[default]
    Custom,
    /// A Rust function (`#[tool]` or [`native_tool`](crate::native::native_tool)).
    Native,
    /// A tool of an MCP server.
    Mcp,
    /// The `skill` loader.
    Skill,
    /// One of the built-in tools.
    Builtin,
    /// An HTTP endpoint.
    Http,
    /// A remote A2A agent's skill.
    A2a,
    /// A sub-agent.
    Agent,
    /// A declaration-only tool the host executes.
    Relay,
}

impl ToolSource {
    /// The wire label: `custom`, `native`, `mcp`, …
    pub fn as_str(self) -> &'static str {
        match self {
            ToolSource::Custom => "custom",
            ToolSource::Native => "native",
            ToolSource::Mcp => "mcp",
            ToolSource::Skill => "skill",
            ToolSource::Builtin => "builtin",
            ToolSource::Http => "http",
            ToolSource::A2a => "a2a",
            ToolSource::Agent => "agent",
            ToolSource::Relay => "relay",
        }
    }
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tool says about its own behaviour — MCP's tool annotations. Hints a host may use to
/// decide what to expose or confirm, never guarantees: a server can say anything.
///
/// ```
/// use toolnexus::{Tool, ToolAnnotations, ToolResult};
///
/// let read_only = ToolAnnotations { read_only_hint: Some(true), ..ToolAnnotations::default() };
/// let t = Tool::new("peek", |_, _| async { ToolResult::success("") }).with_annotations(read_only);
/// assert_eq!(t.annotations().and_then(|a| a.read_only_hint), Some(true));
/// assert_eq!(
///     serde_json::to_string(t.annotations().unwrap()).unwrap(),
///     r#"{"readOnlyHint":true}"#
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// A change it makes may destroy something (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It reaches an open world (the web) rather than a closed one (a local database).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A tool: name, description, JSON-Schema input, source, and an async `execute`.
///
/// Cheap to clone (one `Arc`), `Send + Sync`. Build one by hand for a source the library
/// has no builder for:
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Tool, ToolContext, ToolResult};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let greet = Tool::new("greet", |args: serde_json::Value, _ctx: ToolContext| async move {
///     ToolResult::success(format!("Hello, {}", args["name"].as_str().unwrap_or("world")))
/// })
/// .with_description("Greet someone by name")
/// .with_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}));
///
/// let out = greet.execute(json!({"name": "Muthu"}), ToolContext::default()).await;
/// assert_eq!(out.to_json(), r#"{"output":"Hello, Muthu","isError":false}"#);
/// assert_eq!(greet.description(), "Greet someone by name");
/// # });
/// ```
#[derive(Clone)]
pub struct Tool {
    inner: Arc<ToolInner>,
}

#[derive(Clone)]
struct ToolInner {
    name: String,
    description: String,
    input_schema: Value,
    source: ToolSource,
    annotations: Option<Arc<ToolAnnotations>>,
    output_schema: Option<Arc<Value>>,
    listed_schema: Option<Arc<Value>>,
    execute: Arc<ExecuteFn>,
}

impl Tool {
    /// A tool named `name` (used as written: keep it inside `[a-zA-Z0-9_-]`, or pass it
    /// through [`sanitize`]) with description `""`, schema `{"type":"object"}` and source
    /// `custom`.
    pub fn new<F, Fut>(name: impl Into<String>, execute: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolResult> + Send + 'static,
    {
        Self {
            inner: Arc::new(ToolInner {
                name: name.into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
                source: ToolSource::Custom,
                annotations: None,
                output_schema: None,
                listed_schema: None,
                execute: Arc::new(move |args, ctx| Box::pin(execute(args, ctx))),
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut ToolInner)) -> Self {
        f(Arc::make_mut(&mut self.inner));
        self
    }

    /// Set the description handed to the model.
    pub fn with_description(self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.edit(|t| t.description = description)
    }

    /// Set the JSON-Schema of the arguments (passed to the adapters verbatim).
    pub fn with_schema(self, schema: Value) -> Self {
        self.edit(|t| t.input_schema = schema)
    }

    /// Set the provenance label.
    pub fn with_source(self, source: ToolSource) -> Self {
        self.edit(|t| t.source = source)
    }

    /// Set the behaviour hints (an MCP tool's `annotations`).
    pub fn with_annotations(self, annotations: ToolAnnotations) -> Self {
        self.edit(|t| t.annotations = Some(Arc::new(annotations)))
    }

    /// The behaviour hints, when the tool's source gave any.
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.inner.annotations.as_deref()
    }

    /// Declare the JSON-Schema of the tool's structured output (an MCP tool's
    /// `outputSchema`): a successful result's `output` is then that JSON, as text.
    pub fn with_output_schema(self, schema: Value) -> Self {
        self.edit(|t| t.output_schema = Some(Arc::new(schema)))
    }

    /// The JSON-Schema of the structured output, when declared.
    pub fn output_schema(&self) -> Option<&Value> {
        self.inner.output_schema.as_deref()
    }

    /// Keep the argument schema exactly as the tool's source listed it (an MCP server's
    /// `inputSchema`) when [`with_schema`](Self::with_schema) holds a provider-safe rewrite:
    /// a gateway serves this one, so its clients see the upstream schema unchanged.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{Tool, ToolResult};
    ///
    /// let listed = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    /// let tool = Tool::new("search", |_, _| async { ToolResult::success("") })
    ///     .with_schema(json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false}))
    ///     .with_listed_schema(listed.clone());
    /// assert_eq!(tool.listed_schema(), &listed);
    /// ```
    pub fn with_listed_schema(self, schema: Value) -> Self {
        self.edit(|t| t.listed_schema = Some(Arc::new(schema)))
    }

    /// The argument schema as the tool's source listed it; [`input_schema`](Self::input_schema)
    /// when none was kept.
    pub fn listed_schema(&self) -> &Value {
        self.inner
            .listed_schema
            .as_deref()
            .unwrap_or(&self.inner.input_schema)
    }

    /// Rename the tool (e.g. to prefix it).
    pub fn with_name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.edit(|t| t.name = name)
    }

    /// The name the model calls.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The description handed to the model.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// The JSON-Schema of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.inner.input_schema
    }

    /// Where the tool came from.
    pub fn source(&self) -> ToolSource {
        self.inner.source
    }

    /// Run the tool. Never panics and never hangs past `ctx`: a panic (also one inside the
    /// tool's future) becomes a failure naming the panic message, `ctx.timeout` bounds the
    /// call, and cancelling `ctx.cancel` ends it with a failure.
    pub async fn execute(&self, args: Value, ctx: ToolContext) -> ToolResult {
        let cancel = ctx.cancel.clone();
        let timeout = ctx.timeout;
        let name = self.name();
        let run = AssertUnwindSafe(async { (self.inner.execute)(args, ctx).await }).catch_unwind();
        let guarded = async {
            match run.await {
                Ok(result) => result,
                Err(panic) => {
                    ToolResult::failure(format!("tool \"{name}\" panicked: {}", panic_message(&*panic)))
                }
            }
        };
        let bounded = async {
            match timeout {
                Some(limit) => tokio::time::timeout(limit, guarded).await.unwrap_or_else(|_| {
                    ToolResult::failure(format!("tool \"{name}\" timed out after {}ms", limit.as_millis()))
                }),
                None => guarded.await,
            }
        };
        tokio::select! {
            biased;
            result = bounded => result,
            () = cancel.cancelled() => ToolResult::failure(format!("tool \"{name}\" was cancelled")),
        }
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.inner.name)
            .field("source", &self.inner.source)
            .finish_non_exhaustive()
    }
}

/// The text of a panic payload (`&str` or `String`; anything else is opaque).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown panic payload")
}

/// The ten built-in tool names (SPEC §4A), in the fixed order every port builds them. Kept
/// here, outside the `builtins` feature, because the relay collision guard needs them even
/// when the built-in tools are not compiled in.
pub const BUILTIN_NAMES: [&str; 10] = [
    "bash",
    "read",
    "write",
    "edit",
    "grep",
    "glob",
    "webfetch",
    "question",
    "apply_patch",
    "todowrite",
];

/// Replace every character outside `[a-zA-Z0-9_-]` with `_` (SPEC §0.2). Per character, like
/// the other ports' regex replace: a multi-byte character becomes a single `_`.
///
/// ```
/// assert_eq!(toolnexus::sanitize("my.server/read file"), "my_server_read_file");
/// assert_eq!(toolnexus::sanitize("café"), "caf_");
/// ```
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn defaults() {
        let t = Tool::new("x", |_, _| async { ToolResult::success("") });
        assert_eq!(t.description(), "");
        assert_eq!(t.input_schema(), &json!({"type": "object"}));
        assert_eq!(t.source(), ToolSource::Custom);
        assert_eq!(format!("{t:?}"), r#"Tool { name: "x", source: Custom, .. }"#);
    }

    #[test]
    fn sanitize_matches_other_ports() {
        assert_eq!(sanitize("a-b_c9"), "a-b_c9");
        assert_eq!(sanitize("😀x"), "_x");
        assert_eq!(sanitize("a b.c/d:e"), "a_b_c_d_e");
    }

    #[tokio::test]
    async fn panics_timeouts_and_cancellation_become_failures() {
        let boom = Tool::new("boom", |_, _| async { panic!("kaboom") });
        let r = boom.execute(json!({}), ToolContext::default()).await;
        assert_eq!(
            r.to_json(),
            r#"{"output":"tool \"boom\" panicked: kaboom","isError":true}"#
        );

        let slow = Tool::new("slow", |_, _| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            ToolResult::success("late")
        });
        let ctx = ToolContext::default().with_timeout(Duration::from_millis(20));
        let r = slow.execute(json!({}), ctx).await;
        assert_eq!(r.output, "tool \"slow\" timed out after 20ms");

        let ctx = ToolContext::default();
        let token = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            token.cancel();
        });
        let r = slow.execute(json!({}), ctx).await;
        assert_eq!(r.output, "tool \"slow\" was cancelled");
        assert!(r.is_error);
    }
}
