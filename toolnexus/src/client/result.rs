//! How a run ended: [`RunResult`], its [`RunStatus`] and the [`ToolCallRecord`]s of the
//! calls it made. Serializable, so a halted run can be persisted and resumed elsewhere.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire::Usage;
use crate::suspend::Request;

/// How a run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The model gave a final answer.
    #[default]
    Done,
    /// A tool suspended and no `wait_for` was set; see [`RunResult::pending`].
    Pending,
    /// A limit stopped the run; see [`RunResult::limit`].
    Incomplete,
}

/// The limit that stopped an incomplete run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Limit {
    /// The client's `max_turns` LLM round trips were used up (wire: `"maxTurns"`).
    #[serde(rename = "maxTurns")]
    MaxTurns,
}

impl Limit {
    /// The wire label: `maxTurns`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::MaxTurns => "maxTurns",
        }
    }
}

/// One tool call the run made, with its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// Tool name.
    pub name: String,
    /// Arguments it ran with.
    pub args: Value,
    /// Its output text.
    pub output: String,
    /// Whether it failed.
    pub is_error: bool,
    /// Its metadata (MCP `server`, HTTP `status`, …).
    pub metadata: Option<Map<String, Value>>,
}

/// The outcome of a run, with telemetry. Serializable, so a halted run can be persisted and
/// resumed by another process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The final assistant text (the pending prompt when halted).
    pub text: String,
    /// The full transcript; pass it back as history to continue.
    pub messages: Vec<Value>,
    /// Every tool call and its result, in call order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// `tool_calls.len()`.
    pub tool_call_count: usize,
    /// LLM round trips.
    pub turns: u32,
    /// Token usage summed across turns.
    pub usage: Usage,
    /// The model of the last turn.
    pub model: String,
    /// How the run ended.
    pub status: RunStatus,
    /// Which limit stopped it, only when `status` is `incomplete`.
    pub limit: Option<Limit>,
    /// The unresolved suspension, only when `status` is `pending`.
    pub pending: Option<Request>,
}
