//! HTTP endpoints as tools: `http_tool` turns a method + URL template into a tool the model
//! can call. A tiny weather/orders API runs on 127.0.0.1 inside this example; the tools call
//! it directly, then the embedded mock model calls one in an agent run.
//!
//! Run: `cargo run --example http_tools`

mod support;

use std::collections::HashMap;

use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use toolnexus::client::Style;
use toolnexus::http::{HttpToolSpec, ResultMode, http_tool};
use toolnexus::{ToolContext, ToolSource, Toolkit};

/// The API the tools wrap.
async fn start_api() -> std::io::Result<String> {
    let app = Router::new()
        .route(
            "/weather/{city}",
            get(
                |Path(city): Path<String>, Query(q): Query<HashMap<String, String>>| async move {
                    let units = q.get("units").map_or("metric", String::as_str);
                    match city.as_str() {
                        "Paris" => Ok(Json(
                            json!({"city": city, "sky": "sunny", "temp": 22, "units": units}),
                        )),
                        _ => Err((StatusCode::NOT_FOUND, format!("no weather for {city}"))),
                    }
                },
            ),
        )
        .route(
            "/orders",
            post(|Json(order): Json<Value>| async move {
                (
                    StatusCode::CREATED,
                    Json(json!({"id": "ord_1", "item": order["item"], "qty": order["qty"]})),
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = start_api().await?;

    // GET: `{city}` comes from the arguments; the other arguments become the query string.
    let weather = http_tool(HttpToolSpec {
        description: "Current weather for a city".into(),
        input_schema: Some(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["metric", "imperial"]}},
            "required": ["city"]
        })),
        ..HttpToolSpec::new("get_weather", "GET", format!("{base}/weather/{{city}}"))
    });
    // POST: the arguments are sent as a JSON body; `status+text` shows the status too.
    let order = http_tool(HttpToolSpec {
        description: "Place an order".into(),
        result_mode: ResultMode::StatusText,
        ..HttpToolSpec::new("create_order", "POST", format!("{base}/orders"))
    });
    assert_eq!(weather.source(), ToolSource::Http);

    let r = weather
        .execute(
            json!({"city": "Paris", "units": "imperial"}),
            ToolContext::default(),
        )
        .await;
    println!("get_weather Paris -> {}", r.to_json());
    assert_eq!(
        r.to_json(),
        r#"{"output":"{\"city\":\"Paris\",\"sky\":\"sunny\",\"temp\":22,\"units\":\"imperial\"}","isError":false,"metadata":{"status":200}}"#
    );

    let r = order
        .execute(json!({"item": "lamp", "qty": 2}), ToolContext::default())
        .await;
    println!("create_order -> {}", r.to_json());
    assert_eq!(r.output, "201\n{\"id\":\"ord_1\",\"item\":\"lamp\",\"qty\":2}");
    assert!(!r.is_error);

    // A non-2xx status is an error result the model can read.
    let r = weather
        .execute(json!({"city": "Atlantis"}), ToolContext::default())
        .await;
    println!("get_weather Atlantis -> {}", r.to_json());
    assert!(r.is_error);
    assert_eq!(r.output, "HTTP 404: no weather for Atlantis");

    // The same tools in an agent run with the mock model.
    let (_model, client) = support::mock_client(Style::OpenAi).await?;
    let tk = Toolkit::new([weather, order]);
    let result = client.run(r#"get_weather {"city":"Paris"}"#, &tk).await?;
    println!("model: {:?}", result.text);
    assert_eq!(
        result.text,
        "Here is what the tools returned:\n- get_weather: {\"city\":\"Paris\",\"sky\":\"sunny\",\"temp\":22,\"units\":\"metric\"}"
    );
    Ok(())
}
