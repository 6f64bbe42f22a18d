//! The three question types — a closed set that differs only in what `criteria` is on the
//! wire: absent or an object (noul), an object (choice), an ordered array (score).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::ClassifierError;

/// Most named options a choice may offer (checked before any request).
pub const MAX_CHOICE_OPTIONS: usize = 255;
/// Fewest levels a score rubric may have.
pub const MIN_SCORE_LEVELS: usize = 2;
/// Most levels a score rubric may have.
pub const MAX_SCORE_LEVELS: usize = 10;

/// Questions by the caller's key. The keys address answers and are never shown to the
/// model, so a key may be a tool, skill or agent name verbatim.
pub type Questions = BTreeMap<String, Question>;

/// Labels for the true and false cases of a noul question. An empty `NoulCriteria` is sent
/// (`{"false":"","true":""}`); no criteria at all is [`NoulQuestion::criteria`] `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoulCriteria {
    /// What the true case means.
    pub if_true: String,
    /// What the false case means.
    pub if_false: String,
}

/// The probability that a statement holds: one number in `0..=1`, with no separate
/// confidence (the number is the answer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoulQuestion {
    /// The statement to judge, naming the state's fields.
    pub instructions: String,
    /// `None` leaves `criteria` off the wire entirely.
    pub criteria: Option<NoulCriteria>,
}

/// One option from a named set of 1..=255.
///
/// Each option's description is the only thing that tells the model one option from
/// another: describe what picking it would *mean*. An id repeated as its own description,
/// empty descriptions or one description for all are accepted, answered, and rank at
/// chance (the classifier reports them with a `classifier.warning` event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceQuestion {
    /// What to choose.
    pub instructions: String,
    /// Option id → what picking it would mean.
    pub criteria: BTreeMap<String, String>,
}

/// A rating against an ordered rubric of 2..=10 levels. The order is the level numbering
/// (level 0 first) and is never sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreQuestion {
    /// What to rate.
    pub instructions: String,
    /// The levels, lowest first.
    pub criteria: Vec<String>,
}

/// One typed question.
///
/// ```
/// use toolnexus::classifier::Question;
///
/// let q = Question::noul("Is `message` a complaint?").with_criteria("it complains", "it does not");
/// assert_eq!(
///     serde_json::to_string(&q).unwrap(),
///     r#"{"type":"noul","instructions":"Is `message` a complaint?","criteria":{"true":"it complains","false":"it does not"}}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Question {
    /// Yes/no as a probability.
    Noul(NoulQuestion),
    /// One of named options.
    Choice(ChoiceQuestion),
    /// A level of an ordered rubric.
    Score(ScoreQuestion),
}

impl Question {
    /// A noul question without criteria.
    pub fn noul(instructions: impl Into<String>) -> Self {
        Question::Noul(NoulQuestion {
            instructions: instructions.into(),
            criteria: None,
        })
    }

    /// A choice over `(option id, what picking it means)` pairs — tools, skills, agents.
    pub fn choice<K: Into<String>, D: Into<String>>(
        instructions: impl Into<String>,
        options: impl IntoIterator<Item = (K, D)>,
    ) -> Self {
        Question::Choice(ChoiceQuestion {
            instructions: instructions.into(),
            criteria: options.into_iter().map(|(k, d)| (k.into(), d.into())).collect(),
        })
    }

    /// A score over `levels`, lowest first.
    pub fn score<L: Into<String>>(
        instructions: impl Into<String>,
        levels: impl IntoIterator<Item = L>,
    ) -> Self {
        Question::Score(ScoreQuestion {
            instructions: instructions.into(),
            criteria: levels.into_iter().map(Into::into).collect(),
        })
    }

    /// Set a noul question's criteria (other question types are returned unchanged).
    pub fn with_criteria(self, if_true: impl Into<String>, if_false: impl Into<String>) -> Self {
        match self {
            Question::Noul(q) => Question::Noul(NoulQuestion {
                criteria: Some(NoulCriteria {
                    if_true: if_true.into(),
                    if_false: if_false.into(),
                }),
                ..q
            }),
            other => other,
        }
    }

    /// The wire discriminant: `noul`, `choice` or `score`.
    pub fn kind(&self) -> &'static str {
        match self {
            Question::Noul(_) => "noul",
            Question::Choice(_) => "choice",
            Question::Score(_) => "score",
        }
    }

    /// The instructions.
    pub fn instructions(&self) -> &str {
        match self {
            Question::Noul(q) => &q.instructions,
            Question::Choice(q) => &q.instructions,
            Question::Score(q) => &q.instructions,
        }
    }

    /// The wire object: a projection, so an absent noul `criteria` stays absent.
    pub fn to_wire(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), self.kind().into());
        out.insert("instructions".into(), self.instructions().into());
        match self {
            Question::Noul(q) => {
                if let Some(c) = &q.criteria {
                    out.insert("criteria".into(), json!({"true": c.if_true, "false": c.if_false}));
                }
            }
            Question::Choice(q) => {
                out.insert("criteria".into(), json!(q.criteria));
            }
            Question::Score(q) => {
                out.insert("criteria".into(), json!(q.criteria));
            }
        }
        Value::Object(out)
    }

    /// A question back from its wire object.
    pub fn from_wire(wire: &Value) -> Result<Self, ClassifierError> {
        let bad = |reason: String| ClassifierError::MalformedQuestion(reason);
        let instructions = wire["instructions"]
            .as_str()
            .ok_or_else(|| bad("\"instructions\" is not a string".into()))?
            .to_owned();
        let strings = |v: &Value| -> Result<BTreeMap<String, String>, ClassifierError> {
            v.as_object()
                .ok_or_else(|| bad("\"criteria\" is not an object".into()))?
                .iter()
                .map(|(k, v)| match v.as_str() {
                    Some(s) => Ok((k.clone(), s.to_owned())),
                    None => Err(bad(format!("criteria \"{k}\" is not a string"))),
                })
                .collect()
        };
        match wire["type"].as_str() {
            Some("noul") => {
                let criteria = match wire.get("criteria") {
                    None | Some(Value::Null) => None,
                    Some(c) => {
                        let mut c = strings(c)?;
                        Some(NoulCriteria {
                            if_true: c.remove("true").unwrap_or_default(),
                            if_false: c.remove("false").unwrap_or_default(),
                        })
                    }
                };
                Ok(Question::Noul(NoulQuestion {
                    instructions,
                    criteria,
                }))
            }
            Some("choice") => Ok(Question::Choice(ChoiceQuestion {
                instructions,
                criteria: strings(&wire["criteria"])?,
            })),
            Some("score") => {
                let levels = wire["criteria"]
                    .as_array()
                    .ok_or_else(|| bad("a score's \"criteria\" is not an array".into()))?
                    .iter()
                    .map(|l| l.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("a score level is not a string".into()))?;
                Ok(Question::Score(ScoreQuestion {
                    instructions,
                    criteria: levels,
                }))
            }
            other => Err(bad(format!("unknown question type {other:?}"))),
        }
    }

    /// The client-side limits, checked before any request.
    pub(crate) fn validate(&self, key: &str) -> Result<(), ClassifierError> {
        let (n, min, max, what) = match self {
            Question::Noul(_) => return Ok(()),
            Question::Choice(q) => (q.criteria.len(), 1, MAX_CHOICE_OPTIONS, "a choice needs"),
            Question::Score(q) => (
                q.criteria.len(),
                MIN_SCORE_LEVELS,
                MAX_SCORE_LEVELS,
                "a score needs",
            ),
        };
        if (min..=max).contains(&n) {
            return Ok(());
        }
        let unit = if matches!(self, Question::Choice(_)) {
            "options"
        } else {
            "ordered levels"
        };
        Err(ClassifierError::InvalidQuestion {
            key: key.to_owned(),
            reason: format!("{what} {min}..{max} {unit}, got {n}"),
        })
    }

    /// Why a choice's descriptions cannot tell its options apart, if they cannot: every one
    /// empty, every one its own id, or all the same. A single option is never degenerate
    /// (there is nothing to tell apart), and neither is a noul or score question.
    ///
    /// ```
    /// use toolnexus::classifier::Question;
    ///
    /// let q = Question::choice("Which?", [("a", "a"), ("b", "b")]);
    /// assert_eq!(q.degenerate(), Some("every description is just its own option id"));
    /// assert_eq!(Question::choice("Which?", [("a", "go"), ("b", "stop")]).degenerate(), None);
    /// ```
    pub fn degenerate(&self) -> Option<&'static str> {
        let Question::Choice(q) = self else {
            return None;
        };
        if q.criteria.len() < 2 {
            return None;
        }
        let mut values = q.criteria.values();
        if q.criteria.values().all(String::is_empty) {
            Some("every description is empty")
        } else if q.criteria.iter().all(|(k, v)| k == v) {
            Some("every description is just its own option id")
        } else if values.next().is_some_and(|first| values.all(|v| v == first)) {
            Some("every description is identical")
        } else {
            None
        }
    }
}

impl Serialize for Question {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_wire().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Question::from_wire(&Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// The wire `questions` object for `questions`.
pub fn questions_wire(questions: &Questions) -> Value {
    Value::Object(questions.iter().map(|(k, q)| (k.clone(), q.to_wire())).collect())
}
