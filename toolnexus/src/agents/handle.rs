//! A live agent as the host sees it (SPEC §7D "Handle state machine"): the [`Handle`]
//! capability, its [`HandleState`]s and [`Transition`]s, what crosses its boundary
//! ([`TaskResult`] with a [`TaskStatus`]), and the read-only [`HandleView`].

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::budget::LimitName;
use crate::suspend::Request;

/// A capability on one live agent: post to / wake what you hold, wait on what you spawned.
/// Its id is deterministic and parent-scoped (`root/coordinator.1/explore.2`).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    id: Arc<str>,
}

impl Handle {
    pub(crate) fn new(id: &str) -> Self {
        Self { id: Arc::from(id) }
    }

    /// The id path, e.g. `root/coordinator.1/explore.2`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id's segments (`["root", "coordinator.1", "explore.2"]`): what a relayed
    /// suspension carries in `data.path`.
    pub fn path(&self) -> Vec<String> {
        self.id.split('/').map(str::to_owned).collect()
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({})", self.id)
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// Where a handle is in its life: `idle → running → (idle | suspended | closed)`, and
/// `suspended` leaves only through the Answer to its pending request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HandleState {
    /// Waiting for a wake.
    Idle,
    /// A run is in flight.
    Running,
    /// Parked on a suspension until its Answer arrives.
    Suspended,
    /// Closed for good; its last result stays queryable.
    Closed,
}

impl HandleState {
    /// `idle`, `running`, `suspended` or `closed`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandleState::Idle => "idle",
            HandleState::Running => "running",
            HandleState::Suspended => "suspended",
            HandleState::Closed => "closed",
        }
    }
}

impl fmt::Display for HandleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One state change of one handle; `Display` is the trace spelling `idle→running`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The state left.
    pub from: HandleState,
    /// The state entered.
    pub to: HandleState,
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}→{}", self.from, self.to)
    }
}

/// How a handle's run ended — the closed vocabulary, identical in every port. It is not the
/// client's three-valued `RunStatus`: `timeout`, `interrupted`, `closed` and `error`
/// happen only at a handle boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// The agent gave a final answer.
    Done,
    /// A suspension is waiting for an Answer nobody in the chain could give.
    Pending,
    /// A budget limit stopped it; see [`TaskResult::limit`].
    Incomplete,
    /// `interrupt` aborted the run.
    Interrupted,
    /// The handle was closed.
    Closed,
    /// A `wait` deadline passed; the run goes on.
    Timeout,
    /// The run failed (model unreachable, a panic, a misconfiguration).
    Error,
}

impl TaskStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Done => "done",
            TaskStatus::Pending => "pending",
            TaskStatus::Incomplete => "incomplete",
            TaskStatus::Interrupted => "interrupted",
            TaskStatus::Closed => "closed",
            TaskStatus::Timeout => "timeout",
            TaskStatus::Error => "error",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What crosses a handle boundary — a value, never a panic or an `Err`: a failed child
/// is a result its parent's model judges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The final text, or what went wrong.
    pub text: String,
    /// `true` unless the status is `done` or `pending`.
    pub is_error: bool,
    /// How it ended.
    pub status: TaskStatus,
    /// The suspension (its `data.path` names the suspended subtree), only when `pending`.
    pub pending: Option<Request>,
    /// This handle's own LLM round trips, cumulative over its life (never rolled up).
    pub turns: u32,
    /// Tokens of this handle and everything below it, cumulative.
    pub total_tokens: u64,
    /// Tokens of this handle alone.
    pub own_tokens: u64,
    /// The limit that stopped it, only when `incomplete` or `timeout`.
    pub limit: Option<LimitName>,
}

impl TaskResult {
    pub(crate) fn new(status: TaskStatus, text: impl Into<String>, ledger: Ledger) -> Self {
        Self {
            text: text.into(),
            is_error: !matches!(status, TaskStatus::Done | TaskStatus::Pending),
            status,
            pending: None,
            turns: ledger.turns,
            total_tokens: ledger.total_tokens,
            own_tokens: ledger.own_tokens,
            limit: None,
        }
    }

    pub(crate) fn with_limit(mut self, limit: LimitName) -> Self {
        self.limit = Some(limit);
        self
    }

    pub(crate) fn with_pending(mut self, request: Request) -> Self {
        self.pending = Some(request);
        self
    }
}

/// A handle's cumulative counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ledger {
    pub turns: u32,
    pub total_tokens: u64,
    pub own_tokens: u64,
}

/// The read-only projection `list` and `inspect` return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandleView {
    /// The handle's id.
    pub id: String,
    /// Its agent's name.
    pub agent: String,
    /// Its state now.
    pub state: HandleState,
    /// Tokens of it and everything below it.
    pub tokens: u64,
    /// Its own round trips.
    pub turns: u32,
    /// Items waiting in its inbox.
    pub inbox: usize,
    /// Its children's ids, in spawn order.
    pub children: Vec<String>,
}

/// Why a handle was closed, as its def's `on_close` hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// A graceful `close`.
    Closed,
    /// A forced `close` (the running turn was aborted).
    Interrupted,
    /// Closed by the runtime because a budget limit stopped it.
    Budget,
    /// Closed after its run failed.
    Error,
}

impl CloseReason {
    /// `closed`, `interrupted`, `budget` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Closed => "closed",
            CloseReason::Interrupted => "interrupted",
            CloseReason::Budget => "budget",
            CloseReason::Error => "error",
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
