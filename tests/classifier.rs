//! The classifier's System One wire over real sockets (an axum backend on 127.0.0.1 playing a
//! script of responses), the client's retry policy and metric sink, batches, and the judge's
//! escalation and battery hooks inside a real client loop.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use toolnexus::classifier::{Backend, Classifier, ClassifierError, ClassifierStyle, Question, Questions};
use toolnexus::client::hooks::Hooks;
use toolnexus::client::{Client, ErrorDecision, GeneratedCall, Generation, MetricEvent, RunStatus};
use toolnexus::judge::batteries::{OnError, ToolGuard};
use toolnexus::judge::{Policy, Rule, Tape, gate, noul, questions, state};
use toolnexus::{Answer, Tool, ToolResult, Toolkit};

/// One scripted reply: status, `Retry-After`, body, and a delay before answering.
#[derive(Clone)]
struct Reply {
    status: u16,
    retry_after: Option<&'static str>,
    body: String,
    delay: Duration,
}

fn ok(body: Value) -> Reply {
    Reply {
        status: 200,
        retry_after: None,
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

fn status(status: u16, body: &str) -> Reply {
    Reply {
        status,
        retry_after: None,
        body: body.into(),
        delay: Duration::ZERO,
    }
}

/// What the backend saw: the authorization header, a custom header, and the body.
#[derive(Clone, Debug)]
struct Seen {
    auth: Option<String>,
    custom: Option<String>,
    body: String,
}

struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    _server: tokio::task::JoinHandle<()>,
}

async fn backend(script: Vec<Reply>) -> Server {
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = Router::new().route(
        "/v1/systemone",
        post(move |headers: HeaderMap, body: Bytes| {
            let (script, log) = (script.clone(), log.clone());
            async move {
                let h = |k: &str| headers.get(k).and_then(|v| v.to_str().ok()).map(str::to_owned);
                log.lock().unwrap().push(Seen {
                    auth: h("authorization"),
                    custom: h("x-tenant"),
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
                let reply = script
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or_else(|| status(500, "script exhausted"));
                tokio::time::sleep(reply.delay).await;
                let mut resp =
                    axum::response::Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
                if let Some(ra) = reply.retry_after {
                    resp = resp.header("retry-after", ra);
                }
                resp.body(axum::body::Body::from(reply.body)).unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Server {
        url,
        seen,
        _server: server,
    }
}

fn spam_questions() -> Questions {
    Questions::from([("spam".to_string(), Question::noul("Is `text` spam?"))])
}

fn spam_answer(p: f64) -> Value {
    json!({"model": "jev-1.13.0", "answers": {"spam": {"type": "noul", "noul": p}},
           "usage": {"input_tokens": 31, "output_tokens": 2}})
}

#[tokio::test]
async fn system_one_posts_the_canonical_body_with_the_key_from_the_named_variable() {
    let b = backend(vec![ok(spam_answer(0.91))]).await;
    // SAFETY: this test binary's only use of these variables.
    unsafe {
        std::env::set_var("TOOLNEXUS_TEST_CLASSIFIER_KEY", "sk-classifier-test");
        std::env::set_var("TOOLNEXUS_TEST_TENANT", "acme");
    }
    let c = Classifier::system_one()
        .base_url(format!("{}/", b.url))
        .api_key_env("TOOLNEXUS_TEST_CLASSIFIER_KEY")
        .header("X-Tenant", "${TOOLNEXUS_TEST_TENANT}-eu")
        .build()
        .unwrap();
    assert_eq!(c.style(), ClassifierStyle::SystemOne);
    let d = c
        .evaluate(&json!({"text": "BUY NOW", "n": 1e-5}), &spam_questions())
        .await
        .unwrap();
    assert_eq!(d.noul("spam").unwrap().noul, 0.91);
    assert_eq!(d.model, "jev-1.13.0");
    assert!(d.calibrated);
    let seen = b.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].auth.as_deref(), Some("Bearer sk-classifier-test"));
    assert_eq!(seen[0].custom.as_deref(), Some("acme-eu"));
    assert_eq!(
        seen[0].body,
        r#"{"model":"jev-latest","questions":{"spam":{"instructions":"Is `text` spam?","type":"noul"}},"state":{"n":1e-05,"text":"BUY NOW"}}"#
    );
}

#[tokio::test]
async fn retryable_statuses_are_retried_honouring_retry_after_and_metrics_report_once() {
    let b = backend(vec![
        Reply {
            retry_after: Some("0"),
            ..status(503, "busy")
        },
        status(408, "slow"),
        ok(spam_answer(0.2)),
    ])
    .await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let c = Classifier::system_one()
        .base_url(&b.url)
        .retry_base(Duration::from_millis(10))
        .on_metric(move |e| sink.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    let d = c.evaluate(&json!({}), &spam_questions()).await.unwrap();
    assert_eq!(d.noul("spam").unwrap().noul, 0.2);
    assert_eq!(b.seen.lock().unwrap().len(), 3);
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert!(
        matches!(&events[0], MetricEvent::ClassifierEvaluate { model, ok: true, prompt_tokens: 31, completion_tokens: 2, error: None, .. } if model == "jev-1.13.0"),
        "{events:?}"
    );
}

#[tokio::test]
async fn an_error_status_is_final_after_the_retry_budget_and_names_its_cause() {
    let b = backend(vec![
        status(500, "down"),
        status(500, "down"),
        status(500, "still down"),
    ])
    .await;
    let c = Classifier::system_one()
        .base_url(&b.url)
        .retries(2)
        .retry_base(Duration::from_millis(5))
        .build()
        .unwrap();
    let err = c.evaluate(&json!({}), &spam_questions()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("classifier: POST {}/systemone: HTTP 500: still down", b.url)
    );
    assert_eq!(b.seen.lock().unwrap().len(), 3);

    // A client error is not retried, and its cause is surfaced intact.
    let b = backend(vec![status(400, "Too many choices.")]).await;
    let c = Classifier::system_one().base_url(&b.url).build().unwrap();
    let err = c.evaluate(&json!({}), &spam_questions()).await.unwrap_err();
    assert!(matches!(err, ClassifierError::Http { status: 400, .. }));
    assert!(err.to_string().ends_with("HTTP 400: Too many choices."), "{err}");
    assert_eq!(b.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_authentication_failure_never_echoes_its_body() {
    let b = backend(vec![status(401, "invalid key Bearer sk-live-secret")]).await;
    let c = Classifier::system_one().base_url(&b.url).build().unwrap();
    let err = c.evaluate(&json!({}), &spam_questions()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("classifier: POST {}/systemone: HTTP 401", b.url)
    );
    assert!(!format!("{err:?}").contains("sk-live"));
}

#[tokio::test]
async fn each_attempt_is_bounded_by_the_timeout_and_on_error_can_stop_retries() {
    let slow = Reply {
        delay: Duration::from_secs(5),
        ..ok(spam_answer(0.5))
    };
    let b = backend(vec![slow.clone(), slow]).await;
    let c = Classifier::system_one()
        .base_url(&b.url)
        .timeout(Duration::from_millis(200))
        .on_error(|info| {
            assert!(info.retryable && info.status.is_none());
            ErrorDecision::Fail
        })
        .build()
        .unwrap();
    let err = tokio::time::timeout(Duration::from_secs(3), c.evaluate(&json!({}), &spam_questions()))
        .await
        .expect("bounded")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("classifier: POST {}/systemone: timed out after 200ms", b.url)
    );
    assert_eq!(b.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error_with_its_source() {
    let c = Classifier::system_one()
        .base_url("http://127.0.0.1:9/v1")
        .retries(0)
        .build()
        .unwrap();
    let err = c.evaluate(&json!({}), &spam_questions()).await.unwrap_err();
    assert!(matches!(err, ClassifierError::Transport { .. }), "{err:?}");
    assert!(std::error::Error::source(&err).is_some());
    assert!(err.to_string().contains("Connection refused"), "{err}");
}

#[test]
fn backends_set_url_model_and_key_as_a_unit_and_reject_a_mixed_spelling() {
    let err = Classifier::system_one()
        .base_url("https://openrouter.ai/api/v1")
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "classifier: model \"jev-latest\" is TypeSafe's spelling; on openrouter.ai use \"typesafe/jev-1.13\""
    );
    let c = Classifier::system_one()
        .backend(Backend::OpenRouter)
        .build()
        .unwrap();
    assert_eq!(c.model(), "typesafe/jev-1.13");
    let c = Classifier::system_one()
        .backend(Backend::OpenRouter)
        .model("typesafe/jev-1.13.0")
        .build()
        .unwrap();
    assert_eq!(c.model(), "typesafe/jev-1.13.0");
}

#[test]
fn a_recorded_decision_that_does_not_decode_fails_the_build() {
    let err = Classifier::recorded([toolnexus::classifier::RecordedDecision::new(
        json!({}),
        spam_questions(),
        json!({"answers": {"spam": {"type": "noul"}}}),
    )])
    .build()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "classifier: recorded decision 0: classifier: answer 'spam': malformed noul answer: 'noul'"
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn a_batch_keeps_state_order_and_fails_closed_naming_the_state() {
    let c = Classifier::custom(|state: Value, _| async move {
        let n = state["n"].as_i64().unwrap();
        if n == 3 {
            return Err("no answer for three".into());
        }
        Ok(toolnexus::classifier::Decision::from_wire(
            &json!({"answers": {"spam": {"type": "noul", "noul": n as f64 / 10.0}}}),
        )?)
    })
    .build()
    .unwrap();
    let states: Vec<Value> = (0..3).map(|n| json!({"n": n})).collect();
    let ds = c.evaluate_batch(&states, &spam_questions(), 2).await.unwrap();
    let ps: Vec<f64> = ds.iter().map(|d| d.noul("spam").unwrap().noul).collect();
    assert_eq!(ps, [0.0, 0.1, 0.2]);
    let states: Vec<Value> = (0..5).map(|n| json!({"n": n})).collect();
    let err = c.evaluate_batch(&states, &spam_questions(), 0).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "classifier: evaluate_batch: state 3: no answer for three"
    );
    let err = c.evaluate_batch(&[], &spam_questions(), 4).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "classifier: evaluate_batch: no states to evaluate"
    );
}

#[tokio::test]
async fn a_tape_records_live_calls_and_replays_them_offline() {
    let b = backend(vec![ok(spam_answer(0.77))]).await;
    let live = Classifier::system_one().base_url(&b.url).build().unwrap();
    let tape = Tape::recording(live);
    let qs = questions([noul("spam", "Is `text` spam?")]).unwrap();
    let st = json!({"text": "hi"});
    let d = tape.call("triage").unwrap().evaluate(&st, &qs).await.unwrap();
    assert_eq!(d.noul("spam").unwrap().noul, 0.77);
    let saved = serde_json::to_string(&tape.recorded()).unwrap();
    drop(b); // no backend from here on
    let replay = Tape::replaying(serde_json::from_str(&saved).unwrap());
    let again = replay.call("triage").unwrap().evaluate(&st, &qs).await.unwrap();
    assert_eq!(again.noul("spam").unwrap().noul, 0.77);
    assert_eq!(again.model, "jev-1.13.0");
}

/// A scripted in-process model: first calls `tool` with `{}`, then answers with the last
/// tool result's text.
fn calls_then_echoes(tool: &'static str) -> Client {
    Client::in_process("scripted", move |req| async move {
        let last = req.messages.last().cloned().unwrap_or_default();
        if last["role"] == "tool" {
            return Ok(Generation::text(format!(
                "tool said: {}",
                last["content"].as_str().unwrap_or("")
            )));
        }
        Ok(Generation::calls(vec![GeneratedCall {
            id: Some("call-1".into()),
            name: tool.into(),
            arguments: json!({}),
        }]))
    })
    .wait_for_fn(|request| async move {
        assert_eq!(request.kind, "input");
        Answer::output(request.id, "approved by a human")
    })
    .build()
    .unwrap()
}

#[tokio::test]
async fn a_gate_that_cannot_decide_escalates_through_the_loops_wait_for() {
    // The classifier is unsure (0.5); the tool gates on it and suspends; wait_for answers; the
    // tool runs again with the answer.
    let classifier = Classifier::custom(|_, _| async {
        Ok(toolnexus::classifier::Decision::from_wire(
            &json!({"answers": {"refund_ok": {"type": "noul", "noul": 0.5}}}),
        )?)
    })
    .build()
    .unwrap();
    let refund = Tool::new("refund", move |_args: Value, ctx: toolnexus::ToolContext| {
        let classifier = classifier.clone();
        async move {
            if let Some(answer) = &ctx.answer {
                return ToolResult::success(format!(
                    "refunded ({})",
                    answer.data.as_ref().unwrap()["output"]
                ));
            }
            let st = state("You approve refunds.", json!({"amount": 420}));
            let policy = Policy::new([Rule::at_least("refund_ok", 0.7, "refund")]);
            let out = gate(
                &classifier,
                &st,
                [noul("refund_ok", "Is a refund of `amount` fine?")],
                policy,
                None,
            )
            .await
            .unwrap();
            match out.suspension() {
                Some(pending) => pending,
                None => ToolResult::success("refunded without asking"),
            }
        }
    });
    let r = calls_then_echoes("refund")
        .run("refund order 7", &Toolkit::new([refund]))
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Done);
    assert_eq!(r.text, "tool said: refunded (\"approved by a human\")");
}

#[tokio::test]
async fn the_tool_guard_hook_denies_and_suspends_inside_the_loop() {
    let risky = |risk: f64| {
        Classifier::custom(move |_, _| async move {
            Ok(toolnexus::classifier::Decision::from_wire(
                &json!({"answers": {"risk": {
                "type": "score", "score": risk, "legend": {}, "probabilities": {}, "confidence": 0.95}}}),
            )?)
        })
        .build()
        .unwrap()
    };
    let delete = || {
        Tool::new("delete_all", |_: Value, _| async {
            ToolResult::success("deleted everything")
        })
    };

    // Deny: the tool never runs; the model reads why.
    let guard = ToolGuard::new(risky(3.0), OnError::Closed);
    let client = Client::in_process("scripted", |req| async move {
        let last = req.messages.last().cloned().unwrap_or_default();
        if last["role"] == "tool" {
            return Ok(Generation::text(
                last["content"].as_str().unwrap_or("").to_owned(),
            ));
        }
        Ok(Generation::calls(vec![GeneratedCall {
            id: Some("c1".into()),
            name: "delete_all".into(),
            arguments: json!({}),
        }]))
    })
    .hooks(Hooks::new().before_tool(guard.before_tool()))
    .build()
    .unwrap();
    let r = client.run("clean up", &Toolkit::new([delete()])).await.unwrap();
    assert_eq!(r.text, "denied by tool guard: high risk");

    // Ask: without wait_for the run halts pending on an approval request.
    let guard = ToolGuard::new(risky(2.0), OnError::Closed);
    let client = Client::in_process("scripted", |_| async {
        Ok(Generation::calls(vec![GeneratedCall {
            id: Some("c9".into()),
            name: "delete_all".into(),
            arguments: json!({"scope": "tmp"}),
        }]))
    })
    .hooks(Hooks::new().before_tool(guard.before_tool()))
    .build()
    .unwrap();
    let r = client.run("clean up", &Toolkit::new([delete()])).await.unwrap();
    assert_eq!(r.status, RunStatus::Pending);
    let pending = r.pending.unwrap();
    assert_eq!(pending.id, "toolguard:c9");
    assert_eq!(pending.kind, "approval");
    assert_eq!(pending.prompt, "Approve the call to delete_all? (medium risk)");
    assert_eq!(
        Value::Object(pending.data.unwrap()),
        json!({"tool": "delete_all", "arguments": {"scope": "tmp"}, "reason": "medium risk", "risk": 2.0})
    );
}
