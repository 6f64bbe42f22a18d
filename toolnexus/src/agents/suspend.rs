//! Suspension across handles (SPEC §7D "Suspension escalation & durable resume", §10
//! addendum): a suspending child is a suspending tool to its parent. The nearest agent up
//! the chain holding a `wait_for` answers it inline (`running→suspended→running`); with no
//! interpreter anywhere every level parks and the root returns `pending`, its request's
//! `data.path` naming the suspended subtree. [`AgentRuntime::resume`] routes the Answer to
//! the deepest suspended handle, which replays its turn from the rewound checkpoint, and
//! cascades up: each parent replays, its `task` call reattaching to the existing child.

use std::sync::Arc;

use serde_json::Value;

use super::error::ResumeError;
use super::handle::{Handle, HandleState, TaskResult, TaskStatus};
use super::runtime::{AgentRuntime, ROOT, Shared, Table};
use crate::suspend::{Answer, Request, WaitFor};

/// `request` with `data.path` set to `h`'s id segments — the one portable place for it.
pub(crate) fn with_path(request: &Request, h: &Handle) -> Request {
    let mut r = request.clone();
    let path = h.path().into_iter().map(Value::String).collect();
    r.data
        .get_or_insert_with(Default::default)
        .insert("path".into(), Value::Array(path));
    r
}

/// The `wait_for` of a resumed turn: every suspension in it gets the host's Answer.
pub(crate) fn one_shot(answer: Answer) -> WaitFor {
    Arc::new(move |_request| {
        let answer = answer.clone();
        Box::pin(async move { answer })
    })
}

/// `h`'s escalating `wait_for`: the nearest agent on its chain (itself first) that holds
/// one answers, and `h` is `suspended` meanwhile. `None` when nobody can: the run halts.
pub(crate) fn escalator(shared: &Arc<Shared>, table: &Table, h: &Handle) -> Option<WaitFor> {
    let (who, interpreter) = {
        let mut at = table.get(h.id());
        let mut found = None;
        while let Some(n) = at {
            if let Some(w) = n.def.as_ref().and_then(|d| d.wait_for.clone()) {
                found = Some((n.handle.clone(), w));
                break;
            }
            at = n.parent.as_ref().and_then(|p| table.get(p.id()));
        }
        found?
    };
    let shared = shared.clone();
    let h = h.clone();
    Some(Arc::new(move |request: Request| {
        let (shared, h, who, interpreter) = (shared.clone(), h.clone(), who.clone(), interpreter.clone());
        Box::pin(async move {
            flip(&shared, &h, HandleState::Running, HandleState::Suspended);
            shared.log(format!(
                "{h}: running→suspended (pending \"{}\": {})",
                request.kind, request.prompt
            ));
            let by = if who == h {
                "self".to_owned()
            } else {
                who.to_string()
            };
            shared.log(format!("{h}: escalate → {by} answers (nearest interpreter)"));
            let answer = interpreter(request).await;
            flip(&shared, &h, HandleState::Suspended, HandleState::Running);
            shared.log(format!("{h}: suspended→running (Answer ok={})", answer.ok));
            answer
        })
    }))
}

/// Move `h` from `from` to `to`, only if it is still in `from` (an inline suspension of a
/// handle closed meanwhile stays closed).
fn flip(shared: &Shared, h: &Handle, from: HandleState, to: HandleState) {
    if let Some(n) = shared.lock().get_mut(h.id())
        && n.state == from
    {
        n.set_state(to);
    }
}

/// The deepest suspended handle under `id` (children first, spawn order).
fn deepest_suspended(table: &Table, id: &str) -> Option<Handle> {
    let n = table.get(id)?;
    n.children
        .iter()
        .find_map(|c| deepest_suspended(table, c.id()))
        .or_else(|| (n.state == HandleState::Suspended && n.pending.is_some()).then(|| n.handle.clone()))
}

impl AgentRuntime {
    /// Durable resume: hand `answer` (its id echoing the pending request's) to the deepest
    /// suspended handle, which goes `suspended→idle` (checkpoint restored) then
    /// `idle→running`, replaying its turn with the Answer; then each suspended ancestor
    /// replays in turn, its `task` call reattaching to the existing child by task key.
    /// Returns the outermost replayed result. Turns and usage grow; nothing resets.
    ///
    /// The replayed turn re-runs the leaf's own tools from the start of the turn: make a
    /// tool that may suspend idempotent, or suspend before its irreversible step.
    pub async fn resume(&self, answer: Answer) -> Result<TaskResult, ResumeError> {
        let sh = &self.shared;
        let leaf = {
            let table = sh.lock();
            let leaf = deepest_suspended(&table, ROOT).ok_or(ResumeError::NothingSuspended)?;
            let pending = table[leaf.id()]
                .pending
                .as_ref()
                .map(|p| p.id.clone())
                .unwrap_or_default();
            if pending != answer.id {
                return Err(ResumeError::AnswerMismatch {
                    answer: answer.id,
                    pending,
                    handle: leaf.id().to_owned(),
                });
            }
            leaf
        };
        sh.log(format!(
            "{leaf}: resume with Answer(ok={}) at checkpoint",
            answer.ok
        ));
        let mut result = self.replay(&leaf, Some(answer)).await;
        let mut at = sh.lock()[leaf.id()].parent.clone();
        while let Some(p) = at.filter(|p| p.id() != ROOT) {
            if result.status != TaskStatus::Done || sh.lock()[p.id()].state != HandleState::Suspended {
                break;
            }
            sh.log(format!("{p}: cascade resume (replay reattaches by task key)"));
            result = self.replay(&p, None).await;
            at = sh.lock()[p.id()].parent.clone();
        }
        Ok(result)
    }

    /// `suspended→idle` (Answer accepted), then a wake replaying the suspended turn's input.
    async fn replay(&self, h: &Handle, answer: Option<Answer>) -> TaskResult {
        let sh = &self.shared;
        let launched = {
            let mut table = sh.lock();
            let n = table.get_mut(h.id()).expect("a suspended handle is in the table");
            n.pending = None;
            n.set_state(HandleState::Idle);
            let input = n.pending_input.take().unwrap_or_else(|| "continue".to_owned());
            sh.log(format!(
                "{h}: suspended→idle (Answer accepted, checkpoint restored)"
            ));
            sh.launch(&mut table, h, Some(input), answer)
        };
        match launched {
            Ok(mut rx) => sh.wait_on(h, &mut rx, None).await,
            Err(refused) => *refused,
        }
    }
}
