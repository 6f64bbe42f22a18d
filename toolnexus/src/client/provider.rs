//! One provider call (SPEC §8): the request body shaped (`request_params`, `body_transform`),
//! POSTed with retries and backoff ([`resilience`](super::resilience)), the answer read whole
//! (JSON) or as it streams (SSE), and the `llm` metric of the call. No loop, no hooks: the
//! loop and `translate` both call the model through here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use super::cache::PromptCache;
use super::error::DecodeError;
use super::event::Emitter;
use super::keys::{self, Redactor};
use super::metrics::Sink;
use super::resilience::{self, ErrorInfo, OnError};
use super::transport::{HttpRequest, HttpResponse, HttpTransport, TransportError};
use super::wire::{self, Style, Turn, Usage};
use super::{ClientError, gemini, sse};

/// Rewrites each fully assembled request body just before it is sent.
pub type BodyTransform = Arc<dyn Fn(Value) -> Value + Send + Sync>;

/// A provider endpoint and how to call it.
pub(crate) struct Provider {
    pub(super) style: Style,
    pub(super) endpoint: String,
    /// The base URL as configured (the model list is found from it).
    pub(super) base: url::Url,
    /// Auth and extra headers, in send order.
    pub(super) headers: Vec<(String, String)>,
    /// Keeps the key (and the base URL's query values) out of every echoed error.
    pub(super) redactor: Redactor,
    pub(super) transport: Arc<dyn HttpTransport>,
    pub(super) retries: u32,
    pub(super) retry_base: Duration,
    /// The longest silence before a response starts, and between two chunks of it.
    pub(super) read_timeout: Duration,
    /// The longest `Retry-After` waited; a longer one ends the retries.
    pub(super) max_retry_after: Duration,
    pub(super) on_error: Option<OnError>,
    pub(super) request_params: Map<String, Value>,
    pub(super) body_transform: Option<BodyTransform>,
    pub(super) prompt_cache: Option<PromptCache>,
}

#[derive(Clone, Copy)]
enum Method {
    Post,
    Get,
}

/// Why one HTTP attempt failed.
enum Failure {
    Status {
        status: u16,
        body: Vec<u8>,
        retry_after: Option<String>,
    },
    Net(TransportError),
}

impl Provider {
    /// Where a call for `model` goes: the endpoint, or for Gemini the model's own method.
    fn url_for(&self, model: &str, stream: bool) -> String {
        match self.style {
            Style::Gemini => gemini::endpoint(&self.endpoint, model, stream),
            Style::OpenAi | Style::Anthropic => self.endpoint.clone(),
        }
    }

    /// The endpoint as it may be shown: query values (`?key=…`) replaced.
    pub(crate) fn shown_endpoint(&self) -> String {
        match url::Url::parse(&self.endpoint) {
            Ok(mut u) => {
                keys::redact_query(&mut u);
                u.into()
            }
            Err(_) => self.redactor.redact(&self.endpoint),
        }
    }

    /// The bytes to send. Gap 1: `request_params` shallow-merged (they win), the prompt
    /// cache marks, then `body_transform` — all work on a `Value`, so only a client that
    /// sets one pays for building it; every other body is serialized straight from the
    /// transcript.
    pub(crate) fn encode(&self, body: &impl Serialize) -> Bytes {
        if self.request_params.is_empty() && self.body_transform.is_none() && self.prompt_cache.is_none() {
            return serde_json::to_vec(body).unwrap_or_default().into();
        }
        let mut body = serde_json::to_value(body).unwrap_or_default();
        if let Value::Object(map) = &mut body {
            for (k, v) in &self.request_params {
                map.insert(k.clone(), v.clone());
            }
            if let Some(cache) = &self.prompt_cache {
                cache.apply(self.style, map);
            }
        }
        if let Some(f) = &self.body_transform {
            body = f(body);
        }
        serde_json::to_vec(&body).unwrap_or_default().into()
    }

    /// One call answered whole: the decoded JSON response.
    pub(crate) async fn complete(
        &self,
        body: Bytes,
        model: &str,
        metrics: Sink<'_>,
    ) -> Result<Value, ClientError> {
        let started = Instant::now();
        let result: Result<Value, ClientError> = async {
            let resp = self.post_retrying(self.url_for(model, false), body, true).await?;
            let bytes = resp.bytes().await?;
            serde_json::from_slice::<Value>(&bytes).map_err(|e| DecodeError::json(e, &bytes).into())
        }
        .await;
        let usage = result
            .as_ref()
            .map(|v| Usage::of_response(self.style, v))
            .unwrap_or_default();
        metrics.llm(model, result.is_ok(), usage, started);
        result
    }

    /// One call answered as an event stream (the connect is retried like any call): the turn
    /// assembled from it, its text deltas handed to `emitter` as they arrive.
    pub(crate) async fn stream(
        &self,
        body: Bytes,
        model: &str,
        emitter: &Emitter,
        metrics: Sink<'_>,
    ) -> Result<Turn, ClientError> {
        let started = Instant::now();
        let result = async {
            let resp = self.post_retrying(self.url_for(model, true), body, false).await?;
            sse::read_turn(self.style, resp, emitter).await
        }
        .await;
        let usage = result.as_ref().map(|t| t.usage).unwrap_or_default();
        metrics.llm(model, result.is_ok(), usage, started);
        result
    }

    /// POST with retries on 429/5xx/network (or whatever `on_error` says, bounded by
    /// `retries`). `whole` reads the body inside the attempt, so a broken body retries too
    /// (the response then carries it in memory).
    async fn post_retrying(
        &self,
        url: String,
        body: Bytes,
        whole: bool,
    ) -> Result<HttpResponse, ClientError> {
        let request = HttpRequest {
            url,
            headers: self.headers.clone(),
            body,
        };
        self.retrying(request, Method::Post, whole).await
    }

    /// One GET answered with JSON, retried like any call (the model list).
    pub(crate) async fn get_json(&self, url: String) -> Result<Value, ClientError> {
        let request = HttpRequest {
            url,
            headers: self.headers.clone(),
            body: Bytes::new(),
        };
        let resp = self.retrying(request, Method::Get, true).await?;
        let bytes = resp.bytes().await?;
        serde_json::from_slice::<Value>(&bytes).map_err(|e| DecodeError::json(e, &bytes).into())
    }

    async fn retrying(
        &self,
        request: HttpRequest,
        method: Method,
        whole: bool,
    ) -> Result<HttpResponse, ClientError> {
        resilience::with_retries(self.retries, self.on_error.as_ref(), |attempt| {
            let request = request.clone();
            async move {
                let reply = self.attempt(request, method, whole).await;
                reply.map_err(|failure| self.classify(failure, attempt))
            }
        })
        .await
    }

    /// How a failed attempt is retried: its view for `on_error`, the wait, the error.
    fn classify(&self, failure: Failure, attempt: u32) -> (ErrorInfo, Duration, ClientError) {
        match failure {
            Failure::Status {
                status,
                body,
                retry_after,
            } => {
                let asked = retry_after.as_deref().and_then(resilience::parse_retry_after);
                // Honoured up to the cap: a provider asking for longer is not retried by
                // default, and never waited on longer than the cap.
                let within_cap = asked.is_none_or(|d| d <= self.max_retry_after);
                let wait = asked
                    .map(|d| d.min(self.max_retry_after))
                    .unwrap_or_else(|| resilience::backoff(self.retry_base, attempt));
                let info = ErrorInfo {
                    status: Some(status),
                    error: None,
                    attempt,
                    retryable: resilience::is_retryable_status(status) && within_cap,
                };
                let error = ClientError::Provider {
                    status,
                    message: wire::provider_message(&body, &self.redactor),
                    retry_after,
                };
                (info, wait, error)
            }
            Failure::Net(mut e) => {
                e.message = self.redactor.redact(&e.message);
                let info = ErrorInfo {
                    status: None,
                    error: Some(e.message.clone()),
                    attempt,
                    retryable: e.retryable,
                };
                let wait = resilience::backoff(self.retry_base, attempt);
                (info, wait, e.into())
            }
        }
    }

    async fn attempt(
        &self,
        request: HttpRequest,
        method: Method,
        whole: bool,
    ) -> Result<HttpResponse, Failure> {
        let send = match method {
            Method::Post => self.transport.post(request),
            Method::Get => self.transport.get(request),
        };
        let resp = match tokio::time::timeout(self.read_timeout, send).await {
            Ok(resp) => resp.map_err(Failure::Net)?,
            Err(_) => return Err(Failure::Net(TransportError::read_timeout(self.read_timeout))),
        };
        let resp = resp.with_read_timeout(self.read_timeout);
        if (200..300).contains(&resp.status) {
            if !whole {
                return Ok(resp);
            }
            let (status, headers) = (resp.status, resp.headers.clone());
            let body = resp.bytes().await.map_err(Failure::Net)?;
            return Ok(HttpResponse::new(status, headers, body));
        }
        let status = resp.status;
        let retry_after = resp.header("retry-after").map(str::to_owned);
        let body = resp.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
        Err(Failure::Status {
            status,
            body,
            retry_after,
        })
    }
}
