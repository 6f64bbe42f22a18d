//! The shared agent fixtures' scripted model and tools (tests/fixtures/agents/README.md):
//! each `mockLLM.scripts` entry implemented once, as an OpenAI-style transport that picks
//! the script by the request's `model` and the rule by the transcript it is shown.
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::Barrier;
use toolnexus::client::transport::{HttpRequest, HttpResponse, HttpTransport, TransportError};
use toolnexus::client::{Client, ClientBuilder, Style};
use toolnexus::{Request, Tool, ToolContext, ToolResult};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/agents");

/// A fixture file, parsed.
pub fn fixture(name: &str) -> Value {
    let path = Path::new(FIXTURES).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Follow a `{"$ref": "../<name>/fixture.json#/<pointer>"}` into the local copy `<name>.json`.
pub fn deref(v: &Value) -> Value {
    let Some(r) = v.get("$ref").and_then(Value::as_str) else {
        return v.clone();
    };
    let (file, pointer) = r.split_once('#').expect("a $ref has a pointer");
    let name = file
        .trim_start_matches("../")
        .trim_end_matches("/fixture.json")
        .to_owned();
    fixture(&format!("{name}.json"))
        .pointer(pointer)
        .unwrap_or_else(|| panic!("{r} does not resolve"))
        .clone()
}

/// The scripted model of one fixture.
pub struct ScriptedModel {
    scripts: Map<String, Value>,
    usage: Value,
    /// When set, every `m-explore` call waits (bounded) for a second one to arrive: a run
    /// whose children were not concurrent would never show two calls in flight.
    pub rendezvous: Option<Arc<Barrier>>,
    /// Every request body, in arrival order.
    pub bodies: Mutex<Vec<Value>>,
    ids: AtomicUsize,
}

impl ScriptedModel {
    pub fn new(mock_llm: &Value) -> Arc<Self> {
        let mock = deref(mock_llm);
        assert_eq!(mock["style"], "openai");
        let scripts = mock["scripts"]
            .as_object()
            .expect("scripts")
            .iter()
            .map(|(k, v)| (k.clone(), deref(v)))
            .collect();
        Arc::new(Self {
            scripts,
            usage: mock["usagePerCall"].clone(),
            rendezvous: None,
            bodies: Mutex::new(Vec::new()),
            ids: AtomicUsize::new(0),
        })
    }

    pub fn with_rendezvous(self: Arc<Self>) -> Arc<Self> {
        let mut me = Arc::into_inner(self).expect("not shared yet");
        me.rendezvous = Some(Arc::new(Barrier::new(2)));
        Arc::new(me)
    }

    async fn reply(&self, body: Value) -> Value {
        self.bodies.lock().unwrap().push(body.clone());
        let model = body["model"].as_str().unwrap_or_default();
        let rules = self
            .scripts
            .get(model)
            .unwrap_or_else(|| panic!("no script for model {model}"));
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let tool_msgs: Vec<String> = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect();
        let rule = rules
            .as_array()
            .expect("a script is a list of rules")
            .iter()
            .find(|r| matches(r, &tool_msgs))
            .unwrap_or_else(|| panic!("no rule of {model} matches {tool_msgs:?}"));
        if model == "m-explore"
            && let Some(b) = &self.rendezvous
        {
            let _ = tokio::time::timeout(Duration::from_secs(5), b.wait()).await;
        }
        if rule.get("blocksUntil").is_some() {
            // "released-or-aborted": nothing releases it here; the abort drops this future.
            std::future::pending::<()>().await;
        }
        let message = match rule.get("toolCalls") {
            Some(calls) => {
                let calls: Vec<Value> = calls
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| {
                        let n = self.ids.fetch_add(1, Ordering::SeqCst);
                        json!({"id": format!("call_{n}"), "type": "function",
                               "function": {"name": c["name"], "arguments": c["args"].to_string()}})
                    })
                    .collect();
                json!({"role": "assistant", "content": null, "tool_calls": calls})
            }
            None => {
                let text = expand(rule["text"].as_str().expect("a text rule"), &tool_msgs, &messages);
                json!({"role": "assistant", "content": text})
            }
        };
        json!({"choices": [{"message": message, "finish_reason": "stop"}], "usage": self.usage, "model": model})
    }
}

fn matches(rule: &Value, tool_msgs: &[String]) -> bool {
    if rule["always"] == true {
        return true;
    }
    if let Some(n) = rule.get("whenToolMsgs") {
        return match n {
            Value::Number(n) => tool_msgs.len() as u64 == n.as_u64().unwrap(),
            Value::String(s) => {
                let min: usize = s.trim_start_matches(">=").parse().expect(">=N");
                tool_msgs.len() >= min
            }
            _ => panic!("whenToolMsgs {n}"),
        };
    }
    if let Some(s) = rule["whenNoToolMsgContains"].as_str() {
        return !tool_msgs.iter().any(|m| m.contains(s));
    }
    if let Some(s) = rule["whenToolMsgContains"].as_str() {
        return tool_msgs.iter().any(|m| m.contains(s));
    }
    panic!("unknown rule {rule}")
}

fn expand(template: &str, tool_msgs: &[String], messages: &[Value]) -> String {
    let last_user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let numbered = last_user
        .lines()
        .filter(|l| {
            let digits = l.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && l[digits..].starts_with(". ")
        })
        .count();
    template
        .replace(
            "<first tool msg content>",
            tool_msgs.first().map_or("", String::as_str),
        )
        .replace(
            "<last tool msg content>",
            tool_msgs.last().map_or("", String::as_str),
        )
        .replace("<join all tool msg contents with ' + '>", &tool_msgs.join(" + "))
        .replace(
            "<count of numbered inbox items in last user msg>",
            &numbered.to_string(),
        )
}

impl HttpTransport for ScriptedModel {
    fn post(
        &self,
        request: HttpRequest,
    ) -> futures::future::BoxFuture<'_, Result<HttpResponse, TransportError>> {
        Box::pin(async move { Ok(HttpResponse::json(&self.reply(request.json()).await)) })
    }
}

/// The fixtures' tools, by name.
pub fn tool(name: &str) -> Tool {
    match name {
        "lookup" => Tool::new("lookup", |args: Value, _| async move {
            ToolResult::success(format!("data({})", args["q"].as_str().unwrap_or_default()))
        })
        .with_schema(json!({"type": "object", "properties": {"q": {"type": "string"}}})),
        "check_secret" => Tool::new("check_secret", |_: Value, ctx: ToolContext| async move {
            match ctx.answer {
                Some(a) if a.ok => ToolResult::success("secret-token"),
                Some(_) => ToolResult::failure("declined"),
                None => ToolResult::suspend(Request::new("approval", "approve secret access?")),
            }
        })
        .with_schema(json!({"type": "object", "properties": {}})),
        other => panic!("no fixture tool {other}"),
    }
}

/// The client template of a runtime on the scripted model `t`: OpenAI style, no retries.
pub fn scripted_client(t: Arc<dyn HttpTransport>) -> ClientBuilder {
    Client::builder()
        .base_url("http://127.0.0.1:9/v1")
        .style(Style::OpenAi)
        .model("m")
        .api_key("k")
        .retries(0)
        .transport(t)
}
