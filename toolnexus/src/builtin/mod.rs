//! The ten built-in tools (SPEC §4A, source `builtin`): the default toolset an agent can act
//! with at zero wiring — `bash, read, write, edit, grep, glob, webfetch, question,
//! apply_patch, todowrite` — with the names, descriptions and input schemas of the other
//! toolnexus ports, byte for byte.
//!
//! Every failure is a [`ToolResult`] with `is_error: true` and a message a model can act
//! on; malformed arguments (a missing required field, a wrong type) are such a failure too,
//! never silently treated as empty. Relative paths resolve against the process working
//! directory.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::builtin::{self, BuiltinsConfig};
//! use toolnexus::{ToolContext, Toolkit};
//!
//! // The whole source, minus bash.
//! let config: BuiltinsConfig = serde_json::from_value(json!({"tools": {"bash": false}})).unwrap();
//! let tk = Toolkit::new(builtin::select(&config));
//! assert_eq!(tk.len(), 9);
//! assert!(tk.get("bash").is_none());
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let todos = json!({"todos": [{"id": "1", "text": "ship it", "completed": true}]});
//! let r = tk.execute("todowrite", todos, ToolContext::default()).await;
//! assert_eq!(r.output, "[x] ship it");
//! # });
//! ```

mod apply_patch;
mod args;
mod bash;
mod edit;
mod files;
mod glob;
mod grep;
mod question;
mod read;
mod todowrite;
mod walk;
mod webfetch;
mod write;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::tool::{BUILTIN_NAMES, Tool, ToolSource};

/// All ten built-in tools, in [`BUILTIN_NAMES`] order, each with source [`ToolSource::Builtin`].
pub fn all() -> Vec<Tool> {
    vec![
        bash::tool(),
        read::tool(),
        write::tool(),
        edit::tool(),
        grep::tool(),
        glob::tool(),
        webfetch::tool(),
        question::tool(),
        apply_patch::tool(),
        todowrite::tool(),
    ]
}

/// The built-in tools a [`BuiltinsConfig`] leaves on (SPEC §4 "Assembly order & builtin
/// toggle"): none when the whole source is off, otherwise all ten minus those the per-tool
/// map sets to `false`. Unknown names in the map are ignored with a `tracing` warning.
///
/// ```
/// use toolnexus::builtin::{self, BuiltinsConfig};
///
/// assert_eq!(builtin::select(&BuiltinsConfig::default()).len(), 10);
/// assert!(builtin::select(&BuiltinsConfig::off()).is_empty());
/// let no_shell = BuiltinsConfig::default().with_tool("bash", false);
/// assert_eq!(builtin::select(&no_shell)[0].name(), "read");
/// ```
pub fn select(config: &BuiltinsConfig) -> Vec<Tool> {
    if !config.enabled {
        return Vec::new();
    }
    for name in config.tools.keys() {
        if !BUILTIN_NAMES.contains(&name.as_str()) {
            tracing::warn!(tool = %name, "builtins.tools names an unknown built-in tool; ignored");
        }
    }
    all()
        .into_iter()
        .filter(|t| config.tools.get(t.name()) != Some(&false))
        .collect()
}

/// Which built-in tools are on (SPEC §4, §4A).
///
/// Deserializes from every JSON form the other ports accept for a `builtins` key:
/// `true`/`false`, `null` (the default: all on), or an object
/// `{"disabled"?: bool, "enabled"?: bool, "tools"?: {name: bool}}`. Precedence is MCP's:
/// `disabled: true` wins, else `enabled: false` turns the source off, else it is on. Other
/// keys of the object are ignored.
///
/// ```
/// use toolnexus::builtin::BuiltinsConfig;
///
/// let parse = |s: &str| serde_json::from_str::<BuiltinsConfig>(s).unwrap();
/// assert_eq!(parse("false"), BuiltinsConfig::off());
/// assert_eq!(parse(r#"{"disabled": true, "enabled": true}"#), BuiltinsConfig::off());
/// assert_eq!(parse(r#"{"enabled": false}"#), BuiltinsConfig::off());
/// assert_eq!(
///     parse(r#"{"tools": {"write": false}}"#),
///     BuiltinsConfig::default().with_tool("write", false)
/// );
/// assert!(serde_json::from_str::<BuiltinsConfig>(r#"{"tools": {"bash": "no"}}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BuiltinsConfig {
    /// The whole-source switch. When `false`, [`tools`](Self::tools) is not consulted.
    pub enabled: bool,
    /// Per-tool overrides on the all-on baseline: `false` drops the tool, `true` keeps it.
    pub tools: BTreeMap<String, bool>,
}

impl Default for BuiltinsConfig {
    /// All ten tools on.
    fn default() -> Self {
        Self {
            enabled: true,
            tools: BTreeMap::new(),
        }
    }
}

impl BuiltinsConfig {
    /// The whole source off.
    pub fn off() -> Self {
        Self {
            enabled: false,
            tools: BTreeMap::new(),
        }
    }

    /// Set one tool's per-tool override.
    pub fn with_tool(mut self, name: impl Into<String>, on: bool) -> Self {
        self.tools.insert(name.into(), on);
        self
    }
}

impl From<bool> for BuiltinsConfig {
    fn from(enabled: bool) -> Self {
        if enabled { Self::default() } else { Self::off() }
    }
}

impl<'de> Deserialize<'de> for BuiltinsConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ConfigVisitor)
    }
}

/// The object form, before precedence is applied.
#[derive(Deserialize)]
struct ConfigObject {
    #[serde(default)]
    disabled: Option<bool>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    tools: Option<BTreeMap<String, bool>>,
}

struct ConfigVisitor;

impl<'de> Visitor<'de> for ConfigVisitor {
    type Value = BuiltinsConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean or an object {disabled?, enabled?, tools?}")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(BuiltinsConfig::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(BuiltinsConfig::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let obj = ConfigObject::deserialize(de::value::MapAccessDeserializer::new(map))?;
        let enabled = obj.disabled != Some(true) && obj.enabled != Some(false);
        Ok(BuiltinsConfig {
            enabled,
            tools: obj.tools.unwrap_or_default(),
        })
    }
}

/// Wrap one built-in's body as a [`Tool`] with source `builtin`. The body returns
/// `Err(message)` for every failure, so each tool reads as a straight line of `?`s.
fn builtin<F, Fut>(name: &'static str, description: &str, schema: Value, run: F) -> Tool
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResult, String>> + Send + 'static,
{
    Tool::new(name, move |args, ctx| {
        let fut = run(args, ctx);
        async move { fut.await.unwrap_or_else(ToolResult::failure) }
    })
    .with_description(description)
    .with_schema(schema)
    .with_source(ToolSource::Builtin)
}

/// Run blocking filesystem work off the async executor.
async fn blocking<T, F>(tool: &'static str, work: F) -> Result<T, String>
where
    F: FnOnce() -> Result<T, String> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("{tool}: internal error: {e}")))
}
