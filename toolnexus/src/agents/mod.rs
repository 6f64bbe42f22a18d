//! Sub-agents and the agent runtime (SPEC §7D): an agent is a tool — a system prompt × a
//! filtered toolkit view × the §8 client loop — that a coordinator delegates to through
//! the `task` tool, each child a loop of its own with a budget, suspensions that climb to
//! whoever can answer them, and durable resume.
//!
//! | concept | file |
//! |---|---|
//! | [`AgentDef`], [`Registry`] | `def.rs` |
//! | Level 1: [`agent`], [`Agent::run`], [`Agent::as_tool`] | `agent.rs` |
//! | [`AgentRuntime`]: handle table, state machine, six verbs, `list`/`inspect` | `runtime.rs` |
//! | [`Handle`], [`HandleState`], [`TaskResult`], [`TaskStatus`] | `handle.rs` |
//! | the `task` tool | `task_tool.rs` |
//! | [`Budget`], [`LimitName`] | `budget.rs` |
//! | the turn gate (backpressure gate 3) | `gate.rs` |
//! | the two delivery rails, [`InboxItem`] | `delivery.rs` |
//! | eviction of closed handles ([`RuntimeBuilder::retain_closed`]) | `retention.rs` |
//! | escalation and [`AgentRuntime::resume`] | `suspend.rs` |
//! | [`Clock`], [`SystemClock`], [`VirtualClock`] | `clock.rs` |
//! | §7E heartbeat: [`AgentRuntime::start_agent`], [`StartedAgent`] | `heartbeat.rs` |
//! | `Agent::serve`: §7B's A2A serve of an agent (feature `serve`) | `serve.rs` |
//!
//! Each handle's turn is one `Client::run_with` of a client the runtime builds for it:
//! its soul as the system prompt, its tools (plus `task` when it has a team), its model,
//! an escalating `wait_for`, the runtime's one conversation store under the handle's id,
//! and a transport behind the global turn gate. There is no second loop.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::agents::{AgentDef, AgentRuntime, Registry, TaskStatus};
//! use toolnexus::client::transport::{from_fn, HttpResponse};
//! use toolnexus::client::{Client, Style};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A scripted model: the coordinator delegates once, the explorer answers, the
//! // coordinator reports what it heard.
//! let model = from_fn(|req| async move {
//!     let body = req.json();
//!     let tool_msgs: Vec<&str> = body["messages"].as_array().unwrap().iter()
//!         .filter(|m| m["role"] == "tool").filter_map(|m| m["content"].as_str()).collect();
//!     let message = match (body["model"].as_str().unwrap(), tool_msgs.first()) {
//!         ("coord", None) => json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
//!             "function": {"name": "task", "arguments": "{\"agent\":\"explore\",\"prompt\":\"find it\"}"}}]}),
//!         ("coord", Some(heard)) => json!({"role": "assistant", "content": format!("explore said: {heard}")}),
//!         _ => json!({"role": "assistant", "content": "found it"}),
//!     };
//!     Ok(HttpResponse::json(&json!({"choices": [{"message": message}]})))
//! });
//! let registry = Registry::new([
//!     AgentDef::new("coordinator", "delegates").model("coord").team(["explore"]),
//!     AgentDef::new("explore", "read-only research"),
//! ]).unwrap();
//! let client = Client::builder()
//!     .base_url("http://127.0.0.1:9/v1")
//!     .style(Style::OpenAi)
//!     .model("m")
//!     .api_key("k")
//!     .transport(model);
//! let rt = AgentRuntime::builder(client)
//!     .build(registry)
//!     .unwrap();
//! let r = rt.run("coordinator", "go").await.unwrap();
//! assert_eq!(r.status, TaskStatus::Done);
//! assert_eq!(r.text, "explore said: found it");
//! let ids: Vec<String> = rt.list().into_iter().map(|v| v.id).collect();
//! assert_eq!(ids, ["root/coordinator.1", "root/coordinator.1/explore.1"]);
//! # });
//! ```

mod agent;
mod budget;
mod clock;
mod def;
mod delivery;
mod error;
mod gate;
mod handle;
mod heartbeat;
mod retention;
mod runtime;
#[cfg(all(feature = "a2a", feature = "serve", feature = "skills"))]
mod serve;
mod suspend;
mod task_tool;

pub use agent::{Agent, agent};
pub use budget::{Budget, BudgetDecision, BudgetExtension, BudgetInfo, LimitName, OnBudget};
pub use clock::{Clock, SystemClock, VirtualClock};
pub use def::{AgentDef, INHERIT, OnClose, OnSpawn, Registry};
pub use delivery::{EXTERNAL, InboxItem, TIMER};
pub use error::{AgentError, DefError, ResumeError, SpawnError, VerbError, ZeroBudget};
pub use handle::{CloseReason, Handle, HandleState, HandleView, TaskResult, TaskStatus, Transition};
pub use heartbeat::StartedAgent;
pub use runtime::{AgentRuntime, ROOT, RuntimeBuilder};
