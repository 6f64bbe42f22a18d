//! `webfetch`: HTTP GET a URL and return the body as markdown (the default: HTML converted
//! with `htmd`, or, without the `markdown` feature, stripped of its tags and reported as
//! `text`), plain text, or raw HTML. A non-2xx status is an `HTTP <status>` error.

use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use schemars::JsonSchema;
use serde_json::Value;

use super::args::Args;
use super::{builtin, input_schema};
use crate::context::TimeoutUnit;
use crate::result::ToolResult;
use crate::tool::Tool;

/// Allowed when the call gives no `timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most body the tool reads; a larger response is an error, not a truncation.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// `webfetch`'s arguments.
#[derive(JsonSchema)]
struct FetchArgs {
    /// URL to fetch
    url: String,
    /// Response format (default markdown)
    format: Option<Format>,
    /// Timeout in seconds (default 30)
    #[schemars(with = "Option<f64>")]
    timeout: Option<Duration>,
}

/// What the body comes back as.
#[derive(Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum Format {
    Text,
    Markdown,
    Html,
}

impl Format {
    const ALL: [Format; 3] = [Format::Text, Format::Markdown, Format::Html];

    fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
    }
}

impl FetchArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("webfetch", args)?;
        let url = a.str("url")?.to_owned();
        let format =
            match a.opt_str("format")? {
                None => None,
                Some(f) => Some(Format::ALL.into_iter().find(|k| k.as_str() == f).ok_or_else(|| {
                    format!("webfetch: format must be one of text, markdown, html, got {f:?}")
                })?),
            };
        Ok(Self {
            url,
            format,
            timeout: a.opt_timeout("timeout", TimeoutUnit::Secs)?,
        })
    }
}

pub(super) fn tool() -> Tool {
    builtin(
        "webfetch",
        "HTTP GET a URL and return its body as text, markdown, or html.",
        input_schema::<FetchArgs>(),
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
    let args = FetchArgs::parse(&args)?;
    let url = args.url.as_str();
    let format = args.format.unwrap_or(Format::Markdown);
    let timeout = args.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let parsed = url::Url::parse(url).map_err(|e| format!("webfetch: invalid URL {url}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "webfetch: only http and https URLs can be fetched, got {url}"
        ));
    }
    let fetch = async {
        let resp = client()?
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
        let body = crate::net::read_capped(resp, MAX_BODY_BYTES)
            .await
            .map_err(|e| match e {
                crate::net::BodyError::Transport(e) => format!(
                    "webfetch: reading the body of {url} failed: {}",
                    crate::net::error_chain(&e)
                ),
                crate::net::BodyError::TooLarge => {
                    format!("webfetch: the body of {url} exceeds the {MAX_BODY_BYTES}-byte limit")
                }
            })?;
        let (output, format) = render(&String::from_utf8_lossy(&body), format, is_html)
            .map_err(|e| format!("webfetch: cannot convert the HTML of {url} to markdown: {e}"))?;
        Ok(ToolResult::success(output)
            .with_meta("status", status)
            .with_meta("format", format.as_str()))
    };
    tokio::time::timeout(timeout, fetch).await.unwrap_or_else(|_| {
        Err(format!(
            "webfetch: {url} timed out after {}s",
            timeout.as_secs_f64()
        ))
    })
}

/// The body in the asked format, and the format it is really in: without the `markdown`
/// feature an HTML page asked for as markdown comes back as text (its tags stripped).
fn render(body: &str, format: Format, is_html: bool) -> std::io::Result<(String, Format)> {
    Ok(match format {
        Format::Html => (body.to_owned(), format),
        Format::Text => (strip_html(body), format),
        #[cfg(feature = "markdown")]
        Format::Markdown if is_html => (html_to_markdown(body)?, format),
        #[cfg(not(feature = "markdown"))]
        Format::Markdown if is_html => (strip_html(body), Format::Text),
        Format::Markdown => (body.to_owned(), format),
    })
}

/// HTML → Markdown for a model: the page's content only (no `<head>`, scripts or styles),
/// ATX headings, `-` bullets, inline links.
#[cfg(feature = "markdown")]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The page of tests/builtins.rs's webfetch server.
    const PAGE: &str = "<html><head><title>T</title><style>p{color:red}</style>\
        <script>alert(1)</script></head>\n<body><h1>Hello</h1>\n\
        <p>Some <b>bold</b> and a <a href=\"/x\">link</a>.</p>   \n\n\n\n\
        <ul><li>one</li><li>two</li></ul></body></html>";

    fn rendered(format: Format, is_html: bool) -> (String, &'static str) {
        let (text, format) = render(PAGE, format, is_html).unwrap();
        (text, format.as_str())
    }

    #[test]
    fn html_and_text_do_not_depend_on_the_markdown_feature() {
        assert_eq!(rendered(Format::Html, true), (PAGE.to_owned(), "html"));
        let text = ("T\nHello\nSome bold and a link.\n\nonetwo".to_owned(), "text");
        assert_eq!(rendered(Format::Text, true), text);
        // A body that is not HTML is returned as it came.
        assert_eq!(rendered(Format::Markdown, false), (PAGE.to_owned(), "markdown"));
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn markdown_of_html_is_converted() {
        let md = "# Hello\n\nSome **bold** and a [link](/x).\n\n- one\n- two";
        assert_eq!(rendered(Format::Markdown, true), (md.to_owned(), "markdown"));
    }

    #[cfg(not(feature = "markdown"))]
    #[test]
    fn without_the_markdown_feature_html_comes_back_as_text() {
        let text = "T\nHello\nSome bold and a link.\n\nonetwo";
        assert_eq!(rendered(Format::Markdown, true), (text.to_owned(), "text"));
    }
}
