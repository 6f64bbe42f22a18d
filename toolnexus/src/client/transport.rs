//! The injectable HTTP seam for LLM requests (SPEC §8 Gap 2). The loop only ever POSTs a
//! JSON body and reads a status, headers and a byte stream back, so that is the whole trait:
//! a test double, a recording proxy or an mTLS client implements one method.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};

/// One LLM request: always a `POST` of a JSON body.
#[derive(Clone)]
pub struct HttpRequest {
    /// The full endpoint URL.
    pub url: String,
    /// Request headers, auth included. Never logged (see the `Debug` impl).
    pub headers: Vec<(String, String)>,
    /// The compact JSON body.
    pub body: Bytes,
}

impl HttpRequest {
    /// The body parsed back into JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values carry the API key; only their names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &names)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A response: status, headers, and the body as a byte stream (read whole for a JSON
/// reply, incrementally for SSE).
pub struct HttpResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (names as sent; look them up with [`HttpResponse::header`]).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: BoxStream<'static, Result<Bytes, TransportError>>,
}

impl HttpResponse {
    /// A response whose whole body is already in hand.
    pub fn new(status: u16, headers: Vec<(String, String)>, body: impl Into<Bytes>) -> Self {
        let body: Bytes = body.into();
        Self {
            status,
            headers,
            body: stream::once(async move { Ok(body) }).boxed(),
        }
    }

    /// A `200` JSON response.
    pub fn json(value: &serde_json::Value) -> Self {
        Self::new(
            200,
            vec![("content-type".into(), "application/json".into())],
            value.to_string(),
        )
    }

    /// The first header named `name`, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The same response whose body fails with [`TransportError::read_timeout`] when no
    /// next chunk arrives within `timeout`.
    pub(crate) fn with_read_timeout(self, timeout: Duration) -> Self {
        let body = stream::unfold(Some(self.body), move |body| async move {
            let mut body = body?;
            match tokio::time::timeout(timeout, body.next()).await {
                Ok(Some(chunk)) => Some((chunk, Some(body))),
                Ok(None) => None,
                Err(_) => Some((Err(TransportError::read_timeout(timeout)), None)),
            }
        })
        .boxed();
        Self { body, ..self }
    }

    /// Read the whole body.
    pub async fn bytes(self) -> Result<Bytes, TransportError> {
        let mut body = self.body;
        let mut out = Vec::new();
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk?);
        }
        Ok(out.into())
    }
}

impl fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// A request that produced no HTTP response (connect refused, reset, a broken body).
///
/// ```
/// use std::error::Error as _;
/// use toolnexus::client::TransportError;
///
/// let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
/// let e = TransportError::network("request failed: connection refused").with_source(io);
/// assert!(e.retryable);
/// assert_eq!(e.source().unwrap().to_string(), "connection refused");
/// ```
#[derive(Clone, thiserror::Error)]
#[error("{message}")]
pub struct TransportError {
    /// What went wrong, causes included (what a log line or a model reads).
    pub message: String,
    /// Whether another attempt may succeed (network errors are; an in-process model's
    /// own failure is not).
    pub retryable: bool,
    /// The underlying error, for a caller walking the chain.
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    /// Set when the model went silent for the read timeout (see [`Self::read_timeout`]).
    silent_for: Option<Duration>,
}

crate::debug_as_display!(TransportError);

impl TransportError {
    /// A retryable network failure.
    pub fn network(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: true,
            source: None,
            silent_for: None,
        }
    }

    /// A failure another attempt cannot fix.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: false,
            source: None,
            silent_for: None,
        }
    }

    /// The model sent nothing for `after` — no response, or no next chunk of one (retryable;
    /// after the retries it is [`ClientError::ReadTimeout`](super::ClientError::ReadTimeout)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolnexus::client::TransportError;
    ///
    /// let e = TransportError::read_timeout(Duration::from_secs(2));
    /// assert_eq!(e.silent_for(), Some(Duration::from_secs(2)));
    /// assert_eq!(e.to_string(), "the model sent nothing for 2000ms (read timeout)");
    /// ```
    pub fn read_timeout(after: Duration) -> Self {
        Self {
            message: format!(
                "the model sent nothing for {}ms (read timeout)",
                after.as_millis()
            ),
            retryable: true,
            source: None,
            silent_for: Some(after),
        }
    }

    /// How long the model was silent, when this is a read timeout.
    pub fn silent_for(&self) -> Option<Duration> {
        self.silent_for
    }

    /// The same failure, with the error that caused it as its [`source`](std::error::Error::source).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }
}

/// How the client talks HTTP to the model. Implement it to proxy, record/replay or stub
/// the LLM path; every retry goes through it too.
pub trait HttpTransport: Send + Sync {
    /// POST `request` and return the response (any status; non-2xx is the caller's job).
    fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>>;

    /// GET `request.url` (its body is empty) — only [`Client::list_models`](super::Client::list_models)
    /// uses it. The default refuses, so a transport that only POSTs need not care.
    fn get(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
        let _ = request;
        Box::pin(async {
            Err(TransportError::fatal(
                "this transport does not support GET (list_models)",
            ))
        })
    }
}

/// A transport from an async closure — the shape the seeds' mock `http-client` has.
///
/// ```
/// use toolnexus::client::transport::{from_fn, HttpResponse};
/// let t = from_fn(|req| async move {
///     assert!(req.url.ends_with("/chat/completions"));
///     Ok(HttpResponse::json(&serde_json::json!({"choices": []})))
/// });
/// # let _ = t;
/// ```
pub fn from_fn<F, Fut>(f: F) -> Arc<dyn HttpTransport>
where
    F: Fn(HttpRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HttpResponse, TransportError>> + Send + 'static,
{
    struct FnTransport<F>(F);
    impl<F, Fut> HttpTransport for FnTransport<F>
    where
        F: Fn(HttpRequest) -> Fut + Send + Sync,
        Fut: Future<Output = Result<HttpResponse, TransportError>> + Send + 'static,
    {
        fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
            Box::pin((self.0)(request))
        }
    }
    Arc::new(FnTransport(f))
}

/// The default transport: one pooled `reqwest` client with a connect timeout. There is no
/// per-request total timeout here — the run deadline bounds the whole request instead, and
/// dropping the future aborts it.
pub struct ReqwestTransport {
    client: reqwest::Client,
    /// The last URL posted to, parsed: a client posts to one endpoint, and parsing it
    /// again is ~7 K instructions a request.
    endpoint: Mutex<Option<(String, reqwest::Url)>>,
}

impl ReqwestTransport {
    /// A transport whose connections must be established within `connect_timeout`.
    pub fn new(connect_timeout: Duration) -> Self {
        let client = crate::net::client_builder()
            .connect_timeout(connect_timeout)
            .build()
            .unwrap_or_default();
        Self {
            client,
            endpoint: Mutex::default(),
        }
    }

    /// `url` parsed, from the cache when it is the last one; `None` when it does not
    /// parse, so reqwest reports that the way it reports every other bad request.
    fn endpoint(&self, url: &str) -> Option<reqwest::Url> {
        let mut last = self.endpoint.lock().unwrap_or_else(|e| e.into_inner());
        match &*last {
            Some((raw, parsed)) if raw == url => Some(parsed.clone()),
            _ => {
                let parsed = reqwest::Url::parse(url).ok()?;
                *last = Some((url.to_owned(), parsed.clone()));
                Some(parsed)
            }
        }
    }
}

impl Default for ReqwestTransport {
    fn default() -> Self {
        Self::new(Duration::from_secs(10))
    }
}

impl HttpTransport for ReqwestTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
        let builder = match self.endpoint(&request.url) {
            Some(url) => self.client.post(url),
            None => self.client.post(&request.url),
        };
        self.send(builder, request)
    }

    fn get(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
        let builder = self.client.get(&request.url);
        self.send(builder, request)
    }
}

impl ReqwestTransport {
    fn send(
        &self,
        builder: reqwest::RequestBuilder,
        request: HttpRequest,
    ) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            let mut builder = if request.body.is_empty() {
                builder
            } else {
                builder.body(request.body)
            };
            for (k, v) in &request.headers {
                builder = builder.header(k, v);
            }
            // reqwest's error Display names the URL (its query values hidden: a `?key=`),
            // never header values.
            let resp = builder.send().await.map_err(|mut e| {
                if let Some(url) = e.url_mut() {
                    super::keys::redact_query(url);
                }
                let hint = if e.is_connect() {
                    " (is the model server running, and is base_url right?)"
                } else {
                    ""
                };
                TransportError::network(format!("request failed: {}{hint}", crate::net::error_chain(&e)))
                    .with_source(e)
            })?;
            let status = resp.status().as_u16();
            let headers = resp
                .headers()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect();
            let body = resp
                .bytes_stream()
                .map(|r| {
                    r.map_err(|mut e| {
                        if let Some(url) = e.url_mut() {
                            super::keys::redact_query(url);
                        }
                        TransportError::network(format!(
                            "reading the response failed: {}",
                            crate::net::error_chain(&e)
                        ))
                        .with_source(e)
                    })
                })
                .boxed();
            Ok(HttpResponse {
                status,
                headers,
                body,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_cache_follows_the_url() {
        let t = ReqwestTransport::default();
        let at = |url: &str| t.endpoint(url).map(|u| u.to_string());
        assert_eq!(
            at("http://127.0.0.1:9/v1/chat/completions").as_deref(),
            Some("http://127.0.0.1:9/v1/chat/completions")
        );
        assert_eq!(
            at("http://127.0.0.1:9/v1/chat/completions").as_deref(),
            Some("http://127.0.0.1:9/v1/chat/completions")
        );
        assert_eq!(
            at("http://127.0.0.1:9/v1/messages").as_deref(),
            Some("http://127.0.0.1:9/v1/messages")
        );
        assert_eq!(at("not a url"), None);
        assert_eq!(
            at("http://127.0.0.1:9/v1/messages").as_deref(),
            Some("http://127.0.0.1:9/v1/messages")
        );
    }
}
