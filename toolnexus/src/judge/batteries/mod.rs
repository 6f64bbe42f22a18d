//! Eight ready judges on the judge layer. Each has a standalone method returning a typed
//! verdict and, where the client has a seam for it, a hook for [`Hooks`](crate::client::Hooks).
//! Their role sentences and question texts are contract, the same in every port, so a
//! recorded decision replays across them.
//!
//! They are advisory, never a security control. A classifier error never escapes a
//! standalone method: the verdict carries `error` and `calibrated: false`, and the battery's
//! [`OnError`] says which way it fails.
//!
//! | battery | asks | verdict | hook |
//! |---|---|---|---|
//! | [`ToolGuard`] | a 4-level risk score of one call | allow / ask / deny | `before_tool` (ask suspends, SPEC §10) |
//! | [`ToolRelevance`] | one noul per tool | selected / dropped | `before_llm` (drops tools) |
//! | [`SkillRelevance`] | one noul per skill | selected / dropped | — |
//! | [`ToolResultFilter`] | one noul per output chunk | kept / dropped | `after_tool` |
//! | [`IsComplete`] | one noul | complete or not | — |
//! | [`AgentRouter`] | one choice per tree level | the agent | — |
//! | [`ContentGuard`] | one noul per dimension | allow / review / block | `before_llm` (block aborts) |
//! | [`ModelRouter`] | one choice over models | the model | `before_llm` (model override) |

mod complete;
mod content;
mod filter;
mod guard;
mod relevance;
mod router;

pub use complete::{CompleteVerdict, IsComplete};
pub use content::{ContentAction, ContentGuard, ContentVerdict, DEFAULT_DIMENSIONS, Dimension};
pub use filter::{FilterVerdict, ToolResultFilter};
pub use guard::{GuardAction, GuardedCall, RISK_RUBRIC, ToolGuard, ToolGuardVerdict};
pub use relevance::{Item, RelevanceVerdict, SkillRelevance, ToolRelevance};
pub use router::{AgentNode, AgentRouter, AgentVerdict, ModelChoice, ModelRouter, ModelVerdict};

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::build::{NamedQuestion, questions};
use super::reading::{Answers, Bands, read};
use crate::classifier::{Classifier, ClassifierError};
use crate::client::BoxError;
use crate::client::hooks::{LlmOverride, LlmRequest};

/// ToolGuard's role sentence.
pub const ROLE_TOOL_GUARD: &str = "You review one tool call an AI agent is about to make and rate how risky it is to run it without a human approving it.";
/// ToolRelevance's role sentence.
pub const ROLE_TOOL_RELEVANCE: &str = "You decide which tools an AI agent needs for the user's request, so the tools it does not need can be left out.";
/// SkillRelevance's role sentence.
pub const ROLE_SKILL_RELEVANCE: &str = "You decide which agent skills are relevant to the user's request, so the skills it does not need can be left out.";
/// ToolResultFilter's role sentence.
pub const ROLE_TOOL_RESULT_FILTER: &str = "You decide which parts of a tool's output are relevant to the query, so the irrelevant parts can be dropped.";
/// IsComplete's role sentence.
pub const ROLE_IS_COMPLETE: &str =
    "You check whether an AI agent's final answer completes the task it was given.";
/// AgentRouter's role sentence.
pub const ROLE_AGENT_ROUTER: &str = "You route a task to the agent best suited to do it.";
/// ContentGuard's role sentence.
pub const ROLE_CONTENT_GUARD: &str = "You screen text that is about to enter or leave an AI agent.";
/// ModelRouter's role sentence.
pub const ROLE_MODEL_ROUTER: &str = "You pick the cheapest model that can handle the user's request well.";

/// Which way a battery fails when its classifier does: `Open` lets the thing through
/// (allow, keep, complete), `Closed` stops it (deny, drop, block). There is no default:
/// every battery that can fail either way asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Fail open.
    Open,
    /// Fail closed.
    Closed,
}

/// What every battery holds: the classifier, the bands it reads with, and a role that
/// replaces the default sentence when set.
#[derive(Clone, Debug)]
struct Judge {
    classifier: Classifier,
    bands: Bands,
    role: Option<String>,
}

impl Judge {
    fn new(classifier: Classifier) -> Self {
        Self {
            classifier,
            bands: Bands::default(),
            role: None,
        }
    }

    fn role<'a>(&'a self, default: &'a str) -> &'a str {
        self.role.as_deref().unwrap_or(default)
    }

    /// Ask and read; the decision's `calibrated` comes along.
    async fn ask(
        &self,
        state: &Value,
        named: impl IntoIterator<Item = NamedQuestion>,
    ) -> Result<(Answers, bool), ClassifierError> {
        let d = self.classifier.evaluate(state, &questions(named)?).await?;
        Ok((read(&d, &self.bands), d.calibrated))
    }
}

/// The builder setters every battery shares.
macro_rules! judge_setters {
    ($ty:ty) => {
        impl $ty {
            /// Read with `bands` (default 0.30/0.70).
            pub fn bands(mut self, bands: $crate::judge::Bands) -> Self {
                self.judge.bands = bands;
                self
            }

            /// Replace the default role sentence.
            pub fn role(mut self, role: impl Into<String>) -> Self {
                self.judge.role = Some(role.into());
                self
            }
        }
    };
}
use judge_setters;

/// What a battery's `before_llm` hook returns.
pub type LlmHookFuture = Pin<Box<dyn Future<Output = Result<Option<LlmOverride>, BoxError>> + Send>>;

/// A `before_llm` hook that runs `f(battery, request, latest user text)` when the turn has
/// user text, and changes nothing otherwise.
fn llm_hook<B, F, Fut>(battery: &B, f: F) -> impl Fn(LlmRequest) -> LlmHookFuture + Send + Sync + 'static
where
    B: Clone + Send + Sync + 'static,
    F: Fn(B, LlmRequest, String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<LlmOverride>, String>> + Send + 'static,
{
    let battery = battery.clone();
    move |req: LlmRequest| {
        let text = latest_user_text(&req.messages);
        if text.is_empty() {
            return Box::pin(async { Ok(None) });
        }
        let hook = f(battery.clone(), req, text);
        Box::pin(async move { hook.await.map_err(BoxError::from) })
    }
}

/// The text of the last user message that has text: string content, or its text parts
/// joined with `\n` (a message of tool results only is skipped); `""` when there is none.
///
/// ```
/// use serde_json::json;
/// use toolnexus::judge::batteries::latest_user_text;
///
/// let messages = [
///     json!({"role": "user", "content": "first"}),
///     json!({"role": "assistant", "content": "ok"}),
///     json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
///     json!({"role": "user", "content": [{"type": "tool_result", "content": "x"}]}),
/// ];
/// assert_eq!(latest_user_text(&messages), "a\nb");
/// ```
pub fn latest_user_text(messages: &[Value]) -> String {
    for m in messages.iter().rev() {
        if m["role"] != "user" {
            continue;
        }
        match &m["content"] {
            Value::String(s) if !s.is_empty() => return s.clone(),
            Value::Array(parts) => {
                let texts: Vec<&str> = parts
                    .iter()
                    .filter(|p| p["type"] == "text")
                    .filter_map(|p| p["text"].as_str())
                    .collect();
                if !texts.is_empty() {
                    return texts.join("\n");
                }
            }
            _ => {}
        }
    }
    String::new()
}
