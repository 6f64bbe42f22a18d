//! [`AgentDef`] — an agent as data: identity × a filtered toolkit view × loop parameters —
//! and the [`Registry`] of them a runtime runs, checked once when it is built.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::budget::{Budget, BudgetDecision, BudgetInfo, LimitName, OnBudget};
use super::error::{DefError, ZeroBudget};
use super::handle::{CloseReason, Handle};
use crate::client::{Hooks, OnMetric};
use crate::suspend::WaitFor;
use crate::tool::Tool;
use crate::toolkit::Toolkit;

/// The model name that means "the runtime's model".
pub const INHERIT: &str = "inherit";

/// Called once when a handle of this agent is spawned, before its first turn.
pub type OnSpawn = Arc<dyn Fn(&Handle) + Send + Sync>;
/// Called when a handle of this agent closes, before its final state is recorded.
pub type OnClose = Arc<dyn Fn(&Handle, CloseReason) + Send + Sync>;

/// Where an agent's system prompt comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Soul {
    #[default]
    None,
    Text(String),
    File(PathBuf),
}

/// One agent's definition (SPEC §7D): `does` is the routing line a delegating model reads,
/// `uses` its tools, the soul its system prompt, `team` the agents it may delegate to
/// through the `task` tool (none: no `task` tool), and the budget, model, interpreter
/// (`wait_for`), lifecycle callbacks and §8 seams of its runs.
///
/// ```
/// use toolnexus::agents::{AgentDef, Budget};
/// use toolnexus::{Tool, ToolResult};
///
/// let lookup = Tool::new("lookup", |_, _| async { ToolResult::success("data") });
/// let explore = AgentDef::new("explore", "read-only research")
///     .uses([lookup])
///     .soul("You research. You never write.")
///     .budget(Budget::new().max_turns(4));
/// assert_eq!(explore.name(), "explore");
/// assert_eq!(explore.model_name(), "inherit");
/// ```
#[derive(Clone)]
pub struct AgentDef {
    pub(crate) name: String,
    pub(crate) does: String,
    pub(crate) uses: Vec<Tool>,
    pub(crate) missing_tools: Vec<String>,
    pub(crate) soul: Soul,
    pub(crate) team: Vec<String>,
    pub(crate) budget: Budget,
    pub(crate) model: String,
    pub(crate) wait_for: Option<WaitFor>,
    pub(crate) on_spawn: Option<OnSpawn>,
    pub(crate) on_close: Option<OnClose>,
    pub(crate) on_budget: Option<OnBudget>,
    pub(crate) hooks: Option<Hooks>,
    pub(crate) on_metric: Option<OnMetric>,
}

impl AgentDef {
    /// An agent named `name` that `does` what the line says, with no tools, no soul, no
    /// team, the default budget and the runtime's model.
    pub fn new(name: impl Into<String>, does: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            does: does.into(),
            uses: Vec::new(),
            missing_tools: Vec::new(),
            soul: Soul::None,
            team: Vec::new(),
            budget: Budget::default(),
            model: INHERIT.to_owned(),
            wait_for: None,
            on_spawn: None,
            on_close: None,
            on_budget: None,
            hooks: None,
            on_metric: None,
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its routing description.
    pub fn does(&self) -> &str {
        &self.does
    }

    /// Its model (`inherit` unless set).
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// Its team's names, as declared.
    pub fn team_names(&self) -> &[String] {
        &self.team
    }

    /// Add these tools to its view.
    pub fn uses(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.uses.extend(tools);
        self
    }

    /// Add the tools named `names` from `toolkit` — the filtered view. A name the toolkit
    /// lacks is refused when the registry is built ([`DefError::UnknownTool`]).
    pub fn uses_from<S: AsRef<str>>(mut self, toolkit: &Toolkit, names: impl IntoIterator<Item = S>) -> Self {
        for name in names {
            match toolkit.get(name.as_ref()) {
                Some(t) => self.uses.push(t.clone()),
                None => self.missing_tools.push(name.as_ref().to_owned()),
            }
        }
        self
    }

    /// Its system prompt, verbatim.
    pub fn soul(mut self, soul: impl Into<String>) -> Self {
        self.soul = Soul::Text(soul.into());
        self
    }

    /// Its system prompt, read from `path` (UTF-8) when the registry is built.
    pub fn soul_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.soul = Soul::File(path.into());
        self
    }

    /// The agents it may delegate to (this gives it the `task` tool).
    pub fn team<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.team.extend(names.into_iter().map(Into::into));
        self
    }

    /// Its budget.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Its model (`inherit` for the runtime's).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Its interpreter authority: suspensions in its subtree that no nearer agent answers
    /// are answered here (SPEC §10 `wait_for`).
    pub fn wait_for(mut self, wait_for: WaitFor) -> Self {
        self.wait_for = Some(wait_for);
        self
    }

    /// Called once per spawned handle, before its first turn.
    pub fn on_spawn(mut self, f: impl Fn(&Handle) + Send + Sync + 'static) -> Self {
        self.on_spawn = Some(Arc::new(f));
        self
    }

    /// Called when a handle closes, with the reason.
    pub fn on_close(mut self, f: impl Fn(&Handle, CloseReason) + Send + Sync + 'static) -> Self {
        self.on_close = Some(Arc::new(f));
        self
    }

    /// Called when a limit is hit before one of its turns, or mid-run when it reaches
    /// `max_turns` or its wall deadline passes; decides stop, extend or suspend (in place of the runtime's callback, never
    /// merged). A panic is a stop. Before a turn it runs while the runtime's table is
    /// locked: decide from its argument, never call back into the runtime there. Mid-run it
    /// runs outside the lock (it may read the runtime, e.g. `inspect`); `Suspend` there
    /// asks for approval like before a turn (see [`BudgetDecision::Suspend`]).
    pub fn on_budget(mut self, f: impl Fn(&BudgetInfo) -> BudgetDecision + Send + Sync + 'static) -> Self {
        self.on_budget = Some(Arc::new(f));
        self
    }

    /// The §8 hooks of its runs, in place of the runtime's (replaced, never merged).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// The §8 metric sink of its runs, in place of the runtime's (replaced, never merged).
    pub fn on_metric(mut self, f: OnMetric) -> Self {
        self.on_metric = Some(f);
        self
    }

    /// The resolved soul (a registry's defs have read their `soul_file`).
    pub(crate) fn soul_text(&self) -> &str {
        match &self.soul {
            Soul::Text(s) => s,
            Soul::None | Soul::File(_) => "",
        }
    }

    /// Read `soul_file` into the soul.
    fn resolve_soul(&mut self) -> Result<(), DefError> {
        let Soul::File(path) = &self.soul else {
            return Ok(());
        };
        let bytes = std::fs::read(path).map_err(|source| DefError::SoulFile {
            agent: self.name.clone(),
            path: path.clone(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| DefError::SoulNotUtf8 {
            agent: self.name.clone(),
            path: path.clone(),
            offset: e.utf8_error().valid_up_to(),
            source: e.utf8_error(),
        })?;
        self.soul = Soul::Text(text);
        Ok(())
    }
}

impl fmt::Debug for AgentDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentDef")
            .field("name", &self.name)
            .field("does", &self.does)
            .field("uses", &self.uses.iter().map(Tool::name).collect::<Vec<_>>())
            .field("team", &self.team)
            .field("budget", &self.budget)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// A zero field of `budget`, named.
pub(crate) fn zero_field(agent: &str, budget: &Budget) -> Result<(), ZeroBudget> {
    let zero = [
        (budget.max_turns.map(u64::from), LimitName::MaxTurns),
        (budget.max_tokens, LimitName::MaxTokens),
        (budget.max_wall_ms, LimitName::MaxWallMs),
        (budget.max_concurrent.map(|v| v as u64), LimitName::MaxConcurrent),
    ]
    .into_iter()
    .find(|(v, _)| *v == Some(0));
    match zero {
        Some((_, limit)) => Err(ZeroBudget {
            agent: agent.to_owned(),
            limit,
        }),
        None => Ok(()),
    }
}

/// The agents a runtime can spawn, by name, iterated name-sorted. Built once, checked
/// once: names unique, every team member and `uses` tool declared, no team cycle, no
/// zero budget, every `soul_file` read.
///
/// ```
/// use toolnexus::agents::{AgentDef, Registry};
///
/// let err = Registry::new([AgentDef::new("coordinator", "delegates").team(["explorer"])]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "agent `coordinator` lists `explorer` in its team, but no agent `explorer` is declared"
/// );
/// ```
#[derive(Clone, Default)]
pub struct Registry {
    defs: BTreeMap<String, Arc<AgentDef>>,
}

impl Registry {
    /// Check and index `defs`.
    pub fn new(defs: impl IntoIterator<Item = AgentDef>) -> Result<Self, DefError> {
        let mut map = BTreeMap::new();
        for mut def in defs {
            if def.name.is_empty() {
                return Err(DefError::EmptyName);
            }
            if map.contains_key(&def.name) {
                return Err(DefError::DuplicateName { name: def.name });
            }
            if let Some(tool) = def.missing_tools.first() {
                return Err(DefError::UnknownTool {
                    agent: def.name.clone(),
                    tool: tool.clone(),
                });
            }
            zero_field(&def.name, &def.budget)?;
            def.resolve_soul()?;
            map.insert(def.name.clone(), Arc::new(def));
        }
        for def in map.values() {
            if let Some(member) = def.team.iter().find(|m| !map.contains_key(*m)) {
                return Err(DefError::UnknownTeamMember {
                    agent: def.name.clone(),
                    member: member.clone(),
                });
            }
        }
        let registry = Self { defs: map };
        registry.refuse_cycles()?;
        Ok(registry)
    }

    /// A depth-first walk of the team graph; a member already on the walk's path closes a loop.
    fn refuse_cycles(&self) -> Result<(), DefError> {
        fn visit<'a>(
            reg: &'a Registry,
            name: &'a str,
            path: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
        ) -> Result<(), DefError> {
            if let Some(at) = path.iter().position(|n| *n == name) {
                let mut cycle: Vec<String> = path[at..].iter().map(|s| (*s).to_owned()).collect();
                cycle.push(name.to_owned());
                return Err(DefError::TeamCycle { cycle });
            }
            if !done.insert(name) {
                return Ok(());
            }
            path.push(name);
            if let Some(def) = reg.defs.get(name) {
                for member in &def.team {
                    visit(reg, member, path, done)?;
                }
            }
            path.pop();
            Ok(())
        }
        let mut done = BTreeSet::new();
        for name in self.defs.keys() {
            visit(self, name, &mut Vec::new(), &mut done)?;
        }
        Ok(())
    }

    /// The definition named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<AgentDef>> {
        self.defs.get(name)
    }

    /// Every name, sorted.
    pub fn names(&self) -> Vec<String> {
        self.defs.keys().cloned().collect()
    }

    /// The definitions, name-sorted.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<AgentDef>> {
        self.defs.values()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.defs.values()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_cycle_is_named_in_order() {
        let err = Registry::new([
            AgentDef::new("a", "x").team(["b"]),
            AgentDef::new("b", "x").team(["c"]),
            AgentDef::new("c", "x").team(["a"]),
        ])
        .unwrap_err();
        assert_eq!(err.to_string(), "team cycle: a → b → c → a");
    }

    #[test]
    fn duplicates_and_zero_budgets_are_refused() {
        let dup = Registry::new([AgentDef::new("a", "x"), AgentDef::new("a", "y")]).unwrap_err();
        assert_eq!(dup.to_string(), "duplicate agent name `a`");
        let zero = Registry::new([AgentDef::new("a", "x").budget(Budget::new().max_turns(0))]).unwrap_err();
        assert_eq!(
            zero.to_string(),
            "agent `a`: budget maxTurns is 0, so it could never run"
        );
        let tk = Toolkit::default();
        let missing = Registry::new([AgentDef::new("a", "x").uses_from(&tk, ["lookup"])]).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "agent `a` uses `lookup`, but no tool `lookup` is declared"
        );
    }

    #[test]
    fn soul_files_must_exist_and_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone.md");
        let err = Registry::new([AgentDef::new("a", "x").soul_file(&gone)]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("agent `a`: cannot read soul_file {}: ", gone.display())),
            "{err}"
        );
        assert!(std::error::Error::source(&err).is_some());
        let latin1 = dir.path().join("latin1.md");
        std::fs::write(&latin1, b"caf\xe9").unwrap();
        let err = Registry::new([AgentDef::new("a", "x").soul_file(&latin1)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "agent `a`: soul_file {} is not UTF-8 (invalid byte at offset 3)",
                latin1.display()
            )
        );
        let good = dir.path().join("soul.md");
        std::fs::write(&good, "You are careful.").unwrap();
        let reg = Registry::new([AgentDef::new("a", "x").soul_file(&good)]).unwrap();
        assert_eq!(reg.get("a").unwrap().soul_text(), "You are careful.");
    }
}
