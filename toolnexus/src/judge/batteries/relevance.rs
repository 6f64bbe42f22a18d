//! ToolRelevance and SkillRelevance: which tools (skills) does the request need? Only a
//! confident `no` drops one.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::{
    Judge, LlmHookFuture, OnError, ROLE_SKILL_RELEVANCE, ROLE_TOOL_RELEVANCE, judge_setters, llm_hook,
};
use crate::classifier::Classifier;
use crate::client::hooks::{LlmOverride, LlmRequest};
use crate::judge::{Band, noul_with, state};

/// A named thing to select: a tool, a skill.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// Its name (the question's key).
    pub name: String,
    /// What it does; appended to the question when not empty.
    pub description: String,
}

impl Item {
    /// An item.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
        }
    }
}

/// Which items were kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelevanceVerdict {
    /// Kept, in the given order.
    pub selected: Vec<String>,
    /// Dropped (confidently not needed), in the given order.
    pub dropped: Vec<String>,
    /// The decision's `calibrated` (`false` on error).
    pub calibrated: bool,
    /// The classifier's error, when it failed.
    pub error: Option<String>,
}

/// The wording that differs between tools and skills.
#[derive(Clone, Copy, Debug)]
struct Wording {
    role: &'static str,
    noun: &'static str,
    verb: &'static str,
    if_true: &'static str,
    if_false: &'static str,
}

const TOOLS: Wording = Wording {
    role: ROLE_TOOL_RELEVANCE,
    noun: "tool",
    verb: "needed for",
    if_true: "the request cannot be done well without this tool",
    if_false: "the request can be done without this tool",
};

const SKILLS: Wording = Wording {
    role: ROLE_SKILL_RELEVANCE,
    noun: "skill",
    verb: "relevant to",
    if_true: "the skill's instructions would help with this request",
    if_false: "the skill is unrelated to this request",
};

#[derive(Clone, Debug)]
struct Relevance {
    judge: Judge,
    on_error: OnError,
    wording: Wording,
}

impl Relevance {
    async fn select(&self, prompt: &str, items: &[Item]) -> RelevanceVerdict {
        let mut out = RelevanceVerdict {
            calibrated: true,
            ..RelevanceVerdict::default()
        };
        if items.is_empty() {
            return out;
        }
        let w = self.wording;
        let qs = items.iter().map(|it| {
            let mut ins = format!(
                "Is the {} `{}` {} the request in `user_request`?",
                w.noun, it.name, w.verb
            );
            if !it.description.is_empty() {
                ins.push_str(&format!(" The {}: {}", w.noun, it.description));
            }
            noul_with(it.name.clone(), ins, w.if_true, w.if_false)
        });
        let st = state(self.judge.role(w.role), json!({"user_request": prompt}));
        let names = items.iter().map(|it| it.name.clone());
        match self.judge.ask(&st, qs).await {
            Ok((answers, calibrated)) => {
                out.calibrated = calibrated;
                for n in names {
                    let no = answers.get(&n).is_some_and(|a| a.band() == Some(Band::No));
                    if no { &mut out.dropped } else { &mut out.selected }.push(n);
                }
            }
            Err(e) => {
                out.calibrated = false;
                out.error = Some(e.to_string());
                match self.on_error {
                    OnError::Open => out.selected.extend(names),
                    OnError::Closed => out.dropped.extend(names),
                }
            }
        }
        out
    }
}

/// Which tools does the request need? Drops only a confident `no`.
#[derive(Clone, Debug)]
pub struct ToolRelevance {
    judge: Judge,
    on_error: OnError,
}

judge_setters!(ToolRelevance);

impl ToolRelevance {
    /// Over `classifier`, failing `on_error`'s way (`Open` keeps every tool).
    pub fn new(classifier: Classifier, on_error: OnError) -> Self {
        Self {
            judge: Judge::new(classifier),
            on_error,
        }
    }

    fn inner(&self) -> Relevance {
        Relevance {
            judge: self.judge.clone(),
            on_error: self.on_error,
            wording: TOOLS,
        }
    }

    /// Judge `tools` against `prompt`.
    pub async fn select(&self, prompt: &str, tools: &[Item]) -> RelevanceVerdict {
        self.inner().select(prompt, tools).await
    }

    /// A `before_llm` hook dropping the tools the latest user text confidently does not
    /// need (OpenAI `{function: {name, description}}` or Anthropic `{name, description}`
    /// declarations).
    pub fn before_llm(&self) -> impl Fn(LlmRequest) -> LlmHookFuture + Send + Sync + 'static {
        llm_hook(self, |me: Self, req: LlmRequest, text: String| async move {
            if req.tools.is_empty() {
                return Ok(None);
            }
            let items: Vec<Item> = req.tools.iter().map(provider_tool).collect();
            let v = me.select(&text, &items).await;
            if v.dropped.is_empty() {
                return Ok(None);
            }
            let keep: HashSet<&str> = v.selected.iter().map(String::as_str).collect();
            let kept = req
                .tools
                .iter()
                .zip(&items)
                .filter(|(_, it)| keep.contains(it.name.as_str()))
                .map(|(t, _)| t.clone())
                .collect();
            Ok(Some(LlmOverride {
                tools: Some(kept),
                ..LlmOverride::default()
            }))
        })
    }
}

/// Name and description of a provider tool declaration; absent or non-string reads as `""`.
fn provider_tool(t: &Value) -> Item {
    let src = t.get("function").filter(|f| !f.is_null()).unwrap_or(t);
    let text = |k: &str| src.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Item::new(text("name"), text("description"))
}

/// Which skills are relevant? Feed `selected` into the skill allowlist — never an empty
/// `selected`, which means all.
#[derive(Clone, Debug)]
pub struct SkillRelevance {
    judge: Judge,
    on_error: OnError,
}

judge_setters!(SkillRelevance);

impl SkillRelevance {
    /// Over `classifier`, failing `on_error`'s way (`Open` keeps every skill).
    pub fn new(classifier: Classifier, on_error: OnError) -> Self {
        Self {
            judge: Judge::new(classifier),
            on_error,
        }
    }

    /// Judge `skills` against `prompt`.
    pub async fn select(&self, prompt: &str, skills: &[Item]) -> RelevanceVerdict {
        Relevance {
            judge: self.judge.clone(),
            on_error: self.on_error,
            wording: SKILLS,
        }
        .select(prompt, skills)
        .await
    }
}
