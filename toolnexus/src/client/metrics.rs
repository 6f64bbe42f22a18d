//! Observability (SPEC §8): the semantic [`MetricEvent`]s a client emits, and the
//! [`MetricsRegistry`] that folds them into Prometheus counters and histograms.
//!
//! The rendered text is byte-identical to the other toolnexus ports after the same events:
//! fixed metric order, `# HELP`/`# TYPE` lines, series sorted by their rendered label string,
//! fixed duration buckets, escaped label values and a trailing newline.
//!
//! ```
//! use toolnexus::ToolSource;
//! use toolnexus::client::metrics::{MetricEvent, MetricsRegistry};
//!
//! let registry = MetricsRegistry::new();
//! registry.record(&MetricEvent::Tool {
//!     tool: "add".into(),
//!     source: ToolSource::Native,
//!     is_error: false,
//!     pending: false,
//!     ms: 20.0,
//! });
//! let text = registry.render();
//! assert!(text.contains(
//!     "toolnexus_tool_calls_total{tool=\"add\",source=\"native\",is_error=\"false\",pending=\"false\"} 1\n"
//! ));
//! assert!(text.contains("toolnexus_tool_duration_seconds_sum{tool=\"add\"} 0.02\n"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::wire::Usage;
use crate::ToolSource;

/// The `on_metric` sink: sees every [`MetricEvent`] as it happens.
pub type OnMetric = Arc<dyn Fn(&MetricEvent) + Send + Sync>;

/// Where one run's events go: the client's registry, then the run's `on_metric` (its own
/// when it set one, else the client's).
#[derive(Clone, Copy)]
pub(crate) struct Sink<'a> {
    pub(crate) registry: &'a MetricsRegistry,
    pub(crate) on_metric: Option<&'a OnMetric>,
}

impl Sink<'_> {
    pub(crate) fn emit(&self, event: MetricEvent) {
        self.registry.record(&event);
        if let Some(f) = self.on_metric {
            f(&event);
        }
    }

    /// The `llm` event of one provider call that began at `started`.
    pub(crate) fn llm(&self, model: &str, ok: bool, usage: Usage, started: Instant) {
        self.emit(MetricEvent::Llm {
            model: model.to_owned(),
            ok,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            prompt_tokens: if ok { usage.prompt_tokens } else { 0 },
            completion_tokens: if ok { usage.completion_tokens } else { 0 },
            cache_read_tokens: if ok { usage.cache_read_tokens } else { 0 },
            cache_creation_tokens: if ok { usage.cache_creation_tokens } else { 0 },
        });
    }
}

/// One significant point of a client's work, as handed to `on_metric` and folded into
/// [`MetricsRegistry`]. Readable records, not counter primitives.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricEvent {
    /// One LLM request (per call, not per run).
    Llm {
        /// The model id sent on the request.
        model: String,
        /// `true` when the provider answered successfully.
        ok: bool,
        /// Wall time of the call in milliseconds, retries included.
        ms: f64,
        /// Prompt tokens the provider reported for this call (0 on error).
        prompt_tokens: u64,
        /// Completion tokens the provider reported for this call (0 on error).
        completion_tokens: u64,
        /// Prompt tokens read from the provider's prompt cache (0 on error or uncached).
        cache_read_tokens: u64,
        /// Prompt tokens written to the provider's prompt cache (0 on error or uncached).
        cache_creation_tokens: u64,
    },
    /// One tool call.
    Tool {
        /// The tool's name.
        tool: String,
        /// Where the tool came from.
        source: ToolSource,
        /// The result was a failure. Never set together with `pending`.
        is_error: bool,
        /// The result was a §10 suspension: counted as a call, never as an error.
        pending: bool,
        /// Wall time of the call in milliseconds.
        ms: f64,
    },
    /// One finished `run`/`ask`.
    Run {
        /// The model id of the run.
        model: String,
        /// LLM round trips.
        turns: u32,
        /// Tool calls made.
        tool_calls: u32,
        /// Tokens summed across turns.
        total_tokens: u64,
        /// Wall time of the run in milliseconds.
        ms: f64,
        /// The error that ended the run, if it failed.
        error: Option<String>,
    },
    /// One classifier `evaluate` ([`crate::classifier`]). Not folded into the registry: the
    /// Prometheus text is the same whether or not a classifier shares the sink.
    ClassifierEvaluate {
        /// The model that answered (else the one configured).
        model: String,
        /// `true` when a decision came back.
        ok: bool,
        /// Wall time in milliseconds, retries included.
        ms: f64,
        /// Input tokens the backend reported (0 on error).
        prompt_tokens: u64,
        /// Output tokens the backend reported (0 on error).
        completion_tokens: u64,
        /// Why it failed, when it did.
        error: Option<String>,
    },
    /// Advisory: a choice question whose descriptions cannot tell its options apart.
    /// Emitted once per question key per classifier; the request goes out unchanged.
    ClassifierWarning {
        /// The question's key.
        question: String,
        /// What is wrong and how to fix it.
        warning: String,
    },
}

/// Histogram bucket bounds in seconds, fixed across all ports.
const BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
/// The `le` label of each bucket, rendered as the ports render them (`1`, not `1.0`).
const BUCKET_LES: [&str; 10] = ["0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60"];

#[derive(Clone, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        self.sum += seconds;
        self.count += 1;
        for (count, bound) in self.counts.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *count += 1;
            }
        }
    }
}

/// Series keyed by their rendered label string, so a `BTreeMap` yields them in the
/// byte order the format pins.
#[derive(Default)]
struct Series {
    llm_requests: BTreeMap<String, u64>,
    llm_tokens: BTreeMap<String, u64>,
    llm_duration: BTreeMap<String, Histogram>,
    tool_calls: BTreeMap<String, u64>,
    tool_duration: BTreeMap<String, Histogram>,
    run_errors: BTreeMap<String, u64>,
}

/// A cumulative, in-memory Prometheus registry fed by [`MetricEvent`]s.
///
/// `record` and `render` take `&self` and may be called from any thread.
#[derive(Default)]
pub struct MetricsRegistry {
    series: Mutex<Series>,
}

impl std::fmt::Debug for MetricsRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsRegistry").finish_non_exhaustive()
    }
}

impl MetricsRegistry {
    /// An empty registry: [`render`](Self::render) yields only `# HELP`/`# TYPE` lines.
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one event into the cumulative series.
    pub fn record(&self, event: &MetricEvent) {
        // One scratch key for every series touched: a series that already exists (every
        // event after the first of its kind) costs no allocation.
        let mut key = String::with_capacity(96);
        let mut s = self.lock();
        match event {
            MetricEvent::Llm {
                model,
                ok,
                ms,
                prompt_tokens,
                completion_tokens,
                cache_read_tokens,
                cache_creation_tokens,
            } => {
                let status = if *ok { "ok" } else { "error" };
                labels(&mut key, &[("model", model), ("status", status)]);
                *series(&mut s.llm_requests, &key) += 1;
                if *ok {
                    labels(&mut key, &[("type", "prompt")]);
                    *series(&mut s.llm_tokens, &key) += prompt_tokens;
                    labels(&mut key, &[("type", "completion")]);
                    *series(&mut s.llm_tokens, &key) += completion_tokens;
                    // Cache series appear only once a cache is used, so the text of an
                    // uncached client stays the other ports' byte for byte.
                    for (kind, n) in [
                        ("cache_read", cache_read_tokens),
                        ("cache_creation", cache_creation_tokens),
                    ] {
                        if *n > 0 {
                            labels(&mut key, &[("type", kind)]);
                            *series(&mut s.llm_tokens, &key) += n;
                        }
                    }
                }
                labels(&mut key, &[("model", model)]);
                series(&mut s.llm_duration, &key).observe(ms / 1000.0);
            }
            MetricEvent::Tool {
                tool,
                source,
                is_error,
                pending,
                ms,
            } => {
                // A suspension is a pause for the user, never a failure.
                let is_error = *is_error && !*pending;
                labels(
                    &mut key,
                    &[
                        ("tool", tool),
                        ("source", source.as_str()),
                        ("is_error", bool_str(is_error)),
                        ("pending", bool_str(*pending)),
                    ],
                );
                *series(&mut s.tool_calls, &key) += 1;
                labels(&mut key, &[("tool", tool)]);
                series(&mut s.tool_duration, &key).observe(ms / 1000.0);
            }
            MetricEvent::Run { model, error, .. } => {
                // An empty error message counts as no error, as in the other ports.
                if error.as_deref().is_some_and(|e| !e.is_empty()) {
                    labels(&mut key, &[("model", model)]);
                    *series(&mut s.run_errors, &key) += 1;
                }
            }
            MetricEvent::ClassifierEvaluate { .. } | MetricEvent::ClassifierWarning { .. } => {}
        }
    }

    /// The Prometheus text exposition of everything recorded so far, ending with a newline.
    pub fn render(&self) -> String {
        let s = self.lock();
        let mut out = String::new();
        counter(
            &mut out,
            "toolnexus_llm_requests_total",
            "Total LLM requests.",
            &s.llm_requests,
        );
        counter(
            &mut out,
            "toolnexus_llm_tokens_total",
            "Total tokens, by type.",
            &s.llm_tokens,
        );
        histogram(
            &mut out,
            "toolnexus_llm_request_duration_seconds",
            "LLM request duration in seconds.",
            &s.llm_duration,
        );
        counter(
            &mut out,
            "toolnexus_tool_calls_total",
            "Total tool calls.",
            &s.tool_calls,
        );
        histogram(
            &mut out,
            "toolnexus_tool_duration_seconds",
            "Tool execution duration in seconds.",
            &s.tool_duration,
        );
        counter(
            &mut out,
            "toolnexus_run_errors_total",
            "Total run errors.",
            &s.run_errors,
        );
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Series> {
        // The series stay consistent even if a holder panicked: every update is a plain add.
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn bool_str(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// The series under `key`, created empty on first use (the key is copied only then).
fn series<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

/// Renders ordered label pairs as `k="v",k="v"` into `out` (cleared first); the pair order
/// is part of the format.
fn labels(out: &mut String, pairs: &[(&str, &str)]) {
    out.clear();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push_str("=\"");
        let mut rest = *v;
        while let Some(at) = rest.find(['\\', '"', '\n']) {
            out.push_str(&rest[..at]);
            out.push_str(match rest.as_bytes()[at] {
                b'\\' => "\\\\",
                b'"' => "\\\"",
                _ => "\\n",
            });
            rest = &rest[at + 1..];
        }
        out.push_str(rest);
        out.push('"');
    }
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn counter(out: &mut String, name: &str, help: &str, series: &BTreeMap<String, u64>) {
    header(out, name, help, "counter");
    for (key, value) in series {
        let _ = writeln!(out, "{name}{} {value}", braced(key));
    }
}

fn histogram(out: &mut String, name: &str, help: &str, series: &BTreeMap<String, Histogram>) {
    header(out, name, help, "histogram");
    for (key, h) in series {
        let sep = if key.is_empty() { "" } else { "," };
        for (le, count) in BUCKET_LES.iter().zip(h.counts) {
            let _ = writeln!(out, "{name}_bucket{{{key}{sep}le=\"{le}\"}} {count}");
        }
        let _ = writeln!(out, "{name}_bucket{{{key}{sep}le=\"+Inf\"}} {}", h.count);
        let _ = writeln!(out, "{name}_sum{} {}", braced(key), format_number(h.sum));
        let _ = writeln!(out, "{name}_count{} {}", braced(key), h.count);
    }
}

/// `{labels}`, or nothing for a label-less series.
fn braced(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{{{key}}}")
    }
}

/// Formats a sum the way the reference ports do: integral values without a decimal point,
/// otherwise the shortest round-trip decimal, switching to exponent form (`5e-05`, two-digit
/// exponent) below `1e-4`.
fn format_number(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .to_string();
    }
    if x == 0.0 {
        return "0".to_string(); // -0.0 too
    }
    if x.fract() == 0.0 {
        // Exact integer digits, even past 2^53 (no exponent form for integral values).
        return format!("{x:.0}");
    }
    if x.abs() >= 1e-4 {
        return format!("{x}");
    }
    // `{:e}` gives the shortest round-trip mantissa with a bare exponent (`5e-5`).
    let sci = format!("{x:e}");
    match sci.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => sci,
    }
}

#[cfg(test)]
mod tests {
    use super::format_number;

    #[test]
    fn numbers_render_like_the_reference_ports() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (60.0, "60"),
            (1e20, "100000000000000000000"),
            (0.05, "0.05"),
            (2.5, "2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0001, "0.0001"),
            (0.00005, "5e-05"),
            (1.5e-7, "1.5e-07"),
            (1e-100, "1e-100"),
            (-0.5, "-0.5"),
            (f64::INFINITY, "inf"),
        ];
        for (x, want) in cases {
            assert_eq!(format_number(x), want, "{x:?}");
        }
    }
}
