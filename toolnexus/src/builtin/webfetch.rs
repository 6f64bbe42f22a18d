//! `webfetch`: HTTP GET a URL and return the body as markdown (the default: HTML converted
//! with `htmd`), plain text, or raw HTML. A non-2xx status is an `HTTP <status>` error.

use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use serde_json::{Value, json};

use super::args::Args;
use super::builtin;
use crate::result::ToolResult;
use crate::tool::Tool;

/// Seconds allowed when the call gives no `timeout`.
const DEFAULT_TIMEOUT_S: f64 = 30.0;

/// The most body the tool reads; a larger response is an error, not a truncation.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

const FORMATS: [&str; 3] = ["text", "markdown", "html"];

pub(super) fn tool() -> Tool {
    builtin(
        "webfetch",
        "HTTP GET a URL and return its body as text, markdown, or html.",
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "URL to fetch"},
                "format": {
                    "type": "string",
                    "enum": ["text", "markdown", "html"],
                    "description": "Response format (default markdown)",
                },
                "timeout": {"type": "number", "description": "Timeout in seconds (default 30)"},
            },
            "required": ["url"],
            "additionalProperties": false,
        }),
        |args, _| run(args),
    )
}

/// One connection pool for every call.
fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(c) = CLIENT.get() {
        return Ok(c);
    }
    let built = crate::net::client_builder()
        .user_agent(concat!("toolnexus/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("webfetch: cannot create an HTTP client: {e}"))?;
    Ok(CLIENT.get_or_init(|| built))
}

async fn run(args: Value) -> Result<ToolResult, String> {
    let a = Args::new("webfetch", &args)?;
    let url = a.str("url")?;
    let format = a.opt_str("format")?.unwrap_or("markdown");
    if !FORMATS.contains(&format) {
        return Err(format!(
            "webfetch: format must be one of text, markdown, html, got {format:?}"
        ));
    }
    let timeout_s = a.opt_num("timeout")?.unwrap_or(DEFAULT_TIMEOUT_S);
    if timeout_s <= 0.0 || !timeout_s.is_finite() {
        return Err("webfetch: timeout must be a positive number of seconds".into());
    }
    let parsed = url::Url::parse(url).map_err(|e| format!("webfetch: invalid URL {url}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "webfetch: only http and https URLs can be fetched, got {url}"
        ));
    }
    let timeout = Duration::from_secs_f64(timeout_s);
    let fetch = async {
        let mut resp = client()?
            .get(parsed)
            .send()
            .await
            .map_err(|e| format!("webfetch: cannot fetch {url}: {}", crate::net::error_chain(&e)))?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            return Ok(ToolResult::failure(format!("HTTP {status}")).with_meta("status", status));
        }
        let is_html = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.to_ascii_lowercase().contains("html"));
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| {
            format!(
                "webfetch: reading the body of {url} failed: {}",
                crate::net::error_chain(&e)
            )
        })? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(format!(
                    "webfetch: the body of {url} exceeds the {MAX_BODY_BYTES}-byte limit"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let body = String::from_utf8_lossy(&body);
        let output = match format {
            "html" => body.into_owned(),
            "text" => strip_html(&body),
            _ if is_html => html_to_markdown(&body)
                .map_err(|e| format!("webfetch: cannot convert the HTML of {url} to markdown: {e}"))?,
            _ => body.into_owned(),
        };
        Ok(ToolResult::success(output)
            .with_meta("status", status)
            .with_meta("format", format))
    };
    tokio::time::timeout(timeout, fetch)
        .await
        .unwrap_or_else(|_| Err(format!("webfetch: {url} timed out after {timeout_s}s")))
}

/// HTML → Markdown for a model: the page's content only (no `<head>`, scripts or styles),
/// ATX headings, `-` bullets, inline links.
fn html_to_markdown(html: &str) -> std::io::Result<String> {
    let options = htmd::options::Options {
        bullet_list_marker: htmd::options::BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        ..Default::default()
    };
    htmd::HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(vec!["head", "script", "style", "noscript", "template"])
        .build()
        .convert(html)
}

/// Light HTML → text, exactly as the other ports do it: drop scripts, styles and tags,
/// trim spaces before newlines, collapse blank runs, trim the ends.
fn strip_html(html: &str) -> String {
    static RULES: OnceLock<[(Regex, &str); 5]> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("a fixed, valid regex");
        [
            (re(r"(?i)<script[\s\S]*?</script>"), ""),
            (re(r"(?i)<style[\s\S]*?</style>"), ""),
            (re(r"<[^>]+>"), ""),
            (re(r"[ \t]+\n"), "\n"),
            (re(r"\n{3,}"), "\n\n"),
        ]
    });
    let mut text = html.to_owned();
    for (re, with) in rules {
        text = re.replace_all(&text, *with).into_owned();
    }
    text.trim().to_owned()
}
