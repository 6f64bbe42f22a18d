//! IsComplete: does an agent's final answer complete its task? Only a confident `yes` is
//! complete.

use serde_json::json;

use super::{Judge, OnError, ROLE_IS_COMPLETE, judge_setters};
use crate::classifier::Classifier;
use crate::judge::{Band, noul_with, state};

/// IsComplete's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct CompleteVerdict {
    /// A confident `yes` (or a classifier error under [`OnError::Open`]).
    pub complete: bool,
    /// The probability, when answered.
    pub p: Option<f64>,
    /// Its band (`uncertain` when not answered).
    pub band: Band,
    /// The decision's `calibrated` (`false` on error).
    pub calibrated: bool,
    /// The classifier's error, when it failed.
    pub error: Option<String>,
}

/// One noul: does `answer` fully complete `task`?
#[derive(Clone, Debug)]
pub struct IsComplete {
    judge: Judge,
    on_error: OnError,
}

judge_setters!(IsComplete);

impl IsComplete {
    /// Over `classifier`, failing `on_error`'s way (`Open` reports complete).
    pub fn new(classifier: Classifier, on_error: OnError) -> Self {
        Self {
            judge: Judge::new(classifier),
            on_error,
        }
    }

    /// Judge `answer` against `task`.
    pub async fn check(&self, task: &str, answer: &str) -> CompleteVerdict {
        let st = state(
            self.judge.role(ROLE_IS_COMPLETE),
            json!({"task": task, "answer": answer}),
        );
        let q = noul_with(
            "complete",
            "Does `answer` fully complete the request in `task`?",
            "every part of the task is done and nothing asked for is missing",
            "part of the task is missing, wrong or only promised",
        );
        let none = CompleteVerdict {
            complete: false,
            p: None,
            band: Band::Uncertain,
            calibrated: false,
            error: None,
        };
        match self.judge.ask(&st, [q]).await {
            Err(e) => CompleteVerdict {
                complete: self.on_error == OnError::Open,
                error: Some(e.to_string()),
                ..none
            },
            Ok((answers, calibrated)) => match answers.get("complete") {
                None => CompleteVerdict { calibrated, ..none },
                Some(x) => {
                    let band = x.band().unwrap_or(Band::Uncertain);
                    CompleteVerdict {
                        complete: band == Band::Yes,
                        p: Some(x.value()),
                        band,
                        calibrated,
                        error: None,
                    }
                }
            },
        }
    }
}
