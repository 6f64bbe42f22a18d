//! What the agent runtime refuses: a bad definition ([`DefError`]), a refused spawn
//! ([`SpawnError`]), a refused post or wake ([`VerbError`]), a misrouted resume
//! ([`ResumeError`]), and a runtime that cannot be built ([`AgentError`]).

use std::path::PathBuf;

use super::budget::LimitName;
use crate::client::ConfigError;

/// A definition or registry the runtime cannot run. The wording of the first three is the
/// one the `agents!` macro reports at compile time for the same mistakes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DefError {
    /// Two agents share a name.
    #[error("duplicate agent name `{name}`")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// A team lists an agent nobody declared.
    #[error("agent `{agent}` lists `{member}` in its team, but no agent `{member}` is declared")]
    UnknownTeamMember {
        /// The agent whose team it is.
        agent: String,
        /// The missing member.
        member: String,
    },
    /// `uses` names a tool the toolkit does not have.
    #[error("agent `{agent}` uses `{tool}`, but no tool `{tool}` is declared")]
    UnknownTool {
        /// The agent.
        agent: String,
        /// The missing tool.
        tool: String,
    },
    /// Team membership loops back on itself.
    #[error("team cycle: {}", cycle.join(" → "))]
    TeamCycle {
        /// The agents on the loop, first one repeated at the end.
        cycle: Vec<String>,
    },
    /// A budget field of zero: the agent could never run.
    #[error(transparent)]
    ZeroBudget(#[from] ZeroBudget),
    /// `soul_file` could not be read.
    #[error("agent `{agent}`: cannot read soul_file {}: {source}", path.display())]
    SoulFile {
        /// The agent.
        agent: String,
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// `soul_file` is not UTF-8 text.
    #[error("agent `{agent}`: soul_file {} is not UTF-8 (invalid byte at offset {offset})", path.display())]
    SoulNotUtf8 {
        /// The agent.
        agent: String,
        /// The file.
        path: PathBuf,
        /// Where the first invalid byte is.
        offset: usize,
        /// The decoding failure.
        #[source]
        source: std::str::Utf8Error,
    },
    /// An agent without a name.
    #[error("an agent needs a non-empty name")]
    EmptyName,
}

/// A spawn the runtime refused — a value for the spawner to act on, never a panic.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No agent of that name is registered.
    #[error("unknown agent \"{name}\" (known: {})", known.join(", "))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The registered names, sorted.
        known: Vec<String>,
    },
    /// The parent is not a live handle of this runtime.
    #[error("unknown handle {0}")]
    UnknownHandle(String),
    /// The parent is closed (or closing).
    #[error("parent closed: {0}")]
    ParentClosed(String),
    /// The tree would be deeper than the parent's `max_depth`.
    #[error("maxDepth {0} exceeded")]
    MaxDepth(usize),
    /// The parent already spawned `max_children`.
    #[error("maxChildren {0} exceeded")]
    MaxChildren(u32),
    /// The parent or an ancestor has spent a budget dimension.
    #[error("budget exhausted ({0}); incomplete")]
    Budget(LimitName),
    /// The spawn-time budget has a zero field.
    #[error(transparent)]
    Def(#[from] ZeroBudget),
}

/// A zero field in a spawn-time budget (see [`DefError::ZeroBudget`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("agent `{agent}`: budget {limit} is 0, so it could never run")]
pub struct ZeroBudget {
    /// The agent.
    pub agent: String,
    /// The zero field.
    pub limit: LimitName,
}

impl SpawnError {
    /// The budget limit behind this refusal, if it is one.
    pub fn limit(&self) -> Option<LimitName> {
        match self {
            SpawnError::MaxDepth(_) => Some(LimitName::MaxDepth),
            SpawnError::MaxChildren(_) => Some(LimitName::MaxChildren),
            SpawnError::Budget(l) => Some(*l),
            _ => None,
        }
    }
}

/// A `post` or `wake` the runtime refused, synchronously, to the caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerbError {
    /// The inbox is at its cap (gate 1): the sender hears it now, nothing is dropped silently.
    #[error("inbox full: {handle} (cap {cap})")]
    InboxFull {
        /// The receiver.
        handle: String,
        /// The cap.
        cap: usize,
    },
    /// The handle is closed.
    #[error("inbox closed: {0} is closed")]
    Closed(String),
    /// The handle is not one of this runtime's.
    #[error("unknown handle {0}")]
    UnknownHandle(String),
}

/// A durable resume the runtime refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// No handle is suspended.
    #[error("no suspended handle to resume")]
    NothingSuspended,
    /// The Answer does not echo the pending request's id.
    #[error("answer id {answer} does not match the pending request {pending} of {handle}")]
    AnswerMismatch {
        /// The answer's id.
        answer: String,
        /// The pending request's id.
        pending: String,
        /// The suspended handle.
        handle: String,
    },
}

/// A runtime that cannot be built or an agent that cannot be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The registry is invalid.
    #[error(transparent)]
    Def(#[from] DefError),
    /// The model settings are invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The entry agent could not be spawned.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
}
