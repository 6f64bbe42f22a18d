//! The `mcp.json` format (SPEC §2): which MCP servers to connect to and how.
//!
//! Parsing is strict about shapes (a wrong type, a URL that is not http(s), a header that
//! could not be sent, a duplicate key: an [`McpError`] naming the file, the server and the
//! field) and lenient about extras (unknown keys are ignored, like every other port).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::McpError;
use crate::context::{TimeoutUnit, timeout_from_json};

/// The default per-phase and per-call bound: 30000 ms.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(30_000);

/// Top-level keys of a raw server map that are sibling config sections, not servers.
const RESERVED_KEYS: [&str; 4] = ["builtins", "agents", "a2a", "mcpServer"];

/// Every configured MCP server, in file order.
///
/// ```
/// use toolnexus::mcp::{McpConfig, Transport};
///
/// let cfg = McpConfig::from_json_str(r#"{
///   "mcpServers": {
///     "fs": {"command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
///     "api": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "enabled": false}
///   }
/// }"#).unwrap();
/// let names: Vec<&str> = cfg.servers().iter().map(|s| s.name.as_str()).collect();
/// assert_eq!(names, ["fs", "api"]);
/// assert!(matches!(cfg.servers()[0].transport, Transport::Local { .. }));
/// assert!(!cfg.servers()[1].enabled);
/// // Header values never reach Debug output.
/// assert!(!format!("{cfg:?}").contains("Bearer"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpConfig {
    servers: Vec<ServerConfig>,
}

/// One server entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// The key in the config map; the tool-name prefix (sanitized).
    pub name: String,
    /// How to reach the server.
    pub transport: Transport,
    /// `false` when `disabled: true` or `enabled: false` (disabled wins).
    pub enabled: bool,
    /// Bound on each load phase and the default bound on each call.
    pub timeout: Duration,
    /// Per-server tool filter on the server's original tool names (SPEC §2 Gap 7).
    pub tools: Option<BTreeMap<String, bool>>,
}

/// How a server is reached.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// A child process spoken to over stdio.
    Local {
        /// Program and arguments.
        command: Vec<String>,
        /// Added to (and overriding) this process's environment.
        env: Secrets,
        /// Working directory of the child.
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint.
    Remote {
        /// The endpoint URL.
        url: String,
        /// Sent with every request; `${ENV}` in values is expanded at connect time.
        headers: Secrets,
    },
}

/// A name → value map whose values are secrets: `Debug` shows the names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets(BTreeMap<String, String>);

impl Secrets {
    /// The entries, values as written in the config (unexpanded).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Secrets {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "<redacted>")))
            .finish()
    }
}

/// Expand `${NAME}` from the environment (unset ⇒ `""`), like every other port.
///
/// ```
/// // SAFETY: single-threaded doc test.
/// unsafe { std::env::set_var("TNX_DOC_TOKEN", "s3cret") };
/// assert_eq!(toolnexus::mcp::expand_env("Bearer ${TNX_DOC_TOKEN}"), "Bearer s3cret");
/// assert_eq!(toolnexus::mcp::expand_env("${TNX_DOC_UNSET_42}x"), "x");
/// assert_eq!(toolnexus::mcp::expand_env("$HOME ${not valid}"), "$HOME ${not valid}");
/// ```
pub fn expand_env(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('}') {
            out.push_str(&std::env::var(&after[..name_len]).unwrap_or_default());
            rest = &after[name_len + 1..];
        } else {
            out.push_str("${");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

impl McpConfig {
    /// A config of `servers`, in order.
    pub fn new(servers: impl IntoIterator<Item = ServerConfig>) -> Self {
        Self {
            servers: servers.into_iter().collect(),
        }
    }

    /// Read and parse an `mcp.json` file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, McpError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| McpError::Read {
            file: origin.clone(),
            message: e.to_string(),
        })?;
        Self::parse(&text, &origin)
    }

    /// Parse config text; errors name the origin `<inline>`.
    pub fn from_json_str(text: &str) -> Result<Self, McpError> {
        Self::parse(text, "<inline>")
    }

    /// Parse an already-decoded JSON document; errors name the origin `<inline>`.
    pub fn from_value(value: &Value) -> Result<Self, McpError> {
        parse_document(value, "<inline>")
    }

    /// Parse a decoded document read from `origin` (a file path), so errors name it.
    pub fn from_document(value: &Value, origin: &str) -> Result<Self, McpError> {
        parse_document(value, origin)
    }

    fn parse(text: &str, origin: &str) -> Result<Self, McpError> {
        let value = parse_json(text).map_err(|e| McpError::Json {
            file: origin.to_owned(),
            message: e.to_string(),
        })?;
        parse_document(&value, origin)
    }

    /// The servers, in file order.
    pub fn servers(&self) -> &[ServerConfig] {
        &self.servers
    }

    /// `true` when no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

/// JSON text as a [`Value`], refusing a key that appears twice in one object (plain
/// `serde_json` keeps the last silently, so one of two servers of the same name would
/// vanish). The error carries the line and column.
///
/// ```
/// let err = toolnexus::mcp::config::parse_json(r#"{"a": {"command": ["x"]}, "a": {}}"#).unwrap_err();
/// assert_eq!(err.to_string(), "duplicate key \"a\" at line 1 column 29");
/// ```
pub fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str::<StrictValue>(text).map(|v| v.0)
}

/// A [`Value`] deserialized with duplicate object keys refused.
struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key \"{key}\"")));
            }
            let StrictValue(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// The keys a server map may sit under, in the order they are looked for.
const WRAPPER_KEYS: [&str; 3] = ["mcpServers", "servers", "mcp"];

fn parse_document(value: &Value, origin: &str) -> Result<McpConfig, McpError> {
    let json_error = |message: String| McpError::Json {
        file: origin.to_owned(),
        message,
    };
    let Value::Object(top) = value else {
        return Err(json_error("the top level must be a JSON object".into()));
    };
    let wrappers: Vec<&str> = WRAPPER_KEYS
        .into_iter()
        .filter(|k| top.contains_key(*k))
        .collect();
    if let [first, second, ..] = wrappers[..] {
        return Err(json_error(format!(
            "both \"{first}\" and \"{second}\" are present; keep the servers under one of them"
        )));
    }
    let (map, raw) = match wrappers.first().map(|key| (*key, &top[*key])) {
        Some((_, Value::Object(map))) => (map, false),
        Some((key, _)) => {
            return Err(json_error(format!("\"{key}\" must be an object of servers")));
        }
        None => (top, true),
    };
    let entries = map
        .iter()
        .filter(|(name, _)| !(raw && RESERVED_KEYS.contains(&name.as_str())));
    if raw && let Some((name, _)) = entries.clone().find(|(_, entry)| !entry.is_object()) {
        // Most likely not a server map at all: say what the file lacks.
        return Err(json_error(format!(
            "no \"mcpServers\" key (nor \"servers\" or \"mcp\"), and the top-level key \"{name}\" is not a server entry (an object)"
        )));
    }
    let servers = entries
        .map(|(name, entry)| {
            parse_server(name, entry).map_err(|message| McpError::Server {
                file: origin.to_owned(),
                server: name.clone(),
                message,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(McpConfig { servers })
}

fn parse_server(name: &str, entry: &Value) -> Result<ServerConfig, String> {
    let Value::Object(e) = entry else {
        return Err("the entry must be an object".into());
    };
    let disabled = opt_bool(e, "disabled")?.unwrap_or(false);
    let enabled = opt_bool(e, "enabled")?.unwrap_or(true) && !disabled;
    let timeout = match e.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(v) => timeout_from_json(v, TimeoutUnit::Millis).map_err(|why| format!("\"timeout\" {why}"))?,
    };
    let tools = match e.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(
            m.iter()
                .map(|(k, v)| match v {
                    Value::Bool(b) => Ok((k.clone(), *b)),
                    _ => Err(format!("\"tools\".\"{k}\" must be true or false")),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err("\"tools\" must be an object of tool name → true/false".into()),
    };
    let kind = e.get("type").and_then(Value::as_str);
    let remote = match kind {
        Some("remote") => true,
        Some("local") => false,
        // Inference would take it for streamable HTTP and fail at connect time, obscurely.
        Some("sse") => {
            return Err(
                "\"type\": \"sse\" (the legacy HTTP+SSE transport) is not supported; \
                        point \"url\" at the server's streamable-HTTP endpoint with \"type\": \"remote\""
                    .into(),
            );
        }
        // Other spellings (`stdio`, `http`, …) fall back to inference, like the other ports.
        _ => e.get("url").is_some_and(Value::is_string),
    };
    let transport = if remote {
        let url = match e.get("url") {
            Some(Value::String(u)) if !u.is_empty() => u.clone(),
            _ => return Err("a remote server needs a \"url\" string".into()),
        };
        check_url(&url)?;
        let headers = string_map(e, "headers")?;
        check_headers(&headers)?;
        Transport::Remote { url, headers }
    } else {
        let command = command_of(e)?;
        // `environment` is the SPEC name, `env` the Claude-desktop alias.
        let env = match e.get("environment") {
            Some(Value::Object(_)) => string_map(e, "environment")?,
            _ => string_map(e, "env")?,
        };
        let cwd = match e.get("cwd") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(PathBuf::from(c)),
            Some(_) => return Err("\"cwd\" must be a string".into()),
        };
        Transport::Local { command, env, cwd }
    };
    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        enabled,
        timeout,
        tools,
    })
}

/// The URL must be one the streamable-HTTP client can reach. The URL itself is not echoed:
/// a query string may hold a key.
fn check_url(url: &str) -> Result<(), String> {
    #[cfg(feature = "mcp")]
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
        Ok(u) => Err(format!(
            "\"url\" must be an http:// or https:// URL, not {}://",
            u.scheme()
        )),
        Err(e) => Err(format!("\"url\" is not a valid URL: {e}")),
    }
    // Without the client nothing connects: the config is refused as a whole (`McpDisabled`).
    #[cfg(not(feature = "mcp"))]
    {
        let _ = url;
        Ok(())
    }
}

/// Header names must be HTTP tokens and values free of control characters (a newline
/// would split the request). A value is checked as written; `${VAR}` is expanded at connect
/// time, where a bad expansion fails that server. Values are never echoed.
fn check_headers(headers: &Secrets) -> Result<(), String> {
    for (name, value) in headers.iter() {
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(format!("\"headers\": {name:?} is not a valid header name"));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(format!(
                "\"headers\".\"{name}\": the value holds a control character (such as a newline)"
            ));
        }
    }
    Ok(())
}

/// `command` as an array (SPEC), or a string plus an optional `args` array (Claude desktop).
fn command_of(e: &Map<String, Value>) -> Result<Vec<String>, String> {
    let strings = |v: &Value, what: &str| -> Result<Vec<String>, String> {
        v.as_array()
            .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_owned)).collect())
            .ok_or_else(|| format!("\"{what}\" must be an array of strings"))
    };
    let mut command = match e.get("command") {
        Some(Value::String(c)) if !c.is_empty() => vec![c.clone()],
        Some(v @ Value::Array(_)) => strings(v, "command")?,
        None => return Err("needs either \"command\" (local) or \"url\" (remote)".into()),
        Some(_) => return Err("\"command\" must be an array of strings or a string".into()),
    };
    if let Some(args) = e.get("args").filter(|a| !a.is_null()) {
        command.extend(strings(args, "args")?);
    }
    if command.first().is_none_or(String::is_empty) {
        return Err("\"command\" must not be empty".into());
    }
    Ok(command)
}

fn opt_bool(e: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match e.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("\"{key}\" must be true or false")),
    }
}

fn string_map(e: &Map<String, Value>, key: &str) -> Result<Secrets, String> {
    match e.get(key) {
        None | Some(Value::Null) => Ok(Secrets::default()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("\"{key}\".\"{k}\" must be a string")),
            })
            .collect::<Result<BTreeMap<_, _>, _>>()
            .map(Secrets),
        Some(_) => Err(format!("\"{key}\" must be an object of strings")),
    }
}

/// Apply a per-server tool filter to the listed original names (SPEC §2 Gap 7): empty ⇒
/// all; at least one `true` ⇒ allowlist; only `false` ⇒ drop-list. Unknown names are
/// ignored with a warning.
#[cfg(feature = "mcp")]
pub(crate) fn tool_allowed(filter: Option<&BTreeMap<String, bool>>, name: &str) -> bool {
    match filter {
        None => true,
        Some(f) if f.is_empty() => true,
        Some(f) if f.values().any(|v| *v) => f.get(name) == Some(&true),
        Some(f) => f.get(name) != Some(&false),
    }
}

/// Warn once per filter name that matched none of `listed`.
#[cfg(feature = "mcp")]
pub(crate) fn warn_unknown_filter_names<'a>(
    server: &ServerConfig,
    listed: impl Iterator<Item = &'a str> + Clone,
) {
    for key in server.tools.iter().flat_map(BTreeMap::keys) {
        if !listed.clone().any(|n| n == key) {
            tracing::warn!(
                "[toolnexus] server \"{}\" tools filter name \"{key}\" matched no tool",
                server.name
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<McpConfig, McpError> {
        McpConfig::from_value(&v)
    }

    fn names(c: &McpConfig) -> Vec<&str> {
        c.servers().iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn wrapper_keys_and_raw_map() {
        for key in ["mcpServers", "servers", "mcp"] {
            let c = parse(json!({ key: {"a": {"command": ["x"]}}, "builtins": false})).unwrap();
            assert_eq!(names(&c), ["a"], "{key}");
        }
        let raw = json!({
            "z": {"url": "http://127.0.0.1:1/mcp"},
            "builtins": {"disabled": true}, "agents": {}, "a2a": {}, "mcpServer": {"name": "gw"},
            "a": {"command": "srv", "args": ["--stdio"]}
        });
        let c = parse(raw).unwrap();
        assert_eq!(names(&c), ["z", "a"]);
        assert_eq!(
            c.servers()[1].transport,
            Transport::Local {
                command: vec!["srv".into(), "--stdio".into()],
                env: Secrets::default(),
                cwd: None
            }
        );
    }

    #[test]
    fn type_inference_and_fields() {
        let c = parse(json!({"mcpServers": {
            "l": {"command": ["node", "s.js"], "environment": {"A": "1"}, "cwd": "/tmp", "timeout": 1500,
                  "tools": {"read": true}},
            "r": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            "forced": {"type": "local", "url": "http://ignored", "command": ["x"]},
            "alias": {"command": ["x"], "env": {"B": "2"}}
        }}))
        .unwrap();
        let s = c.servers();
        assert_eq!(s[0].timeout, Duration::from_millis(1500));
        assert_eq!(s[0].tools.as_ref().unwrap().get("read"), Some(&true));
        let Transport::Local { env, cwd, .. } = &s[0].transport else {
            panic!()
        };
        assert_eq!(env.iter().collect::<Vec<_>>(), [("A", "1")]);
        assert_eq!(cwd.as_deref(), Some(Path::new("/tmp")));
        assert_eq!(s[1].timeout, DEFAULT_TIMEOUT);
        assert!(matches!(&s[1].transport, Transport::Remote { url, .. } if url == "http://h/mcp"));
        assert!(matches!(s[2].transport, Transport::Local { .. }));
        let Transport::Local { env, .. } = &s[3].transport else {
            panic!()
        };
        assert_eq!(env.iter().collect::<Vec<_>>(), [("B", "2")]);
    }

    #[test]
    fn disabled_wins() {
        let c = parse(json!({"mcp": {
            "a": {"command": ["x"], "enabled": true, "disabled": true},
            "b": {"command": ["x"], "enabled": false},
            "c": {"command": ["x"], "disabled": false}
        }}))
        .unwrap();
        let e: Vec<bool> = c.servers().iter().map(|s| s.enabled).collect();
        assert_eq!(e, [false, false, true]);
    }

    #[test]
    fn malformed_entries_name_the_server_and_field() {
        let cases = [
            (json!({"s": 3}), "the entry must be an object"),
            (
                json!({"s": {}}),
                "needs either \"command\" (local) or \"url\" (remote)",
            ),
            (json!({"s": {"command": []}}), "\"command\" must not be empty"),
            (
                json!({"s": {"command": [1]}}),
                "\"command\" must be an array of strings",
            ),
            (
                json!({"s": {"command": ["x"], "timeout": "5s"}}),
                "\"timeout\" must be a positive number of milliseconds (at most 86400000), got \"5s\"",
            ),
            (
                json!({"s": {"command": ["x"], "timeout": 1e308}}),
                "\"timeout\" must be a positive number of milliseconds (at most 86400000), got 1e+308",
            ),
            (
                json!({"s": {"command": ["x"], "timeout": -1}}),
                "\"timeout\" must be a positive number of milliseconds (at most 86400000), got -1",
            ),
            (
                json!({"s": {"type": "sse", "url": "http://h/sse"}}),
                "\"type\": \"sse\" (the legacy HTTP+SSE transport) is not supported; point \"url\" at the server's streamable-HTTP endpoint with \"type\": \"remote\"",
            ),
            (
                json!({"s": {"url": "http://h", "headers": {"Bad Name": "x"}}}),
                "\"headers\": \"Bad Name\" is not a valid header name",
            ),
            (
                json!({"s": {"url": "http://h", "headers": {"X-Key": "a\r\nInjected: yes"}}}),
                "\"headers\".\"X-Key\": the value holds a control character (such as a newline)",
            ),
            (
                json!({"s": {"command": ["x"], "enabled": "yes"}}),
                "\"enabled\" must be true or false",
            ),
            (
                json!({"s": {"url": "http://h", "headers": {"A": 1}}}),
                "\"headers\".\"A\" must be a string",
            ),
            (
                json!({"s": {"command": ["x"], "tools": {"t": 1}}}),
                "\"tools\".\"t\" must be true or false",
            ),
            (
                json!({"s": {"type": "remote", "command": ["x"]}}),
                "a remote server needs a \"url\" string",
            ),
        ];
        for (doc, want) in cases {
            let err = parse(json!({ "mcpServers": doc })).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("MCP config <inline>: server \"s\": {want}")
            );
        }
    }

    #[test]
    fn malformed_json_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, "{\"mcpServers\": {").unwrap();
        let err = McpConfig::from_file(&path).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("malformed MCP config {}: ", path.display())),
            "{text}"
        );
        assert!(matches!(err, McpError::Json { .. }));
        let err = McpConfig::from_file(dir.path().join("missing.json")).unwrap_err();
        assert!(matches!(err, McpError::Read { .. }), "{err}");
        assert_eq!(
            McpConfig::from_json_str("[1]").unwrap_err().to_string(),
            "malformed MCP config <inline>: the top level must be a JSON object"
        );
        assert_eq!(
            McpConfig::from_json_str(r#"{"foo": 1}"#).unwrap_err().to_string(),
            "malformed MCP config <inline>: no \"mcpServers\" key (nor \"servers\" or \"mcp\"), and the top-level key \"foo\" is not a server entry (an object)"
        );
        assert_eq!(
            McpConfig::from_json_str(r#"{"mcpServers": {}, "mcp": {}}"#)
                .unwrap_err()
                .to_string(),
            "malformed MCP config <inline>: both \"mcpServers\" and \"mcp\" are present; keep the servers under one of them"
        );
        assert_eq!(
            McpConfig::from_json_str(
                "{\"mcpServers\": {\n  \"a\": {\"command\": [\"x\"]},\n  \"a\": {\"url\": \"http://h\"}\n}}"
            )
            .unwrap_err()
            .to_string(),
            "malformed MCP config <inline>: duplicate key \"a\" at line 3 column 5"
        );
        assert_eq!(
            McpConfig::from_json_str(r#"{"s": {"command": ["x"], "timeout": 1, "timeout": 2}}"#)
                .unwrap_err()
                .to_string(),
            "malformed MCP config <inline>: duplicate key \"timeout\" at line 1 column 48"
        );
        assert_eq!(
            McpConfig::from_json_str(r#"{"servers": []}"#)
                .unwrap_err()
                .to_string(),
            "malformed MCP config <inline>: \"servers\" must be an object of servers"
        );
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn remote_urls_must_be_http_and_are_not_echoed() {
        let err = |url: &str| {
            parse(json!({"mcpServers": {"s": {"url": url}}}))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("ftp://h/mcp?key=SECRET"),
            "MCP config <inline>: server \"s\": \"url\" must be an http:// or https:// URL, not ftp://"
        );
        assert_eq!(
            err("localhost:8080/mcp"),
            "MCP config <inline>: server \"s\": \"url\" must be an http:// or https:// URL, not localhost://"
        );
        assert_eq!(
            err("http://[::1/mcp"),
            "MCP config <inline>: server \"s\": \"url\" is not a valid URL: invalid IPv6 address"
        );
        assert!(parse(json!({"s": {"url": "HTTPS://h.example/mcp"}})).is_ok());
    }

    #[test]
    fn debug_redacts_env_and_headers() {
        let c = parse(json!({
            "r": {"url": "http://h", "headers": {"Authorization": "Bearer sk-live"}},
            "l": {"command": ["x"], "env": {"API_KEY": "sk-env"}}
        }))
        .unwrap();
        let dbg = format!("{c:?}");
        assert!(dbg.contains("\"Authorization\": \"<redacted>\""), "{dbg}");
        assert!(!dbg.contains("sk-live") && !dbg.contains("sk-env"), "{dbg}");
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn filter_semantics() {
        let f = |pairs: &[(&str, bool)]| -> BTreeMap<String, bool> {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        assert!(tool_allowed(None, "a"));
        assert!(tool_allowed(Some(&f(&[])), "a"));
        let allow = f(&[("a", true), ("b", false)]);
        assert!(tool_allowed(Some(&allow), "a"));
        assert!(!tool_allowed(Some(&allow), "c"));
        let drop = f(&[("b", false)]);
        assert!(tool_allowed(Some(&drop), "a"));
        assert!(!tool_allowed(Some(&drop), "b"));
    }
}
