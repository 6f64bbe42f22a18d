//! [`ToolContext`] (SPEC §1): what a tool may know about the call it is serving.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use tokio_util::sync::CancellationToken;

use futures::future::BoxFuture;

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
    /// Where the tool's progress reports go (an MCP server's `notifications/progress`);
    /// `None` drops them.
    pub on_progress: Option<OnProgress>,
    /// Where an MCP server's own `elicitation/create` made during this call is asked
    /// instead of the toolkit's `wait_for` (an MCP gateway sets it to its calling client);
    /// `None` keeps the toolkit's own handling.
    pub on_elicit: Option<OnElicit>,
}

/// Asks an MCP server's `elicitation/create` of someone else: takes the request's params
/// as wire JSON and gives the `ElicitResult` as wire JSON, or `None` when it could not be
/// asked (the toolkit's own handling then applies).
#[derive(Clone)]
pub struct OnElicit(
    Arc<dyn Fn(serde_json::Value) -> BoxFuture<'static, Option<serde_json::Value>> + Send + Sync>,
);

impl OnElicit {
    /// Wrap the asking function.
    pub fn new(
        f: impl Fn(serde_json::Value) -> BoxFuture<'static, Option<serde_json::Value>> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(f))
    }

    /// Ask `params` (an `elicitation/create`'s params) and give the result's wire JSON.
    pub async fn ask(&self, params: serde_json::Value) -> Option<serde_json::Value> {
        (self.0)(params).await
    }
}

impl fmt::Debug for OnElicit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnElicit")
    }
}

/// One progress report of a running call, as MCP's `notifications/progress` carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The progress so far; grows with every report, even when `total` is unknown.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening, when the tool says.
    pub message: Option<String>,
}

/// The callback that receives a call's [`Progress`] (see [`ToolContext::with_progress`]).
#[derive(Clone)]
pub struct OnProgress(Arc<dyn Fn(Progress) + Send + Sync>);

impl OnProgress {
    /// Hand `progress` to the callback.
    pub fn report(&self, progress: Progress) {
        (self.0)(progress)
    }
}

impl fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnProgress")
    }
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

    /// Hand the call's progress reports to `f` (a host's progress bar). It runs on the task
    /// that reads the tool's transport: keep it short. A report that arrives after the
    /// call's answer is dropped.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use toolnexus::{Progress, ToolContext};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let ctx = ToolContext::default().with_progress(move |p: Progress| sink.lock().unwrap().push(p.progress));
    /// ctx.report_progress(Progress { progress: 1.0, total: Some(4.0), message: None });
    /// assert_eq!(*seen.lock().unwrap(), [1.0]);
    /// ```
    pub fn with_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(OnProgress(Arc::new(f)));
        self
    }

    /// Pass one progress report to the caller, if it listens.
    pub fn report_progress(&self, progress: Progress) {
        if let Some(sink) = &self.on_progress {
            sink.report(progress);
        }
    }
}

/// The longest timeout a configuration or a model may ask for: one day. More is almost
/// surely a unit mistake (seconds written as milliseconds), and far more than that cannot
/// be a `Duration` at all.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The unit a timeout is written in as a JSON number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeoutUnit {
    /// `mcp.json`'s `timeout`, `bash`'s `timeout`.
    Millis,
    /// `webfetch`'s `timeout`.
    #[cfg_attr(not(feature = "builtins"), allow(dead_code))]
    Secs,
}

/// A timeout written as a JSON number of `unit`s: positive (at least a nanosecond) and at most
/// [`MAX_TIMEOUT`], or
/// the end of a sentence saying what is wrong (`must be a positive number of milliseconds
/// (at most 86400000), got -1`) for the caller to start with the field's name.
pub(crate) fn timeout_from_json(value: &serde_json::Value, unit: TimeoutUnit) -> Result<Duration, String> {
    let (per_second, name) = match unit {
        TimeoutUnit::Millis => (1000.0, "milliseconds"),
        TimeoutUnit::Secs => (1.0, "seconds"),
    };
    let max = MAX_TIMEOUT.as_secs_f64() * per_second;
    // A positive number below a nanosecond would still be a zero Duration: no time at all.
    match value
        .as_f64()
        .map(|n| (n, Duration::from_secs_f64(n.clamp(0.0, max) / per_second)))
    {
        Some((n, d)) if n > 0.0 && n <= max && !d.is_zero() => Ok(d),
        _ => Err(format!(
            "must be a positive number of {name} (at most {max}), got {value}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timeouts_are_checked_never_a_panic() {
        let ms = |v| timeout_from_json(&v, TimeoutUnit::Millis);
        assert_eq!(ms(json!(1500)), Ok(Duration::from_millis(1500)));
        assert_eq!(ms(json!(0.5)), Ok(Duration::from_micros(500)));
        assert_eq!(ms(json!(86_400_000)), Ok(MAX_TIMEOUT));
        for (bad, shown) in [
            (json!(1e308), "1e+308"),
            (json!(-1), "-1"),
            (json!(0), "0"),
            (json!(86_400_001), "86400001"),
            (json!(6.783664876934507e-199), "6.783664876934507e-199"),
            (json!("5s"), "\"5s\""),
            (json!(null), "null"),
            (json!(true), "true"),
        ] {
            assert_eq!(
                ms(bad),
                Err(format!(
                    "must be a positive number of milliseconds (at most 86400000), got {shown}"
                ))
            );
        }
        assert_eq!(
            timeout_from_json(&json!(f64::MAX), TimeoutUnit::Secs),
            Err("must be a positive number of seconds (at most 86400), got 1.7976931348623157e+308".into())
        );
        assert_eq!(
            timeout_from_json(&json!(2), TimeoutUnit::Secs),
            Ok(Duration::from_secs(2))
        );
    }
}
