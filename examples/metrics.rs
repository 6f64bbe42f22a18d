//! Prometheus metrics: every client records its LLM requests, tokens, tool calls and run
//! errors; `client.metrics()` renders them in the Prometheus text format. Here one agent run
//! against the embedded mock model, then the text served at `GET /metrics` on 127.0.0.1 with
//! axum and scraped once with reqwest, as Prometheus would.
//!
//! Run: `cargo run --example metrics`

mod support;

use axum::Router;
use axum::http::header;
use axum::routing::get;
use toolnexus::client::Style;
use toolnexus::{tool, toolkit};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The embedded mock model on 127.0.0.1 and an OpenAI-style client of it (examples/support).
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let r = client
        .run(r#"add {"a":2,"b":3} then add {"a":5,"b":5}"#, &toolkit![add])
        .await?;
    println!("run: {:?} after {} turns", r.text, r.turns);
    assert_eq!(r.turns, 3);

    // The scrape endpoint: each GET renders the registry as it is now.
    let scraped = client.clone();
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let client = scraped.clone();
            async move {
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    client.metrics(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/metrics", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let response = reqwest::get(&url).await?;
    assert_eq!(response.status(), 200);
    let text = response.text().await?;
    println!("GET {url}\n{text}");
    assert_eq!(text, client.metrics());
    // The token counters sum the usage the model reported on each turn.
    for line in [
        r#"toolnexus_llm_requests_total{model="mock-model",status="ok"} 3"#.to_owned(),
        format!(
            r#"toolnexus_llm_tokens_total{{type="prompt"}} {}"#,
            r.usage.prompt_tokens
        ),
        format!(
            r#"toolnexus_llm_tokens_total{{type="completion"}} {}"#,
            r.usage.completion_tokens
        ),
        r#"toolnexus_tool_calls_total{tool="add",source="native",is_error="false",pending="false"} 2"#
            .to_owned(),
        r#"toolnexus_tool_duration_seconds_count{tool="add"} 2"#.to_owned(),
    ] {
        assert!(text.lines().any(|l| l == line), "missing metric line: {line}");
    }
    assert!(text.ends_with('\n'));
    Ok(())
}
