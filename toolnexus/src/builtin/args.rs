//! Argument checking shared by the built-ins. A model that sends the wrong shape gets an
//! error naming the field and the expected type, so it can correct the next call.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::context::{TimeoutUnit, timeout_from_json};

/// A tool's arguments object; every accessor's error is the full `"<tool>: …"` message.
pub(super) struct Args<'a> {
    tool: &'static str,
    map: Option<&'a Map<String, Value>>,
}

/// JSON's name for a value's type, for "must be a string, got number" messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl<'a> Args<'a> {
    /// `null` reads as `{}` (so the required-field checks name what is missing); any other
    /// non-object is refused.
    pub(super) fn new(tool: &'static str, args: &'a Value) -> Result<Self, String> {
        match args {
            Value::Object(map) => Ok(Self { tool, map: Some(map) }),
            Value::Null => Ok(Self { tool, map: None }),
            other => Err(format!(
                "{tool}: arguments must be a JSON object, got {}",
                kind(other)
            )),
        }
    }

    /// The value under `key`, with `null` treated as absent.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map?.get(key).filter(|v| !v.is_null())
    }

    fn wrong_type(&self, key: &str, want: &str, got: &Value) -> String {
        format!("{}: {key} must be {want}, got {}", self.tool, kind(got))
    }

    fn required(&self, key: &str) -> String {
        format!("{}: {key} is required", self.tool)
    }

    /// An optional string; an empty string reads as absent, as in the other ports.
    pub(super) fn opt_str(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    /// A required, non-empty string.
    pub(super) fn str(&self, key: &str) -> Result<&'a str, String> {
        self.opt_str(key)?.ok_or_else(|| self.required(key))
    }

    /// A required string that may be empty (file content, a replacement).
    pub(super) fn str_or_empty(&self, key: &str) -> Result<&'a str, String> {
        match self.get(key) {
            None => Err(self.required(key)),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    /// An optional string that may be empty (a cell's new source).
    pub(super) fn opt_str_or_empty(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    /// An optional number.
    pub(super) fn opt_num(&self, key: &str) -> Result<Option<f64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(other) => Err(self.wrong_type(key, "a number", other)),
        }
    }

    /// An optional timeout in `unit`s: positive and at most a day, never a panic on `1e308`.
    pub(super) fn opt_timeout(&self, key: &str, unit: TimeoutUnit) -> Result<Option<Duration>, String> {
        self.get(key)
            .map(|v| timeout_from_json(v, unit).map_err(|why| format!("{}: {key} {why}", self.tool)))
            .transpose()
    }

    /// An optional count (`limit`, `offset`): a number, truncated like the other ports'
    /// `int(x)`, with negatives clamped to zero.
    pub(super) fn opt_count(&self, key: &str) -> Result<Option<usize>, String> {
        Ok(self.opt_num(key)?.map(|n| n.max(0.0) as usize))
    }

    /// An optional boolean.
    pub(super) fn opt_bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong_type(key, "a boolean", other)),
        }
    }

    /// A required array.
    pub(super) fn array(&self, key: &str) -> Result<&'a Vec<Value>, String> {
        match self.get(key) {
            None => Err(self.required(key)),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(self.wrong_type(key, "an array", other)),
        }
    }

    /// The arguments of `items[index]` (an element of an array argument), checked the same way.
    pub(super) fn item(&self, key: &str, index: usize, item: &'a Value) -> Result<Item<'a>, String> {
        match item {
            Value::Object(map) => Ok(Item {
                tool: self.tool,
                path: format!("{key}[{index}]"),
                map,
            }),
            other => Err(format!(
                "{}: {key}[{index}] must be an object, got {}",
                self.tool,
                kind(other)
            )),
        }
    }
}

/// One object element of an array argument (`questions[2]`, `todos[0]`).
pub(super) struct Item<'a> {
    tool: &'static str,
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Item<'a> {
    fn err(&self, key: &str, want: &str, got: Option<&Value>) -> String {
        match got {
            None => format!("{}: {}.{key} is required", self.tool, self.path),
            Some(v) => format!(
                "{}: {}.{key} must be {want}, got {}",
                self.tool,
                self.path,
                kind(v)
            ),
        }
    }

    /// A required string field (empty allowed).
    pub(super) fn str(&self, key: &str) -> Result<&'a str, String> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s),
            other => Err(self.err(key, "a string", other.filter(|v| !v.is_null()))),
        }
    }

    /// A required boolean field.
    pub(super) fn bool(&self, key: &str) -> Result<bool, String> {
        match self.map.get(key) {
            Some(Value::Bool(b)) => Ok(*b),
            other => Err(self.err(key, "a boolean", other.filter(|v| !v.is_null()))),
        }
    }

    /// An optional field of the given JSON type (checked, not returned).
    pub(super) fn check_opt(&self, key: &str, want: &str, ok: fn(&Value) -> bool) -> Result<(), String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(()),
            Some(v) if ok(v) => Ok(()),
            Some(v) => Err(self.err(key, want, Some(v))),
        }
    }

    /// An optional array of strings.
    pub(super) fn opt_strings(&self, key: &str) -> Result<Vec<&'a str>, String> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_str().ok_or_else(|| {
                        format!(
                            "{}: {}.{key}[{i}] must be a string, got {}",
                            self.tool,
                            self.path,
                            kind(v)
                        )
                    })
                })
                .collect(),
            Some(v) => Err(self.err(key, "an array of strings", Some(v))),
        }
    }
}
