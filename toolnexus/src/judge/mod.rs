//! Simple judgments over any [`Classifier`](crate::classifier::Classifier): name the
//! questions, [`ask`], and read each answer as a [`Band`] (noul) or as sure or not (choice,
//! score); [`decide`] an action under a [`Policy`]; or [`gate`] on it, escalating to a human
//! through a SPEC §10 request when the answers cannot decide. The [`batteries`] are eight
//! ready judges (tool guard, relevance, result filter, completion, routing, content guard).
//!
//! A thin layer: the builders produce exactly the classifier's inputs, so the wire request is
//! byte-identical to a hand-written one. Everything here is advisory, never a security
//! control.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::classifier::{Classifier, RecordedDecision};
//! use toolnexus::judge::{Policy, Rule, gate, noul, questions, state};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let st = state("You triage support mail.", json!({"message": "Refund me NOW or I sue"}));
//! let qs = [noul("angry", "Is `message` angry?"), noul("legal", "Does `message` threaten legal action?")];
//! let c = Classifier::recorded([RecordedDecision::new(
//!     st.clone(),
//!     questions(qs.clone()).unwrap(),
//!     json!({"answers": {"angry": {"type": "noul", "noul": 0.96}, "legal": {"type": "noul", "noul": 0.5}}}),
//! )])
//! .build()
//! .unwrap();
//! // "legal" is uncertain (0.5): the gate escalates instead of guessing.
//! let policy = Policy::new([Rule::at_least("legal", 0.7, "route").target("legal-team")]).default_action("reply");
//! let out = gate(&c, &st, qs, policy, None).await.unwrap();
//! let request = out.request().unwrap();
//! assert_eq!(request.kind, "input");
//! assert_eq!(request.prompt, "Classifier is unsure about 'legal' (uncertain answer \"legal\").");
//! # });
//! ```

pub mod batteries;
mod build;
mod reading;
mod tape;
mod verbs;

pub use build::{NamedQuestion, choice, context, noul, noul_with, questions, score, state};
pub use reading::{Answers, Band, Bands, JudgeAnswer, Reading, read};
pub use tape::{Tape, TapeEntry};
pub use verbs::{Condition, Otherwise, Outcome, Policy, Rule, Verdict, ask, decide, gate};
