//! Relay (declaration-only) tools (SPEC §10 addendum): a schema with no behaviour here. A
//! call suspends with `kind:"tool_call"` carrying the call under `data.calls`; the host runs
//! it and answers with `data.results` (or, for one call, `data.output`/`data.isError`).
//! Also the transcript surgery the durable resume needs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::ClientError;
use super::wire::{self, Call};
use crate::context::ToolContext;
use crate::result::ToolResult;
use crate::suspend::{Answer, Request};
use crate::tool::{BUILTIN_NAMES, Tool, ToolSource};
use crate::toolkit::Toolkit;

/// The `Request.kind` of a relayed call.
pub const RELAY_KIND: &str = "tool_call";

/// One host-executed result, keyed by the relayed call's id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayResult {
    /// The call id from `data.calls[].id`.
    pub id: String,
    /// The tool output.
    pub output: String,
    /// Whether the host's tool failed.
    #[serde(rename = "isError")]
    pub is_error: bool,
}

/// The answer carrying `results`, one per relayed call.
pub fn relay_answer(request_id: impl Into<String>, results: &[RelayResult]) -> Answer {
    Answer {
        id: request_id.into(),
        ok: true,
        data: Some(json!({ "results": results })),
        reason: None,
    }
}

/// A declaration-only tool (`source: relay`): calling it suspends the run so the host can
/// execute the call itself.
///
/// ```
/// use serde_json::json;
/// use toolnexus::client::relay_tool;
/// let t = relay_tool("lookup_order", "Look an order up", json!({"type": "object"}));
/// assert_eq!(t.source().as_str(), "relay");
/// ```
pub fn relay_tool(name: impl Into<String>, description: impl Into<String>, schema: Value) -> Tool {
    let name: String = name.into();
    let tool_name = name.clone();
    Tool::new(name, move |args: Value, ctx: ToolContext| {
        let name = tool_name.clone();
        async move {
            match ctx.answer {
                Some(answer) => result_from_answer(&name, ctx.call_id.as_deref().unwrap_or(""), &answer),
                None => {
                    let mut data = Map::new();
                    data.insert(
                        "calls".into(),
                        json!([{
                            "id": ctx.call_id.unwrap_or_default(),
                            "name": name,
                            "input": args,
                            "arguments": args.to_string(),
                        }]),
                    );
                    let prompt = format!("relay tool call {name} to the caller for execution");
                    ToolResult::suspend(Request::new(RELAY_KIND, prompt).with_data(data))
                }
            }
        }
    })
    .with_description(description)
    .with_schema(schema)
    .with_source(ToolSource::Relay)
}

fn result_from_answer(name: &str, call_id: &str, answer: &Answer) -> ToolResult {
    if !answer.ok {
        let reason = answer
            .reason
            .and_then(|r| serde_json::to_value(r).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "declined".into());
        return ToolResult::failure(format!("relay declined for {name}: {reason}"));
    }
    let data = answer.data.clone().unwrap_or(Value::Null);
    let as_result = |v: &Value| ToolResult {
        output: v["output"].as_str().unwrap_or("").to_owned(),
        is_error: v["isError"].as_bool().unwrap_or(false),
        ..ToolResult::default()
    };
    if let Some(results) = data["results"].as_array() {
        return match results.iter().find(|r| r["id"] == call_id) {
            Some(r) => as_result(r),
            None => ToolResult::failure(format!("no result supplied on resume for {name}")),
        };
    }
    if data["output"].is_string() {
        return as_result(&data);
    }
    ToolResult::failure(format!("no result supplied on resume for {name}"))
}

/// Fails the run when a relay tool is named like a builtin (SPEC §4A), checked even when
/// builtins are off so a future builtin cannot capture a declaration-only tool.
pub(crate) fn check_collisions(toolkit: &Toolkit) -> Result<(), ClientError> {
    let bad: Vec<String> = toolkit
        .tools()
        .filter(|t| t.source() == ToolSource::Relay && BUILTIN_NAMES.contains(&t.name()))
        .map(|t| t.name().to_owned())
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(ClientError::RelayCollision(bad))
    }
}

/// Stamp the provider's call id and raw arguments onto each relay suspension (the tool
/// cannot know them), then fold every relay call of the turn into the first one, so the
/// single surfaced request carries all of them in call order.
pub(crate) fn stamp_and_merge(calls: &[Call], outcomes: &mut [(Value, ToolResult)]) {
    /// The `data.calls` of a result's relay suspension.
    fn relayed_calls(result: &mut ToolResult) -> Option<&mut Vec<Value>> {
        let request = result.pending_mut().filter(|p| p.kind == RELAY_KIND)?;
        request.data.as_mut()?.get_mut("calls")?.as_array_mut()
    }
    let mut relayed = Vec::new();
    for (i, (call, (_, result))) in calls.iter().zip(outcomes.iter_mut()).enumerate() {
        let Some(relayed_calls) = relayed_calls(result) else {
            continue;
        };
        for c in relayed_calls.iter_mut() {
            if c["id"].as_str().is_none_or(str::is_empty) {
                c["id"] = call.id.clone().into();
            }
            c["arguments"] = call.raw.clone().into();
        }
        relayed.push(i);
    }
    let Some((&first, rest)) = relayed.split_first() else {
        return;
    };
    let mut extra = Vec::new();
    for &i in rest {
        if let Some(c) = relayed_calls(&mut outcomes[i].1) {
            extra.extend(c.iter().cloned());
        }
    }
    if let Some(target) = relayed_calls(&mut outcomes[first].1) {
        target.extend(extra);
    }
}

/// The last assistant turn that issued tool calls: its index and calls.
pub(crate) fn halted_turn(history: &[Value]) -> Option<(usize, Vec<Call>)> {
    history.iter().enumerate().rev().find_map(|(i, m)| {
        if m["role"] != "assistant" {
            return None;
        }
        let calls: Vec<Call> = if let Some(tcs) = m["tool_calls"].as_array().filter(|a| !a.is_empty()) {
            tcs.iter()
                .map(|tc| {
                    let raw = tc["function"]["arguments"].as_str().unwrap_or("").to_owned();
                    Call::new(
                        tc["id"].as_str().unwrap_or("").to_owned(),
                        tc["function"]["name"].as_str().unwrap_or("").to_owned(),
                        raw,
                    )
                })
                .collect()
        } else {
            m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_use")
                .map(wire::anthropic_call)
                .collect()
        };
        (!calls.is_empty()).then_some((i, calls))
    })
}

/// The results recorded after a halted assistant turn, in order, keyed by call id: OpenAI
/// `tool` messages or Anthropic `tool_result` blocks.
pub(crate) fn recorded_results(after: &[Value]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for m in after {
        if m["role"] == "tool" {
            out.push((m["tool_call_id"].as_str().unwrap_or("").to_owned(), m.clone()));
        } else if let Some(blocks) = m["content"].as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                out.push((b["tool_use_id"].as_str().unwrap_or("").to_owned(), b.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolContext;

    #[tokio::test]
    async fn relay_suspends_then_reads_its_result_by_call_id() {
        let t = relay_tool("lookup", "d", json!({"type": "object"}));
        let ctx = ToolContext::default().with_call_id("c9");
        let r = t.execute(json!({"q": 1}), ctx.clone()).await;
        let req = r.pending().unwrap();
        assert_eq!(req.kind, "tool_call");
        assert_eq!(
            serde_json::to_string(&req.data).unwrap(),
            r#"{"calls":[{"id":"c9","name":"lookup","input":{"q":1},"arguments":"{\"q\":1}"}]}"#
        );
        let answer = relay_answer(
            &req.id,
            &[RelayResult {
                id: "c9".into(),
                output: "found".into(),
                is_error: false,
            }],
        );
        let r = t.execute(json!({}), ctx.clone().with_answer(answer)).await;
        assert_eq!(r.to_json(), r#"{"output":"found","isError":false}"#);
        let other = relay_answer(&req.id, &[]);
        let r = t.execute(json!({}), ctx.with_answer(other)).await;
        assert_eq!(
            r.to_json(),
            r#"{"output":"no result supplied on resume for lookup","isError":true}"#
        );
    }

    #[test]
    fn collision_with_a_builtin_name_is_refused() {
        let tk = Toolkit::new([relay_tool("bash", "", json!({})), relay_tool("ok", "", json!({}))]);
        let err = check_collisions(&tk).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("toolnexus: relay tool name collides with a built-in tool: bash")
        );
        // An ordinary (non-relay) tool named like a builtin is fine.
        let tk = Toolkit::new([Tool::new("bash", |_, _| async { ToolResult::success("") })]);
        assert!(check_collisions(&tk).is_ok());
    }
}
