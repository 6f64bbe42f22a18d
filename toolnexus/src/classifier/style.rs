//! The two styles that talk to a model: System One (one `POST`, the client's retry policy)
//! and `llm` (one structured-output run on any client).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    BodyTransform, ClassifierError, ClassifierUsage, Decision, Questions, canonical_json, questions_wire,
};
use crate::client::resilience::{self, ErrorInfo, OnError};
use crate::client::{Client, HttpRequest, HttpTransport, RunOptions, TransportError};

/// A backend's error body is cut here in an error message.
const MAX_CAUSE: usize = 200;
/// Account-identifier keys whose values never reach an error message.
const REDACT_KEYS: [&str; 4] = ["user_id", "account_id", "org_id", "organization"];
const REDACTED: &str = "«redacted»";

pub(super) struct SystemOne {
    pub(super) endpoint: String,
    pub(super) api_key_env: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) timeout: Duration,
    pub(super) transport: Arc<dyn HttpTransport>,
    pub(super) retries: u32,
    pub(super) retry_base: Duration,
    pub(super) retryable_statuses: Vec<u16>,
    pub(super) on_error: Option<OnError>,
    pub(super) request_params: Map<String, Value>,
    pub(super) body_transform: Option<BodyTransform>,
}

/// One failed attempt.
enum Failure {
    Status {
        status: u16,
        body: Vec<u8>,
        retry_after: Option<String>,
    },
    Net(TransportError),
    Timeout,
}

impl SystemOne {
    pub(super) async fn evaluate(
        &self,
        model: &str,
        state: &Value,
        questions: &Questions,
    ) -> Result<Decision, ClassifierError> {
        let body = self.body(model, state, questions);
        let reply = self.post(body).await?;
        let parsed: Value = serde_json::from_slice(&reply).map_err(ClassifierError::Unparseable)?;
        Decision::from_wire(&parsed)
    }

    /// The canonical `model` + `questions`, the state verbatim, then `request_params` (they
    /// win) and `body_transform`, written canonically.
    pub(super) fn body(&self, model: &str, state: &Value, questions: &Questions) -> Vec<u8> {
        let mut body = Map::new();
        body.insert("model".into(), model.into());
        body.insert("questions".into(), questions_wire(questions));
        body.insert("state".into(), state.clone());
        for (k, v) in &self.request_params {
            body.insert(k.clone(), v.clone());
        }
        let mut body = Value::Object(body);
        if let Some(f) = &self.body_transform {
            body = f(body);
        }
        canonical_json(&body)
    }

    /// Built per attempt: the key is read from the named variable at call time and `${VAR}`
    /// references expand at call time.
    fn headers(&self) -> Vec<(String, String)> {
        let mut h = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        if let Ok(key) = std::env::var(&self.api_key_env)
            && !key.is_empty()
        {
            h.push(("Authorization".to_owned(), format!("Bearer {key}")));
        }
        for (k, v) in &self.headers {
            h.push((k.clone(), crate::mcp::expand_env(v)));
        }
        h
    }

    /// The one POST, retried by the client's policy: its retryable statuses plus 408 and any
    /// added ones, network failures and timeouts; `Retry-After` seconds, else backoff;
    /// `on_error` has the last word, bounded by `retries`.
    async fn post(&self, body: Vec<u8>) -> Result<Vec<u8>, ClassifierError> {
        let body = bytes::Bytes::from(body);
        resilience::with_retries(self.retries, self.on_error.as_ref(), |attempt| {
            let request = HttpRequest {
                url: self.endpoint.clone(),
                headers: self.headers(),
                body: body.clone(),
            };
            async move {
                let reply = tokio::time::timeout(self.timeout, self.attempt(request))
                    .await
                    .unwrap_or(Err(Failure::Timeout));
                reply.map_err(|failure| self.classify(failure, attempt))
            }
        })
        .await
    }

    async fn attempt(&self, request: HttpRequest) -> Result<Vec<u8>, Failure> {
        let resp = self.transport.post(request).await.map_err(Failure::Net)?;
        let status = resp.status;
        let retry_after = resp.header("retry-after").map(str::to_owned);
        let body = resp.bytes().await.map_err(Failure::Net)?.to_vec();
        if (200..300).contains(&status) {
            return Ok(body);
        }
        Err(Failure::Status {
            status,
            body,
            retry_after,
        })
    }

    fn classify(&self, failure: Failure, attempt: u32) -> (ErrorInfo, Duration, ClassifierError) {
        let backoff = resilience::backoff(self.retry_base, attempt);
        let endpoint = self.endpoint.clone();
        match failure {
            Failure::Status {
                status,
                body,
                retry_after,
            } => {
                let retryable = status == 408
                    || resilience::is_retryable_status(status)
                    || self.retryable_statuses.contains(&status);
                let info = ErrorInfo {
                    status: Some(status),
                    error: None,
                    attempt,
                    retryable,
                };
                let wait = retry_after
                    .as_deref()
                    .and_then(resilience::parse_retry_after)
                    .unwrap_or(backoff);
                let cause = cause(status, &body);
                let error = ClassifierError::Http {
                    endpoint,
                    status,
                    cause,
                };
                (info, wait, error)
            }
            Failure::Net(e) => {
                let info = ErrorInfo {
                    status: None,
                    error: Some(e.message.clone()),
                    attempt,
                    retryable: true,
                };
                (info, backoff, ClassifierError::Transport { endpoint, source: e })
            }
            Failure::Timeout => {
                let info = ErrorInfo {
                    status: None,
                    error: Some("timed out".into()),
                    attempt,
                    retryable: true,
                };
                let error = ClassifierError::Timeout {
                    endpoint,
                    after: self.timeout,
                };
                (info, backoff, error)
            }
        }
    }
}

/// The backend's reported cause, intact but for account identifiers and capped — except on
/// 401/403, whose body routinely reflects the credential and is never surfaced.
fn cause(status: u16, body: &[u8]) -> Option<String> {
    if matches!(status, 401 | 403) {
        return None;
    }
    let text = redact_identifiers(String::from_utf8_lossy(body).trim());
    if text.is_empty() {
        return None;
    }
    Some(if text.chars().count() > MAX_CAUSE {
        format!("{}…", text.chars().take(MAX_CAUSE).collect::<String>())
    } else {
        text
    })
}

/// `"user_id": <value>` (and the other identifier keys) with the value replaced, keys kept.
fn redact_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(q) = rest.find('"') {
        for key in REDACT_KEYS {
            let Some(after_key) = rest[q + 1..].strip_prefix(key).and_then(|r| r.strip_prefix('"')) else {
                continue;
            };
            let after_ws = after_key.trim_start();
            let Some(after_colon) = after_ws.strip_prefix(':') else {
                continue;
            };
            let value = after_colon.trim_start();
            let value_len = if let Some(inner) = value.strip_prefix('"') {
                // Up to the first quote not preceded by a backslash.
                let bytes = inner.as_bytes();
                match (0..bytes.len()).find(|&i| bytes[i] == b'"' && (i == 0 || bytes[i - 1] != b'\\')) {
                    Some(end) => end + 2,
                    None => continue,
                }
            } else {
                value
                    .find(|c: char| c == ',' || c == '}' || c.is_whitespace())
                    .unwrap_or(value.len())
            };
            if value_len == 0 {
                continue;
            }
            let prefix_len = rest.len() - value.len();
            out.push_str(&rest[..prefix_len]);
            out.push('"');
            out.push_str(REDACTED);
            out.push('"');
            rest = &value[value_len..];
            continue 'scan;
        }
        out.push_str(&rest[..=q]);
        rest = &rest[q + 1..];
    }
    out.push_str(rest);
    out
}

/// Render the questions as one structured-output run and parse the reply. Not calibrated:
/// the numbers are the model's self-report.
pub(super) async fn llm(
    client: &Client,
    model: &str,
    state: &Value,
    questions: &Questions,
) -> Result<Decision, ClassifierError> {
    let state_json = String::from_utf8_lossy(&canonical_json(state)).into_owned();
    let questions_json = String::from_utf8_lossy(&canonical_json(&questions_wire(questions))).into_owned();
    let prompt = llm_prompt(&state_json, &questions_json);
    let run = client
        .run_with(prompt, RunOptions::default())
        .await
        .map_err(ClassifierError::Llm)?;
    let payload = first_json_object(&run.text)?;
    let parsed: Value = serde_json::from_str(payload).map_err(ClassifierError::LlmUnparseable)?;
    let mut d = Decision::from_wire(&parsed)?;
    d.calibrated = false;
    if d.model.is_empty() {
        d.model = model.to_owned();
    }
    d.usage = ClassifierUsage {
        input_tokens: run.usage.prompt_tokens,
        output_tokens: run.usage.completion_tokens,
        cost: None,
    };
    Ok(d)
}

/// The `llm` style's prompt, word for word the other ports' (so a recorded exchange replays
/// across them).
pub(super) fn llm_prompt(state_json: &str, questions_json: &str) -> String {
    format!(
        "Answer every question about the state below. Questions are INDEPENDENT: one answer is never \
         context for another.\n\nSTATE:\n{state_json}\n\nQUESTIONS:\n{questions_json}\n\n\
         Reply with JSON only, no prose and no code fence, shaped exactly:\n\
         {{\"answers\":{{\"<key>\":{{\"type\":\"noul\",\"noul\":0.0}}}}}}\n\
         A \"noul\" answer is {{\"type\":\"noul\",\"noul\":<0..1>}}. A \"choice\" answer is \
         {{\"type\":\"choice\",\"choice\":\"<one offered option id>\",\
         \"probabilities\":{{\"<every offered option id>\":<0..1>}},\"confidence\":<0..1>}}. \
         A \"score\" answer is {{\"type\":\"score\",\"score\":<a number within the rubric bounds, \
         fractional allowed>,\"legend\":{{\"0\":\"<level 0>\",…}},\"probabilities\":{{\"0\":<0..1>,…}},\
         \"confidence\":<0..1>}}."
    )
}

/// The outermost JSON object of a reply that may be fenced or wrapped in prose. Malformed
/// JSON is not repaired: an unparseable answer is no answer.
fn first_json_object(s: &str) -> Result<&str, ClassifierError> {
    match (s.find('{'), s.rfind('}')) {
        (Some(start), Some(end)) if end > start => Ok(&s[start..=end]),
        _ => Err(ClassifierError::LlmNoJson),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_redacted_and_auth_bodies_dropped() {
        assert_eq!(
            redact_identifiers(r#"{"error":"quota","user_id": "u-1\"x", "org_id":42,"n":1}"#),
            r#"{"error":"quota","user_id": "«redacted»", "org_id":"«redacted»","n":1}"#
        );
        assert_eq!(cause(401, b"Bearer sk-live"), None);
        assert_eq!(cause(403, b"anything"), None);
        assert_eq!(
            cause(400, b"  Too many choices.  ").as_deref(),
            Some("Too many choices.")
        );
        let long = "x".repeat(300);
        assert_eq!(
            cause(500, long.as_bytes()).unwrap(),
            format!("{}…", "x".repeat(200))
        );
    }

    #[test]
    fn the_outermost_object_is_taken_from_a_fenced_reply() {
        assert_eq!(
            first_json_object("```json\n{\"a\":{\"b\":1}}\n```").unwrap(),
            "{\"a\":{\"b\":1}}"
        );
        assert!(matches!(
            first_json_object("no json"),
            Err(ClassifierError::LlmNoJson)
        ));
        assert!(matches!(
            first_json_object("} {"),
            Err(ClassifierError::LlmNoJson)
        ));
    }
}
