//! The config file's `agents` block (SPEC §7A), which mirrors `mcpServers`:
//!
//! ```json
//! {"agents": {"travel": {"card": "https://travel.example/.well-known/agent-card.json",
//!                        "headers": {"Authorization": "Bearer ${TRAVEL_TOKEN}"},
//!                        "timeout": 60000, "pollEvery": 500, "enabled": true}}}
//! ```
//!
//! The key only identifies the entry (in errors and statuses); tool names come from the
//! fetched card's `name`. `timeout` and `pollEvery` are milliseconds. `disabled: true` wins,
//! then `enabled: false` disables, else the agent is on — MCP's precedence.
//!
//! ```
//! use std::time::Duration;
//! use serde_json::json;
//! use toolnexus::a2a::config::parse_agents;
//!
//! let doc = json!({"a": {"card": "http://h/.well-known/agent-card.json", "pollEvery": 250},
//!                  "b": {"card": "http://g/c.json", "enabled": true, "disabled": true}});
//! let entries = parse_agents(&doc, "mcp.json").unwrap();
//! assert_eq!(entries[0].id, "a");
//! assert_eq!(entries[0].options.poll_every, Duration::from_millis(250));
//! assert!(entries[0].enabled && !entries[1].enabled);
//!
//! let err = parse_agents(&json!({"a": {"card": 7}}), "mcp.json").unwrap_err();
//! assert_eq!(err.to_string(), "malformed config mcp.json: agents.a: `card` must be a string (the Agent Card URL)");
//! ```

use std::time::Duration;

use serde_json::{Map, Value};

use super::agent::AgentOptions;

/// One entry of the `agents` block.
#[derive(Clone, Debug)]
pub struct AgentEntry {
    /// The entry's key.
    pub id: String,
    /// The Agent Card URL.
    pub card: String,
    /// Headers, timeout and poll interval.
    pub options: AgentOptions,
    /// `false` when `disabled: true` or `enabled: false`.
    pub enabled: bool,
}

/// An `agents` (or `a2a`) block that cannot be used, naming the document and the place.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed config {origin}: {place}: {message}")]
pub struct ConfigError {
    /// The file path, or `<value>`.
    pub origin: String,
    /// `agents`, `agents.<key>`, `a2a.<key>`.
    pub place: String,
    /// What is wrong.
    pub message: String,
}

/// Parses the value of an `agents` key, in document order.
pub fn parse_agents(block: &Value, origin: &str) -> Result<Vec<AgentEntry>, ConfigError> {
    let error = |place: String, message: &str| ConfigError {
        origin: origin.to_owned(),
        place,
        message: message.to_owned(),
    };
    let Value::Object(entries) = block else {
        return Err(error(
            "agents".into(),
            "must be an object of named agents ({\"<id>\": {\"card\": \"<url>\"}})",
        ));
    };
    entries
        .iter()
        .map(|(id, entry)| parse_entry(id, entry).map_err(|message| error(format!("agents.{id}"), &message)))
        .collect()
}

fn parse_entry(id: &str, entry: &Value) -> Result<AgentEntry, String> {
    let Value::Object(fields) = entry else {
        return Err("must be an object with a `card` URL".into());
    };
    let card = match fields.get("card") {
        Some(Value::String(url)) if !url.is_empty() => url.clone(),
        _ => return Err("`card` must be a string (the Agent Card URL)".into()),
    };
    let mut options = AgentOptions::default();
    if let Some(headers) = fields.get("headers") {
        let Value::Object(headers) = headers else {
            return Err("`headers` must be an object of strings".into());
        };
        for (name, value) in headers {
            let Value::String(value) = value else {
                // The value may be a secret: name the header only.
                return Err(format!("`headers.{name}` must be a string"));
            };
            options.headers.insert(name.clone(), value.clone());
        }
    }
    if let Some(ms) = millis(fields, "timeout")? {
        options.timeout = ms;
    }
    if let Some(ms) = millis(fields, "pollEvery")? {
        options.poll_every = ms;
    }
    let flag = |key: &str| match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("`{key}` must be true or false")),
    };
    let enabled = !(flag("disabled")? == Some(true) || flag("enabled")? == Some(false));
    Ok(AgentEntry {
        id: id.to_owned(),
        card,
        options,
        enabled,
    })
}

fn millis(fields: &Map<String, Value>, key: &str) -> Result<Option<Duration>, String> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|ms| *ms > 0)
            .map(|ms| Some(Duration::from_millis(ms)))
            .ok_or_else(|| format!("`{key}` must be a positive number of milliseconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_agents(&v, "cfg.json").unwrap_err().to_string()
    }

    #[test]
    fn every_field() {
        let entries = parse_agents(
            &json!({"z": {"card": "http://z/c", "headers": {"Authorization": "Bearer ${T}"}, "timeout": 1500},
                    "a": {"card": "http://a/c", "enabled": false}}),
            "cfg.json",
        )
        .unwrap();
        // Document order, not key order.
        assert_eq!(
            entries.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
            ["z", "a"]
        );
        assert_eq!(entries[0].card, "http://z/c");
        assert_eq!(entries[0].options.headers["Authorization"], "Bearer ${T}");
        assert_eq!(entries[0].options.timeout, Duration::from_millis(1500));
        assert_eq!(entries[0].options.poll_every, Duration::from_secs(1));
        assert!(entries[0].enabled);
        assert!(!entries[1].enabled);
    }

    #[test]
    fn precedence_is_mcps() {
        for (flags, on) in [
            (json!({}), true),
            (json!({"enabled": true}), true),
            (json!({"enabled": false}), false),
            (json!({"disabled": true}), false),
            (json!({"disabled": false}), true),
            (json!({"disabled": true, "enabled": true}), false),
            (json!({"disabled": false, "enabled": false}), false),
        ] {
            let mut entry = json!({"card": "http://x/c"});
            entry
                .as_object_mut()
                .unwrap()
                .extend(flags.as_object().unwrap().clone());
            let parsed = parse_agents(&json!({"x": entry}), "c").unwrap();
            assert_eq!(parsed[0].enabled, on, "{flags}");
        }
    }

    #[test]
    fn errors_name_file_and_entry_but_never_a_header_value() {
        assert_eq!(
            err(json!(["http://x"])),
            "malformed config cfg.json: agents: must be an object of named agents ({\"<id>\": {\"card\": \"<url>\"}})"
        );
        assert_eq!(
            err(json!({"x": "http://x"})),
            "malformed config cfg.json: agents.x: must be an object with a `card` URL"
        );
        assert_eq!(
            err(json!({"x": {"card": "http://x", "headers": {"Authorization": 42}}})),
            "malformed config cfg.json: agents.x: `headers.Authorization` must be a string"
        );
        assert_eq!(
            err(json!({"x": {"card": "http://x", "headers": "Bearer s3cret"}})),
            "malformed config cfg.json: agents.x: `headers` must be an object of strings"
        );
        assert_eq!(
            err(json!({"x": {"card": "http://x", "timeout": "60s"}})),
            "malformed config cfg.json: agents.x: `timeout` must be a positive number of milliseconds"
        );
        assert_eq!(
            err(json!({"x": {"card": "http://x", "pollEvery": 0}})),
            "malformed config cfg.json: agents.x: `pollEvery` must be a positive number of milliseconds"
        );
        assert_eq!(
            err(json!({"x": {"card": "http://x", "enabled": "yes"}})),
            "malformed config cfg.json: agents.x: `enabled` must be true or false"
        );
        assert_eq!(
            err(json!({"x": {"card": ""}})),
            "malformed config cfg.json: agents.x: `card` must be a string (the Agent Card URL)"
        );
    }
}
