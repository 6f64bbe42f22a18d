//! Reading one streamed LLM turn (SPEC §8 "Streaming"): OpenAI deltas with tool calls
//! assembled by index, Anthropic `content_block_*`/`message_delta` events. Text deltas go to
//! the run's [`Emitter`] as they arrive; the turn comes back whole, as a non-streamed
//! response would.

use std::collections::BTreeMap;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};

use super::error::DecodeError;
use super::event::{Emitter, StreamEvent};
use super::transport::{HttpResponse, TransportError};
use super::wire::{Call, Style, Turn, Usage};
use super::{ClientError, gemini};

/// The turn `resp`'s event stream carries.
pub(crate) async fn read_turn(
    style: Style,
    resp: HttpResponse,
    emitter: &Emitter,
) -> Result<Turn, ClientError> {
    match style {
        Style::OpenAi => read_openai(resp, emitter).await,
        Style::Anthropic => read_anthropic(resp, emitter).await,
        Style::Gemini => read_gemini(resp, emitter).await,
    }
}

/// Gemini's `alt=sse` stream: each event a whole `GenerateContentResponse` chunk.
async fn read_gemini(resp: HttpResponse, emitter: &Emitter) -> Result<Turn, ClientError> {
    let mut turn = gemini::StreamTurn::default();
    let mut events = std::pin::pin!(events(resp));
    while let Some(ev) = events.next().await {
        let (_, data) = ev?;
        let Ok(chunk) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if let Some(msg) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(DecodeError::shape(format!("provider stream error: {msg}")).into());
        }
        let delta = turn.push(&chunk);
        if !delta.is_empty() {
            emitter.send(StreamEvent::Text { delta }).await;
        }
    }
    Ok(turn.finish())
}

/// The SSE `data` payloads of a response, parsed; unparseable events are skipped.
fn events(resp: HttpResponse) -> impl Stream<Item = Result<(String, String), ClientError>> {
    resp.body.eventsource().map(|r| match r {
        Ok(ev) => Ok((ev.event, ev.data)),
        // The body's own failure (a read timeout included) as it is.
        Err(EventStreamError::Transport(e)) => Err(e.into()),
        Err(e) => Err(ClientError::Transport(
            TransportError::network(format!("reading the event stream failed: {e}")).with_source(e),
        )),
    })
}

#[derive(Default)]
struct Slot {
    id: String,
    name: String,
    args: String,
}

async fn read_openai(resp: HttpResponse, emitter: &Emitter) -> Result<Turn, ClientError> {
    let mut usage = Usage::default();
    let mut content = String::new();
    let mut slots: BTreeMap<u64, Slot> = BTreeMap::new();
    let mut events = std::pin::pin!(events(resp));
    while let Some(ev) = events.next().await {
        let (_, data) = ev?;
        if data.trim() == "[DONE]" {
            break;
        }
        let Ok(j) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if let Some(u) = j.get("usage").filter(|u| u.is_object()) {
            usage.add(Usage::from_raw(Style::OpenAi, u));
        }
        let Some(delta) = j.pointer("/choices/0/delta") else {
            continue;
        };
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            content.push_str(text);
            emitter
                .send(StreamEvent::Text {
                    delta: text.to_owned(),
                })
                .await;
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            let slot = slots.entry(tc["index"].as_u64().unwrap_or(0)).or_default();
            if let Some(id) = tc["id"].as_str().filter(|s| !s.is_empty()) {
                slot.id = id.to_owned();
            }
            if let Some(name) = tc["function"]["name"].as_str() {
                slot.name.push_str(name);
            }
            if let Some(args) = tc["function"]["arguments"].as_str() {
                slot.args.push_str(args);
            }
        }
    }
    let calls: Vec<Call> = slots
        .into_values()
        .map(|s| Call::new(s.id, s.name, s.args))
        .collect();
    let message = if calls.is_empty() {
        json!({"role": "assistant", "content": content})
    } else {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(
                |c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw}}),
            )
            .collect();
        let content = if content.is_empty() {
            Value::Null
        } else {
            content.clone().into()
        };
        json!({"role": "assistant", "content": content, "tool_calls": tool_calls})
    };
    Ok(Turn {
        message,
        text: content,
        calls,
        usage,
    })
}

struct Block {
    kind: String,
    id: String,
    name: String,
    text: String,
    json: String,
}

async fn read_anthropic(resp: HttpResponse, emitter: &Emitter) -> Result<Turn, ClientError> {
    let mut usage = Usage::default();
    let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
    let mut stop_reason = String::new();
    let mut events = std::pin::pin!(events(resp));
    while let Some(ev) = events.next().await {
        let (_, data) = ev?;
        let Ok(j) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        match j["type"].as_str().unwrap_or("") {
            "message_start" => {
                if let Some(u) = j.pointer("/message/usage") {
                    usage.add(Usage::from_raw(Style::Anthropic, u));
                }
            }
            "content_block_start" => {
                let cb = &j["content_block"];
                let s = |k: &str| cb[k].as_str().unwrap_or("").to_owned();
                blocks.insert(
                    j["index"].as_u64().unwrap_or(0),
                    Block {
                        kind: s("type"),
                        id: s("id"),
                        name: s("name"),
                        text: String::new(),
                        json: String::new(),
                    },
                );
            }
            "content_block_delta" => {
                let Some(b) = blocks.get_mut(&j["index"].as_u64().unwrap_or(0)) else {
                    continue;
                };
                let d = &j["delta"];
                match d["type"].as_str() {
                    Some("text_delta") => {
                        let text = d["text"].as_str().unwrap_or("");
                        b.text.push_str(text);
                        emitter
                            .send(StreamEvent::Text {
                                delta: text.to_owned(),
                            })
                            .await;
                    }
                    Some("input_json_delta") => b.json.push_str(d["partial_json"].as_str().unwrap_or("")),
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = j.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    stop_reason = r.to_owned();
                }
                if let Some(u) = j.get("usage") {
                    usage.add(Usage::from_raw(Style::Anthropic, u));
                }
            }
            "error" => {
                let msg = j
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("stream error");
                return Err(DecodeError::shape(format!("provider stream error: {msg}")).into());
            }
            _ => {}
        }
    }
    let mut content = Vec::with_capacity(blocks.len());
    let mut calls = Vec::new();
    let mut text = String::new();
    for b in blocks.into_values() {
        if b.kind == "tool_use" {
            let call = Call::new(b.id, b.name, b.json);
            content.push(
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args_or_empty()}),
            );
            calls.push(call);
        } else {
            text.push_str(&b.text);
            content.push(json!({"type": "text", "text": b.text}));
        }
    }
    // A turn cut short (max_tokens) may carry a half-streamed tool_use: never run it.
    if stop_reason != "tool_use" {
        calls.clear();
    }
    Ok(Turn {
        message: json!({"role": "assistant", "content": content}),
        text,
        calls,
        usage,
    })
}
