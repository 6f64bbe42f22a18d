//! Context compaction (SPEC §7F): keep a long-lived conversation under a token budget.
//!
//! [`compactor`] builds a [`Compactor`], a pure `messages → messages` rewrite handed to the
//! client's `before_llm` hook ([`Compactor::hooks`], or [`Compactor::before_llm`] to combine
//! it with hooks of your own). The loop already replaces its working transcript with what
//! `before_llm` returns, and that transcript flows into `RunResult::messages` and the
//! conversation store, so compaction adds no loop behaviour.
//!
//! At or below `max_tokens` nothing is copied and nothing changes: the run is byte-identical
//! to one without a compactor. Above it the transcript becomes
//! `[leading system message (verbatim), summary, (flush reminder), …tail]`, where the tail is
//! the largest suffix that fits `keep_tail` and starts at a `user` turn that carries no tool
//! result — so a tool result is never separated from the call it answers, in either dialect.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::compaction::{CompactorOptions, compactor};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let c = compactor(
//!     CompactorOptions::new(60, |older: Vec<serde_json::Value>| async move {
//!         Ok(format!("{} earlier messages", older.len()))
//!     })
//!     .keep_tail(30),
//! );
//! let messages = vec![
//!     json!({"role": "system", "content": "You are Ava."}),
//!     json!({"role": "user", "content": "first question, rather long ".repeat(4)}),
//!     json!({"role": "assistant", "content": "first answer"}),
//!     json!({"role": "user", "content": "and now?"}),
//! ];
//! let out = c.compact(&messages).await.expect("over budget: compacted");
//! assert_eq!(out[0], messages[0]);
//! assert_eq!(out[1]["content"], "[Summary of earlier conversation]\n2 earlier messages");
//! assert_eq!(out[2], messages[3]);
//! // Under budget: no rewrite at all.
//! assert!(c.compact(&messages[..2]).await.is_none());
//! # });
//! ```

mod summarizer;

use std::fmt;
use std::future::Future;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::client::hooks::{Hooks, LlmOverride, LlmRequest};
use crate::client::{BoxError, Style};

pub use summarizer::{SUMMARY_INSTRUCTIONS, client_summarizer};

/// The prefix of the summary message's content (the same bytes in every port).
pub const SUMMARY_PREFIX: &str = "[Summary of earlier conversation]\n";

/// The pre-compaction reminder [`CompactorOptions::flush_to_memory`] injects.
pub const FLUSH_REMINDER: &str = "Before continuing: if anything from earlier is worth keeping, save it with \
     the memory tool now — the earlier transcript is about to be summarized.";

/// Produces the summary of the older messages; may call a model.
pub type Summarize = Arc<dyn Fn(Vec<Value>) -> BoxFuture<'static, Result<String, BoxError>> + Send + Sync>;

/// A token estimate of a run of messages.
pub type CountTokens = Arc<dyn Fn(&[Value]) -> usize + Send + Sync>;

/// What [`compactor`] is built from. `max_tokens` and `summarize` are required; the rest
/// have the SPEC's defaults.
#[derive(Clone)]
pub struct CompactorOptions {
    max_tokens: usize,
    keep_tail: Option<usize>,
    summarize: Summarize,
    count_tokens: Option<CountTokens>,
    flush_to_memory: bool,
    style: Style,
}

impl CompactorOptions {
    /// Compact when the estimate exceeds `max_tokens`, summarizing the older messages with
    /// `summarize` (which may call a model: see [`client_summarizer`]; the library never
    /// calls one on its own). An `Err` from it leaves that turn uncompacted.
    pub fn new<F, Fut>(max_tokens: usize, summarize: F) -> Self
    where
        F: Fn(Vec<Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, BoxError>> + Send + 'static,
    {
        Self {
            max_tokens,
            keep_tail: None,
            summarize: Arc::new(move |older| Box::pin(summarize(older))),
            count_tokens: None,
            flush_to_memory: false,
            style: Style::OpenAi,
        }
    }

    /// Keep at most this many tokens of recent tail when a boundary allows it (default
    /// `max_tokens / 2`).
    pub fn keep_tail(mut self, tokens: usize) -> Self {
        self.keep_tail = Some(tokens);
        self
    }

    /// Replace the estimator (default [`estimate_tokens`]). It is called on whole runs of
    /// messages, so it may add per-request overhead; a panic leaves the turn uncompacted.
    pub fn count_tokens(mut self, f: impl Fn(&[Value]) -> usize + Send + Sync + 'static) -> Self {
        self.count_tokens = Some(Arc::new(f));
        self
    }

    /// Insert [`FLUSH_REMINDER`] before the tail, so the model saves durable facts with the
    /// §7E `memory` tool before they exist only in the summary (default off).
    pub fn flush_to_memory(mut self, on: bool) -> Self {
        self.flush_to_memory = on;
        self
    }

    /// The dialect of the transcripts (default OpenAI). Under Anthropic the system prompt is
    /// not in the transcript and the Messages API has no `system` role inside `messages`, so
    /// the summary and the reminder are `user` messages (consecutive user turns merge).
    pub fn style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }
}

impl fmt::Debug for CompactorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompactorOptions")
            .field("max_tokens", &self.max_tokens)
            .field("keep_tail", &self.keep_tail)
            .field("count_tokens", &self.count_tokens.is_some())
            .field("flush_to_memory", &self.flush_to_memory)
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

/// A built compactor: cheap to clone, shareable between runs and agents.
#[derive(Clone, Debug)]
pub struct Compactor {
    opts: Arc<CompactorOptions>,
}

/// Build a [`Compactor`] from `opts`.
pub fn compactor(opts: CompactorOptions) -> Compactor {
    Compactor { opts: Arc::new(opts) }
}

/// The default estimate: `ceil(chars / 4)` of each message's compact JSON (no whitespace,
/// keys in insertion order, non-ASCII unescaped — the serialization every port counts),
/// summed. An estimator, not a tokenizer. Counts without building the JSON text.
pub fn estimate_tokens(messages: &[Value]) -> usize {
    messages.iter().map(message_tokens).sum()
}

fn message_tokens(m: &Value) -> usize {
    let mut chars = CharCount(0);
    // Writing to a counter cannot fail, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut chars, m);
    chars.0.div_ceil(4)
}

/// Counts the characters (code points) written as UTF-8: every byte that does not
/// continue a multibyte sequence.
struct CharCount(usize);

impl io::Write for CharCount {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.iter().filter(|b| (**b & 0xC0) != 0x80).count();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Does this message carry a tool result? (`tool` role; an Anthropic `user` message whose
/// content holds `tool_result` blocks; a Gemini `user` message with `functionResponse` parts.)
fn carries_tool_result(m: &Value) -> bool {
    m["role"] == "tool"
        || m["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
        || m["parts"]
            .as_array()
            .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
}

/// A tail may start here: a user turn that is not part of a tool group.
fn is_boundary(m: &Value) -> bool {
    m["role"] == "user" && !carries_tool_result(m)
}

impl Compactor {
    /// The compacted transcript, or `None` when nothing should change: at or below
    /// `max_tokens`, nothing to summarize, a failing `summarize` or panicking
    /// `count_tokens` (logged; the turn goes ahead uncompacted), or a result that would
    /// not be smaller than the input.
    pub async fn compact(&self, messages: &[Value]) -> Option<Vec<Value>> {
        let (head, split) = match catch_unwind(AssertUnwindSafe(|| self.split(messages))) {
            Ok(found) => found?,
            Err(_) => {
                tracing::warn!("compaction skipped: count_tokens panicked");
                return None;
            }
        };
        let older = messages[head..split].to_vec();
        let n = older.len();
        let summary = match AssertUnwindSafe((self.opts.summarize)(older))
            .catch_unwind()
            .await
        {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                tracing::warn!("compaction skipped: summarize failed: {e}");
                return None;
            }
            Err(_) => {
                tracing::warn!("compaction skipped: summarize panicked");
                return None;
            }
        };
        // Gemini's transcript has no system role and carries text in `parts`.
        let note = |text: String| match self.opts.style {
            Style::OpenAi => json!({"role": "system", "content": text}),
            Style::Anthropic => json!({"role": "user", "content": text}),
            Style::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        };
        let mut out = Vec::with_capacity(head + 2 + messages.len() - split);
        out.extend_from_slice(&messages[..head]);
        out.push(note(format!("{SUMMARY_PREFIX}{summary}")));
        if self.opts.flush_to_memory {
            out.push(note(FLUSH_REMINDER.to_owned()));
        }
        out.extend_from_slice(&messages[split..]);
        let shrank = catch_unwind(AssertUnwindSafe(|| self.count(&out) < self.count(messages)));
        if !matches!(shrank, Ok(true)) {
            tracing::warn!("compaction skipped: summarizing {n} messages would not shrink the transcript");
            return None;
        }
        Some(out)
    }

    /// `(head, split)`: the leading system message ends at `head`, the tail starts at
    /// `split` (`messages.len()` when no boundary exists: everything is summarized).
    /// `None` when under budget or nothing lies between them.
    fn split(&self, messages: &[Value]) -> Option<(usize, usize)> {
        let opts = &*self.opts;
        // The default estimator is additive: count each message once, sum suffixes.
        let per_message: Option<Vec<usize>> = opts
            .count_tokens
            .is_none()
            .then(|| messages.iter().map(message_tokens).collect());
        let total = match &per_message {
            Some(each) => each.iter().sum(),
            None => self.count(messages),
        };
        if total <= opts.max_tokens {
            return None;
        }
        let head = usize::from(messages.first().is_some_and(|m| m["role"] == "system"));
        let budget = opts.keep_tail.unwrap_or(opts.max_tokens / 2);
        let mut best = None;
        let mut suffix = 0;
        for i in (head + 1..messages.len()).rev() {
            suffix = match &per_message {
                Some(each) => suffix + each[i],
                None => self.count(&messages[i..]),
            };
            if suffix > budget {
                break;
            }
            if is_boundary(&messages[i]) {
                best = Some(i);
            }
        }
        // Safety over size: the most recent boundary even when its tail is over budget;
        // with none at all, summarize everything (an empty tail orphans nothing).
        let split = best
            .or_else(|| {
                (head + 1..messages.len())
                    .rev()
                    .find(|&i| is_boundary(&messages[i]))
            })
            .unwrap_or(messages.len());
        (split > head).then_some((head, split))
    }

    fn count(&self, messages: &[Value]) -> usize {
        match &self.opts.count_tokens {
            Some(f) => f(messages),
            None => estimate_tokens(messages),
        }
    }

    /// The `before_llm` hook: replaces the working transcript when [`compact`](Self::compact)
    /// rewrites it, else changes nothing. Hand it to [`Hooks::before_llm`] beside hooks of
    /// your own.
    pub fn before_llm(
        &self,
    ) -> impl Fn(LlmRequest) -> BoxFuture<'static, Result<Option<LlmOverride>, BoxError>> + Send + Sync + 'static
    {
        let this = self.clone();
        move |request: LlmRequest| {
            let this = this.clone();
            Box::pin(async move {
                Ok(this.compact(&request.messages).await.map(|messages| LlmOverride {
                    messages: Some(messages),
                    ..LlmOverride::default()
                }))
            })
        }
    }

    /// [`Hooks`] with only this compactor, for `ClientBuilder::hooks` or `RunOptions::hooks`.
    pub fn hooks(&self) -> Hooks {
        Hooks::new().before_llm(self.before_llm())
    }
}
