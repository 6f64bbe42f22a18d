//! `Client::list_models` (issue 22) for both styles: against `toolnexus-mock` (checking the
//! key, paging the Anthropic list two at a time) and a recording server for the exact
//! requests.

mod client_mock;

use client_mock::{Mock, Reply, bounded};
use serde_json::json;
use toolnexus::client::transport::{HttpResponse, from_fn};
use toolnexus::client::{ClientError, ModelInfo};
use toolnexus_mock::{MockModel, Scenario};

fn model(id: &str, name: &str, context: Option<u64>) -> ModelInfo {
    ModelInfo {
        id: id.into(),
        name: Some(name.into()),
        context_length: context,
    }
}

#[tokio::test]
async fn both_styles_list_the_mocks_models_sorted_by_id() {
    let mock = MockModel::start_with_api_key("127.0.0.1:0", Scenario::Planner, "sk-models")
        .await
        .unwrap();
    let openai = client_mock::client("openai", &mock.base_url())
        .api_key("sk-models")
        .build()
        .unwrap();
    assert_eq!(
        bounded(openai.list_models()).await.unwrap(),
        [
            model("mock-bench", "Mock Bench", Some(32768)),
            model("mock-model", "Mock Model", Some(32768)),
            model("mock-planner", "Mock Planner", Some(32768)),
        ]
    );
    // Anthropic pages (the mock serves two a page); with or without `/v1` on the base.
    for base in [format!("http://{}", mock.addr()), mock.base_url()] {
        let anthropic = client_mock::client("anthropic", &base)
            .api_key("sk-models")
            .build()
            .unwrap();
        assert_eq!(
            bounded(anthropic.list_models()).await.unwrap(),
            [
                model("mock-bench", "Mock Bench", None),
                model("mock-model", "Mock Model", None),
                model("mock-planner", "Mock Planner", None),
            ],
            "{base}"
        );
    }
    let wrong = client_mock::client("openai", &mock.base_url())
        .api_key("sk-wrong")
        .build()
        .unwrap();
    let err = bounded(wrong.list_models()).await.unwrap_err();
    assert_eq!(err.to_string(), "LLM 401: Incorrect API key provided.");
}

#[tokio::test]
async fn the_exact_requests_of_each_style() {
    let page = |ids: &[&str], more: bool| {
        let data: Vec<_> = ids
            .iter()
            .map(|id| json!({"type": "model", "id": id, "display_name": id.to_uppercase()}))
            .collect();
        Reply::json(json!({"data": data, "has_more": more, "last_id": ids.last()}))
    };
    let mock = Mock::start(vec![page(&["b", "a"], true), page(&["c"], false)]).await;
    let client = client_mock::client("anthropic", &format!("{}/?key=qk", mock.base))
        .build()
        .unwrap();
    let ids: Vec<String> = bounded(client.list_models())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    let reqs = mock.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1/models?key=qk&limit=1000",
            "/v1/models?key=qk&limit=1000&after_id=a"
        ]
    );
    assert!(reqs[0].body.is_empty());
    assert_eq!(reqs[0].header("x-api-key"), Some("sk-test-key"));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));

    let mock = Mock::json([json!({"object": "list", "data": [{"id": "gpt-x"}, {"no_id": 1}]})]).await;
    let client = client_mock::client("openai", &format!("{}/api/v1", mock.base))
        .build()
        .unwrap();
    assert_eq!(
        bounded(client.list_models()).await.unwrap(),
        [ModelInfo {
            id: "gpt-x".into(),
            ..ModelInfo::default()
        }]
    );
    assert_eq!(mock.requests()[0].path, "/api/v1/models");
    assert_eq!(
        mock.requests()[0].header("authorization"),
        Some("Bearer sk-test-key")
    );
}

#[tokio::test]
async fn a_body_of_the_wrong_shape_or_a_post_only_transport_is_a_readable_error() {
    let mock = Mock::json([json!({"models": []})]).await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let err = bounded(client.list_models()).await.unwrap_err();
    assert!(matches!(err, ClientError::Decode(_)), "{err}");
    assert_eq!(
        err.to_string(),
        r#"LLM response could not be read: model list has no "data" array: {"models":[]}"#
    );

    let post_only = from_fn(|_| async { Ok(HttpResponse::json(&json!({}))) });
    let client = client_mock::client("openai", "http://127.0.0.1:9/v1")
        .transport(post_only)
        .build()
        .unwrap();
    let err = bounded(client.list_models()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "LLM request failed: this transport does not support GET (list_models)"
    );
}
