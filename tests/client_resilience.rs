//! Resilience (SPEC §8): retries and Retry-After, bounded failures, immediate auth errors,
//! the whole-run timeout and cancellation aborting the in-flight request, and a panicking
//! tool that the loop survives.

mod client_mock;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use client_mock::{Mock, Reply, bounded, cancel_after};
use futures::StreamExt;
use serde_json::{Value, json};
use toolnexus::client::{Client, ClientError, ErrorDecision, RunOptions, RunResult, RunStatus};
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};

fn ok() -> Reply {
    Reply::json(client_mock::openai_text("fine"))
}

/// A one-turn run of "hi" without tools, within `BOUND`.
async fn run_hi(client: &Client) -> Result<RunResult, ClientError> {
    bounded(client.run("hi", &Toolkit::default())).await
}

#[tokio::test]
async fn retry_on_429_with_retry_after_zero_then_success() {
    let mock = Mock::start(vec![
        Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("Retry-After", "0"),
        ok(),
    ])
    .await;
    // A one-minute backoff base: only an honoured `Retry-After: 0` finishes inside the bound.
    let client = client_mock::client("openai", &mock.base)
        .retry_base(Duration::from_secs(60))
        .build()
        .unwrap();
    let started = Instant::now();
    let r = run_hi(&client).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(r.text, "fine");
    let bodies = mock.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1]);
    assert_eq!(
        bodies[0],
        r#"{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}"#
    );
}

#[tokio::test]
async fn unparseable_retry_after_falls_back_to_backoff() {
    let mock = Mock::start(vec![
        Reply::status(503, "busy").header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
        Reply::status(503, "busy").header("retry-after", "1.5"),
        ok(),
    ])
    .await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let r = run_hi(&client).await.unwrap();
    assert_eq!((r.text.as_str(), mock.requests().len()), ("fine", 3));
}

#[tokio::test]
async fn persistent_500_is_bounded_by_retries() {
    let mock = Mock::start(vec![Reply::status(500, "upstream down"); 6]).await;
    let client = client_mock::client("openai", &mock.base)
        .retries(2)
        .build()
        .unwrap();
    let err = run_hi(&client).await.unwrap_err();
    assert!(matches!(err, ClientError::Provider { status: 500, .. }), "{err}");
    assert_eq!(err.to_string(), "LLM 500: upstream down");
    assert_eq!(mock.requests().len(), 3);
    let m = client.metrics();
    assert!(
        m.contains(r#"toolnexus_llm_requests_total{model="gpt-test",status="error"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"toolnexus_run_errors_total{model="gpt-test"} 1"#),
        "{m}"
    );
}

#[tokio::test]
async fn status_401_and_402_fail_at_once_with_the_provider_message() {
    for (status, body, shown) in [
        (
            401,
            r#"{"error":{"message":"Invalid API key sk-test-key"}}"#,
            "LLM 401: Invalid API key «redacted»",
        ),
        (
            402,
            r#"{"type":"error","error":{"type":"billing","message":"Insufficient credits"}}"#,
            "LLM 402: Insufficient credits",
        ),
    ] {
        let mock = Mock::start(vec![Reply::status(status, body), ok()]).await;
        let client = client_mock::client("anthropic", &mock.base).build().unwrap();
        let err = run_hi(&client).await.unwrap_err();
        assert_eq!(err.to_string(), shown);
        assert_eq!(mock.requests().len(), 1);
    }
}

#[tokio::test]
async fn on_error_decides_and_stays_bounded() {
    let mock = Mock::start(vec![Reply::status(503, "busy"), ok()]).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let client = client_mock::client("openai", &mock.base)
        .on_error(move |info| {
            s2.lock()
                .unwrap()
                .push((info.status, info.attempt, info.retryable));
            ErrorDecision::Fail
        })
        .build()
        .unwrap();
    assert!(matches!(
        run_hi(&client).await,
        Err(ClientError::Provider { status: 503, .. })
    ));
    assert_eq!(*seen.lock().unwrap(), [(Some(503), 0, true)]);

    // "retry" on a status the default would not retry is honoured, but only `retries` times.
    let mock = Mock::start(vec![Reply::status(400, "bad"); 5]).await;
    let client = client_mock::client("openai", &mock.base)
        .retries(1)
        .on_error(|_| ErrorDecision::Retry)
        .build()
        .unwrap();
    assert!(run_hi(&client).await.is_err());
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test]
async fn network_errors_are_retried_then_surface() {
    // Bind then drop: nothing listens on this port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let a2 = attempts.clone();
    let client = client_mock::client("openai", &format!("http://127.0.0.1:{port}"))
        .on_error(move |info| {
            a2.lock()
                .unwrap()
                .push((info.attempt, info.retryable, info.error.is_some()));
            ErrorDecision::Retry
        })
        .build()
        .unwrap();
    let err = run_hi(&client).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport(_)), "{err}");
    assert_eq!(
        *attempts.lock().unwrap(),
        [(0, true, true), (1, true, true), (2, true, true)]
    );
    // The message names the cause and what to check, not just "error sending request".
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "LLM request failed: request failed: error sending request for url (http://127.0.0.1:{port}/chat/completions): "
        )),
        "{msg}"
    );
    assert!(msg.contains("Connection refused"), "{msg}");
    assert!(
        msg.ends_with(" (is the model server running, and is base_url right?)"),
        "{msg}"
    );
    // The chain is kept for `anyhow`/`eyre`: ClientError → TransportError → reqwest → io.
    let mut chain = Vec::new();
    let mut cause = std::error::Error::source(&err);
    while let Some(c) = cause {
        chain.push(c.to_string());
        cause = c.source();
    }
    assert!(chain.len() >= 3, "{chain:?}");
    assert!(chain[0].starts_with("request failed: "), "{chain:?}");
    assert!(chain[1].starts_with("error sending request for url"), "{chain:?}");
    assert!(
        chain.iter().any(|c| c.contains("Connection refused")),
        "{chain:?}"
    );
}

#[tokio::test]
async fn whole_run_timeout_aborts_the_in_flight_request() {
    let mock = Mock::start(vec![ok().delayed(Duration::from_secs(30)), ok()]).await;
    let client = client_mock::client("openai", &mock.base)
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = run_hi(&client).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Timeout(t) if t == Duration::from_millis(200)),
        "{err}"
    );
    assert_eq!(err.to_string(), "run timeout after 200ms (client timeout budget)");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(mock.requests().len(), 1, "an abort is never retried");
    assert!(
        client
            .metrics()
            .contains(r#"toolnexus_run_errors_total{model="gpt-test"} 1"#)
    );

    // Streaming honours the same deadline.
    let mock = Mock::start(vec![ok().delayed(Duration::from_secs(30))]).await;
    let client = client_mock::client("anthropic", &mock.base)
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let items: Vec<_> = bounded(client.stream("hi", RunOptions::default()).collect()).await;
    assert!(matches!(items.as_slice(), [Err(ClientError::Timeout(t))] if *t == Duration::from_millis(200)));
}

#[tokio::test]
async fn external_cancellation_aborts_the_in_flight_request() {
    let mock = Mock::start(vec![ok().delayed(Duration::from_secs(30)), ok()]).await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let token = cancel_after(Duration::from_millis(100));
    let started = Instant::now();
    let opts = RunOptions::default().cancel(token);
    let err = bounded(client.run_with("hi", opts)).await.unwrap_err();
    assert!(matches!(err, ClientError::Cancelled), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_tool_that_panics_mid_run_becomes_an_error_result_and_the_loop_goes_on() {
    let boom = Tool::new("boom", |_: Value, _: ToolContext| async move {
        tokio::task::yield_now().await;
        panic!("kaboom");
        #[allow(unreachable_code)]
        ToolResult::success("")
    });
    let mut tk = client_mock::toolkit(None);
    tk.add_tools([boom]);
    let mock = Mock::json([
        client_mock::anthropic_calls(&[("t1", "boom", json!({})), ("t2", "add", json!({"a":1,"b":1}))]),
        client_mock::anthropic_text("boom failed, 1+1=2"),
    ])
    .await;
    let client = client_mock::client("anthropic", &mock.base).build().unwrap();
    let r = client.run("go", &tk).await.unwrap();
    assert_eq!(
        (r.status, r.text.as_str()),
        (RunStatus::Done, "boom failed, 1+1=2")
    );
    let sent = mock.json_body(1);
    assert_eq!(
        sent["messages"][2]["content"],
        json!([
            {"type":"tool_result","tool_use_id":"t1","content":"tool \"boom\" panicked: kaboom","is_error":true},
            {"type":"tool_result","tool_use_id":"t2","content":"2","is_error":false}
        ])
    );
}
