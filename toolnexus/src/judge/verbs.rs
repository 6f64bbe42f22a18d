//! The judge verbs: [`ask`] a classifier and read the answers, [`decide`] an action from read
//! answers under a [`Policy`], or [`gate`] — both at once, escalating to a human through a
//! SPEC §10 [`Request`] when the answers cannot decide.

use serde_json::{Map, Value, json};

use super::build::{NamedQuestion, questions};
use super::reading::{Answers, Bands, read};
use crate::classifier::{Classifier, ClassifierError, DecisionAnswer};
use crate::result::ToolResult;
use crate::suspend::Request;

/// Ask `classifier` the named questions about `state` and read the answers under `bands`.
///
/// ```
/// use serde_json::json;
/// use toolnexus::classifier::{Classifier, RecordedDecision};
/// use toolnexus::judge::{Band, Bands, ask, noul, questions, state};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let st = state("You moderate a game chat.", json!({"message_received": "gg, well played"}));
/// let qs = [noul("is_rude", "Is `message_received` rude?")];
/// let c = Classifier::recorded([RecordedDecision::new(
///     st.clone(),
///     questions(qs.clone()).unwrap(),
///     json!({"answers": {"is_rude": {"type": "noul", "noul": 0.04}}}),
/// )])
/// .build()
/// .unwrap();
/// let answers = ask(&c, &st, qs, Bands::default()).await.unwrap();
/// assert_eq!(answers["is_rude"].band(), Some(Band::No));
/// # });
/// ```
pub async fn ask(
    classifier: &Classifier,
    state: &Value,
    named: impl IntoIterator<Item = NamedQuestion>,
    bands: Bands,
) -> Result<Answers, ClassifierError> {
    let d = classifier.evaluate(state, &questions(named)?).await?;
    Ok(read(&d, &bands))
}

/// When a [`Rule`] fires.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// A noul or score value below this.
    Below(f64),
    /// A noul or score value at least this.
    AtLeast(f64),
    /// A choice that picked this option.
    Is(String),
}

/// One rule of a policy: when `question`'s answer meets `condition`, take `action`.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The question's name.
    pub question: String,
    /// When it fires.
    pub condition: Condition,
    /// The action it decides.
    pub action: String,
    /// Where the action points (a queue, an agent, a tool), if anywhere.
    pub target: String,
}

impl Rule {
    /// Fires when the value is below `value`.
    pub fn below(question: impl Into<String>, value: f64, action: impl Into<String>) -> Self {
        Self::new(question, Condition::Below(value), action)
    }

    /// Fires when the value is at least `value`.
    pub fn at_least(question: impl Into<String>, value: f64, action: impl Into<String>) -> Self {
        Self::new(question, Condition::AtLeast(value), action)
    }

    /// Fires when the choice picked `option`.
    pub fn is(question: impl Into<String>, option: impl Into<String>, action: impl Into<String>) -> Self {
        Self::new(question, Condition::Is(option.into()), action)
    }

    fn new(question: impl Into<String>, condition: Condition, action: impl Into<String>) -> Self {
        Self {
            question: question.into(),
            condition,
            action: action.into(),
            target: String::new(),
        }
    }

    /// Point the action at `target`.
    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.target = target.into();
        self
    }

    /// Fired, not fired, or why it cannot be judged (`uncertain` set for an uncertain answer).
    fn check(&self, answers: &Answers) -> Check {
        let q = &self.question;
        let Some(a) = answers.get(q) else {
            return Check::Unjudgeable(format!("missing answer \"{q}\""), false);
        };
        if a.uncertain() {
            return Check::Unjudgeable(format!("uncertain answer \"{q}\""), true);
        }
        let fired = match (&self.condition, &a.raw) {
            (Condition::Is(option), DecisionAnswer::Choice(c)) => c.choice == *option,
            (Condition::Is(_), other) => {
                return Check::Unjudgeable(format!("is-rule on {} answer '{q}'", other.kind()), false);
            }
            (_, DecisionAnswer::Choice(_)) => {
                return Check::Unjudgeable(format!("numeric rule on choice answer '{q}'"), false);
            }
            (Condition::Below(v), _) => a.value() < *v,
            (Condition::AtLeast(v), _) => a.value() >= *v,
        };
        if fired { Check::Fired } else { Check::NotFired }
    }
}

enum Check {
    Fired,
    NotFired,
    /// The reason, and whether it is only an uncertain answer.
    Unjudgeable(String, bool),
}

/// What happens when no rule fires.
#[derive(Clone, Debug, PartialEq)]
pub enum Otherwise {
    /// Nothing: the outcome is [`Verdict::NoMatch`].
    NoMatch,
    /// This action.
    Act(String),
    /// Ask a human ([`Verdict::Escalate`], reason "no rule fired").
    Escalate,
}

/// Rules in order (the first that fires wins), what to do when none fires, the bands to read
/// with, and whether an uncertain answer skips its rule rather than escalating.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// The rules.
    pub rules: Vec<Rule>,
    /// When none fires.
    pub otherwise: Otherwise,
    /// Bands for [`gate`] (default 0.30/0.70).
    pub bands: Option<Bands>,
    /// Skip a rule whose answer is uncertain instead of escalating.
    pub skip_uncertain: bool,
}

impl Policy {
    /// A policy over `rules` that escalates when none fires.
    pub fn new(rules: impl IntoIterator<Item = Rule>) -> Self {
        Self {
            rules: rules.into_iter().collect(),
            otherwise: Otherwise::Escalate,
            bands: None,
            skip_uncertain: false,
        }
    }

    /// Take `action` when no rule fires.
    pub fn default_action(mut self, action: impl Into<String>) -> Self {
        self.otherwise = Otherwise::Act(action.into());
        self
    }

    /// Read with `bands`.
    pub fn bands(mut self, bands: Bands) -> Self {
        self.bands = Some(bands);
        self
    }

    /// Skip rules whose answer is uncertain.
    pub fn skip_uncertain(mut self, skip: bool) -> Self {
        self.skip_uncertain = skip;
        self
    }
}

/// Bare rules: when none fires the outcome is [`Verdict::NoMatch`].
impl From<Vec<Rule>> for Policy {
    fn from(rules: Vec<Rule>) -> Self {
        Self {
            otherwise: Otherwise::NoMatch,
            ..Policy::new(rules)
        }
    }
}

/// What a policy decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A rule (or the default action) decided.
    Act {
        /// The action.
        action: String,
        /// Its target (empty when none).
        target: String,
    },
    /// No rule fired and the policy has no default.
    NoMatch,
    /// The answers cannot decide: a human should, through this `kind: "input"` request.
    Escalate(Request),
}

/// A verdict with the answers it was decided on.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// The read answers.
    pub answers: Answers,
}

impl Outcome {
    /// The decided action, if any.
    pub fn action(&self) -> Option<&str> {
        match &self.verdict {
            Verdict::Act { action, .. } => Some(action),
            _ => None,
        }
    }

    /// The escalation request, if escalated.
    pub fn request(&self) -> Option<&Request> {
        match &self.verdict {
            Verdict::Escalate(r) => Some(r),
            _ => None,
        }
    }

    /// An escalation as a tool's suspension result (SPEC §10): return it from a tool and the
    /// client's `wait_for` resolves it, or the run halts `pending` for a durable host.
    pub fn suspension(&self) -> Option<ToolResult> {
        self.request().cloned().map(ToolResult::suspend)
    }
}

fn escalate(question: &str, reason: &str, answers: Answers, id: String) -> Outcome {
    let mut data = Map::new();
    data.insert("question".into(), question.into());
    data.insert("reason".into(), reason.into());
    data.insert("answers".into(), json!(answers));
    let request = Request {
        id,
        kind: "input".into(),
        prompt: format!("Classifier is unsure about '{question}' ({reason})."),
        url: None,
        data: Some(data),
        expires_at: None,
    };
    Outcome {
        verdict: Verdict::Escalate(request),
        answers,
    }
}

/// Apply `policy` to read answers: the first rule that fires wins; a rule whose answer is
/// missing, uncertain (unless skipped) or of the wrong type escalates, with request id
/// `gate:<rule index>:<question>`; when none fires, the policy's [`Otherwise`] (escalation id
/// `gate:default`).
///
/// ```
/// use serde_json::json;
/// use toolnexus::classifier::{DecisionAnswer, NoulAnswer};
/// use toolnexus::judge::{Answers, Bands, JudgeAnswer, Policy, Rule, Verdict, decide};
///
/// let answers = Answers::from([(
///     "spam".to_string(),
///     JudgeAnswer::new(DecisionAnswer::Noul(NoulAnswer { noul: 0.9 }), &Bands::default()),
/// )]);
/// let policy = Policy::new([Rule::at_least("spam", 0.7, "block")]).default_action("allow");
/// assert_eq!(decide(answers.clone(), &policy).action(), Some("block"));
/// let policy = Policy::new([Rule::below("spam", 0.3, "allow")]);
/// let out = decide(answers, &policy);
/// assert_eq!(out.request().unwrap().id, "gate:default");
/// ```
pub fn decide(answers: Answers, policy: &Policy) -> Outcome {
    for (i, rule) in policy.rules.iter().enumerate() {
        match rule.check(&answers) {
            Check::Fired => {
                return Outcome {
                    verdict: Verdict::Act {
                        action: rule.action.clone(),
                        target: rule.target.clone(),
                    },
                    answers,
                };
            }
            Check::NotFired => {}
            Check::Unjudgeable(_, true) if policy.skip_uncertain => {}
            Check::Unjudgeable(reason, _) => {
                let id = format!("gate:{i}:{}", rule.question);
                return escalate(&rule.question, &reason, answers, id);
            }
        }
    }
    match &policy.otherwise {
        Otherwise::NoMatch => Outcome {
            verdict: Verdict::NoMatch,
            answers,
        },
        Otherwise::Act(action) => Outcome {
            verdict: Verdict::Act {
                action: action.clone(),
                target: String::new(),
            },
            answers,
        },
        Otherwise::Escalate => escalate("", "no rule fired", answers, "gate:default".into()),
    }
}

/// [`ask`] then [`decide`]: a judgment that acts, or escalates through SPEC §10. `bands`
/// overrides the policy's.
pub async fn gate(
    classifier: &Classifier,
    state: &Value,
    named: impl IntoIterator<Item = NamedQuestion>,
    policy: impl Into<Policy>,
    bands: Option<Bands>,
) -> Result<Outcome, ClassifierError> {
    let policy = policy.into();
    let bands = bands.or(policy.bands).unwrap_or_default();
    let answers = ask(classifier, state, named, bands).await?;
    Ok(decide(answers, &policy))
}
