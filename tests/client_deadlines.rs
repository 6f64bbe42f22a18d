//! No endless waits (issue 14): a model that accepts and never answers, or stops mid-stream,
//! fails with a typed error after the read timeout; `Retry-After` is honoured up to a cap.
//! Every wait here is a short configured timeout; nothing asserts on elapsed time.

mod client_mock;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use client_mock::{Mock, Reply, bounded};
use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolnexus::Toolkit;
use toolnexus::client::{
    ClientError, DEFAULT_MAX_RETRY_AFTER, DEFAULT_READ_TIMEOUT, DEFAULT_TIMEOUT, RunOptions,
};

/// A server on 127.0.0.1 that reads each request, writes `head` (maybe nothing) and then
/// holds the connection open without another byte. Returns its base URL and how many
/// connections it accepted.
async fn silent_server(head: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let _ = sock.write_all(head.as_bytes()).await;
                // Hold the socket until the client gives up (the test ends the runtime).
                let _ = sock.read(&mut buf).await;
                std::future::pending::<()>().await;
            });
        }
    });
    (base, accepted)
}

const SHORT: Duration = Duration::from_millis(150);

#[tokio::test]
async fn a_model_that_accepts_and_never_answers_fails_with_a_read_timeout() {
    let (base, accepted) = silent_server("").await;
    for style in ["openai", "anthropic"] {
        let before = accepted.load(Ordering::SeqCst);
        let client = client_mock::client(style, &base)
            .read_timeout(SHORT)
            .retries(1)
            .build()
            .unwrap();
        let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
        assert!(matches!(err, ClientError::ReadTimeout(d) if d == SHORT), "{err}");
        assert_eq!(
            err.to_string(),
            "LLM read timeout: the model sent nothing for 150ms (raise the client's read_timeout for a slow model)"
        );
        // A silence is retried like any network failure: two attempts, two connections.
        assert_eq!(accepted.load(Ordering::SeqCst) - before, 2, "{style}");
    }
}

#[tokio::test]
async fn a_model_that_stops_mid_answer_fails_with_a_read_timeout() {
    // Headers and the start of a JSON body, then silence.
    let (base, _) = silent_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"choices\":",
    )
    .await;
    let client = client_mock::client("openai", &base)
        .read_timeout(SHORT)
        .retries(0)
        .build()
        .unwrap();
    let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
    assert!(matches!(err, ClientError::ReadTimeout(d) if d == SHORT), "{err}");

    // A stream that sends one delta and goes quiet: the delta arrives, then the error.
    let (base, _) = silent_server(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n\
         31\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\r\n",
    )
    .await;
    let client = client_mock::client("openai", &base)
        .read_timeout(SHORT)
        .retries(0)
        .build()
        .unwrap();
    let items: Vec<_> = bounded(client.stream("hi", RunOptions::default()).collect()).await;
    let texts: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            Ok(toolnexus::client::StreamEvent::Text { delta }) => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Hel"]);
    assert!(
        matches!(items.last(), Some(Err(ClientError::ReadTimeout(d))) if *d == SHORT),
        "{items:?}"
    );
}

#[tokio::test]
async fn the_whole_run_deadline_wins_over_a_longer_read_timeout() {
    let (base, accepted) = silent_server("").await;
    let client = client_mock::client("openai", &base)
        .timeout(SHORT)
        .read_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout(d) if d == SHORT), "{err}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[test]
fn the_defaults_are_the_documented_ones() {
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(600));
    assert_eq!(DEFAULT_READ_TIMEOUT, Duration::from_secs(180));
    assert_eq!(DEFAULT_MAX_RETRY_AFTER, Duration::from_secs(60));
}

#[tokio::test]
async fn retry_after_is_honoured_up_to_the_cap() {
    let ok = || Reply::json(client_mock::openai_text("ok"));
    // Within the cap: waited, then retried.
    let mock = Mock::start(vec![
        Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("Retry-After", "1"),
        ok(),
    ])
    .await;
    let client = client_mock::client("openai", &mock.base)
        .max_retry_after(Duration::from_secs(2))
        .build()
        .unwrap();
    let r = bounded(client.run("hi", &Toolkit::default())).await.unwrap();
    assert_eq!((r.text.as_str(), mock.requests().len()), ("ok", 2));

    // Over the cap: not retried; the error carries the provider's Retry-After.
    let mock = Mock::start(vec![
        Reply::status(429, r#"{"error":{"message":"quota"}}"#).header("Retry-After", "3600"),
        ok(),
    ])
    .await;
    let client = client_mock::client("openai", &mock.base)
        .max_retry_after(Duration::from_secs(2))
        .build()
        .unwrap();
    let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
    match &err {
        ClientError::Provider {
            status: 429,
            message,
            retry_after: Some(ra),
        } => assert_eq!((message.as_str(), ra.as_str()), ("quota", "3600")),
        other => panic!("{other}"),
    }
    assert_eq!(mock.requests().len(), 1);

    // An on_error that insists is still bounded: it waits the cap (0 here), not an hour.
    let mock = Mock::start(vec![Reply::status(429, "{}").header("Retry-After", "3600"), ok()]).await;
    let client = client_mock::client("openai", &mock.base)
        .max_retry_after(Duration::ZERO)
        .on_error(|_| toolnexus::client::ErrorDecision::Retry)
        .build()
        .unwrap();
    let r = bounded(client.run("hi", &Toolkit::default())).await.unwrap();
    assert_eq!((r.text.as_str(), mock.requests().len()), ("ok", 2));
}
