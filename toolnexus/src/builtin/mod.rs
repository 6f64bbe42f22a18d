//! The ten built-in tools (SPEC §4A, source `builtin`): the default toolset an agent can act
//! with at zero wiring — `bash, read, write, edit, grep, glob, webfetch, question,
//! apply_patch, todowrite` — with the names, descriptions and input schemas of the other
//! toolnexus ports, byte for byte.
//! Opt-in [`Extra`]s add more — background shells, `notebook_edit` — only when a config
//! names them.
//!
//! Every failure is a [`ToolResult`] with `is_error: true` and a message a model can act
//! on; malformed arguments (a missing required field, a wrong type) are such a failure too,
//! never silently treated as empty. Every call is bounded: reads by the bytes actually read
//! (only regular files are opened), `grep`/`glob` walks by files, bytes and matches, `bash`
//! by its timeout and an output cap that keeps the head and the tail.
//!
//! Relative paths resolve against [`BuiltinsConfig::base_dir`], or the process working
//! directory when there is none. With [`BuiltinsConfig::confine_to_base_dir`] every path a
//! file tool touches — `read`, `write`, `edit`, `grep`, `glob`, each file of `apply_patch`,
//! `bash`'s working directory — must resolve, symlinks and `..` included, inside the base:
//!
//! ```
//! use serde_json::json;
//! use toolnexus::builtin::{self, BuiltinsConfig};
//! use toolnexus::{ToolContext, Toolkit};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let base = tempfile::tempdir().unwrap();
//! let config = BuiltinsConfig::default().with_base_dir(base.path()).confined(true);
//! let tk = Toolkit::new(builtin::select(&config));
//! let r = tk.execute("write", json!({"path": "notes/a.txt", "content": "hi"}), ToolContext::default()).await;
//! assert_eq!(r.output, "Wrote 2 bytes to notes/a.txt");
//! assert!(base.path().join("notes/a.txt").is_file());
//! let r = tk.execute("write", json!({"path": "../escape.txt", "content": "x"}), ToolContext::default()).await;
//! assert!(r.is_error);
//! assert_eq!(r.output, format!("write: ../escape.txt resolves outside baseDir {}", base.path().display()));
//! # });
//! ```
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
#[cfg(unix)]
mod background;
mod bash;
mod diffmeta;
mod edit;
mod files;
mod glob;
mod grep;
mod notebook;
mod question;
mod read;
mod todowrite;
mod walk;
mod webfetch;
mod websearch;
mod workspace;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::tool::{BUILTIN_NAMES, Tool, ToolSource};
use crate::toolkit::{Closeable, Toolkit};
use workspace::Workspace;

pub use websearch::{SearchBackend, WebSearchConfig};

/// All ten built-in tools, in [`BUILTIN_NAMES`] order, each with source [`ToolSource::Builtin`],
/// unconfined (relative paths mean the process working directory).
pub fn all() -> Vec<Tool> {
    build(&BuiltinsConfig::default()).0
}

/// The tools `config` asks for — the ten, then its extras — set up as it says (base
/// directory, confinement, shell), with what they hold open for the toolkit to close.
fn build(config: &BuiltinsConfig) -> (Vec<Tool>, Option<Arc<dyn Closeable>>) {
    let ws = Arc::new(Workspace::new(
        config.base_dir.as_deref(),
        config.confine_to_base_dir,
    ));
    let mut resource: Option<Arc<dyn Closeable>> = None;
    let mut extras = Vec::new();
    #[cfg(unix)]
    let background = config.extras.contains(&Extra::BackgroundShells).then(|| {
        let shells = Arc::new(background::Shells::default());
        extras.push(background::output_tool(shells.clone()));
        extras.push(background::kill_tool(shells.clone()));
        resource = Some(shells.clone());
        shells
    });
    #[cfg(not(unix))]
    let background = {
        if config.extras.contains(&Extra::BackgroundShells) {
            tracing::warn!("background shells run on Unix-like systems only; the extra is off");
        }
        None
    };
    if config.extras.contains(&Extra::NotebookEdit) {
        extras.push(notebook::tool(ws.clone()));
    }
    if config.extras.contains(&Extra::Websearch) {
        extras.push(websearch::tool(config.websearch.clone()));
    }
    let mut tools = vec![
        bash::tool(
            ws.clone(),
            bash::Shell::from_config(config.shell.as_deref()),
            background,
        ),
        read::tool(ws.clone()),
        write::tool(ws.clone()),
        edit::tool(ws.clone()),
        grep::tool(ws.clone()),
        glob::tool(ws.clone()),
        webfetch::tool(),
        question::tool(),
        apply_patch::tool(ws),
        todowrite::tool(),
    ];
    tools.append(&mut extras);
    (tools, resource)
}

/// The interpreter `bash` runs commands with under `config` (what its results' `shell`
/// metadata says): [`BuiltinsConfig::shell`] verbatim when set, else `bash -c` with bash
/// found on `PATH` (or in `/bin`, `/usr/bin`), else `/bin/sh -c` — the tool's description then
/// says it is POSIX sh. `Err` names what was tried when there is no shell at all.
///
/// ```
/// use toolnexus::builtin::{self, BuiltinsConfig};
///
/// let zsh = BuiltinsConfig::default().with_shell(["/bin/zsh", "-c"]);
/// assert_eq!(builtin::shell(&zsh).unwrap(), ["/bin/zsh", "-c"]);
/// let detected = builtin::shell(&BuiltinsConfig::default()).unwrap();
/// assert_eq!(detected[1], "-c");
/// ```
pub fn shell(config: &BuiltinsConfig) -> Result<Vec<String>, String> {
    bash::Shell::from_config(config.shell.as_deref()).argv()
}

/// The built-in tools a [`BuiltinsConfig`] leaves on (SPEC §4 "Assembly order & builtin
/// toggle"): none when the whole source is off, otherwise all ten and the tools of its
/// [`extras`](BuiltinsConfig::extras), minus those the per-tool map sets to `false`. Unknown
/// names in the map are ignored with a `tracing` warning.
///
/// What the extras hold open (background shells) is stopped when the last of these tools is
/// dropped; [`Toolkit::build`](crate::Toolkit::build) also hands it to the toolkit, so
/// [`Toolkit::close`](crate::Toolkit::close) stops it.
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
    select_with_resource(config).0
}

/// [`select`], attaching what the tools hold open to `toolkit` for [`Toolkit::close`].
pub(crate) fn select_into(config: &BuiltinsConfig, toolkit: &mut Toolkit) -> Vec<Tool> {
    let (tools, resource) = select_with_resource(config);
    if let Some(resource) = resource {
        toolkit.attach(resource);
    }
    tools
}

fn select_with_resource(config: &BuiltinsConfig) -> (Vec<Tool>, Option<Arc<dyn Closeable>>) {
    if !config.enabled {
        return (Vec::new(), None);
    }
    for name in config.tools.keys() {
        let extra = Extra::ALL.iter().any(|e| e.tool_names().contains(&name.as_str()));
        if !BUILTIN_NAMES.contains(&name.as_str()) && !extra {
            tracing::warn!(tool = %name, "builtins.tools names an unknown built-in tool; ignored");
        }
    }
    let (tools, resource) = build(config);
    let tools = tools
        .into_iter()
        .filter(|t| config.tools.get(t.name()) != Some(&false))
        .collect();
    (tools, resource)
}

/// An opt-in built-in, never among the default ten: on only when named in
/// [`BuiltinsConfig::extras`] (in a config file, `"extras": ["background_shells"]`).
///
/// ```
/// use toolnexus::builtin::{self, BuiltinsConfig, Extra};
///
/// let config: BuiltinsConfig =
///     serde_json::from_str(r#"{"extras": ["background_shells"]}"#).unwrap();
/// assert_eq!(config, BuiltinsConfig::default().with_extra(Extra::BackgroundShells));
/// let names: Vec<String> = builtin::select(&config).iter().map(|t| t.name().to_owned()).collect();
/// assert_eq!(names.len(), 12);
/// assert_eq!(names[10..], ["bash_output", "kill_shell"]);
/// assert!(serde_json::from_str::<BuiltinsConfig>(r#"{"extras": ["teleport"]}"#).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Extra {
    /// `bash` gains `run_in_background`; adds `bash_output` and `kill_shell` (Unix only).
    BackgroundShells,
    /// `notebook_edit`: replace, insert or delete a Jupyter notebook cell.
    NotebookEdit,
    /// `websearch`: a query to the backend [`BuiltinsConfig::websearch`] names.
    Websearch,
}

impl Extra {
    /// Every extra.
    pub const ALL: [Extra; 3] = [Extra::BackgroundShells, Extra::NotebookEdit, Extra::Websearch];

    /// The tools this extra adds.
    pub fn tool_names(self) -> &'static [&'static str] {
        match self {
            Extra::BackgroundShells => &["bash_output", "kill_shell"],
            Extra::NotebookEdit => &["notebook_edit"],
            Extra::Websearch => &["websearch"],
        }
    }
}

/// Which built-in tools are on (SPEC §4, §4A), and the host boundary they work within.
///
/// Deserializes from every JSON form the other ports accept for a `builtins` key:
/// `true`/`false`, `null` (the default: all on), or an object
/// `{"disabled"?: bool, "enabled"?: bool, "tools"?: {name: bool}, "base_dir"?: string,
/// "confine_to_base_dir"?: bool, "shell"?: [string], "extras"?: [extra]}` (`baseDir` and `confineToBaseDir`
/// are accepted too). Precedence is MCP's: `disabled: true` wins, else `enabled: false`
/// turns the source off, else it is on. Other keys of the object are ignored.
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
/// assert_eq!(
///     parse(r#"{"baseDir": "/srv/work", "confineToBaseDir": true}"#),
///     BuiltinsConfig::default().with_base_dir("/srv/work").confined(true)
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BuiltinsConfig {
    /// The whole-source switch. When `false`, [`tools`](Self::tools) is not consulted.
    pub enabled: bool,
    /// Per-tool overrides on the all-on baseline: `false` drops the tool, `true` keeps it.
    pub tools: BTreeMap<String, bool>,
    /// What a relative path means for every tool that touches the filesystem — the paths
    /// inside `apply_patch`'s text too — and `bash`'s default working directory. `None`: the
    /// process working directory. A relative base is taken against the working directory
    /// when the tools are built.
    pub base_dir: Option<PathBuf>,
    /// Refuse every path whose real location (symlinks and `..` resolved, also for a file
    /// about to be created) lies outside [`base_dir`](Self::base_dir), with
    /// `<tool>: <path> resolves outside baseDir <base>`. Without a base every file call fails.
    /// This confines paths, not processes: a command `bash` runs can still reach anything
    /// the process can (turn `bash` off for that).
    pub confine_to_base_dir: bool,
    /// The argv prefix `bash` runs a command with, used verbatim (`["/bin/zsh", "-c"]`).
    /// `None`: see [`shell`].
    pub shell: Option<Vec<String>>,
    /// The opt-in built-ins to add to the ten (none by default).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub extras: BTreeSet<Extra>,
    /// Where `websearch` sends queries; required when [`Extra::Websearch`] is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub websearch: Option<WebSearchConfig>,
}

impl Default for BuiltinsConfig {
    /// All ten tools on, unconfined, the shell detected.
    fn default() -> Self {
        Self {
            enabled: true,
            tools: BTreeMap::new(),
            base_dir: None,
            confine_to_base_dir: false,
            shell: None,
            extras: BTreeSet::new(),
            websearch: None,
        }
    }
}

impl BuiltinsConfig {
    /// The whole source off.
    pub fn off() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// Set one tool's per-tool override.
    pub fn with_tool(mut self, name: impl Into<String>, on: bool) -> Self {
        self.tools.insert(name.into(), on);
        self
    }

    /// Set the base directory relative paths mean.
    pub fn with_base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Turn confinement to the base directory on or off.
    pub fn confined(mut self, on: bool) -> Self {
        self.confine_to_base_dir = on;
        self
    }

    /// Turn an opt-in built-in on.
    pub fn with_extra(mut self, extra: Extra) -> Self {
        self.extras.insert(extra);
        self
    }

    /// Set where `websearch` sends queries.
    pub fn with_websearch(mut self, websearch: WebSearchConfig) -> Self {
        self.websearch = Some(websearch);
        self
    }

    /// Set the shell argv prefix `bash` uses.
    pub fn with_shell(mut self, argv: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.shell = Some(argv.into_iter().map(Into::into).collect());
        self
    }

    /// Why this configuration cannot work, if it cannot: confinement without a base
    /// directory, an empty shell, or `websearch` on without a usable backend.
    pub fn check(&self) -> Result<(), String> {
        if self.confine_to_base_dir && self.base_dir.as_deref().is_none_or(|b| b.as_os_str().is_empty()) {
            return Err(workspace::NO_BASE.into());
        }
        if self
            .shell
            .as_ref()
            .is_some_and(|s| s.first().is_none_or(String::is_empty))
        {
            return Err("shell must name a program (e.g. [\"/bin/bash\", \"-c\"])".into());
        }
        if self.extras.contains(&Extra::Websearch) {
            let search = self.websearch.as_ref().ok_or(
                "extras names websearch, which needs a websearch backend (e.g. \"websearch\": {\"backend\": \"brave\"})",
            )?;
            search.endpoint()?;
        }
        Ok(())
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
    #[serde(default, alias = "baseDir")]
    base_dir: Option<String>,
    #[serde(default, alias = "confineToBaseDir")]
    confine_to_base_dir: Option<bool>,
    #[serde(default)]
    shell: Option<Vec<String>>,
    #[serde(default)]
    extras: Option<BTreeSet<Extra>>,
    #[serde(default)]
    websearch: Option<WebSearchConfig>,
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
            // "" means none, as in the Python port.
            base_dir: obj.base_dir.filter(|b| !b.is_empty()).map(PathBuf::from),
            confine_to_base_dir: obj.confine_to_base_dir.unwrap_or(false),
            shell: obj.shell.filter(|s| !s.is_empty()),
            extras: obj.extras.unwrap_or_default(),
            websearch: obj.websearch,
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

/// The input schema of a built-in's argument struct: derived (without the struct's own doc
/// comment), then closed to other keys with `additionalProperties: false` written last, as
/// every port writes it.
fn input_schema<T: schemars::JsonSchema>() -> Value {
    let mut schema = crate::schema::schema_for::<T>();
    if let Value::Object(root) = &mut schema {
        root.remove("description");
        root.insert("additionalProperties".into(), Value::Bool(false));
    }
    schema
}

/// Run blocking filesystem work off the async executor.
async fn blocking(
    tool: &'static str,
    work: impl FnOnce() -> Result<ToolResult, String> + Send + 'static,
) -> Result<ToolResult, String> {
    // Boxed, so that every built-in shares one blocking task type (one copy of tokio's task
    // machinery instead of one per tool: less machine code to keep resident).
    let work: Box<dyn FnOnce() -> Result<ToolResult, String> + Send> = Box::new(work);
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("{tool}: internal error: {e}")))
}
