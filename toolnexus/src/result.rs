//! [`ToolResult`] (SPEC §1): what every tool hands back to the model.

use std::fmt::Display;

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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The text the model sees.
    pub output: String,
    /// `true` when the call did not produce a usable answer.
    #[serde(rename = "isError")]
    pub is_error: bool,
    /// Out-of-band data for the host (never shown to the model). `metadata.pending` is the
    /// reserved suspension slot (SPEC §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Non-text output; `output` stays the text every transcript and text-only provider sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ContentPart>,
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

    /// Attach metadata (replacing any already present).
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Set one metadata key, creating the map when absent.
    pub fn with_meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata
            .get_or_insert_with(Map::new)
            .insert(key.into(), value.into());
        self
    }

    /// Append content parts. An empty list changes nothing.
    pub fn with_parts(mut self, parts: impl IntoIterator<Item = ContentPart>) -> Self {
        self.parts.extend(parts);
        self
    }

    /// The suspension this result carries (`metadata.pending`), if any (SPEC §10).
    pub fn pending(&self) -> Option<Request> {
        let value = self.metadata.as_ref()?.get("pending")?;
        serde_json::from_value(value.clone()).ok()
    }

    /// `true` when this result is a suspension.
    pub fn is_pending(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("pending"))
            .is_some_and(|p| p.get("id").is_some() && p.get("kind").is_some())
    }

    /// The compact JSON text of this result.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a ToolResult always serializes")
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
}
