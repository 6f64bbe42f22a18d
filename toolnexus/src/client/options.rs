//! What one run is given: the [`Prompt`], and [`RunOptions`] for everything else.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::hooks::Hooks;
use super::metrics::{MetricEvent, OnMetric};
use crate::content::ContentPart;
use crate::context::Progress;
use crate::toolkit::Toolkit;

/// Receives each assistant text delta (block-style streaming).
pub type OnText = Arc<dyn Fn(&str) + Send + Sync>;

/// Receives each tool call's progress reports: the tool's name and the report.
pub type OnToolProgress = Arc<dyn Fn(&str, &Progress) + Send + Sync>;

/// A user prompt: plain text, or content parts in the caller's order.
#[derive(Clone, Debug, PartialEq)]
pub enum Prompt {
    /// Text (the user message content stays a plain string).
    Text(String),
    /// Text and media parts.
    Parts(Vec<ContentPart>),
}

impl From<&str> for Prompt {
    fn from(s: &str) -> Self {
        Prompt::Text(s.to_owned())
    }
}
impl From<String> for Prompt {
    fn from(s: String) -> Self {
        Prompt::Text(s)
    }
}
impl From<&String> for Prompt {
    fn from(s: &String) -> Self {
        Prompt::Text(s.clone())
    }
}
impl From<Vec<ContentPart>> for Prompt {
    fn from(p: Vec<ContentPart>) -> Self {
        Prompt::Parts(p)
    }
}

impl Prompt {
    pub(crate) fn into_content(self) -> Value {
        match self {
            Prompt::Text(s) => Value::String(s),
            Prompt::Parts(p) => serde_json::to_value(p).unwrap_or_default(),
        }
    }
}

/// Per-run options, set with the chaining methods. Everything unset leaves the run as the
/// client was built: a run with default options is byte-identical to one without them.
///
/// ```
/// use toolnexus::client::RunOptions;
/// use toolnexus::Toolkit;
///
/// let tk = Toolkit::default();
/// let opts = RunOptions::new(&tk).conversation("user-42").on_text(|delta| print!("{delta}"));
/// # let _ = opts;
/// ```
#[derive(Clone, Default)]
pub struct RunOptions {
    pub(super) toolkit: Option<Toolkit>,
    pub(super) history: Vec<Value>,
    pub(super) conversation: Option<String>,
    pub(super) cancel: Option<CancellationToken>,
    pub(super) on_text: Option<OnText>,
    pub(super) hooks: Option<Hooks>,
    pub(super) on_metric: Option<OnMetric>,
    pub(super) on_progress: Option<OnToolProgress>,
}

impl RunOptions {
    /// Options with `toolkit` (shared, not copied: a [`Toolkit`] clone is one reference
    /// count). Without one ([`RunOptions::default`]) a run is a plain completion: no
    /// `tools` key, no skills block.
    pub fn new(toolkit: &Toolkit) -> Self {
        Self {
            toolkit: Some(toolkit.clone()),
            ..Self::default()
        }
    }

    /// Continue `history`, a prior transcript (the system prompt is not re-added).
    pub fn history(mut self, history: Vec<Value>) -> Self {
        self.history = history;
        self
    }

    /// Continue the conversation stored under `id` in the client's
    /// [`ConversationStore`](super::ConversationStore): its transcript is loaded as the
    /// history (in place of [`history`](Self::history)) and the run's is saved back.
    pub fn conversation(mut self, id: impl Into<String>) -> Self {
        self.conversation = Some(id.into());
        self
    }

    /// Cancel with `token`, aborting the in-flight request; never retried.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Stream text deltas to `f`; the run then streams internally.
    pub fn on_text(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_text = Some(Arc::new(f));
        self
    }

    /// This run's hooks, in place of the client's (replaced, never merged: SPEC §7D).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// This run's metric sink, in place of the client's `on_metric` (replaced, never
    /// merged). The client's [`metrics`](super::Client::metrics) registry records the
    /// events either way.
    pub fn on_metric(mut self, f: impl Fn(&MetricEvent) + Send + Sync + 'static) -> Self {
        self.on_metric = Some(Arc::new(f));
        self
    }
}

impl RunOptions {
    /// Hand each tool call's progress reports (an MCP server's `notifications/progress`,
    /// or a native tool's [`ToolContext::report_progress`](crate::ToolContext::report_progress))
    /// to `f` with the tool's name, as they come; the same reports a
    /// [`stream()`](super::Client::stream) consumer sees as
    /// [`StreamEvent::Progress`](super::StreamEvent::Progress).
    ///
    /// ```
    /// use toolnexus::client::RunOptions;
    /// use toolnexus::Toolkit;
    ///
    /// let opts = RunOptions::new(&Toolkit::default()).on_progress(|tool, p| {
    ///     eprintln!("progress: {tool} {}/{}", p.progress, p.total.unwrap_or_default());
    /// });
    /// # let _ = opts;
    /// ```
    pub fn on_progress(mut self, f: impl Fn(&str, &Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("toolkit", &self.toolkit)
            .field("history", &self.history.len())
            .field("conversation", &self.conversation)
            .field("cancel", &self.cancel.is_some())
            .field("on_text", &self.on_text.is_some())
            .field("hooks", &self.hooks)
            .field("on_metric", &self.on_metric.is_some())
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}
