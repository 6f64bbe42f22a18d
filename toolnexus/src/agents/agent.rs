//! The Level-1 surface (SPEC §7D): [`agent`] makes an [`Agent`], which runs one-shot
//! ([`Agent::run`]) or becomes a tool of the classic API ([`Agent::as_tool`]) — the
//! axiom's two directions. Everything compiles down to the runtime's verbs.

use std::path::PathBuf;

use serde_json::{Map, json};

use super::budget::Budget;
use super::def::{AgentDef, Registry};
use super::error::{AgentError, DefError};
use super::handle::{CloseReason, Handle, TaskResult, TaskStatus};
use super::runtime::{AgentRuntime, RuntimeBuilder};
use crate::client::{Hooks, OnMetric};
use crate::result::ToolResult;
use crate::suspend::WaitFor;
use crate::tool::{Tool, ToolSource};
use crate::toolkit::Toolkit;

/// An agent with its team attached: its registry is the transitive closure of its team.
///
/// ```
/// use serde_json::json;
/// use toolnexus::agents::{agent, AgentRuntime};
/// use toolnexus::client::transport::{from_fn, HttpResponse};
/// use toolnexus::client::{Client, Style};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = from_fn(|_req| async {
///     Ok(HttpResponse::json(&json!({"choices": [{"message": {"role": "assistant", "content": "42"}}]})))
/// });
/// let client = Client::builder()
///     .base_url("http://127.0.0.1:9/v1")
///     .style(Style::OpenAi)
///     .model("m")
///     .api_key("k")
///     .transport(model);
/// let rt = AgentRuntime::builder(client);
/// let explore = agent("explore", "read-only research");
/// let coder = agent("coder", "implements changes").team([&explore]);
/// assert_eq!(coder.registry().unwrap().names(), ["coder", "explore"]);
/// let r = explore.run("what is the answer?", rt.clone()).await.unwrap();
/// assert_eq!(r.text, "42");
/// let tool = explore.as_tool(rt);
/// assert_eq!((tool.name(), tool.description()), ("explore", "read-only research"));
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct Agent {
    def: AgentDef,
    members: Vec<Agent>,
}

/// An agent named `name` that `does` what the line says (SPEC §7D Level 1).
pub fn agent(name: impl Into<String>, does: impl Into<String>) -> Agent {
    Agent {
        def: AgentDef::new(name, does),
        members: Vec::new(),
    }
}

impl Agent {
    fn edit(mut self, f: impl FnOnce(AgentDef) -> AgentDef) -> Self {
        self.def = f(self.def);
        self
    }

    /// Its definition.
    pub fn def(&self) -> &AgentDef {
        &self.def
    }

    /// Its name.
    pub fn name(&self) -> &str {
        self.def.name()
    }

    /// See [`AgentDef::uses`].
    pub fn uses(self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.edit(|d| d.uses(tools))
    }

    /// See [`AgentDef::uses_from`].
    pub fn uses_from<S: AsRef<str>>(self, toolkit: &Toolkit, names: impl IntoIterator<Item = S>) -> Self {
        self.edit(|d| d.uses_from(toolkit, names))
    }

    /// See [`AgentDef::soul`].
    pub fn soul(self, soul: impl Into<String>) -> Self {
        self.edit(|d| d.soul(soul))
    }

    /// See [`AgentDef::soul_file`].
    pub fn soul_file(self, path: impl Into<PathBuf>) -> Self {
        self.edit(|d| d.soul_file(path))
    }

    /// Its team: listing the agents is the wiring (and gives it the `task` tool).
    pub fn team<'a>(mut self, members: impl IntoIterator<Item = &'a Agent>) -> Self {
        for m in members {
            self.def = self.def.team([m.name().to_owned()]);
            self.members.push(m.clone());
        }
        self
    }

    /// See [`AgentDef::budget`].
    pub fn budget(self, budget: Budget) -> Self {
        self.edit(|d| d.budget(budget))
    }

    /// See [`AgentDef::model`].
    pub fn model(self, model: impl Into<String>) -> Self {
        self.edit(|d| d.model(model))
    }

    /// See [`AgentDef::wait_for`].
    pub fn wait_for(self, wait_for: WaitFor) -> Self {
        self.edit(|d| d.wait_for(wait_for))
    }

    /// See [`AgentDef::on_spawn`].
    pub fn on_spawn(self, f: impl Fn(&Handle) + Send + Sync + 'static) -> Self {
        self.edit(|d| d.on_spawn(f))
    }

    /// See [`AgentDef::on_close`].
    pub fn on_close(self, f: impl Fn(&Handle, CloseReason) + Send + Sync + 'static) -> Self {
        self.edit(|d| d.on_close(f))
    }

    /// See [`AgentDef::hooks`].
    pub fn hooks(self, hooks: Hooks) -> Self {
        self.edit(|d| d.hooks(hooks))
    }

    /// See [`AgentDef::on_metric`].
    pub fn on_metric(self, f: OnMetric) -> Self {
        self.edit(|d| d.on_metric(f))
    }

    /// The registry: this agent and, transitively, its team (first definition of a name wins).
    pub fn registry(&self) -> Result<Registry, DefError> {
        let mut defs: Vec<AgentDef> = Vec::new();
        let mut stack = vec![self];
        while let Some(a) = stack.pop() {
            if defs.iter().any(|d| d.name() == a.name()) {
                continue;
            }
            defs.push(a.def.clone());
            stack.extend(a.members.iter().rev());
        }
        Registry::new(defs)
    }

    /// A runtime over this agent's registry.
    pub fn runtime(&self, runtime: RuntimeBuilder) -> Result<AgentRuntime, AgentError> {
        runtime.build(self.registry()?)
    }

    /// One-shot: build a runtime, run this agent on `prompt`, close the tree. A result
    /// that is `pending` leaves nobody to resume it — use [`runtime`](Self::runtime) and
    /// [`AgentRuntime::resume`] for a durable host.
    pub async fn run(&self, prompt: &str, runtime: RuntimeBuilder) -> Result<TaskResult, AgentError> {
        let rt = self.runtime(runtime)?;
        let r = rt.run(self.name(), prompt).await?;
        rt.close(&rt.root()).await;
        Ok(r)
    }

    /// This agent as a [`Tool`] of the classic API: source `agent`, schema `{prompt}`, and
    /// a result of only the final text plus metadata `{agent, turns, totalTokens}`. Each
    /// call runs on a fresh runtime.
    pub fn as_tool(&self, runtime: RuntimeBuilder) -> Tool {
        let me = self.clone();
        Tool::new(self.name().to_owned(), move |args: serde_json::Value, _ctx| {
            let (me, runtime) = (me.clone(), runtime.clone());
            async move {
                let Some(prompt) = args["prompt"].as_str() else {
                    return ToolResult::failure("missing required argument: prompt (a string)");
                };
                let r = match me.run(prompt, runtime).await {
                    Ok(r) => r,
                    Err(e) => return ToolResult::failure(e),
                };
                let mut meta = Map::new();
                meta.insert("agent".into(), me.name().into());
                meta.insert("turns".into(), r.turns.into());
                meta.insert("totalTokens".into(), r.total_tokens.into());
                let out = if r.status == TaskStatus::Done || r.status == TaskStatus::Pending {
                    ToolResult::success(r.text)
                } else {
                    ToolResult::failure(format!("[{}] {}", r.status, r.text))
                };
                out.with_metadata(meta)
            }
        })
        .with_description(self.def.does().to_owned())
        .with_schema(json!({
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"]
        }))
        .with_source(ToolSource::Agent)
    }
}
