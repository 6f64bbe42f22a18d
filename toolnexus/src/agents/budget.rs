//! Hierarchical budgets (SPEC §7D "Budgets"): what a handle may spend, carved from its
//! parent's remainder at spawn, and the [`LimitName`] a stop names.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Round trips per run when a budget sets none (the other ports' default).
pub(crate) const DEFAULT_MAX_TURNS: u32 = 6;
/// Running children per parent when a budget sets none.
pub(crate) const DEFAULT_MAX_CONCURRENT: usize = 8;
/// Nesting depth below the runtime root when a budget sets none.
pub(crate) const DEFAULT_MAX_DEPTH: usize = 3;

/// What one agent may spend. Every field is optional: unset means the parent's remainder
/// (tokens, tool calls, wall time) or the default (turns 6, concurrency 8, depth 3).
/// Money is deliberately absent: prices are vendor data a host converts itself.
///
/// ```
/// use toolnexus::agents::Budget;
/// let b = Budget::new().max_tokens(10_000).max_children(4);
/// assert_eq!(b.max_tokens, Some(10_000));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// LLM round trips per run (the client's `max_turns`).
    pub max_turns: Option<u32>,
    /// Tokens for this handle and everything below it.
    pub max_tokens: Option<u64>,
    /// Tool calls for this handle and everything below it.
    pub max_tool_calls: Option<u64>,
    /// Wall time from spawn, in milliseconds, on the runtime's clock.
    pub max_wall_ms: Option<u64>,
    /// Children this handle may spawn over its lifetime.
    pub max_children: Option<u32>,
    /// Children running at once; further wakes queue FIFO.
    pub max_concurrent: Option<usize>,
    /// How deep below the runtime root the tree under this handle may go.
    pub max_depth: Option<usize>,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $t:ty),* $(,)?) => {
        $( $(#[$doc])* pub fn $name(mut self, v: $t) -> Self { self.$name = Some(v); self } )*
    };
}

impl Budget {
    /// A budget with nothing set.
    pub fn new() -> Self {
        Self::default()
    }

    setters! {
        /// Set `max_turns`.
        max_turns: u32,
        /// Set `max_tokens`.
        max_tokens: u64,
        /// Set `max_tool_calls`.
        max_tool_calls: u64,
        /// Set `max_wall_ms`.
        max_wall_ms: u64,
        /// Set `max_children`.
        max_children: u32,
        /// Set `max_concurrent`.
        max_concurrent: usize,
        /// Set `max_depth`.
        max_depth: usize,
    }

    /// `over`'s fields where set, else this budget's (a spawn-time budget over the def's).
    pub(crate) fn overlay(self, over: Budget) -> Budget {
        Budget {
            max_turns: over.max_turns.or(self.max_turns),
            max_tokens: over.max_tokens.or(self.max_tokens),
            max_tool_calls: over.max_tool_calls.or(self.max_tool_calls),
            max_wall_ms: over.max_wall_ms.or(self.max_wall_ms),
            max_children: over.max_children.or(self.max_children),
            max_concurrent: over.max_concurrent.or(self.max_concurrent),
            max_depth: over.max_depth.or(self.max_depth),
        }
    }
}

/// The limit that stopped a run or refused a spawn: a [`Budget`] field, a failed
/// `wait` deadline, or the client's own turn cap. The wire spelling is SPEC's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LimitName {
    /// `maxTurns`
    #[serde(rename = "maxTurns")]
    MaxTurns,
    /// `maxTokens`
    #[serde(rename = "maxTokens")]
    MaxTokens,
    /// `maxToolCalls`
    #[serde(rename = "maxToolCalls")]
    MaxToolCalls,
    /// `maxWallMs`
    #[serde(rename = "maxWallMs")]
    MaxWallMs,
    /// `maxChildren`
    #[serde(rename = "maxChildren")]
    MaxChildren,
    /// `maxConcurrent`
    #[serde(rename = "maxConcurrent")]
    MaxConcurrent,
    /// `maxDepth`
    #[serde(rename = "maxDepth")]
    MaxDepth,
    /// `timeout`: a `wait` deadline passed.
    #[serde(rename = "timeout")]
    Timeout,
}

impl LimitName {
    /// The wire spelling: `maxTurns`, `maxTokens`, …
    pub fn as_str(self) -> &'static str {
        match self {
            LimitName::MaxTurns => "maxTurns",
            LimitName::MaxTokens => "maxTokens",
            LimitName::MaxToolCalls => "maxToolCalls",
            LimitName::MaxWallMs => "maxWallMs",
            LimitName::MaxChildren => "maxChildren",
            LimitName::MaxConcurrent => "maxConcurrent",
            LimitName::MaxDepth => "maxDepth",
            LimitName::Timeout => "timeout",
        }
    }
}

impl fmt::Display for LimitName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`on_budget`](crate::agents::AgentDef::on_budget) is told when a limit is hit
/// before a turn: whose turn, which limit, and whose pool ran dry (the handle itself or
/// an ancestor — the walk is live up the chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetInfo {
    /// The handle whose turn the limit stopped.
    pub handle: crate::agents::Handle,
    /// Its agent's name.
    pub agent: String,
    /// The exhausted limit.
    pub limit: LimitName,
    /// The handle whose pool is exhausted (`handle` or an ancestor); an extension raises it.
    pub exhausted_at: crate::agents::Handle,
    /// Tokens `handle` and its subtree have used so far.
    pub total_tokens: u64,
}

/// How much to raise the hit limit by, in that limit's unit: tokens for `maxTokens`,
/// calls for `maxToolCalls`, milliseconds for `maxWallMs`.
///
/// ```
/// use toolnexus::agents::{BudgetDecision, BudgetExtension};
/// let d = BudgetDecision::Extend(BudgetExtension::by(500));
/// assert_eq!(d, BudgetDecision::Extend(BudgetExtension { amount: 500 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetExtension {
    /// The raise, in the limit's unit.
    pub amount: u64,
}

impl BudgetExtension {
    /// Raise the limit by `amount`.
    pub fn by(amount: u64) -> Self {
        Self { amount }
    }
}

/// The answer of an `on_budget` callback (SPEC §7D `onBudget → stop | extend | suspend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetDecision {
    /// Stop: the turn ends `incomplete`, naming the limit (the behaviour with no callback).
    Stop,
    /// Raise the limit and run the turn. Asked once per limit per turn: an extension that
    /// leaves the limit still spent stops, so a callback can never loop the runtime.
    Extend(BudgetExtension),
    /// Ask for approval: the handle suspends with an `approval` request (`data.limit` naming
    /// the limit) that escalates like any suspension, durably when no `wait_for` answers. An
    /// `ok` Answer runs the turn past the limit — mid-run, at `max_turns`, it continues the
    /// same transcript with `max_turns` more turns; past the wall deadline the turn gets a
    /// fresh `max_wall_ms` window — and a refusal ends it `incomplete` naming the limit.
    Suspend,
}

/// The `on_budget` callback of an [`AgentDef`](crate::agents::AgentDef) or the runtime.
pub type OnBudget = std::sync::Arc<dyn Fn(&BudgetInfo) -> BudgetDecision + Send + Sync>;

/// A handle's live remainder — the ledger the usage roll-up drains. `None` is unlimited.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pool {
    pub tokens: Option<i64>,
    pub tool_calls: Option<i64>,
}

/// A handle's budget once carved: the pool plus the fixed caps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Carved {
    pub pool: Pool,
    pub max_turns: u32,
    pub max_children: Option<u32>,
    pub max_concurrent: usize,
    pub max_depth: usize,
    /// The wall deadline on the runtime clock (spawn time + `max_wall_ms`).
    pub deadline: Option<Duration>,
    /// The wall window the deadline was set from (own `max_wall_ms`, else the parent's):
    /// what an approved `maxWallMs` suspension grants afresh.
    pub wall: Option<Duration>,
}

impl Carved {
    /// The runtime root: unlimited, the defaults for the caps.
    pub fn unlimited() -> Self {
        Self::carve(Budget::default(), None, Duration::ZERO)
    }

    /// `own` carved against the parent's remainder: `min(own, parent remaining)` for the
    /// shared dimensions, `own` or the default for the caps. The wall deadline is the
    /// earlier of the own one and the parent's.
    pub fn carve(own: Budget, parent: Option<&Carved>, now: Duration) -> Self {
        let clamp = |own: Option<u64>, parent: Option<i64>| match (own.map(saturating_i64), parent) {
            (Some(o), Some(p)) => Some(o.min(p)),
            (o, p) => o.or(p),
        };
        let own_wall = own.max_wall_ms.map(Duration::from_millis);
        let own_deadline = own_wall.map(|w| now + w);
        Self {
            pool: Pool {
                tokens: clamp(own.max_tokens, parent.and_then(|p| p.pool.tokens)),
                tool_calls: clamp(own.max_tool_calls, parent.and_then(|p| p.pool.tool_calls)),
            },
            max_turns: own.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            max_children: own.max_children,
            max_concurrent: own.max_concurrent.unwrap_or(DEFAULT_MAX_CONCURRENT),
            max_depth: own.max_depth.unwrap_or(DEFAULT_MAX_DEPTH),
            deadline: match (own_deadline, parent.and_then(|p| p.deadline)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            wall: own_wall.or(parent.and_then(|p| p.wall)),
        }
    }

    /// A fresh wall window from `now` (an approved `maxWallMs` suspension); no deadline
    /// stays none.
    pub fn renew_wall(&mut self, now: Duration) {
        if let Some(w) = self.wall {
            self.deadline = Some(now + w);
        }
    }

    /// The first exhausted dimension of this handle's own pool at `now`.
    pub fn exhausted(&self, now: Duration) -> Option<LimitName> {
        if self.pool.tokens.is_some_and(|t| t <= 0) {
            return Some(LimitName::MaxTokens);
        }
        if self.pool.tool_calls.is_some_and(|t| t <= 0) {
            return Some(LimitName::MaxToolCalls);
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return Some(LimitName::MaxWallMs);
        }
        None
    }

    /// Raise the pool or deadline behind `limit` by `amount` (its unit). The other limits
    /// are caps that refuse a spawn, never a turn, so there is nothing to raise.
    pub fn extend(&mut self, limit: LimitName, amount: u64) {
        let raise = |v: &mut Option<i64>| {
            if let Some(v) = v {
                *v = v.saturating_add(saturating_i64(amount));
            }
        };
        match limit {
            LimitName::MaxTokens => raise(&mut self.pool.tokens),
            LimitName::MaxToolCalls => raise(&mut self.pool.tool_calls),
            LimitName::MaxWallMs => {
                if let Some(d) = &mut self.deadline {
                    *d += Duration::from_millis(amount);
                }
            }
            _ => {}
        }
    }

    /// Drain `tokens` and `tool_calls` (the roll-up).
    pub fn spend(&mut self, tokens: u64, tool_calls: u64) {
        if let Some(t) = &mut self.pool.tokens {
            *t = t.saturating_sub(saturating_i64(tokens));
        }
        if let Some(c) = &mut self.pool.tool_calls {
            *c = c.saturating_sub(saturating_i64(tool_calls));
        }
    }
}

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carve_is_the_smaller_of_own_and_parent_remaining() {
        let parent = Carved::carve(Budget::new().max_tokens(100), None, Duration::ZERO);
        let child = Carved::carve(Budget::new().max_tokens(500), Some(&parent), Duration::ZERO);
        assert_eq!(child.pool.tokens, Some(100));
        let unset = Carved::carve(Budget::new(), Some(&parent), Duration::ZERO);
        assert_eq!(unset.pool.tokens, Some(100));
        let root = Carved::unlimited();
        let free = Carved::carve(Budget::new().max_tokens(7), Some(&root), Duration::ZERO);
        assert_eq!(free.pool.tokens, Some(7));
        assert_eq!(free.max_turns, DEFAULT_MAX_TURNS);
    }

    #[test]
    fn exhaustion_names_the_dimension() {
        let mut c = Carved::carve(Budget::new().max_tokens(50).max_wall_ms(10), None, Duration::ZERO);
        assert_eq!(c.exhausted(Duration::ZERO), None);
        assert_eq!(c.exhausted(Duration::from_millis(10)), Some(LimitName::MaxWallMs));
        c.spend(50, 0);
        assert_eq!(c.exhausted(Duration::ZERO), Some(LimitName::MaxTokens));
        c.extend(LimitName::MaxTokens, 5);
        c.extend(LimitName::MaxWallMs, 5);
        assert_eq!(c.pool.tokens, Some(5));
        assert_eq!(c.exhausted(Duration::from_millis(14)), None);
        assert_eq!(c.exhausted(Duration::from_millis(15)), Some(LimitName::MaxWallMs));
        assert_eq!(
            Budget::new()
                .max_turns(3)
                .overlay(Budget::new().max_tokens(1))
                .max_turns,
            Some(3)
        );
    }
}
