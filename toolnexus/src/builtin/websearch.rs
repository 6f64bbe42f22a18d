//! `websearch`, the opt-in extra [`Extra::Websearch`](super::Extra): a query sent to the
//! search backend the host configured ([`WebSearchConfig`]: Brave, Tavily or SearXNG JSON
//! APIs), the hits rendered as a numbered list. Name, schema and rendering are the upstream
//! crate's.
//!
//! Bounded: at most [`MAX_RESULTS`] hits, each title and snippet cut to a few hundred
//! characters, a reply of at most 1 MiB, 30 seconds per call. The API key is read from the
//! environment variable the config names and sent only to the configured endpoint: redirects
//! are not followed (a redirect would carry a custom key header to another host), and a
//! backend's usual variable (`BRAVE_API_KEY`, `TAVILY_API_KEY`) is used only when the endpoint
//! is that backend's own host.

use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::args::Args;
use super::{builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// The most hits one call returns, whatever `limit` asks.
pub(super) const MAX_RESULTS: usize = 20;

/// Hits returned when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 5;

/// The longest title and snippet shown, in characters.
const MAX_TITLE_CHARS: usize = 200;
const MAX_SNIPPET_CHARS: usize = 500;

/// The most reply the tool reads.
const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// The time one search may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Which search API the backend speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// Brave Search's web search API: `GET ?q=&count=`, key in `X-Subscription-Token`.
    Brave,
    /// Tavily's search API: `POST {"query", "max_results"}`, key as a bearer token.
    Tavily,
    /// A SearXNG instance's JSON output: `GET ?q=&format=json`, a key (optional) as a
    /// bearer token.
    Searxng,
}

impl SearchBackend {
    /// As the config spells it.
    fn name(self) -> &'static str {
        match self {
            SearchBackend::Brave => "brave",
            SearchBackend::Tavily => "tavily",
            SearchBackend::Searxng => "searxng",
        }
    }

    /// The backend's public endpoint and the variable its key usually lives in; SearXNG is
    /// self-hosted and has neither.
    fn defaults(self) -> Option<(&'static str, &'static str)> {
        match self {
            SearchBackend::Brave => Some(("https://api.search.brave.com/res/v1/web/search", "BRAVE_API_KEY")),
            SearchBackend::Tavily => Some(("https://api.tavily.com/search", "TAVILY_API_KEY")),
            SearchBackend::Searxng => None,
        }
    }
}

/// Where `websearch` sends queries: the `websearch` object of the config's `builtins` block,
/// e.g. `{"backend": "searxng", "url": "http://127.0.0.1:8888/search"}` or
/// `{"backend": "brave"}` (key from `BRAVE_API_KEY`).
///
/// ```
/// use toolnexus::builtin::{BuiltinsConfig, Extra, SearchBackend, WebSearchConfig};
///
/// let config: BuiltinsConfig = serde_json::from_str(
///     r#"{"extras": ["websearch"], "websearch": {"backend": "tavily", "api_key_env": "MY_TAVILY_KEY"}}"#,
/// )
/// .unwrap();
/// assert_eq!(
///     config,
///     BuiltinsConfig::default().with_extra(Extra::Websearch).with_websearch(WebSearchConfig {
///         backend: SearchBackend::Tavily,
///         url: None,
///         api_key_env: Some("MY_TAVILY_KEY".into()),
///     })
/// );
/// assert!(config.check().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearchConfig {
    /// The API the endpoint speaks.
    pub backend: SearchBackend,
    /// The endpoint; `None`: the backend's public one (SearXNG has none and needs this).
    #[serde(default)]
    pub url: Option<String>,
    /// The environment variable holding the API key (`apiKeyEnv` is accepted too); `None`:
    /// the backend's usual one, used only with its own endpoint. SearXNG sends a key only
    /// when this names one.
    #[serde(default, alias = "apiKeyEnv")]
    pub api_key_env: Option<String>,
}

impl WebSearchConfig {
    /// The endpoint, checked: an `http`/`https` URL.
    pub(super) fn endpoint(&self) -> Result<url::Url, String> {
        let given = match (&self.url, self.backend.defaults()) {
            (Some(url), _) => url.as_str(),
            (None, Some((url, _))) => url,
            (None, None) => return Err("websearch.url is required for the searxng backend".into()),
        };
        let url = url::Url::parse(given).map_err(|e| format!("websearch.url {given:?} is not a URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("websearch.url must be http or https, got {given:?}"));
        }
        Ok(url)
    }

    /// The environment variable to take the key from for `endpoint`, if any: the one named,
    /// else the backend's usual one when `endpoint` is the backend's own host.
    fn key_env(&self, endpoint: &url::Url) -> Option<&str> {
        if let Some(name) = &self.api_key_env {
            return Some(name);
        }
        let (home, name) = self.backend.defaults()?;
        let home = url::Url::parse(home).ok()?;
        (endpoint.scheme() == "https" && endpoint.host_str() == home.host_str()).then_some(name)
    }

    /// The API key for `endpoint`, read with `env`: `Ok(None)` when none applies (SearXNG
    /// without a named variable), an error naming the variable when it is unset.
    fn key(
        &self,
        endpoint: &url::Url,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, String> {
        match (self.key_env(endpoint), self.backend) {
            (Some(name), _) => env(name)
                .filter(|k| !k.is_empty())
                .map(Some)
                .ok_or_else(|| format!("websearch: the API key variable {name} is not set")),
            (None, SearchBackend::Searxng) => Ok(None),
            (None, backend) => Err(format!(
                "websearch: the {} backend at {endpoint} needs websearch.api_key_env naming its key \
                 (its usual variable is used only with its own endpoint)",
                backend.name()
            )),
        }
    }
}

/// `websearch`'s arguments.
#[derive(JsonSchema)]
struct SearchArgs {
    /// The search query
    query: String,
    /// Maximum number of results (default 5)
    #[schemars(with = "Option<f64>")]
    limit: Option<usize>,
}

impl SearchArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("websearch", args)?;
        let query = a.str("query")?;
        if query.trim().is_empty() {
            return Err("websearch: query is required".into());
        }
        Ok(Self {
            query: query.to_owned(),
            limit: a.opt_count("limit")?,
        })
    }
}

/// One hit, as the result's `results` metadata lists it.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Hit {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    /// Brave's `description`, Tavily's and SearXNG's `content`.
    #[serde(default, alias = "description", alias = "content")]
    snippet: String,
}

/// Brave's reply: the web hits under `web.results`.
#[derive(Deserialize)]
struct BraveReply {
    #[serde(default)]
    web: Option<HitList>,
}

/// Tavily's and SearXNG's reply, and Brave's `web`.
#[derive(Deserialize)]
struct HitList {
    #[serde(default)]
    results: Vec<Hit>,
}

pub(super) fn tool(config: Option<WebSearchConfig>) -> Tool {
    builtin(
        "websearch",
        "Search the web. Returns numbered results with title, URL and snippet.",
        input_schema::<SearchArgs>(),
        move |args, _| run(config.clone(), args),
    )
}

/// One connection pool for every call; redirects are not followed (see the module docs).
fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(c) = CLIENT.get() {
        return Ok(c);
    }
    let built = crate::net::client_builder()
        .user_agent(concat!("toolnexus/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("websearch: cannot create an HTTP client: {e}"))?;
    Ok(CLIENT.get_or_init(|| built))
}

async fn run(config: Option<WebSearchConfig>, args: Value) -> Result<ToolResult, String> {
    let args = SearchArgs::parse(&args)?;
    let config = config.ok_or("websearch: no search backend is configured (builtins.websearch)")?;
    let endpoint = config.endpoint().map_err(|e| format!("websearch: {e}"))?;
    let key = config.key(&endpoint, |name| std::env::var(name).ok())?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_RESULTS);
    let host = endpoint.host_str().unwrap_or_default().to_owned();
    let mut hits = tokio::time::timeout(TIMEOUT, search(&config, endpoint, key, &args.query, limit))
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "websearch: {host} did not answer within {}s",
                TIMEOUT.as_secs()
            ))
        })?;
    hits.truncate(limit);
    Ok(render(hits))
}

/// Ask the backend; the hits it returned, unbounded in number (the caller truncates).
async fn search(
    config: &WebSearchConfig,
    endpoint: url::Url,
    key: Option<String>,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let host = endpoint.host_str().unwrap_or_default().to_owned();
    let request = match config.backend {
        SearchBackend::Brave => client()?
            .get(endpoint)
            .query(&[("q", query), ("count", &limit.to_string())])
            .header("X-Subscription-Token", key.unwrap_or_default()),
        SearchBackend::Tavily => client()?
            .post(endpoint)
            .json(&json!({"query": query, "max_results": limit}))
            .bearer_auth(key.unwrap_or_default()),
        SearchBackend::Searxng => {
            let request = client()?.get(endpoint).query(&[("q", query), ("format", "json")]);
            match key {
                Some(key) => request.bearer_auth(key),
                None => request,
            }
        }
    };
    let reply = request
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("websearch: cannot reach {host}: {}", crate::net::error_chain(&e)))?;
    let status = reply.status();
    let body = crate::net::read_capped(reply, MAX_REPLY_BYTES)
        .await
        .map_err(|e| match e {
            crate::net::BodyError::Transport(e) => format!(
                "websearch: reading the reply of {host} failed: {}",
                crate::net::error_chain(&e)
            ),
            crate::net::BodyError::TooLarge => {
                format!("websearch: the reply of {host} exceeds the {MAX_REPLY_BYTES}-byte limit")
            }
        })?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let detail = clip(text.trim(), MAX_TITLE_CHARS);
        let sep = if detail.is_empty() { "" } else { ": " };
        return Err(format!(
            "websearch: {host} answered HTTP {}{sep}{detail}",
            status.as_u16()
        ));
    }
    let unexpected =
        |e: serde_json::Error| format!("websearch: the reply of {host} is not the expected JSON: {e}");
    Ok(match config.backend {
        SearchBackend::Brave => {
            let reply: BraveReply = serde_json::from_slice(&body).map_err(unexpected)?;
            reply.web.map(|w| w.results).unwrap_or_default()
        }
        SearchBackend::Tavily | SearchBackend::Searxng => {
            serde_json::from_slice::<HitList>(&body)
                .map_err(unexpected)?
                .results
        }
    })
}

/// The numbered list: `N. title`, the URL and the snippet indented under it, hits separated
/// by a blank line; `count` and `results` in the metadata.
fn render(mut hits: Vec<Hit>) -> ToolResult {
    if hits.is_empty() {
        return ToolResult::success("No results.").with_meta("count", 0);
    }
    for hit in &mut hits {
        hit.title = clip(&plain(&hit.title), MAX_TITLE_CHARS);
        hit.snippet = clip(&plain(&hit.snippet), MAX_SNIPPET_CHARS);
    }
    let text = hits
        .iter()
        .enumerate()
        .map(|(i, hit)| {
            let mut entry = format!("{}. {}\n   {}", i + 1, hit.title, hit.url);
            if !hit.snippet.is_empty() {
                entry.push_str("\n   ");
                entry.push_str(&hit.snippet);
            }
            entry
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let count = hits.len();
    ToolResult::success(text)
        .with_meta("count", count)
        .with_meta("results", serde_json::to_value(&hits).unwrap_or_default())
}

/// `text` without HTML tags (Brave marks matches with `<strong>`) and with whitespace runs
/// collapsed, so each hit stays on its lines.
fn plain(text: &str) -> String {
    static TAG: OnceLock<Regex> = OnceLock::new();
    let tag = TAG.get_or_init(|| Regex::new(r"<[^>]*>").expect("a fixed, valid regex"));
    tag.replace_all(text, "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most `max` characters of `text`, `…` marking a cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(backend: SearchBackend, url: Option<&str>, env: Option<&str>) -> WebSearchConfig {
        WebSearchConfig {
            backend,
            url: url.map(str::to_owned),
            api_key_env: env.map(str::to_owned),
        }
    }

    /// An environment holding only `BRAVE_API_KEY` and `MINE`.
    fn env(name: &str) -> Option<String> {
        match name {
            "BRAVE_API_KEY" => Some("brave-key".into()),
            "MINE" => Some("my-key".into()),
            _ => None,
        }
    }

    #[test]
    fn a_backends_usual_key_goes_only_to_its_own_host() {
        let brave = config(SearchBackend::Brave, None, None);
        let home = brave.endpoint().unwrap();
        assert_eq!(home.as_str(), "https://api.search.brave.com/res/v1/web/search");
        assert_eq!(brave.key(&home, env).unwrap().as_deref(), Some("brave-key"));
        // Another endpoint, or the right host over plain http: not without a named variable.
        for url in [
            "https://search.example.com/brave",
            "http://api.search.brave.com/res/v1/web/search",
        ] {
            let elsewhere = config(SearchBackend::Brave, Some(url), None);
            let endpoint = elsewhere.endpoint().unwrap();
            assert_eq!(
                elsewhere.key(&endpoint, env).unwrap_err(),
                format!(
                    "websearch: the brave backend at {endpoint} needs websearch.api_key_env naming its key \
                     (its usual variable is used only with its own endpoint)"
                )
            );
        }
        let named = config(
            SearchBackend::Brave,
            Some("https://search.example.com/brave"),
            Some("MINE"),
        );
        assert_eq!(
            named.key(&named.endpoint().unwrap(), env).unwrap().as_deref(),
            Some("my-key")
        );
        let tavily = config(SearchBackend::Tavily, None, None);
        assert_eq!(
            tavily.key(&tavily.endpoint().unwrap(), env).unwrap_err(),
            "websearch: the API key variable TAVILY_API_KEY is not set"
        );
        let searx = config(SearchBackend::Searxng, Some("http://127.0.0.1:8888/search"), None);
        assert_eq!(searx.key(&searx.endpoint().unwrap(), env).unwrap(), None);
        assert_eq!(
            config(SearchBackend::Searxng, None, None).endpoint().unwrap_err(),
            "websearch.url is required for the searxng backend"
        );
        assert_eq!(
            config(SearchBackend::Searxng, Some("ftp://x/"), None)
                .endpoint()
                .unwrap_err(),
            r#"websearch.url must be http or https, got "ftp://x/""#
        );
    }

    #[test]
    fn hits_are_plain_and_clipped() {
        let long = "é".repeat(MAX_SNIPPET_CHARS + 5);
        let r = render(vec![
            Hit {
                title: "A <strong>b</strong>\n c".into(),
                url: "https://a/".into(),
                snippet: long,
            },
            Hit {
                title: "Two".into(),
                url: "https://b/".into(),
                snippet: String::new(),
            },
        ]);
        let want = format!(
            "1. A b c\n   https://a/\n   {}…\n\n2. Two\n   https://b/",
            "é".repeat(MAX_SNIPPET_CHARS)
        );
        assert_eq!(r.output, want);
        assert_eq!(r.metadata.unwrap()["count"], 2);
    }
}
