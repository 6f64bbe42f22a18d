//! ToolGuard: how risky is one tool call to run without a human approving it?

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value, json};

use super::{Judge, OnError, ROLE_TOOL_GUARD, judge_setters};
use crate::classifier::Classifier;
use crate::client::hooks::{BeforeTool, ToolCallInfo};
use crate::judge::{score, state};
use crate::result::ToolResult;
use crate::suspend::Request;

/// The default 4-level risk rubric (contract).
pub const RISK_RUBRIC: [&str; 4] = [
    "harmless: it only reads or looks something up and changes nothing",
    "reversible: it changes local or draft state that is easy to undo",
    "consequential: it sends, publishes, deploys or changes shared state that is hard to undo",
    "destructive: it deletes data, moves money, touches credentials or cannot be undone",
];
const RISK_INSTRUCTIONS: &str =
    "How risky is it to run the call described by `tool_name` with `arguments` without a human approving it?";

/// What to do with the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardAction {
    /// Run it.
    Allow,
    /// Ask a human first.
    Ask,
    /// Do not run it.
    Deny,
}

/// The call to judge.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GuardedCall {
    /// Tool name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
    /// The tool's description, when known (sent as `tool_description`).
    pub description: Option<String>,
}

/// ToolGuard's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolGuardVerdict {
    /// What to do.
    pub action: GuardAction,
    /// Why: `low risk`, `medium risk`, `high risk`, `uncertain`, `missing answer`,
    /// `classifier error`.
    pub reason: String,
    /// The risk score (0..=3), when answered.
    pub risk: Option<f64>,
    /// Whether the score was sure.
    pub sure: bool,
    /// The decision's `calibrated`.
    pub calibrated: bool,
    /// The classifier's error, when it failed.
    pub error: Option<String>,
}

/// Rates one call's risk on [`RISK_RUBRIC`]: below `ask_at` (1.5) allow, below `deny_at`
/// (2.5) ask, else deny; an unsure score asks.
#[derive(Clone, Debug)]
pub struct ToolGuard {
    judge: Judge,
    on_error: OnError,
    ask_at: f64,
    deny_at: f64,
}

judge_setters!(ToolGuard);

impl ToolGuard {
    /// A guard over `classifier`, failing `on_error`'s way.
    pub fn new(classifier: Classifier, on_error: OnError) -> Self {
        Self {
            judge: Judge::new(classifier),
            on_error,
            ask_at: 1.5,
            deny_at: 2.5,
        }
    }

    /// Move the cut-points on the risk score.
    pub fn thresholds(mut self, ask_at: f64, deny_at: f64) -> Self {
        self.ask_at = ask_at;
        self.deny_at = deny_at;
        self
    }

    /// Judge `call`.
    pub async fn check(&self, call: &GuardedCall) -> ToolGuardVerdict {
        let mut data = Map::new();
        data.insert("tool_name".into(), call.name.clone().into());
        let arguments = if call.arguments.is_null() {
            json!({})
        } else {
            call.arguments.clone()
        };
        data.insert("arguments".into(), arguments);
        if let Some(d) = call.description.as_deref().filter(|d| !d.is_empty()) {
            data.insert("tool_description".into(), d.into());
        }
        let st = state(self.judge.role(ROLE_TOOL_GUARD), Value::Object(data));
        let verdict = |action, reason: &str| ToolGuardVerdict {
            action,
            reason: reason.into(),
            risk: None,
            sure: false,
            calibrated: false,
            error: None,
        };
        let (answers, calibrated) = match self
            .judge
            .ask(&st, [score("risk", RISK_INSTRUCTIONS, RISK_RUBRIC)])
            .await
        {
            Ok(a) => a,
            Err(e) => {
                let action = match self.on_error {
                    OnError::Open => GuardAction::Allow,
                    OnError::Closed => GuardAction::Deny,
                };
                return ToolGuardVerdict {
                    error: Some(e.to_string()),
                    ..verdict(action, "classifier error")
                };
            }
        };
        let Some(x) = answers.get("risk") else {
            return ToolGuardVerdict {
                calibrated,
                ..verdict(GuardAction::Ask, "missing answer")
            };
        };
        let (risk, sure) = (x.value(), x.sure().unwrap_or(false));
        let (action, reason) = if !sure {
            (GuardAction::Ask, "uncertain")
        } else if risk < self.ask_at {
            (GuardAction::Allow, "low risk")
        } else if risk < self.deny_at {
            (GuardAction::Ask, "medium risk")
        } else {
            (GuardAction::Deny, "high risk")
        };
        ToolGuardVerdict {
            risk: Some(risk),
            sure,
            calibrated,
            ..verdict(action, reason)
        }
    }

    /// A `before_tool` hook: allow runs the call; deny replaces it with an error result; ask
    /// replaces it with a SPEC §10 `approval` suspension (`toolguard:<call id>`), which the
    /// client's `wait_for` resolves or which halts the run `pending`.
    ///
    /// ```
    /// use toolnexus::classifier::Classifier;
    /// use toolnexus::client::hooks::Hooks;
    /// use toolnexus::judge::batteries::{OnError, ToolGuard};
    ///
    /// # fn demo(classifier: Classifier) {
    /// let guard = ToolGuard::new(classifier, OnError::Closed);
    /// let hooks = Hooks::new().before_tool(guard.before_tool());
    /// # let _ = hooks; }
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn before_tool(
        &self,
    ) -> impl Fn(ToolCallInfo) -> Pin<Box<dyn Future<Output = Option<BeforeTool>> + Send>> + Send + Sync + 'static
    {
        let guard = self.clone();
        move |call: ToolCallInfo| {
            let guard = guard.clone();
            Box::pin(async move {
                let v = guard
                    .check(&GuardedCall {
                        name: call.name.clone(),
                        arguments: call.args.clone(),
                        description: None,
                    })
                    .await;
                match v.action {
                    GuardAction::Allow => None,
                    GuardAction::Deny => Some(BeforeTool::Result(ToolResult::failure(format!(
                        "denied by tool guard: {}",
                        v.reason
                    )))),
                    GuardAction::Ask => {
                        let mut data = Map::new();
                        data.insert("tool".into(), call.name.clone().into());
                        data.insert("arguments".into(), call.args.clone());
                        data.insert("reason".into(), v.reason.clone().into());
                        data.insert("risk".into(), v.risk.map_or(Value::Null, Value::from));
                        let request = Request {
                            id: format!("toolguard:{}", call.id),
                            kind: "approval".into(),
                            prompt: format!("Approve the call to {}? ({})", call.name, v.reason),
                            url: None,
                            data: Some(data),
                            expires_at: None,
                        };
                        let pending = serde_json::to_value(&request).unwrap_or_default();
                        Some(BeforeTool::Result(
                            ToolResult::failure(format!("approval required: {}", call.name))
                                .with_meta("pending", pending),
                        ))
                    }
                }
            })
        }
    }
}
