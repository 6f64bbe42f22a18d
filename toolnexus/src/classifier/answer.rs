//! Answers and the decision that carries them, decoded from the wire in one place (the only
//! place `near_uniform` is derived) and never repaired: a malformed answer is an error.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::ClassifierError;

/// Absolute tolerance of [`near_uniform`], compared inclusively.
pub const NEAR_UNIFORM_TOLERANCE: f64 = 0.05;

/// The probability that a noul statement holds. It carries no confidence: the number is
/// the answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NoulAnswer {
    /// `0..=1`.
    pub noul: f64,
}

/// One option of a choice, with a probability for every offered option.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChoiceAnswer {
    /// The option picked.
    pub choice: String,
    /// Option id → probability, as returned (an option absent here was not an entry).
    pub probabilities: BTreeMap<String, f64>,
    /// How sure the backend is of `choice`.
    pub confidence: f64,
    /// Derived from `probabilities` on decode, never read from the wire: advisory, it flags
    /// an encoding that gave the model nothing to rank on.
    #[serde(skip)]
    pub near_uniform: bool,
}

/// A rating on the rubric; `score` may fall between levels (`1.21`) and stays within the
/// rubric's bounds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScoreAnswer {
    /// The rating.
    pub score: f64,
    /// Level number (`"0"`, `"1"`, …) → level text.
    pub legend: BTreeMap<String, String>,
    /// Level number → probability.
    pub probabilities: BTreeMap<String, f64>,
    /// How sure the backend is.
    pub confidence: f64,
}

impl ScoreAnswer {
    /// The legend in level order (`"2"` before `"10"`), which the map's string order loses.
    pub fn levels(&self) -> Vec<&str> {
        let mut keys: Vec<&String> = self.legend.keys().collect();
        keys.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        keys.into_iter().map(|k| self.legend[k].as_str()).collect()
    }
}

/// One typed answer; the set is closed and discriminated by the wire's `type`. (Named apart
/// from [`crate::Answer`], the resolution of a suspension.)
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum DecisionAnswer {
    /// A noul answer.
    Noul(NoulAnswer),
    /// A choice answer.
    Choice(ChoiceAnswer),
    /// A score answer.
    Score(ScoreAnswer),
}

impl DecisionAnswer {
    /// `noul`, `choice` or `score`.
    pub fn kind(&self) -> &'static str {
        match self {
            DecisionAnswer::Noul(_) => "noul",
            DecisionAnswer::Choice(_) => "choice",
            DecisionAnswer::Score(_) => "score",
        }
    }
}

/// Token counts and cost, as the backend reports them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassifierUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cost, where the backend reports one.
    pub cost: Option<f64>,
}

/// One answer per question, keyed by the caller's keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// What actually answered (may be more specific than the model asked for).
    pub model: String,
    /// The answers.
    pub answers: BTreeMap<String, DecisionAnswer>,
    /// Usage.
    pub usage: ClassifierUsage,
    /// `true` for System One; `false` when the numbers are a model's self-report (the `llm`
    /// style). A threshold tuned against one backend does not transfer to another.
    pub calibrated: bool,
}

impl Default for Decision {
    fn default() -> Self {
        Self {
            model: String::new(),
            answers: BTreeMap::new(),
            usage: ClassifierUsage::default(),
            calibrated: true,
        }
    }
}

impl Decision {
    /// The noul answer `key`; an absent or differently typed answer is an error.
    pub fn noul(&self, key: &str) -> Result<&NoulAnswer, ClassifierError> {
        match self.get(key, "noul")? {
            DecisionAnswer::Noul(a) => Ok(a),
            _ => unreachable!("get checked the type"),
        }
    }

    /// The choice answer `key`.
    pub fn choice(&self, key: &str) -> Result<&ChoiceAnswer, ClassifierError> {
        match self.get(key, "choice")? {
            DecisionAnswer::Choice(a) => Ok(a),
            _ => unreachable!("get checked the type"),
        }
    }

    /// The score answer `key`.
    pub fn score(&self, key: &str) -> Result<&ScoreAnswer, ClassifierError> {
        match self.get(key, "score")? {
            DecisionAnswer::Score(a) => Ok(a),
            _ => unreachable!("get checked the type"),
        }
    }

    fn get(&self, key: &str, want: &'static str) -> Result<&DecisionAnswer, ClassifierError> {
        let a = self
            .answers
            .get(key)
            .ok_or_else(|| ClassifierError::NoAnswer(key.to_owned()))?;
        if a.kind() != want {
            return Err(ClassifierError::WrongAnswerType {
                key: key.to_owned(),
                got: a.kind(),
                want,
            });
        }
        Ok(a)
    }

    /// Decode a backend response body. Never repairs: an invalid answer is no answer.
    pub fn from_wire(raw: &Value) -> Result<Self, ClassifierError> {
        let raw = raw.as_object().ok_or(ClassifierError::NotAnObject)?;
        let mut answers = BTreeMap::new();
        if let Some(list) = raw.get("answers").filter(|v| !v.is_null()) {
            let list = list.as_object().ok_or(ClassifierError::NotAnObject)?;
            for (key, body) in list {
                answers.insert(key.clone(), answer_from_wire(key, body)?);
            }
        }
        let u = raw.get("usage").and_then(Value::as_object);
        let count = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_f64).unwrap_or(0.0) as u64;
        let usage = ClassifierUsage {
            input_tokens: count("input_tokens"),
            output_tokens: count("output_tokens"),
            cost: u.and_then(|u| u.get("cost")).and_then(Value::as_f64),
        };
        Ok(Decision {
            model: match raw.get("model") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            },
            answers,
            usage,
            // Absent means calibrated: System One reports calibration by being itself.
            calibrated: raw.get("calibrated").and_then(Value::as_bool).unwrap_or(true),
        })
    }

    /// Back to the response shape (`near_uniform` is re-derived on decode, so it is not sent).
    pub fn to_wire(&self) -> Value {
        let answers: Map<String, Value> = self
            .answers
            .iter()
            .map(|(k, a)| (k.clone(), serde_json::to_value(a).unwrap_or_default()))
            .collect();
        json!({"model": self.model, "answers": answers, "calibrated": self.calibrated})
    }
}

fn answer_from_wire(key: &str, body: &Value) -> Result<DecisionAnswer, ClassifierError> {
    let body = body
        .as_object()
        .ok_or_else(|| ClassifierError::AnswerNotAnObject(key.to_owned()))?;
    let kind = body.get("type").and_then(Value::as_str).unwrap_or("");
    let malformed = |what: &str| ClassifierError::MalformedAnswer {
        key: key.to_owned(),
        reason: format!("malformed {kind} answer: {what}"),
    };
    let number = |field: &str, required: bool| -> Result<f64, ClassifierError> {
        match body.get(field) {
            Some(v) => v
                .as_f64()
                .ok_or_else(|| malformed(&format!("\"{field}\" is not a number"))),
            None if required => Err(malformed(&format!("'{field}'"))),
            None => Ok(0.0),
        }
    };
    let probabilities = || -> Result<BTreeMap<String, f64>, ClassifierError> {
        match body.get("probabilities") {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    v.as_f64()
                        .map(|p| (k.clone(), p))
                        .ok_or_else(|| malformed(&format!("probability \"{k}\" is not a number")))
                })
                .collect(),
            Some(_) => Err(malformed("\"probabilities\" is not an object")),
        }
    };
    match kind {
        "noul" => Ok(DecisionAnswer::Noul(NoulAnswer {
            noul: number("noul", true)?,
        })),
        "choice" => {
            let choice = match body.get("choice") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => return Err(malformed("'choice'")),
                Some(other) => other.to_string(),
            };
            let probabilities = probabilities()?;
            Ok(DecisionAnswer::Choice(ChoiceAnswer {
                near_uniform: near_uniform(&probabilities),
                choice,
                probabilities,
                confidence: number("confidence", false)?,
            }))
        }
        "score" => {
            let legend = match body.get("legend") {
                None | Some(Value::Null) => BTreeMap::new(),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| {
                        let text = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), text)
                    })
                    .collect(),
                Some(_) => return Err(malformed("\"legend\" is not an object")),
            };
            Ok(DecisionAnswer::Score(ScoreAnswer {
                score: number("score", true)?,
                legend,
                probabilities: probabilities()?,
                confidence: number("confidence", false)?,
            }))
        }
        _ => Err(ClassifierError::UnknownAnswerType {
            key: key.to_owned(),
            kind: match body.get("type") {
                None | Some(Value::Null) => "None".to_owned(),
                Some(Value::String(s)) => format!("'{s}'"),
                Some(other) => other.to_string(),
            },
        }),
    }
}

/// Whether a choice's distribution is indistinguishable from flat: every entry within
/// [`NEAR_UNIFORM_TOLERANCE`] of `1/n` (inclusive), `n` the number of entries, values as
/// returned. One entry is trivially uniform; an empty map has no distribution (`false`).
///
/// ```
/// use std::collections::BTreeMap;
/// use toolnexus::classifier::near_uniform;
///
/// let flat: BTreeMap<String, f64> = [("a".into(), 0.30), ("b".into(), 0.33), ("c".into(), 0.37)].into();
/// assert!(near_uniform(&flat));
/// let peaked: BTreeMap<String, f64> = [("a".into(), 0.9), ("b".into(), 0.1)].into();
/// assert!(!near_uniform(&peaked));
/// ```
pub fn near_uniform(probabilities: &BTreeMap<String, f64>) -> bool {
    let n = probabilities.len();
    match n {
        0 => false,
        1 => true,
        _ => {
            let target = 1.0 / n as f64;
            probabilities
                .values()
                .all(|p| (p - target).abs() <= NEAR_UNIFORM_TOLERANCE)
        }
    }
}
