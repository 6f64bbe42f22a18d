//! HTTP endpoints as tools (SPEC §7, source `http`): [`http_tool`] wraps one endpoint,
//! [`http_tools_from_openapi`] imports every operation of an OpenAPI 3 document.
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! use serde_json::json;
//! use toolnexus::ToolContext;
//! use toolnexus::http::{HttpToolSpec, http_tool};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let weather = http_tool(HttpToolSpec {
//!     description: "Current weather for a city".into(),
//!     // The secret is read from the environment at call time and never logged.
//!     headers: BTreeMap::from([("Authorization".into(), "Bearer ${WEATHER_TOKEN}".into())]),
//!     ..HttpToolSpec::new("weather", "GET", "https://api.example.com/weather/{city}")
//! });
//! let r = weather.execute(json!({"city": "Paris", "units": "metric"}), ToolContext::default()).await;
//! // GET https://api.example.com/weather/Paris?units=metric
//! println!("{} {:?}", r.output, r.metadata);
//! # });
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::mcp::expand_env;
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource, sanitize};
use crate::yaml;

/// Request timeout when neither the spec nor the call context sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How the arguments left after URL and query substitution are sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyMode {
    /// A JSON object (`Content-Type: application/json` unless a header sets it).
    #[default]
    Json,
    /// `application/x-www-form-urlencoded`.
    Form,
    /// The `body` argument's text, verbatim.
    Raw,
}

/// What a 2xx response becomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResultMode {
    /// The body text.
    #[default]
    #[serde(rename = "text")]
    Text,
    /// The body re-serialized as compact JSON (a non-JSON body becomes a JSON string).
    #[serde(rename = "json")]
    Json,
    /// `"<status>\n<body>"`.
    #[serde(rename = "status+text")]
    StatusText,
}

/// An HTTP endpoint declared as a tool.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HttpToolSpec {
    /// Tool name.
    pub name: String,
    /// Tool description shown to the model.
    pub description: String,
    /// HTTP method, any case.
    pub method: String,
    /// URL; `{name}` placeholders are filled (percent-encoded) from the arguments of that name.
    pub url: String,
    /// Static headers; `${ENV_VAR}` in a value expands from the environment at call time.
    pub headers: BTreeMap<String, String>,
    /// Argument names sent as the query string (for GET every argument is).
    pub query: Vec<String>,
    /// How the remaining arguments are sent on non-GET/HEAD requests.
    pub body: BodyMode,
    /// JSON Schema of the arguments; default: an object with no properties.
    pub input_schema: Option<Value>,
    /// Request timeout (default [`DEFAULT_TIMEOUT`]); a call context's timeout wins.
    #[serde(skip)]
    pub timeout: Option<Duration>,
    /// What a 2xx response becomes.
    pub result_mode: ResultMode,
}

impl HttpToolSpec {
    /// A spec with the three required parts; the rest default.
    pub fn new(name: impl Into<String>, method: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            method: method.into(),
            url: url.into(),
            ..Self::default()
        }
    }
}

/// Header values are redacted: they may hold expanded secrets or templates naming them.
impl fmt::Debug for HttpToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: BTreeMap<&str, &str> = self.headers.keys().map(|k| (k.as_str(), "<redacted>")).collect();
        f.debug_struct("HttpToolSpec")
            .field("name", &self.name)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("query", &self.query)
            .field("body", &self.body)
            .field("timeout", &self.timeout)
            .field("result_mode", &self.result_mode)
            .finish_non_exhaustive()
    }
}

/// Wraps an HTTP endpoint as a [`Tool`] (source `http`). Non-2xx ⇒ an error result
/// `HTTP <status>: <body>`; 2xx ⇒ the body with `metadata.status`; a transport failure
/// ⇒ an error result naming it.
pub fn http_tool(spec: HttpToolSpec) -> Tool {
    let schema = spec
        .input_schema
        .clone()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}, "additionalProperties": false}));
    let name = spec.name.clone();
    let description = spec.description.clone();
    let spec = std::sync::Arc::new(spec);
    Tool::new(name, move |args: Value, ctx: ToolContext| {
        let spec = spec.clone();
        async move {
            let args = match args {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => return ToolResult::failure(format!("arguments must be a JSON object, got {other}")),
            };
            call(&spec, args, ctx.timeout).await
        }
    })
    .with_description(description)
    .with_schema(schema)
    .with_source(ToolSource::Http)
}

/// The request an [`HttpToolSpec`] makes for some arguments, before it is sent.
struct Prepared {
    method: reqwest::Method,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

fn prepare(spec: &HttpToolSpec, mut args: Map<String, Value>) -> Result<Prepared, String> {
    let method_name = spec.method.to_ascii_uppercase();
    let method = reqwest::Method::from_bytes(method_name.as_bytes())
        .map_err(|_| format!("invalid HTTP method: {}", spec.method))?;
    // 1. {placeholders}, consumed from the arguments.
    let mut url = String::with_capacity(spec.url.len());
    let mut rest = spec.url.as_str();
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if close > 0 && after[..close].chars().all(is_word_char) => {
                let key = &after[..close];
                url.push_str(&rest[..open]);
                let value = args.shift_remove(key).map(|v| arg_text(&v)).unwrap_or_default();
                url.push_str(&percent_encode(&value, false));
                rest = &after[close + 1..];
            }
            _ => {
                url.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    url.push_str(rest);
    // 2. The query string: the named arguments, or every argument for GET.
    let is_get = method == reqwest::Method::GET;
    let (query, remaining): (Map<String, Value>, Map<String, Value>) = args
        .into_iter()
        .partition(|(k, _)| is_get || spec.query.contains(k));
    if !query.is_empty() {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&form_encode(&query));
    }
    // 3. Headers (expanded now, never logged) and the body.
    let mut headers: Vec<(String, String)> = spec
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), expand_env(v)))
        .collect();
    let has_content_type = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    let mut body = None;
    if !is_get && method != reqwest::Method::HEAD && !remaining.is_empty() {
        let (content_type, text) = match spec.body {
            BodyMode::Json => (Some("application/json"), Value::Object(remaining).to_string()),
            BodyMode::Form => (Some("application/x-www-form-urlencoded"), form_encode(&remaining)),
            BodyMode::Raw => (None, remaining.get("body").map(arg_text).unwrap_or_default()),
        };
        if let (Some(ct), false) = (content_type, has_content_type) {
            headers.push(("Content-Type".into(), ct.into()));
        }
        body = Some(text);
    }
    Ok(Prepared {
        method,
        url,
        headers,
        body,
    })
}

async fn call(spec: &HttpToolSpec, args: Map<String, Value>, ctx_timeout: Option<Duration>) -> ToolResult {
    let prepared = match prepare(spec, args) {
        Ok(p) => p,
        Err(e) => return ToolResult::failure(e),
    };
    let timeout = ctx_timeout.or(spec.timeout).unwrap_or(DEFAULT_TIMEOUT);
    let mut request = client().request(prepared.method, &prepared.url).timeout(timeout);
    for (k, v) in &prepared.headers {
        request = request.header(k, v);
    }
    if let Some(body) = prepared.body {
        request = request.body(body);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => return ToolResult::failure(transport_error(&spec.name, timeout, e)),
    };
    let status = response.status().as_u16();
    let text = match response.bytes().await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return ToolResult::failure(transport_error(&spec.name, timeout, e)),
    };
    if !(200..300).contains(&status) {
        return ToolResult::failure(format!("HTTP {status}: {text}")).with_meta("status", status);
    }
    let output = match spec.result_mode {
        ResultMode::Text => text,
        ResultMode::StatusText => format!("{status}\n{text}"),
        ResultMode::Json => match serde_json::from_str::<Value>(&text) {
            Ok(v) => v.to_string(),
            Err(_) => Value::String(text).to_string(),
        },
    };
    ToolResult::success(output).with_meta("status", status)
}

fn transport_error(name: &str, timeout: Duration, e: reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("{name}: HTTP request timed out after {}ms", timeout.as_millis());
    }
    // The chain names the cause (connection refused, DNS, TLS); the URL is stripped
    // because a placeholder may carry data the model should not see echoed twice.
    let e = e.without_url();
    format!("{name}: HTTP request failed: {}", crate::net::error_chain(&e))
}

fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| crate::net::client_builder().build().unwrap_or_default())
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// An argument as text: strings verbatim, anything else as compact JSON, null as "".
fn arg_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Percent-encodes all but `A-Z a-z 0-9 _ . - ~`; `plus` turns spaces into `+` (forms).
fn percent_encode(s: &str, plus: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b' ' if plus => out.push('+'),
            b if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) => out.push(b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn form_encode(pairs: &Map<String, Value>) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                percent_encode(k, true),
                percent_encode(&arg_text(v), true)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Where an OpenAPI document comes from.
#[derive(Debug, Clone)]
pub enum OpenApiSource {
    /// A JSON or YAML file.
    Path(PathBuf),
    /// An `http(s)://` URL serving JSON or YAML.
    Url(String),
    /// An already parsed document.
    Value(Value),
}

impl From<Value> for OpenApiSource {
    fn from(v: Value) -> Self {
        Self::Value(v)
    }
}

impl From<&str> for OpenApiSource {
    /// `http://` / `https://` ⇒ URL, anything else ⇒ path.
    fn from(s: &str) -> Self {
        if s.starts_with("http://") || s.starts_with("https://") {
            Self::Url(s.to_owned())
        } else {
            Self::Path(s.into())
        }
    }
}

impl From<PathBuf> for OpenApiSource {
    fn from(p: PathBuf) -> Self {
        Self::Path(p)
    }
}

/// Options for [`http_tools_from_openapi`], set with the chaining methods.
#[derive(Clone, Default)]
pub struct OpenApiOptions {
    base_url: Option<String>,
    headers: BTreeMap<String, String>,
}

impl OpenApiOptions {
    /// The base URL of every operation (default: the document's first `servers[].url`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// A header sent with every operation (`${ENV}` in the value expands at call time).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }
}

impl fmt::Debug for OpenApiOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApiOptions")
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Why an OpenAPI document could not be imported.
#[derive(thiserror::Error)]
pub enum OpenApiError {
    /// The file could not be read.
    #[error("OpenAPI spec {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The URL could not be fetched (or answered non-2xx).
    #[error("OpenAPI spec {url}: {message}")]
    Fetch {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The text is neither JSON nor YAML.
    #[error("OpenAPI spec {origin}: not valid JSON or YAML: {message}")]
    Parse {
        /// File or URL.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// The document has no `paths` object, or no base URL is known.
    #[error("OpenAPI spec {origin}: {message}")]
    Invalid {
        /// File, URL or `<value>`.
        origin: String,
        /// What is missing.
        message: String,
    },
}

crate::debug_as_display!(OpenApiError);

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Imports every operation of an OpenAPI 3 document as an [`http_tool`] (best effort):
/// `operationId` (or `METHOD_path`) sanitized as the name, `summary`/`description` as the
/// description, path and query parameters plus a JSON or form `requestBody` as the schema.
/// Local `$ref`s are resolved; header and cookie parameters are not modelled.
pub async fn http_tools_from_openapi(
    spec: impl Into<OpenApiSource>,
    options: OpenApiOptions,
) -> Result<Vec<Tool>, OpenApiError> {
    let (doc, origin) = match spec.into() {
        OpenApiSource::Value(v) => (v, "<value>".to_owned()),
        OpenApiSource::Path(path) => {
            let text = tokio::fs::read_to_string(&path)
                .await
                .map_err(|source| OpenApiError::Read {
                    path: path.clone(),
                    source,
                })?;
            let origin = path.display().to_string();
            (parse_document(&text, &origin)?, origin)
        }
        OpenApiSource::Url(url) => {
            let text = fetch(&url).await.map_err(|message| OpenApiError::Fetch {
                url: url.clone(),
                message,
            })?;
            (parse_document(&text, &url)?, url)
        }
    };
    openapi_tools(&doc, &origin, &options)
}

async fn fetch(url: &str) -> Result<String, String> {
    let response = client()
        .get(url)
        .timeout(DEFAULT_TIMEOUT)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    Ok(text)
}

/// Deep enough for any schema; anchors and aliases may copy as many nodes as the parser's
/// former default allowed in all (a few MB of tree), so an alias bomb is refused.
const OPENAPI_YAML_LIMITS: yaml::Limits = yaml::Limits {
    max_depth: 128,
    max_copies: 250_000,
};

fn parse_document(text: &str, origin: &str) -> Result<Value, OpenApiError> {
    if let Ok(v) = serde_json::from_str(text) {
        return Ok(v);
    }
    let parse_error = |e: yaml::Error| OpenApiError::Parse {
        origin: origin.to_owned(),
        message: e.to_string(),
    };
    match yaml::parse(text, OPENAPI_YAML_LIMITS).map_err(parse_error)? {
        Some(node) => node.into_json().map_err(parse_error),
        None => Ok(Value::Null),
    }
}

fn openapi_tools(doc: &Value, origin: &str, options: &OpenApiOptions) -> Result<Vec<Tool>, OpenApiError> {
    let invalid = |message: &str| OpenApiError::Invalid {
        origin: origin.to_owned(),
        message: message.to_owned(),
    };
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("no `paths` object"))?;
    let base = options
        .base_url
        .clone()
        .or_else(|| {
            doc.pointer("/servers/0/url")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .ok_or_else(|| invalid("no base URL: pass one or declare `servers`"))?;
    let base = base.trim_end_matches('/');
    let mut tools = Vec::new();
    for (path, item) in paths {
        let item = resolve(doc, item);
        let shared_params = item
            .get("parameters")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for method in METHODS {
            let Some(op) = item.get(method).map(|op| resolve(doc, op)) else {
                continue;
            };
            let name = op
                .get("operationId")
                .and_then(Value::as_str)
                .map(sanitize)
                .unwrap_or_else(|| sanitize(&format!("{method}_{}", path.trim_matches('/'))));
            let description = ["summary", "description"]
                .iter()
                .find_map(|k| op.get(*k).and_then(Value::as_str))
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{} {path}", method.to_ascii_uppercase()));
            let mut properties = Map::new();
            let mut required = BTreeSet::new();
            let mut query = Vec::new();
            let op_params = op
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for param in shared_params.iter().chain(&op_params) {
                let param = resolve(doc, param);
                let (Some(pname), Some(location)) = (
                    param.get("name").and_then(Value::as_str),
                    param.get("in").and_then(Value::as_str),
                ) else {
                    continue;
                };
                if location != "path" && location != "query" {
                    continue;
                }
                let mut schema = param
                    .get("schema")
                    .map(|s| inline_refs(doc, s))
                    .unwrap_or(json!({}));
                if let (Some(d), Some(obj)) = (param.get("description"), schema.as_object_mut()) {
                    obj.entry("description").or_insert(d.clone());
                }
                properties.insert(pname.to_owned(), schema);
                if location == "path" || param.get("required") == Some(&Value::Bool(true)) {
                    required.insert(pname.to_owned());
                }
                if location == "query" {
                    query.push(pname.to_owned());
                }
            }
            let mut body = BodyMode::Json;
            if let Some(request_body) = op.get("requestBody").map(|b| resolve(doc, b)) {
                let content = request_body.get("content").and_then(Value::as_object);
                let pick = |ct: &str| content.and_then(|c| c.get(ct)).and_then(|m| m.get("schema"));
                let body_required = request_body.get("required") == Some(&Value::Bool(true));
                let (mode, schema) = match (
                    pick("application/json"),
                    pick("application/x-www-form-urlencoded"),
                ) {
                    (Some(s), _) => (BodyMode::Json, Some(inline_refs(doc, s))),
                    (None, Some(s)) => (BodyMode::Form, Some(inline_refs(doc, s))),
                    (None, None) => (BodyMode::Raw, None),
                };
                body = mode;
                match schema
                    .as_ref()
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object)
                {
                    Some(props) => {
                        for (k, v) in props {
                            properties.entry(k.clone()).or_insert(v.clone());
                        }
                        let req = schema
                            .as_ref()
                            .and_then(|s| s.get("required"))
                            .and_then(Value::as_array);
                        required.extend(
                            req.into_iter()
                                .flatten()
                                .filter_map(Value::as_str)
                                .map(str::to_owned),
                        );
                    }
                    None => {
                        // A non-object body: the model supplies it whole as `body`.
                        body = BodyMode::Raw;
                        properties.insert(
                            "body".into(),
                            json!({"type": "string", "description": "Request body"}),
                        );
                        if body_required {
                            required.insert("body".into());
                        }
                    }
                }
            }
            let mut schema = json!({"type": "object", "properties": properties});
            if !required.is_empty() {
                schema["required"] = json!(required);
            }
            tools.push(http_tool(HttpToolSpec {
                name,
                description,
                method: method.to_ascii_uppercase(),
                url: format!("{base}{path}"),
                headers: options.headers.clone(),
                query,
                body,
                input_schema: Some(schema),
                timeout: None,
                result_mode: ResultMode::Text,
            }));
        }
    }
    Ok(tools)
}

/// Follows a local `$ref` (`#/components/...`) at the top of `v`, if any.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    let mut v = v;
    for _ in 0..16 {
        match v
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            Some(pointer) => match doc.pointer(pointer) {
                Some(target) => v = target,
                None => break,
            },
            None => break,
        }
    }
    v
}

/// The most nodes one inlined schema may hold. Depth alone does not bound it: a schema
/// using a `$ref` four times at each of sixteen levels would be four billion copies.
const MAX_INLINED_NODES: usize = 10_000;

/// A copy of schema `v` with local `$ref`s inlined, bounded in depth (so cycles end) and in
/// size (past [`MAX_INLINED_NODES`] a subschema becomes `{}`).
fn inline_refs(doc: &Value, v: &Value) -> Value {
    let mut budget = MAX_INLINED_NODES;
    let schema = inline(doc, v, 0, &mut budget);
    if budget == 0 {
        tracing::warn!(
            "an OpenAPI schema inlines to over {MAX_INLINED_NODES} nodes; the rest is left as {{}}"
        );
    }
    schema
}

fn inline(doc: &Value, v: &Value, depth: usize, budget: &mut usize) -> Value {
    if depth > 16 || *budget == 0 {
        return json!({});
    }
    *budget -= 1;
    match resolve(doc, v) {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "$ref")
                .map(|(k, v)| (k.clone(), inline(doc, v, depth + 1, budget)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| inline(doc, v, depth + 1, budget)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_expansion_and_encoding() {
        // SAFETY: test-only, no other thread of this test binary reads this variable.
        unsafe { std::env::set_var("TOOLNEXUS_HTTP_UNIT", "s3cret") };
        assert_eq!(expand_env("Bearer ${TOOLNEXUS_HTTP_UNIT}"), "Bearer s3cret");
        assert_eq!(
            expand_env("${TOOLNEXUS_NOT_SET_X}|${bad-name}|$x"),
            "|${bad-name}|$x"
        );
        assert_eq!(percent_encode("a b/é", false), "a%20b%2F%C3%A9");
        assert_eq!(percent_encode("a b", true), "a+b");
    }

    #[test]
    fn debug_redacts_header_values() {
        let spec = HttpToolSpec {
            headers: BTreeMap::from([("Authorization".into(), "Bearer hunter2".into())]),
            ..HttpToolSpec::new("t", "GET", "http://x")
        };
        let dbg = format!("{spec:?}");
        assert!(dbg.contains("Authorization") && !dbg.contains("hunter2"), "{dbg}");
    }

    #[test]
    fn placeholders_query_and_body() {
        let spec = HttpToolSpec {
            query: vec!["q".into()],
            ..HttpToolSpec::new("t", "post", "http://h/{id}/x/{nope}?a=1")
        };
        let args = json!({"id": "a/b", "q": "x y", "n": 1, "s": "t"})
            .as_object()
            .unwrap()
            .clone();
        let p = prepare(&spec, args).unwrap();
        assert_eq!(p.url, "http://h/a%2Fb/x/?a=1&q=x+y");
        assert_eq!(p.body.as_deref(), Some(r#"{"n":1,"s":"t"}"#));
        assert_eq!(
            p.headers,
            [("Content-Type".to_string(), "application/json".to_string())]
        );
        assert!(prepare(&HttpToolSpec::new("t", "BAD METHOD", "http://h"), Map::new()).is_err());
    }
}
