//! What a client fails with: [`ConfigError`] when it is built, [`ClientError`] when it runs.
//! Run-time failures keep their cause as [`source`](std::error::Error::source), so `?` into
//! `anyhow`/`eyre` shows the whole chain.

use std::error::Error as StdError;
use std::time::Duration;

use super::store::StoreError;
use super::transport::TransportError;
use crate::content::UnsupportedPart;

/// An error from a host callback (a hook), or a cause of any other type.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// Why [`ClientBuilder::build`](super::ClientBuilder::build) refused the configuration.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No style was configured.
    #[error("toolnexus: a client style is required (Style::OpenAi, Style::Anthropic or Style::Gemini)")]
    MissingStyle,
    /// No model was configured.
    #[error("toolnexus: a model is required")]
    MissingModel,
    /// No base URL was configured.
    #[error("toolnexus: a base URL is required")]
    MissingBaseUrl,
    /// The base URL does not parse as an http(s) URL.
    #[error("toolnexus: base URL \"{url}\" is not a usable http(s) URL: {reason}")]
    InvalidBaseUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// No API key for the base URL's host: none was given, and the environment variable
    /// that may supply one (a provider's own, or the one `api_key_env` names) is unset.
    #[error(
        "toolnexus: no API key for {host}: {}",
        match looked_for {
            Some(var) => format!("{var} is not set — set it, or set api_key or api_key_env(NAME)"),
            None => "set api_key or api_key_env(NAME) — OPENROUTER_API_KEY, OPENAI_API_KEY, \
                     ANTHROPIC_API_KEY and GEMINI_API_KEY are only sent to their own hosts (openrouter.ai, \
                     api.openai.com, api.anthropic.com, generativelanguage.googleapis.com, over https)"
                .to_owned(),
        }
    )]
    MissingApiKey {
        /// The base URL's host.
        host: String,
        /// The environment variable that was read, when one applied.
        looked_for: Option<String>,
    },
}

crate::debug_as_display!(ConfigError);

/// Why a run (or a [`translate`](super::Client::translate) call) failed.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A relay tool is named like a built-in tool.
    #[error(
        "toolnexus: relay tool name collides with a built-in tool: {} — rename the relay tool (the guard applies even with builtins disabled)",
        .0.join(", ")
    )]
    RelayCollision(Vec<String>),
    /// The provider answered with an error status (after any retries).
    #[error("LLM {status}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Provider {
        /// HTTP status.
        status: u16,
        /// The provider's message (its `error.message` when JSON), API key redacted.
        message: String,
        /// The raw `Retry-After` header, when sent.
        retry_after: Option<String>,
    },
    /// No response arrived (after any retries).
    #[error("LLM request failed: {0}")]
    Transport(#[source] TransportError),
    /// The model accepted the request and then sent nothing (no response, or no next chunk
    /// of one) for the client's `read_timeout`, on every attempt.
    #[error(
        "LLM read timeout: the model sent nothing for {}ms (raise the client's read_timeout for a slow model)",
        .0.as_millis()
    )]
    ReadTimeout(Duration),
    /// A 2xx response that is not the provider's JSON/SSE shape.
    #[error("LLM response could not be read: {0}")]
    Decode(#[from] DecodeError),
    /// The whole-run `timeout` elapsed; the in-flight request was aborted.
    #[error("run timeout after {}ms (client timeout budget)", .0.as_millis())]
    Timeout(Duration),
    /// The run's cancellation token fired; the in-flight request was aborted.
    #[error("run cancelled")]
    Cancelled,
    /// `before_llm` aborted the call with this error.
    #[error("before_llm hook aborted the call: {0}")]
    Hook(#[source] BoxError),
    /// A part attached to the prompt cannot be sent in this style.
    #[error(transparent)]
    UnsupportedPart(#[from] UnsupportedPart),
    /// A durable resume was refused.
    #[error("toolnexus: cannot resume — {0}")]
    Resume(#[from] ResumeError),
    /// The client's style cannot do what was asked.
    #[error("toolnexus: {0}")]
    Unsupported(&'static str),
    /// Streaming was asked of an in-process client.
    #[error(
        "toolnexus: an in-process client does not support streaming — `generate` returns a complete answer; use run/ask"
    )]
    StreamingUnsupported,
    /// The conversation store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored suspension could not be recorded or answered (e.g. it was already answered).
    #[error("toolnexus: {0}")]
    Suspension(#[from] super::SuspensionError),
}

crate::debug_as_display!(ClientError);

impl From<TransportError> for ClientError {
    fn from(e: TransportError) -> Self {
        match e.silent_for() {
            Some(after) => ClientError::ReadTimeout(after),
            None => ClientError::Transport(e),
        }
    }
}

/// A provider response that could not be read: what was wrong, and the parser's error
/// when there was one.
#[derive(thiserror::Error)]
#[error("{message}")]
pub struct DecodeError {
    message: String,
    #[source]
    source: Option<serde_json::Error>,
}

crate::debug_as_display!(DecodeError);

impl DecodeError {
    /// A response of the wrong shape.
    pub(crate) fn shape(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// A body that is not JSON: the parser's message and the body's first 200 bytes.
    pub(crate) fn json(source: serde_json::Error, body: &[u8]) -> Self {
        let head = String::from_utf8_lossy(&body[..body.len().min(200)]);
        Self {
            message: format!("{source}: {head}"),
            source: Some(source),
        }
    }
}

/// Why [`run_with_answer`](super::Client::run_with_answer) refused to resume.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The answer does not echo the pending request's id.
    #[error("answer id \"{answer}\" does not echo the pending request id \"{pending}\"")]
    AnswerMismatch {
        /// The answer's id.
        answer: String,
        /// The pending request's id.
        pending: String,
    },
    /// Neither a history nor a stored conversation was supplied.
    #[error("no transcript supplied")]
    NoTranscript,
    /// The transcript does not end in an assistant turn that called tools.
    #[error("the transcript has no halted assistant turn with tool calls")]
    NoHaltedTurn,
}

crate::debug_as_display!(ResumeError);
