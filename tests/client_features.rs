//! Construction, hooks, request shaping, memory, in-process models, content parts and
//! metrics of the unified client, against a loopback provider.

mod client_mock;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use client_mock::{Mock, Reply};
use serde_json::{Map, Value, json};
use toolnexus::client::Style;
use toolnexus::client::hooks::{BeforeTool, Hooks, LlmOverride};
use toolnexus::client::{
    Client, ClientError, ConfigError, GenerateRequest, GeneratedCall, Generation, Limit, MetricEvent, Prompt,
    RunOptions, RunStatus, UnknownStyle,
};
use toolnexus::content::{ContentPart, MediaKind};
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};

#[test]
fn bad_configuration_is_a_typed_build_error() {
    let b = || {
        Client::builder()
            .base_url("http://127.0.0.1:1")
            .style(Style::OpenAi)
            .model("m")
            .api_key("k")
    };
    let unknown = "cohere".parse::<Style>().unwrap_err();
    assert_eq!(unknown, UnknownStyle("cohere".into()));
    assert_eq!(
        unknown.to_string(),
        "unknown client style \"cohere\" (expected \"openai\", \"anthropic\" or \"gemini\")"
    );
    assert!(matches!(
        Client::builder()
            .base_url("http://h")
            .model("m")
            .api_key("k")
            .build(),
        Err(ConfigError::MissingStyle)
    ));
    assert!(matches!(
        Client::builder()
            .base_url("http://h")
            .style(Style::OpenAi)
            .api_key("k")
            .build(),
        Err(ConfigError::MissingModel)
    ));
    let err = b().base_url("not a url").build().unwrap_err();
    assert!(matches!(&err, ConfigError::InvalidBaseUrl { url, .. } if url == "not a url"));
    assert_eq!(
        err.to_string(),
        "toolnexus: base URL \"not a url\" is not a usable http(s) URL: relative URL without a base"
    );
    // What `main` returning `Box<dyn Error>` prints: the message, not the variant.
    assert_eq!(format!("{err:?}"), err.to_string());
    assert!(matches!(
        b().base_url("ftp://h/x").build(),
        Err(ConfigError::InvalidBaseUrl { .. })
    ));
    let client = b().api_key("sk-very-secret").build().unwrap();
    assert!(!format!("{client:?}").contains("sk-very-secret"));
    // Whatever the environment holds, no provider key goes to another host.
    let err = Client::builder()
        .base_url("http://h")
        .style(Style::Anthropic)
        .model("m")
        .build()
        .unwrap_err();
    assert!(matches!(err, ConfigError::MissingApiKey { ref host, looked_for: None } if host == "h"));
    assert!(format!("{err:?}").starts_with("toolnexus: no API key for h: set api_key or api_key_env(NAME)"));
}

#[tokio::test]
async fn system_prompt_joins_the_skills_prompt_and_no_toolkit_means_no_tools_key() {
    let mock = Mock::json(vec![client_mock::openai_text("a"); 3]).await;
    let mut tk = Toolkit::default();
    tk.set_skills_prompt("## Available Skills\n- **pdf**: read PDFs");
    let with_both = client_mock::client("openai", &mock.base)
        .system_prompt("Be brief.")
        .build()
        .unwrap();
    with_both.run("q", &tk).await.unwrap();
    let skills_only = client_mock::client("openai", &mock.base).build().unwrap();
    skills_only.run("q", &tk).await.unwrap();
    skills_only.run_with("q", RunOptions::default()).await.unwrap();
    assert_eq!(
        mock.bodies(),
        [
            r###"{"model":"gpt-test","messages":[{"role":"system","content":"Be brief.\n\n## Available Skills\n- **pdf**: read PDFs"},{"role":"user","content":"q"}]}"###,
            r###"{"model":"gpt-test","messages":[{"role":"system","content":"## Available Skills\n- **pdf**: read PDFs"},{"role":"user","content":"q"}]}"###,
            r###"{"model":"gpt-test","messages":[{"role":"user","content":"q"}]}"###,
        ]
    );
}

#[tokio::test]
async fn hooks_rewrite_short_circuit_and_observe() {
    let mock = Mock::json([
        client_mock::openai_calls(&[
            ("c1", "add", r#"{"a":1,"b":1}"#),
            ("c2", "echo", r#"{"text":"x"}"#),
        ]),
        client_mock::openai_text("done"),
    ])
    .await;
    let seen_raw = Arc::new(Mutex::new(Vec::new()));
    let raw2 = seen_raw.clone();
    let hooks = Hooks::new()
        .before_llm(|req| async move {
            // Turn 1 on a cheaper model, then drop the tools on turn 2.
            Ok(Some(if req.turn == 0 {
                LlmOverride {
                    model: Some("cheap-model".into()),
                    ..LlmOverride::default()
                }
            } else {
                LlmOverride {
                    tools: Some(vec![]),
                    ..LlmOverride::default()
                }
            }))
        })
        .after_llm(move |r| {
            raw2.lock().unwrap().push((
                r.turn,
                r.model.clone(),
                r.response["usage"]["total_tokens"].clone(),
                // The whole response, message included, even though the run took the message.
                r.response["choices"][0]["message"]["role"].clone(),
            ));
            async {}
        })
        .before_tool(|call| async move {
            match call.name.as_str() {
                "add" => Some(BeforeTool::Args(json!({"a": 40, "b": 2}))),
                _ => Some(BeforeTool::Result(ToolResult::failure("echo is denied"))),
            }
        })
        .after_tool(|out| async move { Some(ToolResult::success(format!("[{}]", out.result.output))) });
    let client = client_mock::client("openai", &mock.base)
        .hooks(hooks)
        .build()
        .unwrap();
    let r = client.run("go", &client_mock::toolkit(None)).await.unwrap();
    assert_eq!(
        r.tool_calls
            .iter()
            .map(|c| (c.args.clone(), c.output.as_str(), c.is_error))
            .collect::<Vec<_>>(),
        [
            (json!({"a":40,"b":2}), "[42]", false),
            (json!({"text":"x"}), "echo is denied", true)
        ]
    );
    assert_eq!(mock.json_body(0)["model"], "cheap-model");
    let second = mock.json_body(1);
    assert_eq!(second["model"], "gpt-test");
    assert!(second.get("tools").is_none() && second.get("tool_choice").is_none());
    assert_eq!(
        *seen_raw.lock().unwrap(),
        [
            (0, "cheap-model".to_owned(), json!(15), json!("assistant")),
            (1, "gpt-test".to_owned(), json!(23), json!("assistant"))
        ]
    );
    assert_eq!(r.model, "gpt-test");
}

#[tokio::test]
async fn before_llm_can_abort_the_call() {
    let mock = Mock::start(vec![]).await;
    let hooks = Hooks::new()
        .before_llm(|req| async move { Err(format!("route {} not guaranteed", req.model).into()) });
    let client = client_mock::client("openai", &mock.base)
        .hooks(hooks)
        .build()
        .unwrap();
    let err = client.run("go", &Toolkit::default()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "before_llm hook aborted the call: route gpt-test not guaranteed"
    );
    // The hook's own error is the source, for `anyhow`/`eyre` chains.
    let source = std::error::Error::source(&err).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("route gpt-test not guaranteed"));
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn request_params_win_then_body_transform_runs_last() {
    let mock = Mock::json([client_mock::anthropic_text("ok")]).await;
    let mut params = Map::new();
    params.insert("max_tokens".into(), json!(256));
    params.insert("temperature".into(), json!(0));
    params.insert("stream".into(), json!(true)); // forbidden: ignored
    let client = client_mock::client("anthropic", &mock.base)
        .request_params(params)
        .body_transform(|mut b| {
            b["metadata"] = json!({"user_id": "u1"});
            b
        })
        .build()
        .unwrap();
    client.run("hi", &Toolkit::default()).await.unwrap();
    assert_eq!(
        mock.bodies()[0],
        r#"{"model":"claude-test","max_tokens":256,"system":"","messages":[{"role":"user","content":"hi"}],"temperature":0,"metadata":{"user_id":"u1"}}"#
    );
}

#[tokio::test]
async fn malformed_arguments_become_a_readable_error_and_max_turns_is_incomplete() {
    let mock = Mock::json(vec![client_mock::openai_calls(&[("c1", "add", r#"{"a":1,"#)]); 2]).await;
    let client = client_mock::client("openai", &mock.base)
        .max_turns(2)
        .build()
        .unwrap();
    let r = client.run("go", &client_mock::toolkit(None)).await.unwrap();
    assert_eq!(
        (r.status, r.limit, r.turns),
        (RunStatus::Incomplete, Some(Limit::MaxTurns), 2)
    );
    assert_eq!(serde_json::to_value(&r).unwrap()["limit"], "maxTurns");
    let msg = &r.tool_calls[0].output;
    assert!(
        msg.starts_with("invalid arguments for tool \"add\": EOF while parsing"),
        "{msg}"
    );
    assert!(msg.ends_with("call it again with a JSON object matching its schema"));
    assert_eq!(mock.json_body(1)["messages"][2]["content"], json!(msg));
}

#[tokio::test]
async fn conversation_and_ask_keep_history() {
    let mock = Mock::json(["one", "two", "three", "four", "five"].map(client_mock::openai_text)).await;
    let client = client_mock::client("openai", &mock.base)
        .system_prompt("S")
        .build()
        .unwrap();
    let tk = Toolkit::default();
    let mut convo = client.conversation(&tk);
    convo.send("first").await.unwrap();
    convo.send("second").await.unwrap();
    assert_eq!(convo.messages().len(), 5);
    assert_eq!(
        mock.bodies()[1],
        r#"{"model":"gpt-test","messages":[{"role":"system","content":"S"},{"role":"user","content":"first"},{"role":"assistant","content":"one"},{"role":"user","content":"second"}]}"#
    );
    convo.reset();
    assert!(convo.messages().is_empty());

    client.ask("a", "t1", RunOptions::new(&tk)).await.unwrap();
    let r = client.ask("b", "t1", RunOptions::new(&tk)).await.unwrap();
    assert_eq!(r.text, "four");
    assert_eq!(mock.json_body(3)["messages"].as_array().unwrap().len(), 4);
    assert_eq!(client.store().get("t1").await.unwrap().unwrap(), r.messages);
    // Another id is another conversation.
    client.ask("c", "t2", RunOptions::new(&tk)).await.unwrap();
    assert_eq!(mock.json_body(4)["messages"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn on_text_streams_deltas_and_still_returns_the_result() {
    let sse = Reply::openai_sse([
        json!({"choices":[{"index":0,"delta":{"content":"Hel"}}]}),
        json!({"choices":[{"index":0,"delta":{"content":"lo"}}]}),
    ]);
    let mock = Mock::start(vec![sse]).await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    let deltas = Arc::new(Mutex::new(Vec::new()));
    let d2 = deltas.clone();
    let r = client
        .ask(
            "hi",
            "t",
            RunOptions::default().on_text(move |d| d2.lock().unwrap().push(d.to_owned())),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "Hello");
    assert_eq!(*deltas.lock().unwrap(), ["Hel", "lo"]);
    assert_eq!(mock.json_body(0)["stream"], true);
}

#[tokio::test]
async fn in_process_model_runs_the_loop_and_refuses_streaming() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let generate = move |req: GenerateRequest| {
        let n = c2.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                assert_eq!(req.tools.len(), 2);
                Ok(Generation::calls(vec![GeneratedCall {
                    id: None,
                    name: "add".into(),
                    arguments: json!({"a": 2, "b": 2}),
                }]))
            } else {
                assert_eq!(
                    req.messages[2],
                    json!({"role":"tool","tool_call_id":"call_0","content":"4"})
                );
                Ok(Generation::text("2 + 2 = 4"))
            }
        }
    };
    let client = Client::in_process("local-model", generate).build().unwrap();
    let tk = client_mock::toolkit(None);
    let r = client.run("add", &tk).await.unwrap();
    assert_eq!((r.text.as_str(), r.turns), ("2 + 2 = 4", 2));
    use futures::StreamExt;
    let items: Vec<_> = client.stream("x", RunOptions::new(&tk)).collect().await;
    assert!(matches!(
        items.as_slice(),
        [Err(ClientError::StreamingUnsupported)]
    ));

    let failing = |_| async { Err("model crashed".to_owned()) };
    let attempts = Arc::new(AtomicUsize::new(0));
    let a2 = attempts.clone();
    let client = Client::in_process("m", failing)
        .on_error(move |i| {
            a2.fetch_add(1, Ordering::SeqCst);
            if i.retryable {
                toolnexus::client::ErrorDecision::Retry
            } else {
                toolnexus::client::ErrorDecision::Fail
            }
        })
        .build()
        .unwrap();
    let err = client.run("x", &tk).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "LLM request failed: generate failed: model crashed"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn content_parts_are_encoded_per_provider() {
    let plot = Tool::new("plot", |_: Value, _: ToolContext| async {
        ToolResult::success("chart").with_parts([ContentPart::from_bytes(
            MediaKind::Image,
            b"PNG",
            "image/png",
        )])
    });
    let tk = Toolkit::new([plot]);
    let mock = Mock::json([
        client_mock::openai_calls(&[("c1", "plot", "{}")]),
        client_mock::openai_text("see chart"),
        client_mock::anthropic_calls(&[("t1", "plot", json!({}))]),
        client_mock::anthropic_text("see chart"),
    ])
    .await;
    let openai = client_mock::client("openai", &mock.base).build().unwrap();
    let r = openai
        .run(
            Prompt::Parts(vec![
                ContentPart::text("draw"),
                ContentPart::from_url(MediaKind::Image, "https://x/a.png", "image/png"),
            ]),
            &tk,
        )
        .await
        .unwrap();
    let sent = mock.json_body(1);
    assert_eq!(
        sent["messages"][0]["content"],
        json!([{"type":"text","text":"draw"},{"type":"image_url","image_url":{"url":"https://x/a.png"}}])
    );
    assert_eq!(
        sent["messages"][2],
        json!({"role":"tool","tool_call_id":"c1","content":"chart"})
    );
    assert_eq!(
        sent["messages"][3],
        json!({"role":"user","content":[{"type":"text","text":"Output of tool plot (c1):"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5H"}}]})
    );
    // The transcript keeps the canonical part, not the relocation.
    assert_eq!(r.messages[2]["parts"][0]["mimeType"], "image/png");

    let anthropic = client_mock::client("anthropic", &mock.base).build().unwrap();
    anthropic.run("draw", &tk).await.unwrap();
    assert_eq!(
        mock.json_body(3)["messages"][2]["content"][0]["content"],
        json!([{"type":"text","text":"chart"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"UE5H"}}])
    );
}

#[tokio::test]
async fn metric_events_and_prometheus_text_follow_the_run() {
    let mock = Mock::json([
        client_mock::openai_calls(&[("c1", "add", r#"{"a":1,"b":2}"#)]),
        client_mock::openai_text("3"),
    ])
    .await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let e2 = events.clone();
    let client = client_mock::client("openai", &mock.base)
        .on_metric(move |e| e2.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    client.run("1+2", &client_mock::toolkit(None)).await.unwrap();
    let kinds: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .map(|e| match e {
            MetricEvent::Llm {
                model,
                ok,
                prompt_tokens,
                ..
            } => format!("llm {model} {ok} {prompt_tokens}"),
            MetricEvent::Tool {
                tool,
                source,
                is_error,
                pending,
                ..
            } => format!("tool {tool} {} {is_error} {pending}", source.as_str()),
            MetricEvent::Run {
                turns,
                tool_calls,
                total_tokens,
                error,
                ..
            } => format!("run {turns} {tool_calls} {total_tokens} {error:?}"),
            other => format!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "llm gpt-test true 10",
            "tool add custom false false",
            "llm gpt-test true 20",
            "run 2 1 38 None"
        ]
    );
    let text = client.metrics();
    assert!(
        text.contains("toolnexus_llm_requests_total{model=\"gpt-test\",status=\"ok\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("toolnexus_llm_tokens_total{type=\"prompt\"} 30\n"),
        "{text}"
    );
    assert!(
        text.contains("toolnexus_tool_duration_seconds_count{tool=\"add\"} 1\n"),
        "{text}"
    );
    assert!(text.ends_with('\n'));
}

#[tokio::test]
async fn a_streamed_conversation_loads_and_saves_the_thread() {
    use futures::StreamExt;
    let turn = |t: &str| Reply::openai_sse([json!({"choices":[{"index":0,"delta":{"content":t}}]})]);
    let mock = Mock::start(vec![turn("one"), turn("two")]).await;
    let client = client_mock::client("openai", &mock.base).build().unwrap();
    for prompt in ["first", "second"] {
        let items: Vec<_> = client
            .stream(prompt, RunOptions::default().conversation("s1"))
            .collect()
            .await;
        assert!(items.iter().all(Result::is_ok));
    }
    assert_eq!(
        mock.json_body(1)["messages"],
        json!([
            {"role":"user","content":"first"},
            {"role":"assistant","content":"one"},
            {"role":"user","content":"second"}
        ])
    );
    assert_eq!(client.store().get("s1").await.unwrap().unwrap().len(), 4);
}

/// SPEC §7D "The §8 seams on an agent run": a run's own hooks and metric sink replace the
/// client's (never merge with them); unset, the run is byte-identical to one without them.
#[tokio::test]
async fn a_runs_own_hooks_and_metric_sink_replace_the_clients() {
    let script = || {
        [
            client_mock::openai_calls(&[("c1", "add", r#"{"a":1,"b":2}"#)]),
            client_mock::openai_text("3"),
        ]
    };
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let hooks = |who: &'static str| {
        let seen = seen.clone();
        Hooks::new().before_tool(move |call| {
            seen.lock().unwrap().push(format!("{who} hook: {}", call.name));
            async { None }
        })
    };
    let sink = |who: &'static str| {
        let seen = seen.clone();
        move |e: &MetricEvent| {
            if let MetricEvent::Tool { tool, .. } = e {
                seen.lock().unwrap().push(format!("{who} metric: {tool}"));
            }
        }
    };
    let mock = Mock::json(script().into_iter().chain(script())).await;
    let client = client_mock::client("openai", &mock.base)
        .hooks(hooks("client"))
        .on_metric(sink("client"))
        .build()
        .unwrap();
    let tk = client_mock::toolkit(None);

    let plain = client.run("add", &tk).await.unwrap();
    assert_eq!(
        std::mem::take(&mut *seen.lock().unwrap()),
        ["client hook: add", "client metric: add"]
    );
    let own = RunOptions::new(&tk).hooks(hooks("run")).on_metric(sink("run"));
    let overridden = client.run_with("add", own).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["run hook: add", "run metric: add"]);
    // Same wire either way; the client's registry records both runs.
    let bodies = mock.bodies();
    assert_eq!((&bodies[0], &bodies[1]), (&bodies[2], &bodies[3]));
    assert_eq!(plain.messages, overridden.messages);
    assert!(
        client
            .metrics()
            .contains("toolnexus_tool_calls_total{tool=\"add\",source=\"custom\",is_error=\"false\",pending=\"false\"} 2\n"),
        "{}",
        client.metrics()
    );
}
