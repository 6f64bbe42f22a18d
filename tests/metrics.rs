//! `MetricsRegistry::render` is byte-identical to the Python port's registry (toolnexus 0.21.0)
//! after the same events.
//!
//! The fixtures come from the Python registry itself:
//!     /work/ref/venv/bin/python tests/fixtures/metrics_gen.py
//! which reads `tests/fixtures/metrics_events.json` and writes `metrics_empty.txt` and
//! `metrics_expected.txt`.

use std::sync::Arc;

use serde_json::Value;
use toolnexus::ToolSource;
use toolnexus::client::metrics::{MetricEvent, MetricsRegistry};

const EVENTS: &str = include_str!("fixtures/metrics_events.json");
const EMPTY: &str = include_str!("fixtures/metrics_empty.txt");
const EXPECTED: &str = include_str!("fixtures/metrics_expected.txt");

/// The Python event dict → our event.
fn event(v: &Value) -> MetricEvent {
    let s = |k: &str| v[k].as_str().unwrap().to_string();
    let n = |k: &str| v[k].as_u64().unwrap();
    let ms = v["ms"].as_f64().unwrap();
    match v["event"].as_str().unwrap() {
        "llm" => MetricEvent::Llm {
            model: s("model"),
            ok: v["status"] == "ok",
            ms,
            prompt_tokens: n("prompt_tokens"),
            completion_tokens: n("completion_tokens"),
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
        },
        "tool" => MetricEvent::Tool {
            tool: s("tool"),
            source: serde_json::from_value::<ToolSource>(v["source"].clone()).unwrap(),
            is_error: v["is_error"].as_bool().unwrap(),
            pending: v["pending"].as_bool().unwrap_or(false),
            ms,
        },
        "run" => MetricEvent::Run {
            model: s("model"),
            turns: n("turns") as u32,
            tool_calls: n("tool_calls") as u32,
            total_tokens: n("total_tokens"),
            ms,
            error: v["error"].as_str().map(str::to_string),
        },
        other => panic!("unknown event {other}"),
    }
}

fn events() -> Vec<MetricEvent> {
    let list: Vec<Value> = serde_json::from_str(EVENTS).unwrap();
    list.iter().map(event).collect()
}

#[test]
fn empty_registry_renders_only_help_and_type() {
    assert_eq!(MetricsRegistry::new().render(), EMPTY);
    assert_eq!(EMPTY.lines().count(), 12);
    assert!(EMPTY.ends_with("counter\n"));
}

#[test]
fn render_matches_python_port_byte_for_byte() {
    let registry = MetricsRegistry::default();
    for ev in events() {
        registry.record(&ev);
    }
    let got = registry.render();
    assert_eq!(got, EXPECTED);
    // Rendering is a read: a second render is identical.
    assert_eq!(registry.render(), got);
}

#[test]
fn record_is_thread_safe_and_cumulative() {
    let registry = Arc::new(MetricsRegistry::new());
    let evs = Arc::new(events());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (registry, evs) = (registry.clone(), evs.clone());
            std::thread::spawn(move || {
                for ev in evs.iter() {
                    registry.record(ev);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let text = registry.render();
    assert!(text.contains("toolnexus_llm_requests_total{model=\"gpt-4o-mini\",status=\"ok\"} 8\n"));
    assert!(text.contains("toolnexus_llm_tokens_total{type=\"prompt\"} 504\n"));
    assert!(text.contains("toolnexus_tool_duration_seconds_count{tool=\"add\"} 12\n"));
    assert!(text.contains("toolnexus_run_errors_total{model=\"gpt-4o-mini\"} 4\n"));
}

#[test]
fn a_pending_tool_call_is_never_an_error() {
    let registry = MetricsRegistry::new();
    registry.record(&MetricEvent::Tool {
        tool: "approve".into(),
        source: ToolSource::Relay,
        is_error: true,
        pending: true,
        ms: 1.0,
    });
    let text = registry.render();
    assert!(text.contains(
        "toolnexus_tool_calls_total{tool=\"approve\",source=\"relay\",is_error=\"false\",pending=\"true\"} 1\n"
    ));
    assert!(!text.contains("is_error=\"true\""));
}

#[test]
fn failed_llm_calls_count_no_tokens_and_successful_runs_no_errors() {
    let registry = MetricsRegistry::new();
    registry.record(&MetricEvent::Llm {
        model: "m".into(),
        ok: false,
        ms: 10.0,
        prompt_tokens: 99,
        completion_tokens: 99,
        cache_read_tokens: 99,
        cache_creation_tokens: 99,
    });
    registry.record(&MetricEvent::Run {
        model: "m".into(),
        turns: 1,
        tool_calls: 0,
        total_tokens: 0,
        ms: 10.0,
        error: None,
    });
    let text = registry.render();
    assert!(text.contains("toolnexus_llm_requests_total{model=\"m\",status=\"error\"} 1\n"));
    assert!(!text.contains("toolnexus_llm_tokens_total{"));
    assert!(text.ends_with("# TYPE toolnexus_run_errors_total counter\n"));
}
