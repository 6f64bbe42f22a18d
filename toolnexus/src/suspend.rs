//! Suspension (SPEC §10): a tool that needs an out-of-band resolution — a login, an
//! approval, a human's answer — returns [`ToolResult::suspend`](crate::ToolResult::suspend)
//! with a [`Request`]: a failed result carrying the request in its pending slot
//! (`metadata.pending` on the wire). The client calls the host's [`WaitFor`] with it and
//! re-executes the tool once with the [`Answer`] in
//! [`ToolContext::answer`](crate::ToolContext::answer).
//!
//! `Request` and `Answer` are wire data: their keys are fixed across every port.
//!
//! ```
//! use toolnexus::{Answer, Request, ToolResult};
//!
//! let request = Request::new("input", "Which city?");
//! let result = ToolResult::suspend(request.clone());
//! assert!(result.is_error);
//! assert_eq!(result.pending(), Some(&request));
//!
//! let answer = Answer::output(&request.id, "Chennai");
//! assert_eq!(
//!     serde_json::to_value(&answer).unwrap(),
//!     serde_json::json!({"id": request.id, "ok": true, "data": {"output": "Chennai"}})
//! );
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What a suspended tool is waiting for. Keys are byte-identical across ports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Unique per suspension; the correlation key an [`Answer`] echoes.
    pub id: String,
    /// Open vocabulary: `authorization`, `approval`, `input`, `question`, `tool_call`, …
    pub kind: String,
    /// What is being asked, in human words.
    pub prompt: String,
    /// Present when the action happens at a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Kind-specific extras (`data.schema`, `data.questions`, `data.calls`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
    /// RFC 3339; the request is stale after this.
    #[serde(rename = "expiresAt", default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// Why a request was not satisfied (advisory: the loop branches only on [`Answer::ok`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerReason {
    /// An explicit refusal.
    Declined,
    /// A dismissal.
    Cancelled,
    /// The request went stale.
    Expired,
}

/// The resolution of a [`Request`]. Keys are byte-identical across ports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// Echoes [`Request::id`].
    pub id: String,
    /// Satisfied, versus declined / cancelled / expired.
    pub ok: bool,
    /// Kind-specific payload (e.g. `{"output": "…"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Only when `ok` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<AnswerReason>,
}

/// The host's one slot for resolving a [`Request`] (SPEC §10): shown the request, it
/// returns the [`Answer`] once a human (or a policy) has decided. The client loop calls it
/// for suspended tools, and an MCP source given one answers server elicitations through it.
///
/// ```
/// use std::sync::Arc;
/// use toolnexus::Answer;
/// use toolnexus::suspend::WaitFor;
///
/// let wait_for: WaitFor = Arc::new(|request| Box::pin(async move { Answer::output(request.id, "Chennai") }));
/// # let _ = wait_for;
/// ```
pub type WaitFor = Arc<dyn Fn(Request) -> BoxFuture<'static, Answer> + Send + Sync>;

static SEQ: AtomicU64 = AtomicU64::new(1);

/// A fresh request id, `pnd-<unix ms in hex>-<sequence>` like the other ports.
pub fn new_request_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("pnd-{ms:x}-{}", SEQ.fetch_add(1, Ordering::Relaxed))
}

impl Request {
    /// A request of `kind` asking `prompt`, with a fresh id ([`new_request_id`]).
    pub fn new(kind: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            id: new_request_id(),
            kind: kind.into(),
            prompt: prompt.into(),
            url: None,
            data: None,
            expires_at: None,
        }
    }

    /// A `kind:"authorization"` request for a login at `url`, prompting
    /// "Authorization required to continue".
    pub fn authorization(url: impl Into<String>) -> Self {
        Self::new("authorization", "Authorization required to continue").with_url(url)
    }

    /// With the kind-specific extras `data` (`data.schema`, `data.questions`, …).
    pub fn with_data(mut self, data: Map<String, Value>) -> Self {
        self.data = Some(data);
        self
    }

    /// With the link where the action happens.
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }
}

impl Answer {
    /// The answer that supplies a human's typed reply: `{id, ok:true, data:{output}}`.
    /// Taking a string (not any value) is the point: a wrong payload cannot silently
    /// degrade to `""`.
    pub fn output(id: impl Into<String>, output: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ok: true,
            data: Some(json!({ "output": output.into() })),
            reason: None,
        }
    }

    /// Like [`Answer::output`], with `data.isError: true`: the value arrived but is itself
    /// a failure.
    ///
    /// ```
    /// let a = toolnexus::Answer::output_error("sus-2", "not-a-real-city");
    /// assert_eq!(
    ///     serde_json::to_string(&a).unwrap(),
    ///     r#"{"id":"sus-2","ok":true,"data":{"output":"not-a-real-city","isError":true}}"#
    /// );
    /// ```
    pub fn output_error(id: impl Into<String>, output: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ok: true,
            data: Some(json!({ "output": output.into(), "isError": true })),
            reason: None,
        }
    }

    /// The answer that refuses a request: `{id, ok:false, reason}`.
    pub fn declined(id: impl Into<String>, reason: AnswerReason) -> Self {
        Self {
            id: id.into(),
            ok: false,
            data: None,
            reason: Some(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_wire_keys_are_fixed() {
        let mut r = Request::new("input", "Which city?");
        r.id = "sus-1".into();
        r.expires_at = Some("2026-12-02T00:00:00Z".into());
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"id":"sus-1","kind":"input","prompt":"Which city?","expiresAt":"2026-12-02T00:00:00Z"}"#
        );
        let declined = Answer::declined("sus-1", AnswerReason::Declined);
        assert_eq!(
            serde_json::to_string(&declined).unwrap(),
            r#"{"id":"sus-1","ok":false,"reason":"declined"}"#
        );
    }

    #[test]
    fn ids_are_unique() {
        assert_ne!(new_request_id(), new_request_id());
        assert!(new_request_id().starts_with("pnd-"));
    }

    #[test]
    fn authorization_carries_the_url() {
        let r = Request::authorization("https://login.example");
        assert_eq!(
            (r.kind.as_str(), r.url.as_deref()),
            ("authorization", Some("https://login.example"))
        );
        assert_eq!(r.prompt, "Authorization required to continue");
    }
}
