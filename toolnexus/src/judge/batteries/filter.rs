//! ToolResultFilter: keep the chunks of a tool's output that are not confidently irrelevant
//! to the query.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value, json};

use super::{Judge, OnError, ROLE_TOOL_RESULT_FILTER, judge_setters};
use crate::classifier::Classifier;
use crate::client::hooks::ToolOutcome;
use crate::judge::{Band, noul_with, state};
use crate::result::ToolResult;

/// Which chunks were kept, by index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FilterVerdict {
    /// Kept chunk indexes, ascending.
    pub kept: Vec<usize>,
    /// Dropped chunk indexes, ascending.
    pub dropped: Vec<usize>,
    /// The decision's `calibrated` (`false` on error).
    pub calibrated: bool,
    /// The classifier's error, when it failed.
    pub error: Option<String>,
}

/// One noul per chunk (`chunks.<i>` relevant to `query`?); only a confident `no` drops.
#[derive(Clone, Debug)]
pub struct ToolResultFilter {
    judge: Judge,
    on_error: OnError,
}

judge_setters!(ToolResultFilter);

impl ToolResultFilter {
    /// Over `classifier`, failing `on_error`'s way (`Open` keeps everything).
    pub fn new(classifier: Classifier, on_error: OnError) -> Self {
        Self {
            judge: Judge::new(classifier),
            on_error,
        }
    }

    /// Judge `chunks` against `query`.
    pub async fn filter(&self, query: Value, chunks: &[&str]) -> FilterVerdict {
        let mut out = FilterVerdict {
            calibrated: true,
            ..FilterVerdict::default()
        };
        if chunks.is_empty() {
            return out;
        }
        let chunk_map: Map<String, Value> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (i.to_string(), Value::from(*c)))
            .collect();
        let qs = (0..chunks.len()).map(|i| {
            noul_with(
                i.to_string(),
                format!("Is `chunks.{i}` relevant to `query`?"),
                "this part helps answer the query",
                "this part does not help answer the query",
            )
        });
        let st = state(
            self.judge.role(ROLE_TOOL_RESULT_FILTER),
            json!({"query": query, "chunks": chunk_map}),
        );
        match self.judge.ask(&st, qs).await {
            Ok((answers, calibrated)) => {
                out.calibrated = calibrated;
                for i in 0..chunks.len() {
                    let no = answers
                        .get(&i.to_string())
                        .is_some_and(|a| a.band() == Some(Band::No));
                    if no { &mut out.dropped } else { &mut out.kept }.push(i);
                }
            }
            Err(e) => {
                out.calibrated = false;
                out.error = Some(e.to_string());
                match self.on_error {
                    OnError::Open => out.kept.extend(0..chunks.len()),
                    OnError::Closed => out.dropped.extend(0..chunks.len()),
                }
            }
        }
        out
    }

    /// An `after_tool` hook: a successful text result of two or more `"\n\n"`-separated
    /// chunks (and no media parts) keeps only the relevant ones; the query is
    /// `{tool, arguments}`.
    #[allow(clippy::type_complexity)]
    pub fn after_tool(
        &self,
    ) -> impl Fn(ToolOutcome) -> Pin<Box<dyn Future<Output = Option<ToolResult>> + Send>> + Send + Sync + 'static
    {
        let me = self.clone();
        move |ev: ToolOutcome| {
            let me = me.clone();
            Box::pin(async move {
                let r = &ev.result;
                let chunks: Vec<&str> = r.output.split("\n\n").collect();
                if r.is_error || !r.parts.is_empty() || chunks.len() < 2 {
                    return None;
                }
                let query = json!({"tool": ev.name, "arguments": ev.args});
                let v = me.filter(query, &chunks).await;
                if v.dropped.is_empty() {
                    return None;
                }
                let kept: Vec<&str> = v.kept.iter().map(|&i| chunks[i]).collect();
                let mut filtered = r.clone();
                filtered.output = kept.join("\n\n");
                Some(filtered)
            })
        }
    }
}
