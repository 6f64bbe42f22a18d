//! Reading a decision: a noul answer falls in a [`Band`]; a choice or score answer is sure
//! or not.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::classifier::{ClassifierError, Decision, DecisionAnswer};

/// Where a noul probability falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    /// Above the high cut-point.
    Yes,
    /// Below the low cut-point.
    No,
    /// Between them, cut-points included.
    Uncertain,
}

impl Band {
    /// `yes`, `no` or `uncertain`.
    pub fn as_str(self) -> &'static str {
        match self {
            Band::Yes => "yes",
            Band::No => "no",
            Band::Uncertain => "uncertain",
        }
    }
}

/// Cut-points, exclusive on the confident side: exactly `low` or `high` is uncertain.
///
/// ```
/// use toolnexus::judge::{Band, Bands};
///
/// let b = Bands::default();
/// assert_eq!((b.low, b.high), (0.30, 0.70));
/// assert_eq!(b.noul(0.29), Band::No);
/// assert_eq!(b.noul(0.30), Band::Uncertain);
/// assert_eq!(b.noul(0.70), Band::Uncertain);
/// assert_eq!(b.noul(0.71), Band::Yes);
/// assert!(b.sure(0.71, false) && !b.sure(0.70, false) && !b.sure(0.99, true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bands {
    /// Below this a noul is `no`.
    pub low: f64,
    /// Above this a noul is `yes`, and a confidence is sure.
    pub high: f64,
}

impl Default for Bands {
    fn default() -> Self {
        Self {
            low: 0.30,
            high: 0.70,
        }
    }
}

impl Bands {
    /// The band of a noul probability.
    pub fn noul(&self, p: f64) -> Band {
        if p < self.low {
            Band::No
        } else if p > self.high {
            Band::Yes
        } else {
            Band::Uncertain
        }
    }

    /// Whether a confidence is sure: above `high`, and not a near-uniform distribution.
    pub fn sure(&self, confidence: f64, near_uniform: bool) -> bool {
        confidence > self.high && !near_uniform
    }
}

/// How an answer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// A noul answer's band.
    Band(Band),
    /// Whether a choice or score answer is sure.
    Sure(bool),
}

/// One answer with its reading. (Named apart from [`crate::Answer`], the resolution of a
/// suspension.)
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeAnswer {
    /// The answer as decoded.
    pub raw: DecisionAnswer,
    /// How it reads under the bands it was read with.
    pub reading: Reading,
}

impl JudgeAnswer {
    /// Read `raw` under `bands`.
    pub fn new(raw: DecisionAnswer, bands: &Bands) -> Self {
        let reading = match &raw {
            DecisionAnswer::Noul(a) => Reading::Band(bands.noul(a.noul)),
            DecisionAnswer::Choice(a) => Reading::Sure(bands.sure(a.confidence, a.near_uniform)),
            DecisionAnswer::Score(a) => Reading::Sure(bands.sure(a.confidence, false)),
        };
        Self { raw, reading }
    }

    /// `noul`, `choice` or `score`.
    pub fn kind(&self) -> &'static str {
        self.raw.kind()
    }

    /// A noul answer's band.
    pub fn band(&self) -> Option<Band> {
        match self.reading {
            Reading::Band(b) => Some(b),
            Reading::Sure(_) => None,
        }
    }

    /// Whether a choice or score answer is sure.
    pub fn sure(&self) -> Option<bool> {
        match self.reading {
            Reading::Sure(s) => Some(s),
            Reading::Band(_) => None,
        }
    }

    /// A noul in the uncertain band, or a choice/score that is not sure.
    pub fn uncertain(&self) -> bool {
        match self.reading {
            Reading::Band(b) => b == Band::Uncertain,
            Reading::Sure(s) => !s,
        }
    }

    /// The noul probability, the score, or the choice's confidence.
    pub fn value(&self) -> f64 {
        match &self.raw {
            DecisionAnswer::Noul(a) => a.noul,
            DecisionAnswer::Choice(a) => a.confidence,
            DecisionAnswer::Score(a) => a.score,
        }
    }

    /// The option a choice answer picked.
    pub fn choice(&self) -> Result<&str, ClassifierError> {
        match &self.raw {
            DecisionAnswer::Choice(a) => Ok(&a.choice),
            other => Err(ClassifierError::NotAChoice(other.kind())),
        }
    }
}

/// The wire answer plus its reading: `{"type":"noul","noul":0.5,"band":"uncertain"}`,
/// `{"type":"choice",…,"sure":false}` — the shape an escalation's `data.answers` carries.
impl Serialize for JudgeAnswer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = serde_json::to_value(&self.raw).map_err(serde::ser::Error::custom)?;
        if let Value::Object(m) = &mut v {
            match self.reading {
                Reading::Band(b) => m.insert("band".into(), b.as_str().into()),
                Reading::Sure(sure) => m.insert("sure".into(), sure.into()),
            };
        }
        v.serialize(s)
    }
}

/// Read answers by key.
pub type Answers = BTreeMap<String, JudgeAnswer>;

/// Read every answer of `decision` under `bands`.
pub fn read(decision: &Decision, bands: &Bands) -> Answers {
    decision
        .answers
        .iter()
        .map(|(k, a)| (k.clone(), JudgeAnswer::new(a.clone(), bands)))
        .collect()
}
