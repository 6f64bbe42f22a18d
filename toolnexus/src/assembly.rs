//! Toolkit assembly (SPEC §4): [`Toolkit::build`] gathers MCP tools, the `skill` tool, the
//! built-in tools, remote A2A agents' tools and the host's own tools into one [`Toolkit`],
//! in the order **MCP → skill → builtin → agents → extra**, first name wins — except that a host tool shadows a
//! built-in of the same name. MCP servers come from a config file or document
//! (`mcpServers` | `servers` | `mcp`); a server that fails is isolated, and
//! [`Toolkit::close`] shuts every session down.
//!
//! Assembly owns the sources' bookkeeping: each MCP server's status
//! ([`Toolkit::mcp_status`]) and the skill inventory (`Toolkit::skills`) ride on the toolkit
//! it builds, so [`Toolkit`] itself knows nothing of the sources.
//!
//! ```
//! use toolnexus::{Tool, ToolResult, Toolkit};
//! use toolnexus::assembly::ToolkitOptions;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let sandboxed_bash = Tool::new("bash", |_, _| async { ToolResult::failure("no shell here") });
//! let tk = Toolkit::build(
//!     ToolkitOptions::default()
//!         .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/skills"))
//!         .extra_tool(sandboxed_bash)
//!         .disable_tool("webfetch"),
//! )
//! .await
//! .unwrap();
//! assert_eq!(
//!     tk.tool_names(),
//!     ["apply_patch", "bash", "edit", "glob", "grep", "question", "read", "skill", "todowrite", "write"]
//! );
//! assert_eq!(tk.get("bash").unwrap().source().as_str(), "custom");
//! assert!(tk.skills_prompt().contains("- **hello-world**: "));
//! tk.close().await;
//! # });
//! ```

#[cfg(feature = "skills")]
use std::collections::BTreeMap;
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

#[cfg(feature = "builtins")]
use crate::builtin::{self, BuiltinsConfig};
use crate::mcp::McpStatuses;
#[cfg(feature = "skills")]
use crate::skill::{self, SampleLimit, SkillDef, SkillOptions, SkillProvider};
use crate::tool::Tool;
use crate::toolkit::Toolkit;

/// A configuration document: the MCP servers (`mcpServers` | `servers` | `mcp`) and, at the
/// top level, an optional `builtins` toggle and an optional `agents` block (A2A, SPEC §7A).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigSource {
    /// A JSON file; a missing one is a [`BuildError::ConfigRead`].
    Path(PathBuf),
    /// A JSON file that may be absent: then there is no config (no MCP servers, the
    /// built-ins as the options say). Any other read error is still an error.
    PathIfExists(PathBuf),
    /// An already parsed document.
    Value(Value),
}

impl From<Value> for ConfigSource {
    fn from(v: Value) -> Self {
        Self::Value(v)
    }
}

impl From<PathBuf> for ConfigSource {
    fn from(p: PathBuf) -> Self {
        Self::Path(p)
    }
}

impl From<&Path> for ConfigSource {
    fn from(p: &Path) -> Self {
        Self::Path(p.to_path_buf())
    }
}

impl From<&str> for ConfigSource {
    /// A path.
    fn from(p: &str) -> Self {
        Self::Path(p.into())
    }
}

/// Everything [`Toolkit::build`] assembles, set with `Default` and the chaining methods.
#[derive(Clone, Default)]
pub struct ToolkitOptions {
    /// MCP servers and the `builtins` key.
    config: Option<ConfigSource>,
    /// How MCP servers are loaded: the elicitation `wait_for` slot and a cancellation token.
    #[cfg(feature = "mcp")]
    mcp_load: crate::mcp::LoadOptions,
    /// Skill roots searched for `**/SKILL.md`.
    #[cfg(feature = "skills")]
    skills_dirs: Vec<PathBuf>,
    /// Skills supplied as data (after directory skills in first-wins order).
    #[cfg(feature = "skills")]
    skills: Vec<SkillDef>,
    /// A lazy provider of data skills, resolved once here; its failure is isolated.
    #[cfg(feature = "skills")]
    skill_provider: Option<SkillProvider>,
    /// Name → bool skill filter (allowlist if any `true`, else droplist).
    #[cfg(feature = "skills")]
    skills_filter: Option<BTreeMap<String, bool>>,
    /// How many sibling files a loaded skill lists.
    #[cfg(feature = "skills")]
    skill_sample_limit: SampleLimit,
    /// The host's own tools; one named like a built-in replaces it.
    extra_tools: Vec<Tool>,
    /// Built-in tools toggle; `None` ⇒ the config's `builtins` key, else all on.
    #[cfg(feature = "builtins")]
    builtins: Option<BuiltinsConfig>,
    /// The built-ins' base directory; overrides the `builtins` config's `base_dir`.
    #[cfg(feature = "builtins")]
    base_dir: Option<PathBuf>,
    /// Confine the file built-ins to the base directory; overrides the `builtins` config's
    /// `confine_to_base_dir`.
    #[cfg(feature = "builtins")]
    confine_to_base_dir: Option<bool>,
    /// Final tool names dropped from every source.
    disable_tools: Vec<String>,
    /// Skill names dropped from the catalog (folded into the filter as `false`).
    #[cfg(feature = "skills")]
    disable_skills: Vec<String>,
    /// Remote A2A agents (SPEC §7A), before the config's `agents` block.
    #[cfg(feature = "a2a")]
    agents: Vec<crate::a2a::AgentEntry>,
}

impl ToolkitOptions {
    /// Sets the MCP / builtins configuration (a path or a parsed document). A path must
    /// exist; see [`config_if_exists`](Self::config_if_exists) for one that may not.
    pub fn config(mut self, config: impl Into<ConfigSource>) -> Self {
        self.config = Some(config.into());
        self
    }

    /// Sets the configuration file, to be read only when it exists at build time (the
    /// usual `mcp.json` in the working directory).
    ///
    /// ```
    /// use toolnexus::{Toolkit, ToolkitOptions};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let options = ToolkitOptions::default().config_if_exists("no-such-dir/mcp.json").builtins(false);
    /// let tk = Toolkit::build(options).await.unwrap();
    /// assert!(tk.is_empty() && tk.mcp_status().is_empty());
    /// # });
    /// ```
    pub fn config_if_exists(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = Some(ConfigSource::PathIfExists(path.into()));
        self
    }

    /// Sets how MCP servers are loaded (elicitation bridge, cancellation).
    #[cfg(feature = "mcp")]
    pub fn mcp_load(mut self, load: crate::mcp::LoadOptions) -> Self {
        self.mcp_load = load;
        self
    }

    /// Adds a skills root.
    #[cfg(feature = "skills")]
    pub fn skills_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.skills_dirs.push(dir.into());
        self
    }

    /// Adds a data skill.
    #[cfg(feature = "skills")]
    pub fn skill(mut self, def: SkillDef) -> Self {
        self.skills.push(def);
        self
    }

    /// Sets the lazy skill provider.
    #[cfg(feature = "skills")]
    pub fn skill_provider(mut self, provider: SkillProvider) -> Self {
        self.skill_provider = Some(provider);
        self
    }

    /// Sets the skill filter.
    #[cfg(feature = "skills")]
    pub fn skills_filter(mut self, filter: BTreeMap<String, bool>) -> Self {
        self.skills_filter = Some(filter);
        self
    }

    /// Sets how many sibling files the `skill` tool lists for a loaded skill.
    #[cfg(feature = "skills")]
    pub fn skill_sample_limit(mut self, limit: SampleLimit) -> Self {
        self.skill_sample_limit = limit;
        self
    }

    /// Adds a host tool.
    pub fn extra_tool(mut self, tool: Tool) -> Self {
        self.extra_tools.push(tool);
        self
    }

    /// Adds host tools.
    pub fn extra_tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.extra_tools.extend(tools);
        self
    }

    /// Sets the built-in tools toggle (overrides the config's `builtins` key).
    #[cfg(feature = "builtins")]
    pub fn builtins(mut self, builtins: impl Into<BuiltinsConfig>) -> Self {
        self.builtins = Some(builtins.into());
        self
    }

    /// Sets what a relative path means for the built-in file tools and `bash` (see
    /// [`BuiltinsConfig::base_dir`]), whichever `builtins` config applies.
    #[cfg(feature = "builtins")]
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Confines every path the built-in file tools touch — and `bash`'s working directory —
    /// to the base directory, symlinks resolved (see [`BuiltinsConfig::confine_to_base_dir`]).
    /// Building fails when there is no base directory. A server exposing tools to others
    /// wants this, with [`base_dir`](Self::base_dir) its working directory:
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::{ToolContext, Toolkit, ToolkitOptions};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let tk = Toolkit::build(
    ///     ToolkitOptions::default().base_dir(std::env::current_dir().unwrap()).confine_to_base_dir(true),
    /// )
    /// .await
    /// .unwrap();
    /// let r = tk.execute("read", json!({"path": "/etc/hostname"}), ToolContext::default()).await;
    /// assert!(r.output.starts_with("read: /etc/hostname resolves outside baseDir "));
    /// let err = Toolkit::build(ToolkitOptions::default().confine_to_base_dir(true)).await.unwrap_err();
    /// assert_eq!(err.to_string(), "builtins: confine_to_base_dir is set but base_dir is empty");
    /// # });
    /// ```
    #[cfg(feature = "builtins")]
    pub fn confine_to_base_dir(mut self, on: bool) -> Self {
        self.confine_to_base_dir = Some(on);
        self
    }

    /// Drops a tool by its final name.
    pub fn disable_tool(mut self, name: impl Into<String>) -> Self {
        self.disable_tools.push(name.into());
        self
    }

    /// Drops a skill by name.
    #[cfg(feature = "skills")]
    pub fn disable_skill(mut self, name: impl Into<String>) -> Self {
        self.disable_skills.push(name.into());
        self
    }

    /// Adds the remote A2A agent whose Agent Card is at `card_url` (SPEC §7A): one tool per
    /// skill, after the built-ins in the assembly order. An agent that cannot be resolved is
    /// isolated: no tools, and [`Toolkit::agent_status`] keyed by `card_url` says why.
    #[cfg(feature = "a2a")]
    pub fn agent(mut self, card_url: impl Into<String>, options: crate::a2a::AgentOptions) -> Self {
        let card = card_url.into();
        self.agents.push(crate::a2a::AgentEntry {
            id: card.clone(),
            card,
            options,
            enabled: true,
        });
        self
    }
}

impl fmt::Debug for ToolkitOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A config Value may carry header secrets: show only where it comes from.
        let config = self.config.as_ref().map(|c| match c {
            ConfigSource::Path(p) => p.display().to_string(),
            ConfigSource::PathIfExists(p) => format!("{} (if it exists)", p.display()),
            ConfigSource::Value(_) => "<value>".to_owned(),
        });
        let mut d = f.debug_struct("ToolkitOptions");
        d.field("config", &config);
        #[cfg(feature = "mcp")]
        d.field("mcp_load", &self.mcp_load);
        #[cfg(feature = "skills")]
        d.field("skills_dirs", &self.skills_dirs)
            .field("skills", &self.skills.iter().map(|s| &s.name).collect::<Vec<_>>())
            .field("skill_provider", &self.skill_provider.is_some())
            .field("skills_filter", &self.skills_filter)
            .field("skill_sample_limit", &self.skill_sample_limit)
            .field("disable_skills", &self.disable_skills);
        d.field(
            "extra_tools",
            &self.extra_tools.iter().map(Tool::name).collect::<Vec<_>>(),
        );
        #[cfg(feature = "builtins")]
        d.field("builtins", &self.builtins)
            .field("base_dir", &self.base_dir)
            .field("confine_to_base_dir", &self.confine_to_base_dir);
        #[cfg(feature = "a2a")]
        d.field("agents", &self.agents.iter().map(|a| &a.id).collect::<Vec<_>>());
        d.field("disable_tools", &self.disable_tools).finish()
    }
}

/// Why a toolkit could not be built. Per-source runtime failures (a dead MCP server, a
/// failing skill provider, a bad skill file) are not errors: they are isolated and warned.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The config file could not be read.
    #[error("cannot read config {path}: {source}")]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config is not a JSON object.
    #[error("malformed config {origin}: {message}")]
    ConfigParse {
        /// The file path, or `<value>`.
        origin: String,
        /// What is wrong (with line and column for a syntax error).
        message: String,
    },
    /// The `builtins` key has the wrong shape.
    #[error("malformed config {origin}: `builtins`: {message}")]
    Builtins {
        /// The file path, or `<value>`.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// The built-ins' options cannot work together (confinement without a base directory,
    /// an empty shell).
    #[error("builtins: {message}")]
    BuiltinsOptions {
        /// What is wrong.
        message: String,
    },
    /// The MCP part of the config is unusable.
    #[error(transparent)]
    Mcp(#[from] crate::mcp::McpError),
    /// The `agents` block is unusable.
    #[cfg(feature = "a2a")]
    #[error(transparent)]
    Agents(#[from] crate::a2a::ConfigError),
    /// The config names A2A agents but the crate was built without the `a2a` feature.
    #[cfg(not(feature = "a2a"))]
    #[error("config {origin}: A2A agents need the `a2a` feature of toolnexus")]
    AgentsDisabled {
        /// The file path, or `<value>`.
        origin: String,
    },
    /// The config names MCP servers but the crate was built without the `mcp` feature.
    #[error("MCP config {origin}: MCP servers need the `mcp` feature of toolnexus")]
    McpDisabled {
        /// The file path, or `<value>`.
        origin: String,
    },
}

crate::debug_as_display!(BuildError);

/// The config document, read and parsed once.
struct Config {
    /// The file path, or `<value>`: what errors name.
    origin: String,
    doc: Value,
}

/// The document, or `None` for an optional file that is absent.
fn read_config(source: &ConfigSource) -> Result<Option<Config>, BuildError> {
    let (origin, doc) = match source {
        ConfigSource::Value(v) => ("<value>".to_owned(), v.clone()),
        ConfigSource::Path(path) | ConfigSource::PathIfExists(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && matches!(source, ConfigSource::PathIfExists(_)) =>
                {
                    return Ok(None);
                }
                Err(source) => {
                    return Err(BuildError::ConfigRead {
                        path: path.clone(),
                        source,
                    });
                }
            };
            let origin = path.display().to_string();
            // Strict: a duplicate key (two servers of one name) is an error, not a silent drop.
            let doc = crate::mcp::config::parse_json(&text).map_err(|e| BuildError::ConfigParse {
                origin: origin.clone(),
                message: e.to_string(),
            })?;
            (origin, doc)
        }
    };
    if !doc.is_object() {
        return Err(BuildError::ConfigParse {
            origin,
            message: "expected a JSON object".into(),
        });
    }
    Ok(Some(Config { origin, doc }))
}

/// The MCP source (SPEC §2): connect every enabled server of `config`, hand the source to
/// `toolkit` (statuses, sessions to close) and return its tools (server order) for the
/// caller to place. A server that fails is isolated (status `failed`); only an unusable
/// config is an error.
#[cfg(feature = "mcp")]
async fn load_mcp(
    config: &Config,
    load: &crate::mcp::LoadOptions,
    toolkit: &mut Toolkit,
) -> Result<Vec<Tool>, BuildError> {
    // Errors name the file the document came from.
    let mcp = crate::mcp::McpConfig::from_document(&config.doc, &config.origin)?;
    if mcp.is_empty() {
        return Ok(Vec::new());
    }
    let source = crate::mcp::load(&mcp, load.clone()).await?;
    Ok(source.hand_over(toolkit))
}

/// Without the `mcp` feature a config naming servers is refused rather than silently ignored.
#[cfg(not(feature = "mcp"))]
async fn load_mcp(config: &Config, _toolkit: &mut Toolkit) -> Result<Vec<Tool>, BuildError> {
    let mcp = crate::mcp::McpConfig::from_document(&config.doc, &config.origin)?;
    if mcp.is_empty() {
        return Ok(Vec::new());
    }
    Err(BuildError::McpDisabled {
        origin: config.origin.clone(),
    })
}

impl Toolkit {
    /// Assembles a toolkit from `options` (SPEC §4). See the [module docs](crate::assembly).
    ///
    /// Errors only on an unusable configuration document; everything else degrades with a
    /// `tracing` warning.
    pub async fn build(options: ToolkitOptions) -> Result<Toolkit, BuildError> {
        let config = match &options.config {
            Some(source) => read_config(source)?,
            None => None,
        };
        let mut toolkit = Toolkit::default();
        let mut ordered: Vec<Tool> = Vec::new();

        if let Some(config) = &config {
            #[cfg(feature = "mcp")]
            ordered.extend(load_mcp(config, &options.mcp_load, &mut toolkit).await?);
            #[cfg(not(feature = "mcp"))]
            ordered.extend(load_mcp(config, &mut toolkit).await?);
        }

        #[cfg(feature = "skills")]
        if let Some(source) = load_skill_source(&options).await {
            toolkit.set_skills_prompt(source.prompt());
            toolkit.insert_extension(SkillInventory(source.skills().into()));
            ordered.push(source.tool());
        }

        #[cfg(feature = "builtins")]
        {
            let mut cfg = match (&options.builtins, &config) {
                (Some(cfg), _) => cfg.clone(),
                (None, Some(Config { origin, doc })) => match doc.get("builtins") {
                    Some(v) => serde_json::from_value(v.clone()).map_err(|e| BuildError::Builtins {
                        origin: origin.clone(),
                        message: e.to_string(),
                    })?,
                    None => BuiltinsConfig::default(),
                },
                (None, None) => BuiltinsConfig::default(),
            };
            if let Some(dir) = &options.base_dir {
                cfg.base_dir = Some(dir.clone());
            }
            if let Some(on) = options.confine_to_base_dir {
                cfg.confine_to_base_dir = on;
            }
            if cfg.enabled
                && let Err(message) = cfg.check()
            {
                // Named against the config file when that is where the builtins came from.
                return Err(match (&options, &config) {
                    (
                        ToolkitOptions {
                            builtins: None,
                            base_dir: None,
                            confine_to_base_dir: None,
                            ..
                        },
                        Some(c),
                    ) => BuildError::Builtins {
                        origin: c.origin.clone(),
                        message,
                    },
                    _ => BuildError::BuiltinsOptions { message },
                });
            }
            let shadowed: HashSet<&str> = options.extra_tools.iter().map(Tool::name).collect();
            ordered.extend(
                builtin::select_into(&cfg, &mut toolkit)
                    .into_iter()
                    .filter(|t| !shadowed.contains(t.name())),
            );
        }

        ordered.extend(load_agents(&options, config.as_ref(), &mut toolkit).await?);
        ordered.extend(options.extra_tools.iter().cloned());

        let disabled: HashSet<&str> = options.disable_tools.iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        let unique: Vec<Tool> = ordered
            .into_iter()
            .filter(|t| !disabled.contains(t.name()))
            .filter(|t| {
                let first = seen.insert(t.name().to_owned());
                if !first {
                    tracing::warn!("duplicate tool name \"{}\" — keeping first", t.name());
                }
                first
            })
            .collect();
        toolkit.add_tools(unique);
        Ok(toolkit)
    }
}

/// Where assembly keeps the skill inventory on the toolkit it builds.
#[cfg(feature = "skills")]
struct SkillInventory(std::sync::Arc<[skill::SkillInfo]>);

impl Toolkit {
    /// `connected | disabled | failed` per configured MCP server, in config order (SPEC §2
    /// "Status"); empty when the toolkit has no MCP source.
    /// A server whose connection was lost and could not be restarted shows as `failed`.
    pub fn mcp_status(&self) -> McpStatuses {
        crate::mcp::live_status(self)
    }

    /// The skills behind the `skill` tool (after the filter), in discovery order; what an
    /// A2A agent card lists. Empty when the toolkit has no skill source.
    #[cfg(feature = "skills")]
    pub fn skills(&self) -> &[skill::SkillInfo] {
        self.extension::<SkillInventory>().map_or(&[], |s| &s.0)
    }

    /// `connected | disabled | failed` per configured A2A agent (SPEC §7A), keyed by its
    /// `agents` key or, for one added by URL, its card URL, in the order they were
    /// configured or added; empty when there are none.
    #[cfg(feature = "a2a")]
    pub fn agent_status(&self) -> &AgentStatuses {
        static NONE: std::sync::LazyLock<AgentStatuses> = std::sync::LazyLock::new(AgentStatuses::default);
        self.extension::<AgentStatusRecord>().map_or(&NONE, |r| &r.0)
    }

    /// Record A2A agent statuses after those the toolkit has (assembly and `add_agent`).
    #[cfg(feature = "a2a")]
    fn extend_agent_status(&mut self, status: impl IntoIterator<Item = (String, crate::a2a::AgentStatus)>) {
        let mut all = self.agent_status().clone();
        all.extend(status);
        self.insert_extension(AgentStatusRecord(all));
    }
}

/// Each A2A agent's status, in the order configured or added.
#[cfg(feature = "a2a")]
pub type AgentStatuses = indexmap::IndexMap<String, crate::a2a::AgentStatus>;

/// Where assembly keeps the A2A statuses on the toolkit.
#[cfg(feature = "a2a")]
struct AgentStatusRecord(AgentStatuses);

/// The A2A source (SPEC §7A): the agents of `options`, then those of the config's `agents`
/// block, resolved concurrently. Each is `connected`, `disabled` or `failed` (isolated: no
/// tools); only an unusable `agents` block is an error.
#[cfg(feature = "a2a")]
async fn load_agents(
    options: &ToolkitOptions,
    config: Option<&Config>,
    toolkit: &mut Toolkit,
) -> Result<Vec<Tool>, BuildError> {
    use crate::a2a::{Agent, AgentStatus};
    let mut entries = options.agents.clone();
    if let Some(block) = config.and_then(|c| c.doc.get("agents").map(|b| (b, &c.origin))) {
        entries.extend(crate::a2a::config::parse_agents(block.0, block.1)?);
    }
    let resolving = entries
        .iter()
        .filter(|e| e.enabled)
        .map(|e| Agent::resolve(e.card.clone(), e.options.clone()));
    let mut resolved = futures::future::join_all(resolving).await.into_iter();
    let mut tools = Vec::new();
    let mut status = Vec::new();
    for entry in &entries {
        let state = match entry.enabled.then(|| resolved.next()).flatten() {
            None => AgentStatus::Disabled,
            Some(Ok(agent)) => {
                tools.extend(agent.tools());
                AgentStatus::Connected
            }
            Some(Err(e)) => {
                tracing::warn!("A2A agent \"{}\" failed: {e}", entry.id);
                AgentStatus::Failed {
                    reason: e.to_string(),
                }
            }
        };
        status.push((entry.id.clone(), state));
    }
    toolkit.extend_agent_status(status);
    Ok(tools)
}

/// Without the `a2a` feature a config naming agents is refused rather than silently ignored.
#[cfg(not(feature = "a2a"))]
async fn load_agents(
    _options: &ToolkitOptions,
    config: Option<&Config>,
    _toolkit: &mut Toolkit,
) -> Result<Vec<Tool>, BuildError> {
    match config {
        Some(c) if c.doc.get("agents").is_some() => Err(BuildError::AgentsDisabled {
            origin: c.origin.clone(),
        }),
        _ => Ok(Vec::new()),
    }
}

#[cfg(feature = "a2a")]
impl Toolkit {
    /// Resolves the A2A agent whose card is at `card_url` and adds its tools to this built
    /// toolkit (SPEC §7A `addAgent`); a tool whose name is already taken is not added (first
    /// wins, as at assembly). Returns the names added. Either way the outcome is recorded in
    /// [`agent_status`](Self::agent_status) under `card_url`.
    pub async fn add_agent(
        &mut self,
        card_url: impl Into<String>,
        options: crate::a2a::AgentOptions,
    ) -> Result<Vec<String>, crate::a2a::ResolveError> {
        use crate::a2a::{Agent, AgentStatus};
        let url = card_url.into();
        match Agent::resolve(url.clone(), options).await {
            Ok(agent) => {
                let new: Vec<Tool> = agent
                    .tools()
                    .into_iter()
                    .filter(|t| self.get(t.name()).is_none())
                    .collect();
                let names = new.iter().map(|t| t.name().to_owned()).collect();
                self.add_tools(new);
                self.extend_agent_status([(url, AgentStatus::Connected)]);
                Ok(names)
            }
            Err(e) => {
                self.extend_agent_status([(
                    url,
                    AgentStatus::Failed {
                        reason: e.to_string(),
                    },
                )]);
                Err(e)
            }
        }
    }
}

/// The skill source, when any skill input is given (no inputs ⇒ no `skill` tool).
#[cfg(feature = "skills")]
async fn load_skill_source(options: &ToolkitOptions) -> Option<skill::SkillSource> {
    if options.skills_dirs.is_empty() && options.skills.is_empty() && options.skill_provider.is_none() {
        return None;
    }
    let mut defs = options.skills.clone();
    if let Some(provider) = &options.skill_provider {
        defs.extend(provider.resolve().await);
    }
    let mut filter = options.skills_filter.clone();
    if !options.disable_skills.is_empty() {
        let f = filter.get_or_insert_with(BTreeMap::new);
        for name in &options.disable_skills {
            f.entry(name.clone()).or_insert(false);
        }
    }
    let mut skill_options = options
        .skills_dirs
        .iter()
        .fold(SkillOptions::default(), |o, dir| o.dir(dir))
        .defs(defs)
        .sample_limit(options.skill_sample_limit);
    if let Some(filter) = filter {
        skill_options = skill_options.filter(filter);
    }
    // Discovery reads the disk: keep it off the async workers.
    match tokio::task::spawn_blocking(move || skill::load_skills(&skill_options)).await {
        Ok(source) => Some(source),
        Err(e) => {
            tracing::warn!("skill discovery failed: {e}");
            None
        }
    }
}
