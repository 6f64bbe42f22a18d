//! AgentRouter and ModelRouter: one choice picks where a task goes. Only a sure pick routes.

use std::collections::BTreeMap;

use serde_json::json;

use super::{Judge, LlmHookFuture, ROLE_AGENT_ROUTER, ROLE_MODEL_ROUTER, judge_setters, llm_hook};
use crate::classifier::{Classifier, DecisionAnswer};
use crate::client::hooks::{LlmOverride, LlmRequest};
use crate::judge::{choice, state};

/// An agent, or a group of agents when `agents` is not empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentNode {
    /// The agent's (group's) name.
    pub name: String,
    /// What it is for — what routing to it would mean.
    pub description: String,
    /// Its members, for a group.
    pub agents: Vec<AgentNode>,
}

impl AgentNode {
    /// A leaf agent.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            agents: Vec::new(),
        }
    }

    /// A group of `agents`.
    pub fn group(name: impl Into<String>, description: impl Into<String>, agents: Vec<AgentNode>) -> Self {
        Self {
            agents,
            ..Self::new(name, description)
        }
    }
}

/// AgentRouter's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentVerdict {
    /// The agent picked, else the fallback.
    pub agent: String,
    /// The names picked at each level.
    pub path: Vec<String>,
    /// Whether every level was sure (and a leaf was reached).
    pub sure: bool,
    /// The last level's distribution.
    pub probabilities: Option<BTreeMap<String, f64>>,
    /// Every level's decision was calibrated (`false` on error).
    pub calibrated: bool,
    /// The classifier's error, when it failed.
    pub error: Option<String>,
}

/// Routes a task down the host's agent tree, one choice per level. No `OnError`: the
/// fallback is the error outcome.
#[derive(Clone, Debug)]
pub struct AgentRouter {
    judge: Judge,
}

judge_setters!(AgentRouter);

impl AgentRouter {
    /// Over `classifier`.
    pub fn new(classifier: Classifier) -> Self {
        Self {
            judge: Judge::new(classifier),
        }
    }

    /// Pick an agent for `task` from `agents`, else `fallback`. At one level a repeated name
    /// keeps its first description.
    pub async fn pick(&self, task: &str, agents: &[AgentNode], fallback: &str) -> AgentVerdict {
        let mut out = AgentVerdict {
            agent: fallback.to_owned(),
            path: Vec::new(),
            sure: false,
            probabilities: None,
            calibrated: true,
            error: None,
        };
        let st = state(self.judge.role(ROLE_AGENT_ROUTER), json!({"task": task}));
        let mut level = agents;
        while !level.is_empty() {
            let mut options = BTreeMap::new();
            for n in level {
                options
                    .entry(n.name.clone())
                    .or_insert_with(|| n.description.clone());
            }
            let q = choice("agent", "Which agent should handle `task`?", options);
            let (answers, calibrated) = match self.judge.ask(&st, [q]).await {
                Ok(a) => a,
                Err(e) => {
                    out.calibrated = false;
                    out.error = Some(e.to_string());
                    return out;
                }
            };
            out.calibrated = out.calibrated && calibrated;
            let Some(x) = answers.get("agent") else {
                out.probabilities = None;
                return out;
            };
            let DecisionAnswer::Choice(c) = &x.raw else {
                return out;
            };
            out.probabilities = Some(c.probabilities.clone());
            if x.sure() != Some(true) {
                return out;
            }
            let Some(picked) = level.iter().find(|n| n.name == c.choice) else {
                return out;
            };
            out.path.push(picked.name.clone());
            if picked.agents.is_empty() {
                out.agent = picked.name.clone();
                out.sure = true;
                return out;
            }
            level = &picked.agents;
        }
        out
    }
}

/// A model to route to: its id and what it is good for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelChoice {
    /// The model id sent to the provider.
    pub id: String,
    /// What it handles well.
    pub description: String,
}

impl ModelChoice {
    /// A model.
    pub fn new(id: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
        }
    }
}

/// ModelRouter's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelVerdict {
    /// The model picked, else the fallback.
    pub model: String,
    /// Whether a sure pick routed.
    pub routed: bool,
    /// Whether the pick was sure.
    pub sure: bool,
    /// The distribution over models.
    pub probabilities: Option<BTreeMap<String, f64>>,
    /// The decision's `calibrated` (`false` on error).
    pub calibrated: bool,
    /// The classifier's error, when it failed.
    pub error: Option<String>,
}

/// Opt-in per-request model routing over the host's ordered models.
#[derive(Clone, Debug)]
pub struct ModelRouter {
    judge: Judge,
    models: Vec<ModelChoice>,
}

judge_setters!(ModelRouter);

impl ModelRouter {
    /// Over `classifier`, choosing among `models`.
    pub fn new(classifier: Classifier, models: impl IntoIterator<Item = ModelChoice>) -> Self {
        Self {
            judge: Judge::new(classifier),
            models: models.into_iter().collect(),
        }
    }

    /// Pick a model for `prompt`, else `fallback`.
    pub async fn pick(&self, prompt: &str, fallback: &str) -> ModelVerdict {
        let mut out = ModelVerdict {
            model: fallback.to_owned(),
            routed: false,
            sure: false,
            probabilities: None,
            calibrated: true,
            error: None,
        };
        if self.models.is_empty() {
            return out;
        }
        let options: BTreeMap<String, String> = self
            .models
            .iter()
            .map(|m| (m.id.clone(), m.description.clone()))
            .collect();
        let st = state(
            self.judge.role(ROLE_MODEL_ROUTER),
            json!({"user_request": prompt}),
        );
        let q = choice("model", "Which model should answer `user_request`?", options);
        let (answers, calibrated) = match self.judge.ask(&st, [q]).await {
            Ok(a) => a,
            Err(e) => {
                out.calibrated = false;
                out.error = Some(e.to_string());
                return out;
            }
        };
        out.calibrated = calibrated;
        let Some(x) = answers.get("model") else {
            return out;
        };
        if let DecisionAnswer::Choice(c) = &x.raw {
            out.probabilities = Some(c.probabilities.clone());
            if x.sure() == Some(true) {
                out.model = c.choice.clone();
                out.routed = true;
                out.sure = true;
            }
        }
        out
    }

    /// A `before_llm` hook overriding the turn's model only when routed to another one.
    pub fn before_llm(&self) -> impl Fn(LlmRequest) -> LlmHookFuture + Send + Sync + 'static {
        llm_hook(self, |me: Self, req: LlmRequest, text: String| async move {
            if me.models.is_empty() {
                return Ok(None);
            }
            let v = me.pick(&text, &req.model).await;
            Ok((v.routed && v.model != req.model).then(|| LlmOverride {
                model: Some(v.model),
                ..LlmOverride::default()
            }))
        })
    }
}
