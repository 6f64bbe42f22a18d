//! [`ToolResult`] (SPEC §1): what every tool hands back to the model.

use std::fmt::Display;

use serde::de::Deserializer;
use serde::ser::{SerializeMap, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::ContentPart;
use crate::suspend::Request;

/// The uniform result of a tool call.
///
/// A failure is a *value* the model reads and acts on, not an exception: every source
/// (native functions, MCP servers, built-ins, HTTP endpoints) reports failures this way.
///
/// It serializes exactly as `{"output":…,"isError":…}`, plus `"metadata"` only when present
/// and `"parts"` only when non-empty:
///
/// ```
/// use toolnexus::ToolResult;
///
/// assert_eq!(ToolResult::success("hi").to_json(), r#"{"output":"hi","isError":false}"#);
/// assert_eq!(ToolResult::success(42).output, "42"); // the model reads text
/// assert_eq!(
///     ToolResult::failure("no such row").to_json(),
///     r#"{"output":"no such row","isError":true}"#
/// );
/// let meta = serde_json::json!({"name": "s"}).as_object().unwrap().clone();
/// assert_eq!(
///     ToolResult::success("x").with_metadata(meta).to_json(),
///     r#"{"output":"x","isError":false,"metadata":{"name":"s"}}"#
/// );
/// // An empty parts list leaves the result byte-identical.
/// assert_eq!(ToolResult::success("hi").with_parts(vec![]), ToolResult::success("hi"));
/// ```
///
/// # Suspension
///
/// A suspended call (SPEC §10) is a failure carrying a [`Request`] in a typed slot, read
/// with [`pending`](Self::pending). On the wire the slot is the reserved
/// `metadata.pending` key, written first; reading a result (deserializing it, or
/// [`with_meta`](Self::with_meta)/[`with_metadata`](Self::with_metadata) with a `pending`
/// that is a request) fills the slot from that key, so `metadata` never holds it.
///
/// ```
/// use toolnexus::{Request, ToolResult};
///
/// let request = Request::new("approval", "Approve the refund?");
/// let r = ToolResult::suspend(request.clone()).with_meta("order", "A1");
/// assert!(r.is_error && r.is_pending());
/// assert_eq!(r.pending(), Some(&request));
/// let wire = r.to_json();
/// assert!(wire.starts_with(r#"{"output":"Approve the refund?","isError":true,"metadata":{"pending":{"id":"pnd-"#));
/// assert!(wire.ends_with(r#""kind":"approval","prompt":"Approve the refund?"},"order":"A1"}}"#));
/// let back: ToolResult = serde_json::from_str(&wire).unwrap();
/// assert_eq!(back, r);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResult {
    /// The text the model sees.
    pub output: String,
    /// `true` when the call did not produce a usable answer.
    pub is_error: bool,
    /// Out-of-band data for the host (never shown to the model). The suspension is not
    /// kept here but in its own slot (see [Suspension](#suspension)).
    pub metadata: Option<Map<String, Value>>,
    /// Non-text output; `output` stays the text every transcript and text-only provider sees.
    pub parts: Vec<ContentPart>,
    /// The suspension, boxed: rare, and a result is moved often.
    pub(crate) pending: Option<Box<Request>>,
}

impl ToolResult {
    /// A successful result; `output` is the value's `Display` text.
    pub fn success(output: impl Display) -> Self {
        Self {
            output: output.to_string(),
            ..Self::default()
        }
    }

    /// A failed result carrying a message the model can act on.
    pub fn failure(output: impl Display) -> Self {
        Self {
            output: output.to_string(),
            is_error: true,
            ..Self::default()
        }
    }

    /// The suspension result for `request` (SPEC §10): `isError: true`, output = the prompt
    /// (plus the URL on its own line when there is one), the request in the pending slot.
    pub fn suspend(request: Request) -> Self {
        let output = match &request.url {
            Some(url) => format!("{}\n{url}", request.prompt),
            None => request.prompt.clone(),
        };
        let mut result = Self::failure(output);
        result.pending = Some(Box::new(request));
        result
    }

    /// Sugar for the common case: a suspension for a login at `url`
    /// ([`Request::authorization`]).
    ///
    /// ```
    /// let r = toolnexus::ToolResult::auth_required("https://login.example/authorize");
    /// assert_eq!(r.output, "Authorization required to continue\nhttps://login.example/authorize");
    /// assert_eq!(r.pending().unwrap().kind, "authorization");
    /// ```
    pub fn auth_required(url: impl Into<String>) -> Self {
        Self::suspend(Request::authorization(url))
    }

    /// Attach metadata (replacing any already present). A `pending` key holding a
    /// [`Request`] goes to the suspension slot.
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self.take_pending_from_metadata();
        self
    }

    /// Set one metadata key, creating the map when absent. A `pending` key holding a
    /// [`Request`] goes to the suspension slot.
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        let is_pending = key == "pending";
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key, value.into());
        if is_pending {
            self.take_pending_from_metadata();
        }
        self
    }

    /// Append content parts. An empty list changes nothing.
    pub fn with_parts(mut self, parts: impl IntoIterator<Item = ContentPart>) -> Self {
        self.parts.extend(parts);
        self
    }

    /// The suspension this result carries, if any (SPEC §10).
    pub fn pending(&self) -> Option<&Request> {
        self.pending.as_deref()
    }

    /// The suspension, to edit (the client stamps a relayed call's id onto it).
    #[cfg(feature = "client")]
    pub(crate) fn pending_mut(&mut self) -> Option<&mut Request> {
        self.pending.as_deref_mut()
    }

    /// `true` when this result is a suspension.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The compact JSON text of this result.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a ToolResult always serializes")
    }

    /// Move a `metadata.pending` that is a request into the slot; anything else stays.
    fn take_pending_from_metadata(&mut self) {
        let Some(map) = &mut self.metadata else {
            return;
        };
        let Some(request) = map.get("pending").and_then(|v| Request::deserialize(v).ok()) else {
            return;
        };
        map.remove("pending");
        if map.is_empty() {
            self.metadata = None;
        }
        self.pending = Some(Box::new(request));
    }
}

/// `metadata` on the wire: the pending request first, then the host's keys.
struct WireMetadata<'a>(&'a ToolResult);

impl Serialize for WireMetadata<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rest = self.0.metadata.iter().flatten();
        let mut map = s.serialize_map(None)?;
        if let Some(request) = &self.0.pending {
            map.serialize_entry("pending", request)?;
        }
        for (k, v) in rest {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let has_metadata = self.metadata.is_some() || self.pending.is_some();
        let len = 2 + usize::from(has_metadata) + usize::from(!self.parts.is_empty());
        let mut st = s.serialize_struct("ToolResult", len)?;
        st.serialize_field("output", &self.output)?;
        st.serialize_field("isError", &self.is_error)?;
        if has_metadata {
            st.serialize_field("metadata", &WireMetadata(self))?;
        }
        if !self.parts.is_empty() {
            st.serialize_field("parts", &self.parts)?;
        }
        st.end()
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            output: String,
            #[serde(rename = "isError")]
            is_error: bool,
            #[serde(default)]
            metadata: Option<Map<String, Value>>,
            #[serde(default)]
            parts: Vec<ContentPart>,
        }
        let wire = Wire::deserialize(d)?;
        let mut result = ToolResult {
            output: wire.output,
            is_error: wire.is_error,
            metadata: wire.metadata,
            parts: wire.parts,
            pending: None,
        };
        result.take_pending_from_metadata();
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::ContentPart;

    #[test]
    fn parts_serialize_only_when_present() {
        let r = ToolResult::failure("render timed out").with_parts(vec![ContentPart::text("partial")]);
        assert_eq!(
            r.to_json(),
            r#"{"output":"render timed out","isError":true,"parts":[{"type":"text","text":"partial"}]}"#
        );
        let back: ToolResult = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let minimal: ToolResult = serde_json::from_str(r#"{"output":"a","isError":false}"#).unwrap();
        assert_eq!(minimal, ToolResult::success("a"));
    }

    #[test]
    fn with_meta_builds_the_map() {
        let r = ToolResult::success("ok")
            .with_meta("status", 200)
            .with_meta("server", "s");
        assert_eq!(
            r.to_json(),
            r#"{"output":"ok","isError":false,"metadata":{"status":200,"server":"s"}}"#
        );
        assert!(!r.is_pending());
    }

    #[test]
    fn metadata_pending_is_the_typed_slot_both_ways() {
        let request = Request::new("input", "Which city?");
        let wire = serde_json::to_value(&request).unwrap();
        // Written by hand under the reserved key, it lands in the slot.
        let r = ToolResult::failure("Which city?").with_meta("pending", wire.clone());
        assert_eq!((r.pending(), r.metadata.as_ref()), (Some(&request), None));
        let r = ToolResult::failure("x").with_metadata(
            serde_json::json!({"a": 1, "pending": wire})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(r.pending(), Some(&request));
        assert_eq!(r.metadata.as_ref().unwrap().len(), 1);
        assert_eq!(
            serde_json::to_value(&r).unwrap()["metadata"]["pending"]["prompt"],
            "Which city?"
        );
        // A `pending` that is not a request is ordinary metadata.
        let r: ToolResult =
            serde_json::from_str(r#"{"output":"o","isError":false,"metadata":{"pending":{"id":"x"}}}"#)
                .unwrap();
        assert!(!r.is_pending());
        assert_eq!(
            r.to_json(),
            r#"{"output":"o","isError":false,"metadata":{"pending":{"id":"x"}}}"#
        );
    }
}
