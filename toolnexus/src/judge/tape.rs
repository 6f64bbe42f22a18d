//! Record live decisions by call name, replay them offline: a judge's tests run against
//! what the backend really said, with no network.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::classifier::{Classifier, ClassifierError, Question, Questions, RecordedDecision, questions_wire};

/// One recorded call: the state, the questions (wire form) and the response (wire form).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapeEntry {
    /// The state as evaluated.
    pub state: Value,
    /// The questions' wire map.
    pub questions: Value,
    /// The decision's response shape.
    pub response: Value,
}

/// A recorder over a live classifier, or a player over recorded entries.
///
/// ```
/// use serde_json::json;
/// use toolnexus::classifier::{Classifier, Decision, DecisionAnswer, NoulAnswer};
/// use toolnexus::judge::{Tape, noul, questions};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let live = Classifier::custom(|_, _| async {
///     Ok(Decision { answers: [("ok".to_string(), DecisionAnswer::Noul(NoulAnswer { noul: 0.8 }))].into(), ..Decision::default() })
/// })
/// .build()
/// .unwrap();
/// let qs = questions([noul("ok", "Is it ok?")]).unwrap();
/// let tape = Tape::recording(live);
/// tape.call("first").unwrap().evaluate(&json!({"x": 1}), &qs).await.unwrap();
///
/// let replay = Tape::replaying(tape.recorded());
/// let d = replay.call("first").unwrap().evaluate(&json!({"x": 1}), &qs).await.unwrap();
/// assert_eq!(d.noul("ok").unwrap().noul, 0.8);
/// let miss = replay.call("second").unwrap().evaluate(&json!({"x": 1}), &qs).await.unwrap_err();
/// assert_eq!(miss.to_string(), "tape: no recorded decision for call \"second\"");
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct Tape {
    live: Option<Classifier>,
    model: Option<String>,
    recorded: Arc<Mutex<BTreeMap<String, TapeEntry>>>,
}

impl Tape {
    /// Record every call through `live`.
    pub fn recording(live: Classifier) -> Self {
        Self {
            model: Some(live.model().to_owned()),
            live: Some(live),
            recorded: Arc::default(),
        }
    }

    /// Replay `recorded`; a call with no entry fails without sending anything.
    pub fn replaying(recorded: BTreeMap<String, TapeEntry>) -> Self {
        Self {
            live: None,
            model: None,
            recorded: Arc::new(Mutex::new(recorded)),
        }
    }

    /// The model the replaying classifiers report (default: the classifier default).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Everything recorded (or loaded) so far.
    pub fn recorded(&self) -> BTreeMap<String, TapeEntry> {
        self.entries().clone()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, TapeEntry>> {
        self.recorded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The classifier for call `name`: recording through the live one, or replaying its
    /// entry.
    pub fn call(&self, name: &str) -> Result<Classifier, ClassifierError> {
        let builder = if let Some(live) = &self.live {
            let (live, tape, name) = (live.clone(), self.recorded.clone(), name.to_owned());
            Classifier::custom(move |state: Value, qs: Questions| {
                let (live, tape, name) = (live.clone(), tape.clone(), name.clone());
                async move {
                    let d = live.evaluate(&state, &qs).await?;
                    let entry = TapeEntry {
                        state,
                        questions: questions_wire(&qs),
                        response: d.to_wire(),
                    };
                    tape.lock().unwrap_or_else(|e| e.into_inner()).insert(name, entry);
                    Ok(d)
                }
            })
        } else {
            match self.entries().get(name) {
                Some(entry) => Classifier::recorded([RecordedDecision::new(
                    entry.state.clone(),
                    questions_from_wire(&entry.questions)?,
                    entry.response.clone(),
                )]),
                None => {
                    let name = name.to_owned();
                    Classifier::custom(move |_, _| {
                        let miss = ClassifierError::TapeMiss(name.clone());
                        async move { Err(miss.into()) }
                    })
                }
            }
        };
        match &self.model {
            Some(m) => builder.model(m.clone()),
            None => builder,
        }
        .build()
    }
}

fn questions_from_wire(wire: &Value) -> Result<Questions, ClassifierError> {
    wire.as_object()
        .ok_or_else(|| ClassifierError::MalformedQuestion("the questions are not an object".into()))?
        .iter()
        .map(|(k, q)| Ok((k.clone(), Question::from_wire(q)?)))
        .collect()
}
