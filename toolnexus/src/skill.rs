//! Skill source (SPEC §3): discover `**/SKILL.md` files, parse their YAML frontmatter and
//! expose ONE `skill` tool that loads a skill's instructions and a sample of its files on
//! demand (progressive disclosure), plus the system-prompt catalog [`SkillSource::prompt`].
//!
//! Besides directories, skills can be supplied as data ([`SkillDef`], logical `skill://NAME/`
//! base) and by a lazy [`SkillProvider`]; all sources compose first-wins, directories first.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::ToolContext;
//! use toolnexus::skill::{SkillDef, SkillOptions, load_skills};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let source = load_skills(
//!     &SkillOptions::default().def(SkillDef::new("greet", "Say hello.").with_description("Greets people")),
//! );
//! assert!(source.prompt().ends_with("## Available Skills\n- **greet**: Greets people"));
//! let r = source.tool().execute(json!({"name": "greet"}), ToolContext::default()).await;
//! assert_eq!(
//!     r.output,
//!     "<skill_content name=\"greet\">\n# Skill: greet\n\nSay hello.\n\n\
//!      Base directory for this skill: skill://greet/\n\
//!      Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.\n\
//!      </skill_content>"
//! );
//! let r = source.tool().execute(json!({"name": "nope"}), ToolContext::default()).await;
//! assert_eq!(r.output, "Skill \"nope\" not found. Available skills: greet");
//! # });
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource};
use crate::walk::{Found, Links};
use crate::yaml;

/// The `skill` tool's description: opencode's `skill.txt`, verbatim (SPEC §3).
pub const SKILL_TOOL_DESCRIPTION: &str = "Load a specialized skill when the task at hand matches one of the skills listed in the system prompt.

Use this tool to inject the skill's instructions and resources into current conversation. The output may contain detailed workflow guidance as well as references to scripts, files, etc in the same directory as the skill.

The skill name must match one of the skills listed in your system prompt.";

/// The instruction preamble [`SkillSource::prompt`] starts with when ≥1 described skill exists.
pub const SKILLS_PROMPT_PREAMBLE: &str = "Skills provide specialized instructions and workflows for specific tasks.\nUse the skill tool to load a skill when a task matches its description.";

/// What [`SkillSource::prompt`] returns when no skill has a description.
pub const NO_SKILLS_PROMPT: &str = "No skills are currently available.";

/// How many sibling files the `skill` tool lists by default.
pub const DEFAULT_SAMPLE_LIMIT: usize = 10;

/// A discovered or supplied skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    /// The frontmatter `name` (or the [`SkillDef`] name).
    pub name: String,
    /// The frontmatter `description`; a skill without one is loadable but not in the prompt.
    pub description: Option<String>,
    /// Absolute path of the `SKILL.md` for a directory skill, the logical base for a data skill.
    pub location: String,
    /// The body after the frontmatter (untrimmed; the tool trims it).
    pub content: String,
    /// Where the skill came from, which decides the tool output's base and file list.
    pub origin: SkillOrigin,
}

/// Where a [`SkillInfo`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillOrigin {
    /// A `SKILL.md` on disk: `file://` base and sampled sibling files.
    File,
    /// Supplied as data: logical base ([`SkillInfo::location`]) and these resource names.
    Data {
        /// Logical names listed in `<skill_files>`.
        resources: Vec<String>,
    },
}

/// A skill supplied as data instead of a directory (SPEC §3, S1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillDef {
    /// Required; an empty name is skipped as `missing-name`.
    pub name: String,
    /// Optional description for the prompt catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The instructions returned when the skill is loaded.
    #[serde(default)]
    pub content: String,
    /// Logical resource names listed in `<skill_files>`; none ⇒ no files block at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Logical base shown to the model; defaults to `skill://NAME/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

impl SkillDef {
    /// A skill named `name` with these instructions.
    pub fn new(name: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            content: content.into(),
            ..Self::default()
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the logical resource names.
    pub fn with_resources(mut self, resources: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.resources = resources.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the logical base (default `skill://NAME/`).
    pub fn with_base(mut self, base: impl Into<String>) -> Self {
        self.base = Some(base.into());
        self
    }
}

/// Error type a [`SkillProvider`] may fail with.
pub type ProviderError = Box<dyn std::error::Error + Send + Sync>;

/// A lazy source of data skills, resolved once when a toolkit is built. A failing (or
/// panicking) provider is isolated: the other skill sources still load.
#[derive(Clone)]
pub struct SkillProvider(
    Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<SkillDef>, ProviderError>> + Send + Sync>,
);

impl SkillProvider {
    /// Wraps an async closure or `async fn`.
    ///
    /// ```
    /// use toolnexus::skill::{SkillDef, SkillProvider};
    /// let p = SkillProvider::new(|| async { Ok(vec![SkillDef::new("a", "body")]) });
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// assert_eq!(p.resolve().await.len(), 1);
    /// # });
    /// ```
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<SkillDef>, ProviderError>> + Send + 'static,
    {
        Self(Arc::new(move || f().boxed()))
    }

    /// Runs the provider; an error or a panic is logged and yields no skills.
    pub async fn resolve(&self) -> Vec<SkillDef> {
        match std::panic::AssertUnwindSafe((self.0)()).catch_unwind().await {
            Ok(Ok(defs)) => defs,
            Ok(Err(e)) => {
                tracing::warn!("skill provider failed: {e}");
                Vec::new()
            }
            Err(_) => {
                tracing::warn!("skill provider panicked");
                Vec::new()
            }
        }
    }
}

impl fmt::Debug for SkillProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SkillProvider(..)")
    }
}

/// Why a candidate skill was not loaded. The wire codes are identical across ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// No (or an empty) `name`.
    MissingName,
    /// The frontmatter is not valid YAML and no `name` could be rescued from it.
    MalformedFrontmatter,
    /// An earlier skill already has this name.
    DuplicateName,
    /// The file could not be read (I/O error or invalid UTF-8).
    Unreadable,
}

impl SkipReason {
    /// The wire code: `missing-name`, `malformed-frontmatter`, `duplicate-name`, `unreadable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MissingName => "missing-name",
            Self::MalformedFrontmatter => "malformed-frontmatter",
            Self::DuplicateName => "duplicate-name",
            Self::Unreadable => "unreadable",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A candidate that discovery refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSkip {
    /// Path of the `SKILL.md`, or the logical base of a data skill.
    pub location: String,
    /// The cross-port reason code.
    pub reason: SkipReason,
    /// The underlying parser / I/O message, empty when there is none. Port-specific wording.
    pub detail: String,
}

/// Result of [`list_skills`]: every loadable skill in discovery order, and every skip.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillInventory {
    /// Skills that would load, first-wins deduplicated, unfiltered.
    pub skills: Vec<SkillInfo>,
    /// Candidates refused, with their reasons.
    pub skipped: Vec<SkillSkip>,
}

/// How many sibling files a loaded skill lists in its `<skill_files>` block.
///
/// ```
/// use toolnexus::skill::SampleLimit;
///
/// // The other ports' numeric spelling, for a config file or a flag.
/// assert_eq!(SampleLimit::from(0), SampleLimit::Default);
/// assert_eq!(SampleLimit::from(3), SampleLimit::AtMost(3));
/// assert_eq!(SampleLimit::from(-1), SampleLimit::Omit);
/// assert_eq!(SampleLimit::from(-2), SampleLimit::All);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SampleLimit {
    /// Up to [`DEFAULT_SAMPLE_LIMIT`] (10) files.
    #[default]
    Default,
    /// Up to this many files.
    AtMost(usize),
    /// Every file.
    All,
    /// No `<skill_files>` block at all.
    Omit,
}

impl SampleLimit {
    /// How many files to list, or `None` for no block.
    fn files(self) -> Option<usize> {
        match self {
            SampleLimit::Default => Some(DEFAULT_SAMPLE_LIMIT),
            SampleLimit::AtMost(n) => Some(n),
            SampleLimit::All => Some(usize::MAX),
            SampleLimit::Omit => None,
        }
    }
}

/// The SPEC's numbers: `0` ⇒ the default, `n > 0` ⇒ up to `n`, `-1` ⇒ no block, any other
/// negative ⇒ every file.
impl From<i64> for SampleLimit {
    fn from(n: i64) -> Self {
        match n {
            0 => SampleLimit::Default,
            -1 => SampleLimit::Omit,
            n if n < 0 => SampleLimit::All,
            n => SampleLimit::AtMost(usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }
}

/// What [`load_skills`] reads, set with the chaining methods.
#[derive(Debug, Clone, Default)]
pub struct SkillOptions {
    dirs: Vec<PathBuf>,
    defs: Vec<SkillDef>,
    filter: Option<BTreeMap<String, bool>>,
    sample_limit: SampleLimit,
}

impl SkillOptions {
    /// Adds a skill root, searched for `**/SKILL.md` after those added before.
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// Adds a data skill; data skills come after every directory skill in first-wins order.
    pub fn def(mut self, def: SkillDef) -> Self {
        self.defs.push(def);
        self
    }

    /// Adds data skills.
    pub fn defs(mut self, defs: impl IntoIterator<Item = SkillDef>) -> Self {
        self.defs.extend(defs);
        self
    }

    /// Sets the name → bool filter: empty ⇒ all; any `true` ⇒ allowlist; only `false` ⇒
    /// droplist.
    pub fn filter(mut self, filter: BTreeMap<String, bool>) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Sets how many sibling files a loaded skill lists.
    pub fn sample_limit(mut self, limit: SampleLimit) -> Self {
        self.sample_limit = limit;
        self
    }
}

/// The loaded skills, the `skill` tool over them and the prompt catalog.
#[derive(Debug, Clone)]
pub struct SkillSource {
    skills: Arc<[SkillInfo]>,
    skipped: Vec<SkillSkip>,
    tool: Tool,
}

impl SkillSource {
    /// The exposed skills (after the filter), in discovery order.
    pub fn skills(&self) -> &[SkillInfo] {
        &self.skills
    }

    /// Every candidate refused during discovery.
    pub fn skipped(&self) -> &[SkillSkip] {
        &self.skipped
    }

    /// The single `skill` tool (source `skill`).
    pub fn tool(&self) -> Tool {
        self.tool.clone()
    }

    /// The system-prompt catalog: the preamble plus `## Available Skills`, described skills
    /// only, sorted by name in code-point order; [`NO_SKILLS_PROMPT`] when none is described.
    pub fn prompt(&self) -> String {
        let mut described: Vec<(&str, &str)> = self
            .skills
            .iter()
            .filter_map(|s| s.description.as_deref().map(|d| (s.name.as_str(), d)))
            .collect();
        if described.is_empty() {
            return NO_SKILLS_PROMPT.to_owned();
        }
        described.sort_unstable();
        let mut out = format!("{SKILLS_PROMPT_PREAMBLE}\n\n## Available Skills");
        for (name, description) in described {
            out.push_str(&format!("\n- **{name}**: {description}"));
        }
        out
    }
}

/// Discovers and validates skills from directories and data without building a tool
/// (SPEC §3, S3). The inventory is unfiltered: it is what a host authors a filter from.
pub fn list_skills(dirs: &[impl AsRef<Path>], defs: &[SkillDef]) -> SkillInventory {
    let mut candidates = Vec::new();
    for dir in dirs {
        candidates.extend(candidates_from_dir(dir.as_ref()));
    }
    candidates.extend(defs.iter().map(candidate_from_def));
    merge(candidates)
}

/// Discovers the skills `options` names and builds the `skill` tool over them.
pub fn load_skills(options: &SkillOptions) -> SkillSource {
    let SkillInventory { skills, skipped } = list_skills(&options.dirs, &options.defs);
    let skills: Arc<[SkillInfo]> = apply_filter(skills, options.filter.as_ref()).into();
    let tool = skill_tool(skills.clone(), options.sample_limit);
    SkillSource {
        skills,
        skipped,
        tool,
    }
}

type Candidate = Result<SkillInfo, SkillSkip>;

fn skip(location: impl Into<String>, reason: SkipReason, detail: impl Into<String>) -> Candidate {
    Err(SkillSkip {
        location: location.into(),
        reason,
        detail: detail.into(),
    })
}

fn merge(candidates: Vec<Candidate>) -> SkillInventory {
    let mut inventory = SkillInventory::default();
    let mut names = HashSet::new();
    for candidate in candidates {
        match candidate {
            Err(s) => inventory.skipped.push(s),
            Ok(info) if !names.insert(info.name.clone()) => {
                tracing::warn!(
                    "duplicate skill name \"{}\" ({}) — keeping first",
                    info.name,
                    info.location
                );
                inventory.skipped.push(SkillSkip {
                    location: info.location,
                    reason: SkipReason::DuplicateName,
                    detail: String::new(),
                });
            }
            Ok(info) => inventory.skills.push(info),
        }
    }
    inventory
}

/// The name → bool filter shared with MCP's per-server `tools` and the builtins map:
/// empty ⇒ all; ≥1 `true` ⇒ allowlist; only `false` ⇒ droplist; unknown names warned.
fn apply_filter(skills: Vec<SkillInfo>, filter: Option<&BTreeMap<String, bool>>) -> Vec<SkillInfo> {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else {
        return skills;
    };
    for name in filter.keys() {
        if !skills.iter().any(|s| &s.name == name) {
            tracing::warn!("skill filter name \"{name}\" matched no skill");
        }
    }
    let allowlist = filter.values().any(|&v| v);
    skills
        .into_iter()
        .filter(|s| match filter.get(&s.name) {
            Some(&keep) => keep,
            None => !allowlist,
        })
        .collect()
}

fn candidate_from_def(def: &SkillDef) -> Candidate {
    let base = def.base.clone().filter(|b| !b.is_empty());
    if def.name.is_empty() {
        return skip(
            base.unwrap_or_else(|| "skill://".to_owned()),
            SkipReason::MissingName,
            "",
        );
    }
    Ok(SkillInfo {
        name: def.name.clone(),
        description: def.description.clone(),
        location: base.unwrap_or_else(|| format!("skill://{}/", def.name)),
        content: def.content.clone(),
        origin: SkillOrigin::Data {
            resources: def.resources.clone(),
        },
    })
}

fn candidates_from_dir(root: &Path) -> Vec<Candidate> {
    // Absolute, so the base dir can always be a file:// URL (Python raises on a relative root).
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    if !root.is_dir() {
        tracing::warn!("skills dir not found: {}", root.display());
        return Vec::new();
    }
    let mut files = walk(&root, |name| name == "SKILL.md");
    // Discovery order is part of the contract: fewer path segments first, then code point,
    // so a top-level skill beats a nested copy of the same name.
    files.sort_by(|a, b| (a.rel.matches('/').count(), &a.rel).cmp(&(b.rel.matches('/').count(), &b.rel)));
    files.into_iter().map(|f| candidate_from_file(&f.path)).collect()
}

fn candidate_from_file(path: &Path) -> Candidate {
    let location = path.to_string_lossy().into_owned();
    let text = match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => return skip(location, SkipReason::Unreadable, e.to_string()),
        },
        Err(e) => return skip(location, SkipReason::Unreadable, e.to_string()),
    };
    // Universal newlines, as Python's text-mode read does, so bodies are byte-identical.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let fm = parse_frontmatter(&text);
    if fm.malformed {
        return skip(location, SkipReason::MalformedFrontmatter, fm.detail);
    }
    let Some(name) = fm.get("name").filter(|n| !n.is_empty()).map(str::to_owned) else {
        return skip(location, SkipReason::MissingName, fm.detail);
    };
    Ok(SkillInfo {
        name,
        description: fm.get("description").map(str::to_owned),
        location,
        content: fm.content.to_owned(),
        origin: SkillOrigin::File,
    })
}

/// Every file under `root` whose name satisfies `keep`: the crate's one walker, following
/// symlinked directories and files (each file once, under its shortest path).
fn walk(root: &Path, keep: impl Fn(&str) -> bool + Sync) -> Vec<Found> {
    let name_kept = |rel: &str| keep(rel.rsplit('/').next().unwrap_or(rel));
    crate::walk::files(root, Links::Follow, 1, usize::MAX, name_kept, &|| false).files
}

/// Parsed frontmatter: scalar values as trimmed source text, and the body.
struct Frontmatter<'a> {
    data: Vec<(String, String)>,
    content: &'a str,
    malformed: bool,
    detail: String,
}

impl Frontmatter<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.data.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    fn set_default(&mut self, key: &str, value: String) {
        if self.get(key).is_none() {
            self.data.push((key.to_owned(), value));
        }
    }
}

/// Splits `---\n<yaml>\n---\n<body>` like the ports' `^---\r?\n(.*?)\r?\n---\r?\n?(.*)$`.
fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---")?;
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let close = rest.find("\n---")?;
    let block = &rest[..close];
    let block = block.strip_suffix('\r').unwrap_or(block);
    let after = &rest[close + 4..];
    let after = after.strip_prefix('\r').unwrap_or(after);
    let after = after.strip_prefix('\n').unwrap_or(after);
    Some((block, after))
}

/// The two keys the catalog needs; the line-wise fallback rescues nothing else.
const CATALOG_KEYS: [&str; 2] = ["name", "description"];

fn parse_frontmatter(text: &str) -> Frontmatter<'_> {
    let Some((block, content)) = split_frontmatter(text) else {
        return Frontmatter {
            data: Vec::new(),
            content: text,
            malformed: false,
            detail: String::new(),
        };
    };
    let mut fm = Frontmatter {
        data: Vec::new(),
        content,
        malformed: false,
        detail: String::new(),
    };
    let mut rescue = true;
    match parse_yaml_block(block) {
        Ok(Some(entries)) => {
            let mut wrong = false;
            for (key, node) in entries {
                match node {
                    Some(value) => {
                        fm.data.retain(|(k, _)| *k != key);
                        fm.data.push((key, value));
                    }
                    None => wrong |= CATALOG_KEYS.contains(&key.as_str()),
                }
            }
            // A present-but-structurally-wrong name/description (a list, a map, null) is
            // re-read line-wise, as the other ports do; a clean mapping is not.
            rescue = wrong;
        }
        Ok(None) => {}
        Err(detail) => fm.detail = detail,
    }
    if rescue {
        for (key, value) in line_wise(block) {
            fm.set_default(key, value);
        }
    }
    fm.malformed = !fm.detail.is_empty() && fm.get("name").is_none_or(str::is_empty);
    fm
}

/// The lenient fallback, run only on a block YAML refused (or whose `name`/`description`
/// was not a scalar): top-level `name: value` / `description: value` lines, first wins,
/// and nothing that opens a YAML construct (`| > & * [ { !`).
fn line_wise(block: &str) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for line in block.lines() {
        if line.is_empty() || line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(&key) = CATALOG_KEYS.iter().find(|k| **k == key) else {
            continue;
        };
        if out.iter().any(|(k, _)| *k == key) {
            continue;
        }
        let value = value.trim();
        if value.is_empty() || value.starts_with(['|', '>', '&', '*', '[', '{', '!']) {
            continue;
        }
        out.push((key, unquote(value).to_owned()));
    }
    out
}

fn unquote(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() > 1 && b[0] == b[b.len() - 1] && (b[0] == b'"' || b[0] == b'\'') {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// Trims what Python's `str.strip()` trims (Unicode whitespace plus the C0 separators).
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// A frontmatter is a handful of keys: an alias bomb in a skill from an untrusted tree is
/// refused at once (the line-wise fallback still reads its name and description).
const FRONTMATTER_LIMITS: yaml::Limits = yaml::Limits {
    max_depth: 64,
    max_copies: 10_000,
};

/// Parses a frontmatter block. `Ok(None)`: valid YAML that is not a mapping (or empty);
/// `Ok(Some)`: key → trimmed scalar text (`None` for a non-scalar or null); `Err`: the
/// parser's message, with line and column. A scalar's text is as written: `3.10` stays
/// `"3.10"`, `yes` stays `"yes"`.
#[allow(clippy::type_complexity)]
fn parse_yaml_block(block: &str) -> Result<Option<Vec<(String, Option<String>)>>, String> {
    let Some(yaml::Node::Map(entries)) = yaml::parse(block, FRONTMATTER_LIMITS).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    entries
        .into_iter()
        .map(|yaml::Entry { key, value, at }| {
            let yaml::Node::Scalar(key) = key else {
                return Err(yaml::Error::key_not_scalar(at).to_string());
            };
            let text = match value {
                yaml::Node::Scalar(s) if !s.is_null() => Some(py_strip(&s.text).to_owned()),
                _ => None,
            };
            Ok((key.text, text))
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

fn skill_tool(skills: Arc<[SkillInfo]>, sample_limit: SampleLimit) -> Tool {
    Tool::new("skill", move |args: Value, _ctx| {
        let skills = skills.clone();
        async move {
            let name = match args.get("name") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            let Some(info) = skills.iter().find(|s| s.name == name).cloned() else {
                let mut names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
                names.sort_unstable();
                let available = if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                };
                return ToolResult::failure(format!(
                    "Skill \"{name}\" not found. Available skills: {available}"
                ));
            };
            // Sampling walks the disk: keep it off the async workers.
            match tokio::task::spawn_blocking(move || render(&info, sample_limit)).await {
                Ok(result) => result,
                Err(e) => ToolResult::failure(format!("skill: loading failed: {e}")),
            }
        }
    })
    .with_description(SKILL_TOOL_DESCRIPTION)
    .with_schema(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The name of the skill to load"}},
        "required": ["name"],
        "additionalProperties": false
    }))
    .with_source(ToolSource::Skill)
}

/// The progressive-disclosure block (SPEC §0.6), byte-identical to the other ports.
fn render(info: &SkillInfo, sample_limit: SampleLimit) -> ToolResult {
    let limit = sample_limit.files();
    let (base, files, dir) = match &info.origin {
        SkillOrigin::Data { resources } => {
            let files = limit
                .filter(|_| !resources.is_empty())
                .map(|n| resources.iter().take(n).cloned().collect::<Vec<_>>());
            (info.location.clone(), files, info.location.clone())
        }
        SkillOrigin::File => {
            let dir = Path::new(&info.location)
                .parent()
                .unwrap_or(Path::new("/"))
                .to_path_buf();
            let files = limit.map(|n| {
                let mut files = walk(&dir, |name| name != "SKILL.md");
                // Sorted by path relative to the skill dir, THEN capped: the sample depends
                // on the file set alone, never on directory-listing order.
                files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
                files
                    .into_iter()
                    .take(n)
                    .map(|f| f.path.to_string_lossy().into_owned())
                    .collect()
            });
            let dir = dir.to_string_lossy().into_owned();
            (file_uri(&dir), files, dir)
        }
    };
    let mut out = format!(
        "<skill_content name=\"{name}\">\n# Skill: {name}\n\n{body}\n\n\
         Base directory for this skill: {base}\n\
         Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.\n",
        name = info.name,
        body = py_strip(&info.content),
    );
    if let Some(files) = files {
        out.push_str("Note: file list is sampled.\n\n<skill_files>\n");
        for f in files {
            out.push_str(&format!("<file>{f}</file>\n"));
        }
        if out.ends_with("<skill_files>\n") {
            out.push('\n'); // an empty list still renders its (empty) line
        }
        out.push_str("</skill_files>\n");
    }
    out.push_str("</skill_content>");
    ToolResult::success(out)
        .with_meta("name", info.name.clone())
        .with_meta("dir", dir)
}

/// `file://` URL of an absolute path, quoted like Python's `Path.as_uri()`: every byte
/// except `A-Z a-z 0-9 _ . - ~ /` is percent-encoded (upper-case hex).
fn file_uri(path: &str) -> String {
    let mut out = String::from("file://");
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_the_reference_regex() {
        assert_eq!(
            split_frontmatter("---\nname: a\n---\nbody"),
            Some(("name: a", "body"))
        );
        assert_eq!(
            split_frontmatter("---\r\nname: a\r\n---\r\nbody"),
            Some(("name: a", "body"))
        );
        assert_eq!(split_frontmatter("---\n\n---\nb"), Some(("", "b")));
        assert_eq!(split_frontmatter("---\nname: a\n---"), Some(("name: a", "")));
        assert_eq!(split_frontmatter("---\n---\nb"), None);
        assert_eq!(split_frontmatter("no fences"), None);
    }

    #[test]
    fn scalars_keep_their_source_text() {
        let fm = parse_frontmatter(
            "---\nname: x\nversion: 3.10\nflag: yes\nn: 0x1F\nwhen: 2024-01-01\ndescription: >\n  folded\n  text\n---\n",
        );
        assert!(!fm.malformed);
        assert_eq!(fm.get("version"), Some("3.10"));
        assert_eq!(fm.get("flag"), Some("yes"));
        assert_eq!(fm.get("n"), Some("0x1F"));
        assert_eq!(fm.get("when"), Some("2024-01-01"));
        assert_eq!(fm.get("description"), Some("folded text"));
    }

    #[test]
    fn malformed_yaml_rescues_name_line_wise() {
        let fm = parse_frontmatter("---\nname: ok\ndescription: [unterminated\n---\nb");
        assert_eq!(fm.get("name"), Some("ok"));
        assert_eq!(fm.get("description"), None);
        assert!(!fm.malformed);
        let fm = parse_frontmatter("---\n: : :\n  - [\n---\nb");
        assert!(fm.malformed, "no name rescued ⇒ malformed");
        assert!(!fm.detail.is_empty());
    }

    #[test]
    fn file_uri_quotes_like_python() {
        assert_eq!(file_uri("/tmp/a b/ü+x"), "file:///tmp/a%20b/%C3%BC%2Bx");
    }
}
