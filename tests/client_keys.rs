//! Keys go only where they belong (issue 14): a provider's environment key reaches only its
//! own https host, any other host needs an explicit key, every echoed error hides any 8+
//! character run of a key, and a `?key=` in a base URL stays a query parameter.

mod client_mock;

use std::sync::{Arc, Mutex};

use client_mock::{Mock, Reply, bounded};
use serde_json::json;
use toolnexus::Toolkit;
use toolnexus::client::transport::{HttpResponse, from_fn};
use toolnexus::client::{Client, ClientError, ConfigError, HttpRequest, Style};

/// Tests here change the process environment: one at a time.
static ENV: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn set_env(name: &str, value: &str) {
    // SAFETY: every test of this binary holds `ENV` while it reads or writes the environment.
    unsafe { std::env::set_var(name, value) };
}

fn builder(style: Style, base: &str) -> toolnexus::client::ClientBuilder {
    Client::builder()
        .base_url(base)
        .style(style)
        .model("m")
        .retries(0)
}

#[tokio::test]
async fn an_environment_key_is_never_sent_to_another_host() {
    let _env = ENV.lock().await;
    set_env("OPENAI_API_KEY", "sk-env-openai-0123456789");
    set_env("OPENROUTER_API_KEY", "sk-or-env-0123456789");
    let mock = Mock::json([client_mock::openai_text("hi")]).await;
    let base = format!("{}/v1", mock.base);
    let err = builder(Style::OpenAi, &base).build().unwrap_err();
    assert!(
        matches!(err, ConfigError::MissingApiKey { ref host, looked_for: None } if host == "127.0.0.1"),
        "{err}"
    );
    // An https URL on a look-alike host is "another host" too.
    for other in ["https://api.openai.com.example/v1", "http://api.openai.com/v1"] {
        let err = builder(Style::OpenAi, other).build().unwrap_err();
        assert!(
            matches!(err, ConfigError::MissingApiKey { looked_for: None, .. }),
            "{other}: {err}"
        );
    }
    // Named, the variable's key goes to that host.
    let client = builder(Style::OpenAi, &base)
        .api_key_env("OPENAI_API_KEY")
        .build()
        .unwrap();
    let r = bounded(client.run("hi", &Toolkit::default())).await.unwrap();
    assert_eq!(r.text, "hi");
    assert_eq!(
        mock.requests()[0].header("authorization"),
        Some("Bearer sk-env-openai-0123456789")
    );
    // A named variable that is unset says which one.
    let err = builder(Style::OpenAi, &base)
        .api_key_env("TOOLNEXUS_KEYS_TEST_UNSET")
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "toolnexus: no API key for 127.0.0.1: TOOLNEXUS_KEYS_TEST_UNSET is not set — set it, or set api_key or api_key_env(NAME)"
    );
}

#[tokio::test]
async fn each_provider_host_gets_its_own_variable() {
    let _env = ENV.lock().await;
    set_env("OPENAI_API_KEY", "sk-env-openai-0123456789");
    set_env("OPENROUTER_API_KEY", "sk-or-env-0123456789");
    set_env("ANTHROPIC_API_KEY", "sk-ant-env-0123456789");
    // The transport records what would go on the wire; nothing leaves the process.
    let seen: Arc<Mutex<Vec<HttpRequest>>> = Arc::default();
    let record = seen.clone();
    let http = from_fn(move |req: HttpRequest| {
        record.lock().unwrap().push(req);
        async {
            Ok(HttpResponse::json(
                &json!({"content": [{"type": "text", "text": "ok"}]}),
            ))
        }
    });
    let cases = [
        (
            Style::OpenAi,
            "https://openrouter.ai/api/v1",
            "authorization",
            "Bearer sk-or-env-0123456789",
        ),
        (
            Style::OpenAi,
            "https://api.openai.com/v1",
            "authorization",
            "Bearer sk-env-openai-0123456789",
        ),
        (
            Style::Anthropic,
            "https://api.anthropic.com",
            "x-api-key",
            "sk-ant-env-0123456789",
        ),
        // The style does not pick the variable: the host does.
        (
            Style::Anthropic,
            "https://openrouter.ai/api",
            "x-api-key",
            "sk-or-env-0123456789",
        ),
    ];
    for (style, base, header, want) in cases {
        let client = builder(style, base).transport(http.clone()).build().unwrap();
        let _ = bounded(client.run("hi", &Toolkit::default())).await;
        let req = seen.lock().unwrap().pop().expect("a request");
        let got = req
            .headers
            .iter()
            .find(|(k, _)| k == header)
            .map(|(_, v)| v.as_str());
        assert_eq!(got, Some(want), "{base}");
    }
    // An explicit key wins over the environment.
    let client = builder(Style::OpenAi, "https://api.openai.com/v1")
        .api_key("sk-explicit")
        .transport(http)
        .build()
        .unwrap();
    let _ = bounded(client.run("hi", &Toolkit::default())).await;
    let req = seen.lock().unwrap().pop().unwrap();
    assert!(
        req.headers
            .contains(&("authorization".into(), "Bearer sk-explicit".into()))
    );
}

#[tokio::test]
async fn any_eight_character_run_of_the_key_is_redacted_from_provider_errors() {
    let key = "sk-live-ABCDEFGHIJKLMNOP";
    let body = json!({"error": {"message": "key …EFGHIJKLMN… is revoked; full: sk-live-ABCDEFGHIJKLMNOP; short: sk-live"}});
    let mock = Mock::start(vec![Reply::json(body.clone()).status_code(401)]).await;
    let client = client_mock::client("openai", &mock.base)
        .api_key(key)
        .build()
        .unwrap();
    let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
    assert!(matches!(err, ClientError::Provider { status: 401, .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "LLM 401: key …«redacted»… is revoked; full: «redacted»; short: sk-live"
    );
}

#[tokio::test]
async fn a_key_in_the_base_url_query_stays_a_query_and_is_never_echoed() {
    let secret = "AIzaQUERYSECRET42";
    let mock = Mock::start(vec![
        Reply::json(json!({"error": {"message": format!("bad key {secret}")}})).status_code(403),
    ])
    .await;
    let base = format!("{}/v1?key={secret}", mock.base);
    let client = client_mock::client("openai", &base).build().unwrap();
    assert!(!format!("{client:?}").contains(secret), "{client:?}");
    assert!(
        format!("{client:?}").contains("/v1/chat/completions?key=redacted"),
        "{client:?}"
    );
    let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
    assert_eq!(
        mock.requests()[0].path,
        format!("/v1/chat/completions?key={secret}")
    );
    assert_eq!(err.to_string(), "LLM 403: bad key «redacted»");

    // A transport error names the URL: its query values are hidden, the whole chain over.
    let client = client_mock::client("anthropic", &format!("http://127.0.0.1:9/?key={secret}"))
        .retries(0)
        .build()
        .unwrap();
    let err = bounded(client.run("hi", &Toolkit::default())).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport(_)), "{err}");
    let mut chain = vec![err.to_string()];
    let mut cause = std::error::Error::source(&err);
    while let Some(c) = cause {
        chain.push(c.to_string());
        cause = c.source();
    }
    assert!(chain.iter().all(|c| !c.contains("QUERYSECRET")), "{chain:?}");
    assert!(
        chain.iter().any(|c| c.contains("/v1/messages?key=redacted")),
        "{chain:?}"
    );
}
