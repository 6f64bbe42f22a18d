//! The events of a run: [`StreamEvent`], and the [`Emitter`] that hands them to a
//! [`Client::stream`](super::Client::stream) consumer and text deltas to `on_text`.

use serde_json::Value;
use tokio::sync::mpsc;

use super::ClientError;
use super::options::{OnText, OnToolProgress, RunOptions};
use super::result::RunResult;
use super::wire::Usage;
use crate::context::Progress;
use crate::suspend::Request;

/// One event of [`Client::stream`](super::Client::stream).
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// An assistant text delta.
    Text {
        /// The delta.
        delta: String,
    },
    /// A tool about to run.
    ToolCall {
        /// Provider call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments.
        args: Value,
    },
    /// A tool that ran.
    ToolResult {
        /// Provider call id.
        id: String,
        /// Tool name.
        name: String,
        /// Its output.
        output: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// A running tool's progress report (an MCP server's `notifications/progress`),
    /// between its `ToolCall` and its `ToolResult`.
    Progress {
        /// Provider call id.
        id: String,
        /// Tool name.
        name: String,
        /// The report.
        progress: Progress,
    },
    /// A tool suspended (emitted before `wait_for` runs).
    Pending {
        /// The suspension.
        request: Request,
    },
    /// Token usage so far.
    Usage {
        /// Summed usage.
        usage: Usage,
    },
    /// The run ended.
    Done {
        /// The final result.
        result: Box<RunResult>,
    },
}

/// The channel a `stream()` consumer reads.
pub(crate) type EventSender = mpsc::Sender<Result<StreamEvent, ClientError>>;

/// Where a run's incremental events go: the `stream()` channel and/or an `on_text` callback.
/// Neither set ⇒ the run does not stream.
#[derive(Default)]
pub(crate) struct Emitter {
    pub(crate) tx: Option<EventSender>,
    pub(crate) on_text: Option<OnText>,
    pub(crate) on_progress: Option<OnToolProgress>,
}

impl Emitter {
    /// The run's callbacks from `opts`, and the `stream()` channel when there is one.
    pub(crate) fn new(tx: Option<EventSender>, opts: &RunOptions) -> Self {
        Self {
            tx,
            on_text: opts.on_text.clone(),
            on_progress: opts.on_progress.clone(),
        }
    }

    pub(crate) fn streaming(&self) -> bool {
        self.tx.is_some() || self.on_text.is_some()
    }

    /// A non-text event, built only when a `stream()` consumer is there to read it (the
    /// tool-call and result events copy arguments and outputs).
    pub(crate) async fn event(&self, make: impl FnOnce() -> StreamEvent) {
        if let Some(tx) = &self.tx {
            // A dropped receiver aborts the whole run (see `Client::stream`).
            let _ = tx.send(Ok(make())).await;
        }
    }

    /// A callback that hands a tool call's progress reports to `on_progress` and streams
    /// them as [`StreamEvent::Progress`]; `None` when neither is there to take them. A report
    /// that finds the channel full is dropped: progress is advisory, and the tool must not
    /// wait on the consumer.
    pub(crate) fn progress_sink(
        &self,
        id: &str,
        name: &str,
    ) -> Option<impl Fn(Progress) + Send + Sync + 'static> {
        if self.tx.is_none() && self.on_progress.is_none() {
            return None;
        }
        let (tx, on_progress) = (self.tx.clone(), self.on_progress.clone());
        let (id, name) = (id.to_owned(), name.to_owned());
        Some(move |progress: Progress| {
            if let Some(f) = &on_progress {
                f(&name, &progress);
            }
            if let Some(tx) = &tx {
                let _ = tx.try_send(Ok(StreamEvent::Progress {
                    id: id.clone(),
                    name: name.clone(),
                    progress,
                }));
            }
        })
    }

    pub(crate) async fn send(&self, event: StreamEvent) {
        if let (StreamEvent::Text { delta }, Some(f)) = (&event, &self.on_text) {
            f(delta);
        }
        self.event(|| event).await;
    }
}
