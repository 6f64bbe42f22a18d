//! Everything a classifier can fail with. No variant ever carries a credential, an expanded
//! header value, or the body of a 401/403 (gateways reflect a bad `Authorization` header
//! into their error text).

use std::error::Error as StdError;
use std::time::Duration;

use crate::client::{ClientError, TransportError};

/// A boxed error from a `custom` evaluate function.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// Why a classifier could not be built or could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClassifierError {
    /// `evaluate` was given no questions.
    #[error("classifier: no questions to evaluate")]
    NoQuestions,
    /// A question breaks a client-side limit.
    #[error("classifier: question '{key}': {reason}")]
    InvalidQuestion {
        /// The question's key.
        key: String,
        /// The limit and the count.
        reason: String,
    },
    /// Two questions share a name.
    #[error("duplicate question name \"{0}\"")]
    DuplicateQuestion(String),
    /// A question's wire object does not decode.
    #[error("classifier: malformed question: {0}")]
    MalformedQuestion(String),
    /// The model alias belongs to another backend.
    #[error(
        "classifier: model \"{model}\" is TypeSafe's spelling; on openrouter.ai use \"typesafe/jev-1.13\""
    )]
    BackendMismatch {
        /// The model as configured.
        model: String,
    },
    /// A recorded decision of a static classifier does not decode.
    #[error("classifier: recorded decision {index}: {source}")]
    RecordedDecision {
        /// Its position in the list.
        index: usize,
        /// Why.
        #[source]
        source: Box<ClassifierError>,
    },
    /// A static classifier has no recording for this request and state.
    #[error("classifier: static: no recorded decision for this request+state")]
    NoRecordedDecision,
    /// The backend answered with an error status (after any retries).
    #[error("classifier: POST {endpoint}: HTTP {status}{}", cause.as_deref().map(|c| format!(": {c}")).unwrap_or_default())]
    Http {
        /// The endpoint.
        endpoint: String,
        /// The status.
        status: u16,
        /// The backend's reported cause (capped; never the body of a 401/403).
        cause: Option<String>,
    },
    /// No response arrived (after any retries).
    #[error("classifier: POST {endpoint}: {source}")]
    Transport {
        /// The endpoint.
        endpoint: String,
        /// The transport failure.
        #[source]
        source: TransportError,
    },
    /// One attempt exceeded the request timeout (after any retries).
    #[error("classifier: POST {endpoint}: timed out after {}ms", after.as_millis())]
    Timeout {
        /// The endpoint.
        endpoint: String,
        /// The per-request timeout.
        after: Duration,
    },
    /// The response body is not JSON.
    #[error("classifier: unparseable response: {0}")]
    Unparseable(#[source] serde_json::Error),
    /// The response (or an answer list) is not a JSON object.
    #[error("classifier: response is not a JSON object")]
    NotAnObject,
    /// An answer is not a JSON object.
    #[error("classifier: answer '{0}' is not a JSON object")]
    AnswerNotAnObject(String),
    /// An answer does not match its type's shape.
    #[error("classifier: answer '{key}': {reason}")]
    MalformedAnswer {
        /// The answer's key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// An answer's `type` is not noul, choice or score.
    #[error("classifier: answer '{key}': unknown type {kind}")]
    UnknownAnswerType {
        /// The answer's key.
        key: String,
        /// The type as sent, quoted as the other ports quote it (`'maybe'`, `None`).
        kind: String,
    },
    /// A decision has no answer under this key.
    #[error("classifier: no answer '{0}' in this decision")]
    NoAnswer(String),
    /// A decision's answer is of another type than asked for.
    #[error("classifier: answer '{key}' is a {got} answer, not {want}")]
    WrongAnswerType {
        /// The answer's key.
        key: String,
        /// Its type.
        got: &'static str,
        /// The type asked for.
        want: &'static str,
    },
    /// The `llm` style's client run failed.
    #[error("classifier: llm: {0}")]
    Llm(#[source] ClientError),
    /// The `llm` style's reply holds no JSON object.
    #[error("classifier: llm: no JSON object in the reply")]
    LlmNoJson,
    /// The `llm` style's reply is not valid JSON.
    #[error("classifier: llm: {0}")]
    LlmUnparseable(#[source] serde_json::Error),
    /// A `custom` evaluate function failed (its error, as it is).
    #[error(transparent)]
    Custom(BoxError),
    /// `evaluate_batch` was given no states.
    #[error("classifier: evaluate_batch: no states to evaluate")]
    NoStates,
    /// One state of a batch failed; no decisions are returned.
    #[error("classifier: evaluate_batch: state {index}: {source}")]
    Batch {
        /// The state's index.
        index: usize,
        /// Its error.
        #[source]
        source: Box<ClassifierError>,
    },
    /// A judge answer read as a choice is of another type.
    #[error("judge: answer is a {0} answer, not choice")]
    NotAChoice(&'static str),
    /// A tape has no recording for this call.
    #[error("tape: no recorded decision for call \"{0}\"")]
    TapeMiss(String),
}
