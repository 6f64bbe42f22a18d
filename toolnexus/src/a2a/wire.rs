//! The A2A task model both directions share — [`Task`], [`TaskState`], [`Message`],
//! [`Part`], [`Artifact`] — and the two JSON shapes it travels in ([`Dialect`]).
//!
//! The SPEC's subset (§7A/§7B) writes states as `"completed"`, roles as `"user"` and text
//! parts as `{"kind":"text","text":…}`; A2A 1.0, which the `a2a-sdk` and `@a2a-js/sdk` 1.x
//! speak, writes `"TASK_STATE_COMPLETED"`, `"ROLE_USER"` and `{"text":…}`. Everything here
//! reads both; [`Task`] serializes in the SPEC's shape (what a [`TaskStore`](super::TaskStore)
//! keeps) and [`Task::to_wire`] renders either.
//!
//! ```
//! use toolnexus::a2a::{Dialect, Task, TaskState};
//!
//! let v1 = serde_json::json!({"id": "t1", "status": {"state": "TASK_STATE_COMPLETED"},
//!     "artifacts": [{"artifactId": "a1", "parts": [{"text": "done"}]}]});
//! let task: Task = serde_json::from_value(v1).unwrap();
//! assert_eq!(task.status.state, TaskState::Completed);
//! assert_eq!(task.output_text(), "done");
//! assert_eq!(
//!     serde_json::to_string(&task).unwrap(),
//!     r#"{"id":"t1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"done"}]}]}"#
//! );
//! assert_eq!(task.to_wire(Dialect::V1)["status"]["state"], "TASK_STATE_COMPLETED");
//! ```

use std::fmt;

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The HTTP header an A2A 1.0 peer names its protocol version in.
pub const VERSION_HEADER: &str = "A2A-Version";
/// The A2A version this crate speaks to 1.0 peers.
pub const V1_VERSION: &str = "1.0";

/// Which JSON shape a peer speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// The SPEC's subset: lowercase states, `"user"`/`"agent"` roles, `kind`-tagged parts,
    /// `SendMessage` answered with the task itself, `configuration.blocking`.
    #[default]
    Spec,
    /// A2A 1.0: `TASK_STATE_*` states, `ROLE_*` roles, untagged parts, `SendMessage`
    /// answered with `{"task": …}`, `configuration.returnImmediately`, and the
    /// `A2A-Version: 1.0` header on every request.
    V1,
}

impl Dialect {
    /// The dialect an `A2A-Version` header value announces: major version 1 ⇒ [`V1`](Self::V1),
    /// anything else (or no header) ⇒ [`Spec`](Self::Spec).
    ///
    /// ```
    /// use toolnexus::a2a::Dialect;
    /// assert_eq!(Dialect::from_version_header(Some("1.0")), Dialect::V1);
    /// assert_eq!(Dialect::from_version_header(Some("0.3")), Dialect::Spec);
    /// assert_eq!(Dialect::from_version_header(None), Dialect::Spec);
    /// ```
    pub fn from_version_header(value: Option<&str>) -> Self {
        match value.map(str::trim) {
            Some(v) if v == "1" || v.starts_with("1.") => Dialect::V1,
            _ => Dialect::Spec,
        }
    }
}

/// Where a task is in its life. Reads both spellings; writes the SPEC's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Accepted, not started.
    #[default]
    Submitted,
    /// Running.
    Working,
    /// The agent waits for more input from the caller.
    InputRequired,
    /// The agent waits for the caller to authenticate.
    AuthRequired,
    /// Finished with a result (terminal).
    Completed,
    /// Finished with an error (terminal).
    Failed,
    /// Stopped on request (terminal).
    Canceled,
    /// Refused by the agent (terminal, A2A 1.0).
    Rejected,
    /// A state this crate does not know, kept verbatim.
    Other(String),
}

impl TaskState {
    /// Parses either spelling (`"input-required"`, `"TASK_STATE_INPUT_REQUIRED"`).
    pub fn parse(s: &str) -> Self {
        let short = s.strip_prefix("TASK_STATE_").unwrap_or(s);
        match short.to_ascii_lowercase().replace('_', "-").as_str() {
            "submitted" => TaskState::Submitted,
            "working" => TaskState::Working,
            "input-required" => TaskState::InputRequired,
            "auth-required" => TaskState::AuthRequired,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            "canceled" | "cancelled" => TaskState::Canceled,
            "rejected" => TaskState::Rejected,
            _ => TaskState::Other(s.to_owned()),
        }
    }

    /// The SPEC spelling: `submitted`, `working`, `completed`, …
    pub fn as_str(&self) -> &str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::AuthRequired => "auth-required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Canceled => "canceled",
            TaskState::Rejected => "rejected",
            TaskState::Other(s) => s,
        }
    }

    /// The A2A 1.0 spelling: `TASK_STATE_COMPLETED`, …
    pub fn v1_name(&self) -> &str {
        match self {
            TaskState::Submitted => "TASK_STATE_SUBMITTED",
            TaskState::Working => "TASK_STATE_WORKING",
            TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
            TaskState::Completed => "TASK_STATE_COMPLETED",
            TaskState::Failed => "TASK_STATE_FAILED",
            TaskState::Canceled => "TASK_STATE_CANCELED",
            TaskState::Rejected => "TASK_STATE_REJECTED",
            TaskState::Other(s) => s,
        }
    }

    /// `completed`, `failed`, `canceled` or `rejected`: the task will not change again.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// `input-required` or `auth-required`: the agent waits on the caller.
    pub fn is_interrupted(&self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(TaskState::parse(&s))
    }
}

/// Who wrote a message.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Role {
    /// The caller.
    #[default]
    User,
    /// The agent.
    Agent,
    /// A role this crate does not know, kept verbatim.
    Other(String),
}

impl Role {
    /// Parses `"user"`/`"ROLE_USER"`, `"agent"`/`"ROLE_AGENT"`.
    pub fn parse(s: &str) -> Self {
        match s.strip_prefix("ROLE_").unwrap_or(s).to_ascii_lowercase().as_str() {
            "user" => Role::User,
            "agent" => Role::Agent,
            _ => Role::Other(s.to_owned()),
        }
    }

    /// The SPEC spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Agent => "agent",
            Role::Other(s) => s,
        }
    }

    fn v1_name(&self) -> &str {
        match self {
            Role::User => "ROLE_USER",
            Role::Agent => "ROLE_AGENT",
            Role::Other(s) => s,
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Role::parse(&s))
    }
}

/// One piece of message or artifact content. Text is what this crate reads and writes;
/// any other part (file, data, url) is carried through untouched.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// Text: `{"kind":"text","text":…}` (SPEC) or `{"text":…}` (A2A 1.0).
    Text(String),
    /// Anything else, verbatim.
    Other(Value),
}

impl Part {
    /// The text, for a text part.
    pub fn text(&self) -> Option<&str> {
        match self {
            Part::Text(t) => Some(t),
            Part::Other(_) => None,
        }
    }

    fn to_wire(&self, dialect: Dialect) -> Value {
        match (self, dialect) {
            (Part::Text(t), Dialect::Spec) => json!({"kind": "text", "text": t}),
            (Part::Text(t), Dialect::V1) => json!({"text": t}),
            (Part::Other(v), _) => v.clone(),
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_wire(Dialect::Spec).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let kind = v.get("kind").or_else(|| v.get("type")).and_then(Value::as_str);
        Ok(match (kind, v.get("text").and_then(Value::as_str)) {
            (None | Some("text"), Some(text)) => Part::Text(text.to_owned()),
            _ => Part::Other(v),
        })
    }
}

/// The text parts of `parts`, joined by `sep`.
pub(crate) fn join_text(parts: &[Part], sep: &str) -> String {
    let texts: Vec<&str> = parts.iter().filter_map(Part::text).collect();
    texts.join(sep)
}

/// A message between caller and agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Who wrote it.
    #[serde(default)]
    pub role: Role,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Its id, when the writer gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

impl Message {
    /// An agent message of one text part, with a fresh id.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Agent,
            parts: vec![Part::Text(text.into())],
            message_id: Some(new_id()),
            ..Self::default()
        }
    }

    /// The text parts joined by `"\n"`.
    pub fn text(&self) -> String {
        join_text(&self.parts, "\n")
    }

    fn to_wire(&self, dialect: Dialect) -> Value {
        if dialect == Dialect::Spec {
            return serde_json::to_value(self).unwrap_or_default();
        }
        let mut m = Map::new();
        m.insert(
            "messageId".into(),
            self.message_id.clone().unwrap_or_default().into(),
        );
        if let Some(c) = &self.context_id {
            m.insert("contextId".into(), c.clone().into());
        }
        if let Some(t) = &self.task_id {
            m.insert("taskId".into(), t.clone().into());
        }
        m.insert("role".into(), self.role.v1_name().into());
        m.insert("parts".into(), parts_to_wire(&self.parts, dialect));
        Value::Object(m)
    }
}

fn parts_to_wire(parts: &[Part], dialect: Dialect) -> Value {
    Value::Array(parts.iter().map(|p| p.to_wire(dialect)).collect())
}

/// An output of a task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id within the task.
    #[serde(default)]
    pub artifact_id: String,
    /// A display name, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// A task's state and the agent's note on it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// The state.
    #[serde(default)]
    pub state: TaskState,
    /// Why, for `failed`/`canceled`/`input-required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// A unit of work an agent does for a caller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Its id (a UUID when this crate creates it).
    #[serde(default)]
    pub id: String,
    /// The conversation it belongs to, when the caller named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Where it is.
    #[serde(default)]
    pub status: TaskStatus,
    /// Its outputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged, when the agent keeps them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
}

impl Task {
    /// A task in `state` with nothing else.
    pub fn new(id: impl Into<String>, state: TaskState) -> Self {
        Self {
            id: id.into(),
            status: TaskStatus { state, message: None },
            ..Self::default()
        }
    }

    /// What a caller reads as the result (SPEC §7A): every text part of every artifact,
    /// joined by `"\n"`; failing that, the text of the last agent message in `history`.
    pub fn output_text(&self) -> String {
        let parts: Vec<&str> = self
            .artifacts
            .iter()
            .flat_map(|a| a.parts.iter().filter_map(Part::text))
            .collect();
        if !parts.is_empty() {
            return parts.join("\n");
        }
        self.history
            .iter()
            .rev()
            .filter(|m| m.role == Role::Agent)
            .map(Message::text)
            .find(|t| !t.is_empty())
            .unwrap_or_default()
    }

    /// The text of `status.message` (`""` when there is none).
    pub fn status_text(&self) -> String {
        self.status
            .message
            .as_ref()
            .map(Message::text)
            .unwrap_or_default()
    }

    /// The task as `dialect` writes it.
    pub fn to_wire(&self, dialect: Dialect) -> Value {
        if dialect == Dialect::Spec {
            return serde_json::to_value(self).unwrap_or_default();
        }
        let mut t = Map::new();
        t.insert("id".into(), self.id.clone().into());
        if let Some(c) = &self.context_id {
            t.insert("contextId".into(), c.clone().into());
        }
        let mut status = Map::new();
        status.insert("state".into(), self.status.state.v1_name().into());
        if let Some(m) = &self.status.message {
            status.insert("message".into(), m.to_wire(dialect));
        }
        t.insert("status".into(), Value::Object(status));
        if !self.artifacts.is_empty() {
            let artifacts = self
                .artifacts
                .iter()
                .map(|a| {
                    let mut m = Map::new();
                    m.insert("artifactId".into(), a.artifact_id.clone().into());
                    if let Some(n) = &a.name {
                        m.insert("name".into(), n.clone().into());
                    }
                    m.insert("parts".into(), parts_to_wire(&a.parts, dialect));
                    Value::Object(m)
                })
                .collect();
            t.insert("artifacts".into(), Value::Array(artifacts));
        }
        if !self.history.is_empty() {
            let history = self.history.iter().map(|m| m.to_wire(dialect)).collect();
            t.insert("history".into(), Value::Array(history));
        }
        Value::Object(t)
    }
}

/// A fresh random id (UUID v4).
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_both_spellings_and_write_the_spec_one() {
        for (wire, state) in [
            ("submitted", TaskState::Submitted),
            ("TASK_STATE_WORKING", TaskState::Working),
            ("input-required", TaskState::InputRequired),
            ("TASK_STATE_INPUT_REQUIRED", TaskState::InputRequired),
            ("TASK_STATE_AUTH_REQUIRED", TaskState::AuthRequired),
            ("completed", TaskState::Completed),
            ("cancelled", TaskState::Canceled),
            ("TASK_STATE_REJECTED", TaskState::Rejected),
        ] {
            assert_eq!(TaskState::parse(wire), state, "{wire}");
        }
        let odd = TaskState::parse("TASK_STATE_UNSPECIFIED");
        assert_eq!(odd, TaskState::Other("TASK_STATE_UNSPECIFIED".into()));
        assert!(!odd.is_terminal() && !odd.is_interrupted());
        assert_eq!(TaskState::InputRequired.v1_name(), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(
            serde_json::to_string(&TaskState::Canceled).unwrap(),
            r#""canceled""#
        );
    }

    #[test]
    fn parts_keep_what_is_not_text() {
        let parts: Vec<Part> = serde_json::from_value(json!([
            {"kind": "text", "text": "a"},
            {"text": "b", "metadata": {}},
            {"kind": "file", "file": {"uri": "x"}},
            {"kind": "text"},
            {"data": {"k": 1}}
        ]))
        .unwrap();
        assert_eq!(parts[0], Part::Text("a".into()));
        assert_eq!(parts[1], Part::Text("b".into()));
        assert_eq!(
            parts[2],
            Part::Other(json!({"kind": "file", "file": {"uri": "x"}}))
        );
        assert_eq!(parts[3], Part::Other(json!({"kind": "text"})));
        assert_eq!(join_text(&parts, "|"), "a|b");
        assert_eq!(
            serde_json::to_string(&parts[..3]).unwrap(),
            r#"[{"kind":"text","text":"a"},{"kind":"text","text":"b"},{"kind":"file","file":{"uri":"x"}}]"#
        );
    }

    #[test]
    fn output_text_prefers_artifacts_then_the_last_agent_message() {
        let task: Task = serde_json::from_value(json!({
            "id": "t", "status": {"state": "completed"},
            "artifacts": [
                {"artifactId": "1", "parts": [{"kind": "text", "text": "one"}, {"kind": "data", "data": 1}]},
                {"artifactId": "2", "parts": [{"text": "two"}]}
            ],
            "history": [{"role": "agent", "parts": [{"kind": "text", "text": "ignored"}]}]
        }))
        .unwrap();
        assert_eq!(task.output_text(), "one\ntwo");

        let task: Task = serde_json::from_value(json!({
            "id": "t", "status": {"state": "TASK_STATE_COMPLETED"},
            "history": [
                {"role": "ROLE_AGENT", "parts": [{"text": "first"}]},
                {"role": "ROLE_AGENT", "parts": [{"text": "last"}, {"text": "line"}]},
                {"role": "ROLE_USER", "parts": [{"text": "question"}]},
                {"role": "agent", "parts": []}
            ]
        }))
        .unwrap();
        assert_eq!(task.output_text(), "last\nline");
        assert_eq!(Task::new("x", TaskState::Completed).output_text(), "");
    }

    #[test]
    fn the_v1_rendering() {
        let mut task = Task::new("t1", TaskState::Failed);
        task.context_id = Some("c1".into());
        let mut msg = Message::agent_text("it broke");
        msg.message_id = Some("m1".into());
        task.status.message = Some(msg);
        task.artifacts.push(Artifact {
            artifact_id: "a1".into(),
            name: None,
            parts: vec![Part::Text("partial".into())],
        });
        assert_eq!(
            task.to_wire(Dialect::V1).to_string(),
            r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_FAILED","message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"it broke"}]}},"artifacts":[{"artifactId":"a1","parts":[{"text":"partial"}]}]}"#
        );
        assert_eq!(
            task.to_wire(Dialect::Spec).to_string(),
            r#"{"id":"t1","contextId":"c1","status":{"state":"failed","message":{"role":"agent","parts":[{"kind":"text","text":"it broke"}],"messageId":"m1"}},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"partial"}]}]}"#
        );
        // What is stored reads back the same.
        let back: Task = serde_json::from_value(task.to_wire(Dialect::V1)).unwrap();
        assert_eq!(back, task);
    }
}
