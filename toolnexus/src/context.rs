//! [`ToolContext`] (SPEC §1): what a tool may know about the call it is serving.

use std::time::Duration;

pub use tokio_util::sync::CancellationToken;

use crate::suspend::Answer;

/// Per-call context passed to every [`Tool`](crate::Tool) execution.
///
/// ```
/// use std::time::Duration;
/// use toolnexus::ToolContext;
///
/// let ctx = ToolContext::default().with_timeout(Duration::from_secs(5)).with_call_id("call_1");
/// assert_eq!(ctx.timeout, Some(Duration::from_secs(5)));
/// assert!(!ctx.cancel.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    /// Cancelled when the caller gives up (run timeout, external cancel, server shutdown).
    pub cancel: CancellationToken,
    /// A deadline for this call; [`Toolkit::execute`](crate::Toolkit::execute) enforces it.
    pub timeout: Option<Duration>,
    /// Present only on the retry after a suspension was resolved (SPEC §10).
    pub answer: Option<Answer>,
    /// The provider's tool-call id, when the call came from a model.
    pub call_id: Option<String>,
}

impl ToolContext {
    /// A context that is cancelled together with `token`.
    pub fn with_cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Bound the call.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Carry a resolved suspension into the retry.
    pub fn with_answer(mut self, answer: Answer) -> Self {
        self.answer = Some(answer);
        self
    }

    /// Record the provider's call id.
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }
}
