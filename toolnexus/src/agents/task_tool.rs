//! The `task` tool (SPEC §7D "Model surface"): `{agent, prompt}` = spawn → wake → wait →
//! close, fused into one solicited call. Only an agent whose def declares a team gets it;
//! its description lists only that team, name-sorted, from each member's `does`. A
//! replayed call (durable resume) reattaches to the existing child by its task key —
//! agent and prompt — and never spawns a duplicate.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::def::AgentDef;
use super::handle::{Handle, TaskStatus};
use super::runtime::{AgentRuntime, Shared};
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource};

/// The `task` tool of the handle `parent` running `def`.
pub(crate) fn task_tool(shared: Arc<Shared>, parent: Handle, def: &AgentDef) -> Tool {
    let mut team = def.team.clone();
    team.sort();
    team.dedup();
    let roster = team
        .iter()
        .filter_map(|name| shared.registry.get(name))
        .map(|d| format!("{}: {}", d.name(), d.does()))
        .collect::<Vec<_>>()
        .join("; ");
    let description = format!("Delegate a subtask to an isolated subagent. Available agents — {roster}");
    let team = Arc::new(team);
    Tool::new("task", move |args: Value, _ctx| {
        let rt = AgentRuntime {
            shared: shared.clone(),
        };
        let (parent, team) = (parent.clone(), team.clone());
        async move { delegate(&rt, &parent, &team, &args).await }
    })
    .with_description(description)
    .with_schema(json!({
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "Which agent of your team does the work"},
            "prompt": {"type": "string", "description": "The complete subtask: the agent sees nothing else"}
        },
        "required": ["agent", "prompt"]
    }))
    .with_source(ToolSource::Agent)
}

async fn delegate(rt: &AgentRuntime, parent: &Handle, team: &[String], args: &Value) -> ToolResult {
    let (Some(agent), Some(prompt)) = (args["agent"].as_str(), args["prompt"].as_str()) else {
        return ToolResult::failure("task needs two strings: `agent` (a team member) and `prompt`");
    };
    if !team.iter().any(|m| m == agent) {
        let names = if team.is_empty() {
            "none".to_owned()
        } else {
            team.join(", ")
        };
        return ToolResult::failure(format!("agent \"{agent}\" not in this agent's team ({names})"));
    }
    let key = (agent.to_owned(), prompt.to_owned());
    let existing = {
        let table = rt.shared.lock();
        table[parent.id()]
            .children
            .iter()
            .find(|c| {
                table
                    .get(c.id())
                    .is_some_and(|n| n.task_key.as_ref() == Some(&key))
            })
            .map(|c| (c.clone(), table[c.id()].state))
    };
    let (child, result) = match existing {
        Some((child, state)) => {
            rt.shared.log(format!(
                "{parent}: task replay → REATTACH to {child} (state {state})"
            ));
            let r = rt.wait(&child, None).await;
            (child, r)
        }
        None => {
            let child = match rt.spawn(parent, agent, None) {
                Ok(c) => c,
                Err(e) => return ToolResult::failure(e),
            };
            if let Some(n) = rt.shared.lock().get_mut(child.id()) {
                n.task_key = Some(key);
            }
            if let Err(e) = rt.wake(&child, Some(prompt.to_owned())) {
                return ToolResult::failure(e);
            }
            let r = rt.wait(&child, None).await;
            (child, r)
        }
    };
    if let Some(request) = result
        .pending
        .clone()
        .filter(|_| result.status == TaskStatus::Pending)
    {
        // A suspending agent is a suspending tool (SPEC §10, unchanged).
        return ToolResult::suspend(request);
    }
    rt.close(&child).await;
    let output = match result.status {
        TaskStatus::Done => result.text.clone(),
        status => format!("[{status}] {}", result.text),
    };
    let mut meta = Map::new();
    meta.insert("agent".into(), agent.into());
    meta.insert("turns".into(), result.turns.into());
    meta.insert("totalTokens".into(), result.total_tokens.into());
    let r = if result.is_error {
        ToolResult::failure(output)
    } else {
        ToolResult::success(output)
    };
    r.with_metadata(meta)
}
