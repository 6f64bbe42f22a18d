//! [`AgentRuntime`]: the handle table, the state machine and the six host verbs (SPEC §7D)
//! — `spawn`, `post`, `wake`, `wait`, `interrupt`, `close` — plus the read-only `list` and
//! `inspect`. Each handle's turn is one run of the §8 [`Client`](crate::client::Client) loop the runtime builds
//! for it; the runtime adds the bookkeeping around that run, never a second loop.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::budget::{Budget, BudgetDecision, BudgetInfo, Carved, LimitName, OnBudget};
use super::clock::{Clock, SystemClock};
use super::def::{AgentDef, INHERIT, Registry, zero_field};
use super::delivery::{self, InboxItem};
use super::error::{AgentError, SpawnError, VerbError};
use super::gate::{GatedTransport, TurnGate};
use super::handle::{
    CloseReason, Handle, HandleState, HandleView, Ledger, TaskResult, TaskStatus, Transition,
};
use super::retention::{DEFAULT_RETAIN_CLOSED, Retention};
use super::task_tool;
use crate::client::{
    ClientBuilder, ClientError, ConversationStore, InMemoryStore, MetricEvent, OnMetric, RunOptions,
    RunStatus,
};
use crate::suspend::{Answer, WaitFor};
use crate::toolkit::Toolkit;

/// The id of the runtime's root handle, the parent of every entry agent.
pub const ROOT: &str = "root";

/// Builds an [`AgentRuntime`] from a [`ClientBuilder`] — the template of every handle's
/// client, so every client setting (endpoint, key or `api_key_env`, timeouts, retries,
/// transport, store, hooks, metric sink, …) is set there, once — plus the runtime's own
/// settings.
///
/// Per handle the runtime sets on a copy of the template: the agent's `model` (unless it
/// is `inherit`), its soul as the system prompt (when it has one), its `max_turns`, its
/// `hooks` and `on_metric` (when its def sets them), and its own `wait_for` (a template's
/// `wait_for` is dropped: the runtime escalates suspensions itself). The template's
/// transport runs behind the turn gate and its store is the one store of every handle.
#[derive(Clone)]
pub struct RuntimeBuilder {
    client: ClientBuilder,
    clock: Option<Arc<dyn Clock>>,
    on_budget: Option<OnBudget>,
    inbox_cap: usize,
    max_concurrent_turns: usize,
    shutdown: Duration,
    retain_closed: usize,
    retain_closed_for: Option<Duration>,
}

impl RuntimeBuilder {
    fn new(client: ClientBuilder) -> Self {
        Self {
            client,
            clock: None,
            on_budget: None,
            inbox_cap: 8,
            max_concurrent_turns: 8,
            shutdown: Duration::from_millis(200),
            retain_closed: DEFAULT_RETAIN_CLOSED,
            retain_closed_for: None,
        }
    }
    /// The clock of every timer and deadline (default real time).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }
    /// The `on_budget` callback of every agent whose def sets none (unset: a limit stops).
    /// When, and under which lock, it runs: see [`AgentDef::on_budget`].
    pub fn on_budget(mut self, f: impl Fn(&BudgetInfo) -> BudgetDecision + Send + Sync + 'static) -> Self {
        self.on_budget = Some(Arc::new(f));
        self
    }
    /// Items an inbox holds before a post is rejected (default 8).
    pub fn inbox_cap(mut self, cap: usize) -> Self {
        self.inbox_cap = cap;
        self
    }
    /// Model calls in flight at once across the runtime (default 8).
    pub fn max_concurrent_turns(mut self, n: usize) -> Self {
        self.max_concurrent_turns = n;
        self
    }
    /// How long a graceful close lets a running turn finish (default 200 ms).
    pub fn shutdown(mut self, grace: Duration) -> Self {
        self.shutdown = grace;
        self
    }

    /// Closed handles kept for `inspect`/`wait` (default 256): when one more closes, the
    /// oldest closed ones beyond `n` are evicted (live handles never are), so a long-lived
    /// runtime — a served agent spawns a handle per task — stays bounded. An evicted id
    /// is an unknown handle to every verb.
    pub fn retain_closed(mut self, n: usize) -> Self {
        self.retain_closed = n;
        self
    }
    /// Also evict closed handles older than `age` on the runtime clock (default: no age
    /// bound). Checked whenever a handle closes.
    pub fn retain_closed_for(mut self, age: Duration) -> Self {
        self.retain_closed_for = Some(age);
        self
    }

    /// Check the client template (by building a client from it) and build over `registry`.
    pub fn build(self, registry: Registry) -> Result<AgentRuntime, AgentError> {
        let gate = TurnGate::new(self.max_concurrent_turns);
        let mut template = self.client;
        let seams = template.take_agent_seams();
        let store = seams.store.unwrap_or_else(|| Arc::new(InMemoryStore::new()));
        let template = template.store(store.clone()).transport(Arc::new(GatedTransport {
            gate: gate.clone(),
            inner: seams.transport,
        }));
        template.clone().build()?;
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock::default()));
        let root = Node::new(Handle::new(ROOT), None, None, 0, Carved::unlimited());
        Ok(AgentRuntime {
            shared: Arc::new(Shared {
                registry,
                template,
                gate,
                store,
                clock,
                on_metric: seams.on_metric,
                on_budget: self.on_budget,
                inbox_cap: self.inbox_cap,
                shutdown: self.shutdown,
                table: Mutex::new(HashMap::from([(ROOT.to_owned(), root)])),
                retention: Mutex::new(Retention::new(self.retain_closed, self.retain_closed_for)),
                trace: Mutex::new(Vec::new()),
            }),
        })
    }
}

impl fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("client", &self.client)
            .field("inbox_cap", &self.inbox_cap)
            .field("max_concurrent_turns", &self.max_concurrent_turns)
            .finish_non_exhaustive()
    }
}

/// Why a running turn was aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abort {
    Interrupted,
    Closed,
}

/// One row of the handle table.
pub(crate) struct Node {
    pub handle: Handle,
    pub def: Option<Arc<AgentDef>>,
    pub parent: Option<Handle>,
    depth: usize,
    pub state: HandleState,
    closing: bool,
    inbox: VecDeque<InboxItem>,
    drained: Vec<InboxItem>,
    pub children: Vec<Handle>,
    /// Children spawned so far per agent name: ids count per name (`explore.2`).
    seq: HashMap<String, u32>,
    ledger: Ledger,
    carved: Carved,
    running_children: usize,
    wake_queue: VecDeque<Option<String>>,
    pub pending: Option<crate::suspend::Request>,
    pub pending_input: Option<String>,
    /// The limit a durable `on_budget` suspension waits on and what an `ok` Answer does:
    /// a refusal stops the run `incomplete` naming the limit.
    budget_approval: Option<(LimitName, OnApproval)>,
    pub task_key: Option<(String, String)>,
    last: Option<TaskResult>,
    epoch: watch::Sender<u64>,
    cancel: Option<CancellationToken>,
    abort: Option<Abort>,
    turn_no: u64,
    transitions: Vec<Transition>,
}

impl Node {
    fn new(
        handle: Handle,
        def: Option<Arc<AgentDef>>,
        parent: Option<Handle>,
        depth: usize,
        carved: Carved,
    ) -> Self {
        Self {
            handle,
            def,
            parent,
            depth,
            state: HandleState::Idle,
            closing: false,
            inbox: VecDeque::new(),
            drained: Vec::new(),
            children: Vec::new(),
            seq: HashMap::new(),
            ledger: Ledger::default(),
            carved,
            running_children: 0,
            wake_queue: VecDeque::new(),
            pending: None,
            pending_input: None,
            budget_approval: None,
            task_key: None,
            last: None,
            epoch: watch::channel(0).0,
            cancel: None,
            abort: None,
            turn_no: 0,
            transitions: Vec::new(),
        }
    }

    pub fn set_state(&mut self, to: HandleState) {
        if self.state != to {
            self.transitions.push(Transition { from: self.state, to });
            self.state = to;
        }
    }

    fn result(&self, status: TaskStatus, text: impl Into<String>) -> TaskResult {
        TaskResult::new(status, text, self.ledger)
    }

    /// Record `r` as the last result and wake every waiter.
    fn settle(&mut self, r: TaskResult) {
        self.last = Some(r);
        self.epoch.send_modify(|e| *e += 1);
    }

    /// The "last result" branch of `wait`: a settled handle answers at once.
    fn settled(&self) -> Option<TaskResult> {
        match self.state {
            HandleState::Closed => Some(
                self.last
                    .clone()
                    .unwrap_or_else(|| self.result(TaskStatus::Closed, "closed")),
            ),
            HandleState::Suspended => self.pending.as_ref().map(|req| {
                self.result(TaskStatus::Pending, req.prompt.clone())
                    .with_pending(super::suspend::with_path(req, &self.handle))
            }),
            HandleState::Idle if self.wake_queue.is_empty() => self.last.clone(),
            _ => None,
        }
    }

    fn agent(&self) -> &str {
        self.def.as_deref().map_or(ROOT, AgentDef::name)
    }
}

pub(crate) type Table = HashMap<String, Node>;

/// What the runtime shares with its turns and tools.
pub(crate) struct Shared {
    pub registry: Registry,
    /// Every handle's client starts as a copy of this (gated transport, the one store).
    template: ClientBuilder,
    pub gate: Arc<TurnGate>,
    pub store: Arc<dyn ConversationStore>,
    pub clock: Arc<dyn Clock>,
    /// The host's metric sink, taken out of the template (see [`RuntimeBuilder`]).
    on_metric: Option<OnMetric>,
    on_budget: Option<OnBudget>,
    inbox_cap: usize,
    shutdown: Duration,
    table: Mutex<Table>,
    /// Locked only while `table` is held (one lock order).
    retention: Mutex<Retention>,
    trace: Mutex<Vec<String>>,
}

/// The agent runtime. Cheap to clone (one `Arc`); every clone is the same runtime.
///
/// ```
/// use serde_json::json;
/// use toolnexus::agents::{AgentDef, AgentRuntime, Registry, TaskStatus};
/// use toolnexus::client::transport::{from_fn, HttpResponse};
/// use toolnexus::client::{Client, Style};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = from_fn(|_req| async {
///     Ok(HttpResponse::json(&json!({"choices": [{"message": {"role": "assistant", "content": "hello"}}],
///                                   "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})))
/// });
/// let client = Client::builder()
///     .base_url("http://127.0.0.1:9/v1")
///     .style(Style::OpenAi)
///     .model("m")
///     .api_key("k")
///     .transport(model);
/// let rt = AgentRuntime::builder(client)
///     .build(Registry::new([AgentDef::new("greeter", "says hello")]).unwrap())
///     .unwrap();
/// let r = rt.run("greeter", "hi").await.unwrap();
/// assert_eq!((r.status, r.text.as_str(), r.total_tokens), (TaskStatus::Done, "hello", 5));
/// let h = rt.handle("root/greeter.1").unwrap();
/// assert_eq!(rt.transitions(&h).iter().map(ToString::to_string).collect::<Vec<_>>(), ["idle→running", "running→idle"]);
/// rt.close(&rt.root()).await;
/// assert!(rt.is_quiescent());
/// # });
/// ```
#[derive(Clone)]
pub struct AgentRuntime {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentRuntime")
            .field("registry", &self.shared.registry.names())
            .finish_non_exhaustive()
    }
}

impl AgentRuntime {
    /// A builder.
    pub fn builder(client: ClientBuilder) -> RuntimeBuilder {
        RuntimeBuilder::new(client)
    }

    /// The root handle, parent of every entry agent; `close(root)` stops everything.
    pub fn root(&self) -> Handle {
        Handle::new(ROOT)
    }

    /// The live or closed handle with id `id` (for a host looking into the tree).
    pub fn handle(&self, id: &str) -> Option<Handle> {
        self.shared.lock().get(id).map(|n| n.handle.clone())
    }

    /// The runtime's one conversation store: a handle's transcript is under its id.
    pub fn conversation_store(&self) -> Arc<dyn ConversationStore> {
        self.shared.store.clone()
    }

    /// The runtime's clock.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.shared.clock.clone()
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// Every trace line so far, in order (`<id>: idle→running (wake)`, …).
    pub fn trace(&self) -> Vec<String> {
        self.shared
            .trace
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every state change of `h`, in order.
    pub fn transitions(&self, h: &Handle) -> Vec<Transition> {
        self.shared
            .lock()
            .get(h.id())
            .map(|n| n.transitions.clone())
            .unwrap_or_default()
    }

    /// Model calls in flight now, and the most ever in flight at once.
    pub fn turns_in_flight(&self) -> (usize, usize) {
        (self.shared.gate.in_flight(), self.shared.gate.peak())
    }

    /// The tokens `h` may still spend (`None`: unlimited).
    pub fn remaining_tokens(&self, h: &Handle) -> Option<i64> {
        self.shared.lock().get(h.id()).and_then(|n| n.carved.pool.tokens)
    }

    /// Nothing running, suspended-inline or queued, and every turn-gate permit back.
    pub fn is_quiescent(&self) -> bool {
        let table = self.shared.lock();
        self.shared.gate.is_idle()
            && table
                .values()
                .all(|n| n.state != HandleState::Running && n.wake_queue.is_empty() && n.cancel.is_none())
    }

    /// Spawn the entry agent `agent` under the root, wake it with `prompt`, wait for its
    /// result (the Level-1 one-shot, without closing: the tree stays inspectable).
    pub async fn run(&self, agent: &str, prompt: &str) -> Result<TaskResult, SpawnError> {
        let h = self.spawn(&self.root(), agent, None)?;
        // A fresh child is idle and open: the wake cannot be refused.
        let _ = self.wake(&h, Some(prompt.to_owned()));
        Ok(self.wait(&h, None).await)
    }

    /// `spawn(parent, agent, budget?)`: a new idle child with a deterministic id; its budget
    /// is the def's overlaid with `budget`, carved against the parent's remainder; the
    /// parent's `max_depth` / `max_children` and the live ancestor walk are checked here.
    pub fn spawn(&self, parent: &Handle, agent: &str, budget: Option<Budget>) -> Result<Handle, SpawnError> {
        let sh = &self.shared;
        let def = sh
            .registry
            .get(agent)
            .cloned()
            .ok_or_else(|| SpawnError::UnknownAgent {
                name: agent.to_owned(),
                known: sh.registry.names(),
            })?;
        let own = budget.map_or(def.budget, |b| def.budget.overlay(b));
        zero_field(agent, &own)?;
        let now = sh.clock.now();
        let (handle, carved) = {
            let mut table = sh.lock();
            let p = table
                .get(parent.id())
                .ok_or_else(|| SpawnError::UnknownHandle(parent.id().to_owned()))?;
            if p.state == HandleState::Closed || p.closing {
                return Err(SpawnError::ParentClosed(parent.id().to_owned()));
            }
            if p.depth + 1 > p.carved.max_depth {
                return Err(SpawnError::MaxDepth(p.carved.max_depth));
            }
            // Lifetime spawns, not the child list: evicted children leave that list.
            if let Some(max) = p.carved.max_children
                && p.seq.values().sum::<u32>() >= max
            {
                return Err(SpawnError::MaxChildren(max));
            }
            if let Some(limit) = exhausted(&table, parent.id(), now) {
                return Err(SpawnError::Budget(limit));
            }
            let p = table.get_mut(parent.id()).expect("checked above");
            let seq = p.seq.entry(agent.to_owned()).or_default();
            *seq += 1;
            let handle = Handle::new(&format!("{}/{agent}.{seq}", parent.id()));
            let carved = Carved::carve(own, Some(&p.carved), now);
            let depth = p.depth + 1;
            p.children.push(handle.clone());
            let node = Node::new(
                handle.clone(),
                Some(def.clone()),
                Some(parent.clone()),
                depth,
                carved,
            );
            table.insert(handle.id().to_owned(), node);
            (handle, carved)
        };
        let tokens = carved
            .pool
            .tokens
            .map_or("unlimited".to_owned(), |t| t.to_string());
        sh.log(format!("{handle}: spawned (tokens {tokens})"));
        if let Some(f) = &def.on_spawn {
            // A host callback that panics must not take the spawner down with it.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| f(&handle)));
        }
        Ok(handle)
    }

    /// `post(h, item)`: append to the inbox — no transition. Full (gate 1) or closed is a
    /// synchronous error to the sender.
    pub fn post(&self, h: &Handle, item: InboxItem) -> Result<(), VerbError> {
        let sh = &self.shared;
        let mut table = sh.lock();
        let n = table
            .get_mut(h.id())
            .ok_or_else(|| VerbError::UnknownHandle(h.id().to_owned()))?;
        if n.state == HandleState::Closed || n.closing {
            return Err(VerbError::Closed(h.id().to_owned()));
        }
        if n.inbox.len() >= sh.inbox_cap {
            drop(table);
            sh.log(format!(
                "{h}: post REJECTED (inbox full, cap {}) from {}",
                sh.inbox_cap, item.from
            ));
            return Err(VerbError::InboxFull {
                handle: h.id().to_owned(),
                cap: sh.inbox_cap,
            });
        }
        n.inbox.push_back(item);
        Ok(())
    }

    /// `wake(h, prompt?)`: `idle → running` with the prompt and the drained inbox as the
    /// turn's input. Admission is atomic (check, slot, flip under one lock); over the
    /// parent's `max_concurrent` the wake queues FIFO until a sibling hands its slot over.
    /// A running or suspended handle keeps its inbox for later (only its Answer wakes a
    /// suspension); a spent budget settles it `incomplete` (see `wait`).
    pub fn wake(&self, h: &Handle, prompt: Option<String>) -> Result<(), VerbError> {
        let sh = &self.shared;
        let mut table = sh.lock();
        let n = table
            .get(h.id())
            .ok_or_else(|| VerbError::UnknownHandle(h.id().to_owned()))?;
        match n.state {
            HandleState::Closed => return Err(VerbError::Closed(h.id().to_owned())),
            HandleState::Running | HandleState::Suspended => return Ok(()),
            HandleState::Idle => {}
        }
        if n.closing {
            return Err(VerbError::Closed(h.id().to_owned()));
        }
        let parent = n.parent.clone();
        if let Some(p) = parent.as_ref().and_then(|p| table.get(p.id()))
            && p.running_children >= p.carved.max_concurrent
        {
            let cap = p.carved.max_concurrent;
            table
                .get_mut(h.id())
                .expect("checked")
                .wake_queue
                .push_back(prompt);
            drop(table);
            sh.log(format!("{h}: wake QUEUED (parent concurrency {cap})"));
            return Ok(());
        }
        let _ = sh.launch(&mut table, h, prompt, None);
        Ok(())
    }

    /// `wait(h, timeout?)`: the next result, or the last one when `h` is settled (idle with
    /// a result, suspended, closed). A timeout is an explicit `timeout` result; the run goes on.
    pub async fn wait(&self, h: &Handle, timeout: Option<Duration>) -> TaskResult {
        self.shared.wait(h, timeout).await
    }

    /// `interrupt(h)`: abort the in-flight run → `idle`, its drained inbox restored, its
    /// waiters told `interrupted`. On a suspended handle: drop the pending request → `idle`.
    /// Never a kill: the handle stays usable.
    pub fn interrupt(&self, h: &Handle) {
        self.shared.interrupt(h)
    }

    /// `close(h)`: stop accepting, close the children leaf-first, let a running turn finish
    /// within the shutdown grace (then interrupt it), call `on_close`, and keep the final
    /// state queryable. `close(root)` stops everything.
    pub async fn close(&self, h: &Handle) {
        self.shared.clone().close(h.clone(), false, None).await
    }

    /// `close(h, {force})`: like [`close`](Self::close), aborting a running turn at once.
    pub async fn close_forced(&self, h: &Handle) {
        self.shared.clone().close(h.clone(), true, None).await
    }

    /// Every handle but the root, depth-first in spawn order.
    pub fn list(&self) -> Vec<HandleView> {
        let table = self.shared.lock();
        let mut out = Vec::new();
        let mut stack: Vec<&Handle> = table[ROOT].children.iter().rev().collect();
        while let Some(h) = stack.pop() {
            if let Some(n) = table.get(h.id()) {
                out.push(view(n));
                stack.extend(n.children.iter().rev());
            }
        }
        out
    }

    /// One handle's view; an id never spawned here, or a closed handle already evicted
    /// (see [`RuntimeBuilder::retain_closed`]), is [`VerbError::UnknownHandle`].
    pub fn inspect(&self, h: &Handle) -> Result<HandleView, VerbError> {
        self.shared
            .lock()
            .get(h.id())
            .map(view)
            .ok_or_else(|| VerbError::UnknownHandle(h.id().to_owned()))
    }
}

fn view(n: &Node) -> HandleView {
    HandleView {
        id: n.handle.id().to_owned(),
        agent: n.agent().to_owned(),
        state: n.state,
        tokens: n.ledger.total_tokens,
        turns: n.ledger.turns,
        inbox: n.inbox.len(),
        children: n.children.iter().map(|c| c.id().to_owned()).collect(),
    }
}

/// The live ancestor walk: the first spent dimension of `id` or any ancestor at `now`.
fn exhausted(table: &Table, id: &str, now: Duration) -> Option<LimitName> {
    exhausted_at(table, id, now).map(|(_, limit)| limit)
}

/// [`exhausted`], with the handle whose pool is spent.
fn exhausted_at(table: &Table, id: &str, now: Duration) -> Option<(Handle, LimitName)> {
    let mut at = table.get(id);
    while let Some(n) = at {
        if let Some(limit) = n.carved.exhausted(now) {
            return Some((n.handle.clone(), limit));
        }
        at = n.parent.as_ref().and_then(|p| table.get(p.id()));
    }
    None
}

/// What a turn spent so far, counted from the client's metric events as they happen.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Spent {
    tokens: u64,
    tool_calls: u64,
    turns: u32,
}

impl Spent {
    /// Fold one event in: a successful model call is a turn and its reported tokens (prompt
    /// plus completion); every tool call counts, as in the client's own tally.
    fn count(&mut self, e: &MetricEvent) {
        match e {
            MetricEvent::Llm {
                ok: true,
                prompt_tokens,
                completion_tokens,
                ..
            } => {
                self.turns += 1;
                self.tokens += prompt_tokens + completion_tokens;
            }
            MetricEvent::Tool { .. } => self.tool_calls += 1,
            _ => {}
        }
    }
}

/// How a turn's client run ended, before it is booked.
enum Outcome {
    Ran(Box<crate::client::RunResult>),
    /// The run's token fired (an interrupt or a close).
    Cancelled,
    /// The wall deadline passed first.
    Wall,
    /// A budget approval was refused before the model was called.
    Budget(LimitName, String),
    /// `on_budget` suspended the run at `limit` mid-run and no interpreter answers: park
    /// for approval, with the input to run again when the Answer runs the turn.
    Parked(LimitName, OnApproval, Option<String>),
    Failed(String),
    Panicked(String),
}

/// What an `ok` Answer to a durable `on_budget` suspension does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnApproval {
    /// Run the saved input as the turn (a pre-turn suspension, or a run the wall deadline
    /// cut: the client saves a transcript only when a run ends, so there is none to go on).
    RunTurn,
    /// Continue the saved transcript with a fresh `max_turns` (a run stopped at it).
    Continue,
}

/// What `on_budget` answered about a limit hit mid-run.
enum MidRun {
    /// End the run `incomplete` (also no callback, a panic, an extension of 0).
    Stop,
    /// Go on with this much more of the limit.
    Extend(u64),
    /// Ask for approval (inline through the nearest interpreter, else durably).
    Suspend,
}

/// What the pre-turn budget check settled on.
enum Admit {
    /// Run the turn.
    Run,
    /// Continue the saved transcript (an approved mid-run suspension at `max_turns`).
    Continue,
    /// Ask the nearest interpreter first; run only on an `ok` Answer.
    Approve(WaitFor, Box<crate::suspend::Request>, LimitName),
}

impl From<ClientError> for Outcome {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Cancelled => Outcome::Cancelled,
            e => Outcome::Failed(e.to_string()),
        }
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn log(&self, line: String) {
        self.trace.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }

    /// Start a turn on idle `h` under the held lock (the atomic admission): the ancestor
    /// walk, the inbox drain, the slot, the flip — then the run on a task of its own.
    /// Returns a receiver of `h`'s next result, or the result when the budget refused.
    pub(crate) fn launch(
        self: &Arc<Self>,
        table: &mut Table,
        h: &Handle,
        prompt: Option<String>,
        answer: Option<Answer>,
    ) -> Result<watch::Receiver<u64>, Box<TaskResult>> {
        let (admit, answer) = self.admit(table, h, &prompt, answer)?;
        let n = table.get_mut(h.id()).expect("launch of a known handle");
        // A continued transcript takes no new input: the inbox waits for the next turn.
        let block = if matches!(admit, Admit::Continue) {
            String::new()
        } else {
            let drained: Vec<InboxItem> = n.inbox.drain(..).collect();
            let block = delivery::render(h.id(), &drained);
            n.drained = drained;
            block
        };
        let input = [prompt.unwrap_or_default(), block]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        n.set_state(HandleState::Running);
        n.abort = None;
        n.turn_no += 1;
        let turn_no = n.turn_no;
        let cancel = CancellationToken::new();
        n.cancel = Some(cancel.clone());
        let rx = n.epoch.subscribe();
        if let Some(p) = n.parent.clone()
            && let Some(p) = table.get_mut(p.id())
        {
            p.running_children += 1;
        }
        self.log(format!("{h}: idle→running (wake)"));
        let sh = self.clone();
        let h = h.clone();
        tokio::spawn(async move {
            let spent = Arc::new(Mutex::new(Spent::default()));
            let turn = async {
                let go_on = match admit {
                    Admit::Approve(wait_for, request, limit) => {
                        if !wait_for(*request).await.ok {
                            return Outcome::Budget(limit, "approval declined".to_owned());
                        }
                        false
                    }
                    Admit::Run => false,
                    Admit::Continue => true,
                };
                sh.run_turn(&h, input, go_on, answer, cancel, spent.clone()).await
            };
            let outcome = AssertUnwindSafe(turn)
                .catch_unwind()
                .await
                .unwrap_or_else(|p| Outcome::Panicked(panic_text(&*p)));
            let spent = *spent.lock().unwrap_or_else(|e| e.into_inner());
            sh.book(&h, turn_no, outcome, spent);
        });
        Ok(rx)
    }

    /// The pre-turn budget check (the live ancestor walk) with `on_budget`: each spent
    /// limit is put to the callback once per turn — `Stop` (or no callback, or a panic)
    /// settles `incomplete`; `Extend` raises the spent pool and walks again; `Suspend`
    /// asks for approval inline through the nearest interpreter, else parks `h` durably
    /// with an `approval` request. A resume answering that request is consumed here.
    fn admit(
        self: &Arc<Self>,
        table: &mut Table,
        h: &Handle,
        prompt: &Option<String>,
        mut answer: Option<Answer>,
    ) -> Result<(Admit, Option<Answer>), Box<TaskResult>> {
        let n = table.get_mut(h.id()).expect("launch of a known handle");
        if let Some((limit, on_ok)) = n.budget_approval.take() {
            if answer.take().is_some_and(|a| a.ok) {
                self.log(format!("{h}: budget approval granted ({limit})"));
                // The allowance the approval grants: a fresh wall window from now (a
                // passed deadline would cut the turn at once); `Continue` gets fresh turns.
                if limit == LimitName::MaxWallMs {
                    n.carved.renew_wall(self.clock.now());
                }
                let admit = match on_ok {
                    OnApproval::RunTurn => Admit::Run,
                    OnApproval::Continue => Admit::Continue,
                };
                return Ok((admit, None));
            }
            return Err(self.budget_stop(table, h, limit, " (approval declined)".to_owned()));
        }
        let on_budget = self.on_budget_of(n);
        let mut asked = Vec::new();
        while let Some((at, limit)) = exhausted_at(table, h.id(), self.clock.now()) {
            let Some(f) = on_budget.as_ref().filter(|_| !asked.contains(&limit)) else {
                return Err(self.budget_stop(table, h, limit, String::new()));
            };
            asked.push(limit);
            let n = &table[h.id()];
            let info = BudgetInfo {
                handle: h.clone(),
                agent: n.agent().to_owned(),
                limit,
                exhausted_at: at.clone(),
                total_tokens: n.ledger.total_tokens,
            };
            let decision = match std::panic::catch_unwind(AssertUnwindSafe(|| f(&info))) {
                Ok(d) => d,
                Err(p) => {
                    let why = format!(" (on_budget panicked: {})", panic_text(&*p));
                    return Err(self.budget_stop(table, h, limit, why));
                }
            };
            match decision {
                BudgetDecision::Stop => return Err(self.budget_stop(table, h, limit, String::new())),
                BudgetDecision::Extend(ext) => {
                    let pool = &mut table.get_mut(at.id()).expect("walked").carved;
                    pool.extend(limit, ext.amount);
                    self.log(format!("{h}: on_budget extend {limit} at {at} by {}", ext.amount));
                }
                BudgetDecision::Suspend => {
                    if let Some(w) = super::suspend::escalator(self, table, h) {
                        let request = approval_request(h, limit);
                        return Ok((Admit::Approve(w, Box::new(request), limit), answer));
                    }
                    let parked = self.park(table, h, limit, OnApproval::RunTurn, prompt.clone());
                    table.get_mut(h.id()).expect("known").settle(parked.clone());
                    return Err(Box::new(parked));
                }
            }
        }
        Ok((Admit::Run, answer))
    }

    /// The `on_budget` callback that applies to `n`: its def's, else the runtime's.
    fn on_budget_of(&self, n: &Node) -> Option<OnBudget> {
        n.def
            .as_ref()
            .and_then(|d| d.on_budget.clone())
            .or_else(|| self.on_budget.clone())
    }

    /// Ends when `h`'s wall deadline passes mid-run and `on_budget` does not extend it.
    /// Each time the (possibly extended) deadline passes, the callback is asked — outside
    /// the table lock, so it may read the runtime — and `Extend` moves the deadline on
    /// while the run continues. `Stop`, no callback, a panic and an extension of 0 end the
    /// run `incomplete` ([`Outcome::Wall`]). `Suspend` asks the nearest interpreter while
    /// the run goes on (`ok`: a fresh wall window; a refusal: `incomplete`); with none, the
    /// run ends [`Outcome::Parked`], `input` to run again once approved.
    async fn wall_deadline(self: &Arc<Self>, h: &Handle, input: &str) -> Outcome {
        loop {
            let (deadline, f) = {
                let table = self.lock();
                let Some(n) = table.get(h.id()) else {
                    return Outcome::Wall;
                };
                (n.carved.deadline, self.on_budget_of(n))
            };
            let Some(deadline) = deadline else {
                return std::future::pending().await;
            };
            let now = self.clock.now();
            if now < deadline {
                self.clock.sleep(deadline - now).await;
                continue;
            }
            if f.is_none() {
                return Outcome::Wall;
            }
            let limit = LimitName::MaxWallMs;
            match self.ask_mid_run(h, limit) {
                MidRun::Stop => return Outcome::Wall,
                MidRun::Extend(more) => {
                    if let Some(n) = self.lock().get_mut(h.id()) {
                        n.carved.extend(limit, more);
                    }
                }
                MidRun::Suspend => match self.approve_inline(h, limit).await {
                    Some(true) => {
                        let now = self.clock.now();
                        if let Some(n) = self.lock().get_mut(h.id()) {
                            n.carved.renew_wall(now);
                        }
                    }
                    Some(false) => return Outcome::Wall,
                    None => return Outcome::Parked(limit, OnApproval::RunTurn, Some(input.to_owned())),
                },
            }
        }
    }

    /// Ask the nearest interpreter on `h`'s chain to approve going past `limit` mid-run:
    /// its verdict, or `None` when nobody can answer (the run is then parked durably).
    async fn approve_inline(self: &Arc<Self>, h: &Handle, limit: LimitName) -> Option<bool> {
        let w = super::suspend::escalator(self, &self.lock(), h)?;
        let ok = w(approval_request(h, limit)).await.ok;
        self.log(format!("{h}: mid-run budget approval (inline) {limit}: ok={ok}"));
        Some(ok)
    }

    /// The durable `on_budget` suspension, before a turn or at the booking of a run parked
    /// mid-way: `h` goes `suspended` with an `approval` request naming `limit` (its
    /// `data.path` stamped), the answer `on_ok` decides on, and `input` to run again.
    /// Returns the `pending` result for the caller to settle.
    fn park(
        &self,
        table: &mut Table,
        h: &Handle,
        limit: LimitName,
        on_ok: OnApproval,
        input: Option<String>,
    ) -> TaskResult {
        let n = table.get_mut(h.id()).expect("known");
        let from = n.state;
        n.set_state(HandleState::Running);
        n.set_state(HandleState::Suspended);
        n.budget_approval = Some((limit, on_ok));
        n.pending_input = input;
        if on_ok == OnApproval::Continue {
            // The turn's inbox items are in the saved transcript: an interrupt must not
            // put them back.
            n.drained.clear();
        }
        let request = approval_request(h, limit);
        let stamped = super::suspend::with_path(&request, h);
        n.pending = Some(request);
        let r = n
            .result(TaskStatus::Pending, stamped.prompt.clone())
            .with_pending(stamped);
        let path = if from == HandleState::Running {
            "running→suspended"
        } else {
            "idle→running→suspended"
        };
        self.log(format!(
            "{h}: {path} DURABLE (pending \"approval\": budget {limit})"
        ));
        r
    }

    /// Put `limit`, hit by `h` mid-run, to its `on_budget` outside the table lock (no
    /// callback, a panic and an extension of 0 are a stop).
    fn ask_mid_run(&self, h: &Handle, limit: LimitName) -> MidRun {
        let (f, info) = {
            let table = self.lock();
            let Some(n) = table.get(h.id()) else {
                return MidRun::Stop;
            };
            let info = BudgetInfo {
                handle: h.clone(),
                agent: n.agent().to_owned(),
                limit,
                exhausted_at: h.clone(),
                total_tokens: n.ledger.total_tokens,
            };
            let Some(f) = self.on_budget_of(n) else {
                return MidRun::Stop;
            };
            (f, info)
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| f(&info))) {
            Ok(BudgetDecision::Extend(ext)) if ext.amount > 0 => {
                self.log(format!("{h}: on_budget extend {limit} mid-run by {}", ext.amount));
                MidRun::Extend(ext.amount)
            }
            Ok(BudgetDecision::Suspend) => MidRun::Suspend,
            _ => MidRun::Stop,
        }
    }

    /// Settle `h` `incomplete` on `limit`, `why` appended to the standard text.
    fn budget_stop(&self, table: &mut Table, h: &Handle, limit: LimitName, why: String) -> Box<TaskResult> {
        let n = table.get_mut(h.id()).expect("launch of a known handle");
        let r = n
            .result(
                TaskStatus::Incomplete,
                format!("budget exhausted ({limit}); partial work preserved{why}"),
            )
            .with_limit(limit);
        n.settle(r.clone());
        self.log(format!("{h}: wake refused (budget exhausted: {limit}){why}"));
        Box::new(r)
    }

    /// One run of `h`'s agent on the §8 client: its soul, its toolkit view (plus `task`
    /// when it has a team), its model, its escalating `wait_for` (or the resume's
    /// Answer), the runtime store under its id, the resolved hooks and metric sink —
    /// raced against its wall deadline. `go_on` continues the stored transcript instead
    /// of starting a turn on `input`.
    async fn run_turn(
        self: &Arc<Self>,
        h: &Handle,
        input: String,
        go_on: bool,
        answer: Option<Answer>,
        cancel: CancellationToken,
        spent: Arc<Mutex<Spent>>,
    ) -> Outcome {
        let (def, max_turns) = {
            let table = self.lock();
            let n = &table[h.id()];
            (n.def.clone().expect("agents have defs"), n.carved.max_turns)
        };
        let mut toolkit = Toolkit::new(def.uses.iter().cloned());
        if !def.team.is_empty() {
            toolkit.add_tools([task_tool::task_tool(self.clone(), h.clone(), &def)]);
        }
        let wait_for = match answer {
            Some(a) => Some(super::suspend::one_shot(a)),
            None => super::suspend::escalator(self, &self.lock(), h),
        };
        // The runtime's own sink counts what the turn spends as it goes, so a run that ends
        // without a result (cancelled, past its wall deadline, failed) is still booked; the
        // host's sink sees every event unchanged.
        let host_sink = def.on_metric.as_ref().or(self.on_metric.as_ref()).cloned();
        let build = |max_turns: u32| {
            let mut builder = self.template.clone().max_turns(max_turns);
            if def.model != INHERIT {
                builder = builder.model(&def.model);
            }
            if !def.soul_text().is_empty() {
                builder = builder.system_prompt(def.soul_text());
            }
            if let Some(w) = &wait_for {
                builder = builder.wait_for(w.clone());
            }
            // Def over runtime (the template's), each field on its own, forwarded as given
            // (SPEC §7D).
            if let Some(hooks) = &def.hooks {
                builder = builder.hooks(hooks.clone());
            }
            let (spent, host_sink) = (spent.clone(), host_sink.clone());
            builder
                .on_metric(move |e| {
                    spent.lock().unwrap_or_else(|e| e.into_inner()).count(e);
                    if let Some(f) = &host_sink {
                        f(e);
                    }
                })
                .build()
        };
        let client = match build(max_turns) {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(e.to_string()),
        };
        let opts = RunOptions::new(&toolkit).conversation(h.id()).cancel(cancel);
        let wall = self.wall_deadline(h, &input);
        let snapshot = match self.store.get(h.id()).await {
            Ok(s) => s.unwrap_or_default(),
            Err(e) => return ClientError::from(e).into(),
        };
        // A run stopped at `max_turns` is put to `on_budget`; each extension (or inline
        // approval: `max_turns` afresh) continues the same transcript with that many more
        // turns, the usage summed. With nobody to approve inline, the run parks (`true`).
        let run = async {
            let mut r = if go_on {
                client.continue_with(opts.clone()).await?
            } else {
                client.run_with(input.clone(), opts.clone()).await?
            };
            while r.status == RunStatus::Incomplete {
                let more = match self.ask_mid_run(h, LimitName::MaxTurns) {
                    MidRun::Stop => break,
                    MidRun::Extend(more) => more,
                    MidRun::Suspend => match self.approve_inline(h, LimitName::MaxTurns).await {
                        Some(true) => u64::from(max_turns),
                        Some(false) => break,
                        None => return Ok((r, true)),
                    },
                };
                let turns = u32::try_from(more).unwrap_or(u32::MAX);
                // The settings that built `client`, only more turns (above 0): this cannot
                // fail, and if it did the run would stay `incomplete` at maxTurns.
                let Ok(more_client) = build(turns) else { break };
                let next = more_client.continue_with(opts.clone()).await?;
                r = continued(r, next);
            }
            Ok::<_, ClientError>((r, false))
        };
        tokio::select! {
            r = run => match r {
                Ok((_, true)) => Outcome::Parked(LimitName::MaxTurns, OnApproval::Continue, None),
                Ok((r, false)) => {
                    if r.status == RunStatus::Pending {
                        // Rewind to the checkpoint: the placeholder the halt appended must
                        // not persist, or the replay would skip re-invoking `task`.
                        if let Err(e) = self.store.save(h.id(), snapshot).await {
                            return ClientError::from(e).into();
                        }
                        self.lock().get_mut(h.id()).expect("known").pending_input = Some(input);
                    }
                    Outcome::Ran(Box::new(r))
                }
                Err(e) => e.into(),
            },
            o = wall => o,
        }
    }

    /// Book a finished turn: usage rolled up every ancestor, the state and result set,
    /// the inbox drain committed or restored, the parent's slot handed to the next queued
    /// sibling, every waiter woken. A turn already superseded (its handle was closed and
    /// reopened, or forcibly finished) changes nothing.
    fn book(self: &Arc<Self>, h: &Handle, turn_no: u64, outcome: Outcome, spent: Spent) {
        let mut table = self.lock();
        let Some(n) = table.get_mut(h.id()) else { return };
        if n.turn_no != turn_no || n.cancel.is_none() {
            return;
        }
        n.cancel = None;
        let abort = n.abort.take();
        // A run with a result reports its own usage; any other ending books what the
        // runtime's metric sink counted before it ended.
        let (tokens, calls, turns) = match &outcome {
            Outcome::Ran(r) => (r.usage.total_tokens, r.tool_call_count as u64, r.turns),
            _ => (spent.tokens, spent.tool_calls, spent.turns),
        };
        n.ledger.turns += turns;
        n.ledger.own_tokens += tokens;
        let mut at = Some(h.clone());
        while let Some(a) = at {
            let a = table.get_mut(a.id()).expect("ancestors are in the table");
            a.ledger.total_tokens += tokens;
            a.carved.spend(tokens, calls);
            at = a.parent.clone();
        }
        let n = table.get_mut(h.id()).expect("known");
        let closed = n.state == HandleState::Closed;
        let result = match outcome {
            Outcome::Ran(r) => match r.status {
                RunStatus::Done => {
                    n.drained.clear();
                    n.set_state(HandleState::Idle);
                    self.log(format!(
                        "{h}: running→idle (done, turns={}, tokens={tokens})",
                        r.turns
                    ));
                    n.result(TaskStatus::Done, r.text)
                }
                RunStatus::Incomplete => {
                    n.drained.clear();
                    n.set_state(HandleState::Idle);
                    self.log(format!(
                        "{h}: running→idle (INCOMPLETE at maxTurns {})",
                        n.carved.max_turns
                    ));
                    n.result(TaskStatus::Incomplete, "hit maxTurns without a final answer")
                        .with_limit(LimitName::MaxTurns)
                }
                RunStatus::Pending => {
                    let request = match r.pending {
                        Some(request) => request,
                        None => crate::suspend::Request::new("unknown", r.text),
                    };
                    n.set_state(HandleState::Suspended);
                    self.log(format!(
                        "{h}: running→suspended DURABLE (pending \"{}\", path preserved)",
                        request.kind
                    ));
                    let stamped = super::suspend::with_path(&request, h);
                    n.pending = Some(request);
                    n.result(TaskStatus::Pending, stamped.prompt.clone())
                        .with_pending(stamped)
                }
            },
            Outcome::Cancelled | Outcome::Wall | Outcome::Parked(..) if abort.is_some() || closed => {
                let drained = std::mem::take(&mut n.drained);
                for item in drained.into_iter().rev() {
                    n.inbox.push_front(item);
                }
                if !closed {
                    n.set_state(HandleState::Idle);
                }
                let reason = if abort == Some(Abort::Closed) || closed {
                    "closed"
                } else {
                    "interrupted"
                };
                self.log(format!(
                    "{h}: running→idle ({reason}; inbox intact: {})",
                    n.inbox.len()
                ));
                let status = if reason == "closed" {
                    TaskStatus::Closed
                } else {
                    TaskStatus::Interrupted
                };
                n.result(status, reason)
            }
            Outcome::Wall => {
                n.drained.clear();
                n.set_state(HandleState::Idle);
                self.log(format!("{h}: running→idle (INCOMPLETE at maxWallMs)"));
                n.result(
                    TaskStatus::Incomplete,
                    "budget exhausted (maxWallMs); partial work preserved",
                )
                .with_limit(LimitName::MaxWallMs)
            }
            Outcome::Parked(limit, on_ok, input) => self.park(&mut table, h, limit, on_ok, input),
            Outcome::Budget(limit, why) => {
                n.drained.clear();
                n.set_state(HandleState::Idle);
                self.log(format!("{h}: running→idle (INCOMPLETE at {limit}: {why})"));
                n.result(
                    TaskStatus::Incomplete,
                    format!("budget exhausted ({limit}); partial work preserved ({why})"),
                )
                .with_limit(limit)
            }
            Outcome::Cancelled => {
                // Cancelled with no abort recorded: the runtime did not cancel it.
                n.set_state(HandleState::Idle);
                self.log(format!("{h}: running→idle (error: run cancelled)"));
                n.result(TaskStatus::Error, "run cancelled")
            }
            Outcome::Failed(e) => {
                if !closed {
                    n.set_state(HandleState::Idle);
                }
                self.log(format!("{h}: running→idle (error: {e})"));
                n.result(TaskStatus::Error, e.to_string())
            }
            Outcome::Panicked(msg) => {
                if !closed {
                    n.set_state(HandleState::Idle);
                }
                self.log(format!("{h}: running→idle (error: the run panicked: {msg})"));
                n.result(TaskStatus::Error, format!("the agent's run panicked: {msg}"))
            }
        };
        let n = table.get_mut(h.id()).expect("known");
        n.settle(result);
        let parent = n.parent.clone();
        if let Some(p) = parent {
            self.hand_over_slot(&mut table, &p);
        }
    }

    /// A finished child frees its parent's slot; the first sibling with a queued wake
    /// (spawn order, FIFO within it) takes it.
    fn hand_over_slot(self: &Arc<Self>, table: &mut Table, parent: &Handle) {
        let Some(p) = table.get_mut(parent.id()) else {
            return;
        };
        p.running_children = p.running_children.saturating_sub(1);
        if p.running_children >= p.carved.max_concurrent {
            return;
        }
        let children = p.children.clone();
        // A dequeued wake the budget refuses (stopped or parked for approval) never took
        // the slot: pass it on. Each pass pops one queued wake, so this ends.
        loop {
            let next = children.iter().find(|c| {
                table
                    .get(c.id())
                    .is_some_and(|n| n.state == HandleState::Idle && !n.closing && !n.wake_queue.is_empty())
            });
            let Some(next) = next.cloned() else { return };
            let prompt = table
                .get_mut(next.id())
                .and_then(|n| n.wake_queue.pop_front())
                .flatten();
            self.log(format!("{next}: DEQUEUED wake (slot freed)"));
            if self.launch(table, &next, prompt, None).is_ok() {
                return;
            }
        }
    }

    pub(crate) async fn wait(self: &Arc<Self>, h: &Handle, timeout: Option<Duration>) -> TaskResult {
        let mut rx = {
            let table = self.lock();
            let Some(n) = table.get(h.id()) else {
                return evicted(h);
            };
            if let Some(r) = n.settled() {
                return r;
            }
            n.epoch.subscribe()
        };
        self.wait_on(h, &mut rx, timeout).await
    }

    /// The next result on `rx`, or a `timeout` result after `timeout`.
    pub(crate) async fn wait_on(
        &self,
        h: &Handle,
        rx: &mut watch::Receiver<u64>,
        timeout: Option<Duration>,
    ) -> TaskResult {
        let deadline = async {
            match timeout {
                Some(t) => self.clock.sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            changed = rx.changed() => {
                let table = self.lock();
                let Some(n) = table.get(h.id()) else { return evicted(h) };
                match (changed, n.last.clone()) {
                    (Ok(()), Some(r)) => r,
                    _ => n.result(TaskStatus::Closed, "closed"),
                }
            }
            () = deadline => {
                let table = self.lock();
                let Some(n) = table.get(h.id()) else { return evicted(h) };
                let ms = timeout.unwrap_or_default().as_millis();
                n.result(TaskStatus::Timeout, format!("wait timeout after {ms}ms (child still {})", n.state))
                    .with_limit(LimitName::Timeout)
            }
        }
    }

    fn interrupt(&self, h: &Handle) {
        let mut table = self.lock();
        let Some(n) = table.get_mut(h.id()) else { return };
        match n.state {
            HandleState::Suspended if n.cancel.is_none() => {
                let kind = n.pending.take().map(|r| r.kind).unwrap_or_default();
                n.pending_input = None;
                n.budget_approval = None;
                let drained = std::mem::take(&mut n.drained);
                for item in drained.into_iter().rev() {
                    n.inbox.push_front(item);
                }
                n.set_state(HandleState::Idle);
                self.log(format!(
                    "{h}: suspended→idle (interrupt cancelled pending \"{kind}\")"
                ));
            }
            HandleState::Running | HandleState::Suspended => {
                n.abort = Some(Abort::Interrupted);
                if let Some(c) = &n.cancel {
                    c.cancel();
                }
                self.log(format!("{h}: interrupt requested"));
            }
            HandleState::Idle | HandleState::Closed => {}
        }
    }

    fn close(self: Arc<Self>, h: Handle, force: bool, reason: Option<CloseReason>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let children = {
                let mut table = self.lock();
                let Some(n) = table.get_mut(h.id()) else { return };
                if n.state == HandleState::Closed {
                    return;
                }
                n.closing = true;
                n.children.clone()
            };
            for c in children {
                self.clone().close(c, force, reason).await;
            }
            let rx = {
                let table = self.lock();
                let n = &table[h.id()];
                n.cancel.is_some().then(|| n.epoch.subscribe())
            };
            if let Some(mut rx) = rx {
                let mut finished = false;
                if !force {
                    let r = self.wait_on(&h, &mut rx, Some(self.shutdown)).await;
                    finished = r.status != TaskStatus::Timeout;
                }
                if !finished {
                    {
                        let mut table = self.lock();
                        let n = table.get_mut(h.id()).expect("known");
                        n.abort = Some(Abort::Closed);
                        if let Some(c) = &n.cancel {
                            c.cancel();
                        }
                    }
                    // Cancellation drops the client's run at its next poll; the bound only
                    // guards a turn stuck outside it.
                    let mut rx = self.lock()[h.id()].epoch.subscribe();
                    let still = self.lock()[h.id()].cancel.is_some();
                    if still {
                        let r = self.wait_on(&h, &mut rx, Some(self.shutdown)).await;
                        if r.status == TaskStatus::Timeout {
                            self.abandon_turn(&h);
                        }
                    }
                }
            }
            let (def, last_status) = {
                let table = self.lock();
                let n = &table[h.id()];
                (n.def.clone(), n.last.as_ref().map(|r| r.status))
            };
            let reason = reason.unwrap_or(match (force, last_status) {
                (true, _) => CloseReason::Interrupted,
                (false, Some(TaskStatus::Incomplete)) => CloseReason::Budget,
                (false, Some(TaskStatus::Error)) => CloseReason::Error,
                _ => CloseReason::Closed,
            });
            if let Some(f) = def.as_ref().and_then(|d| d.on_close.clone()) {
                let _ = std::panic::catch_unwind(AssertUnwindSafe(|| f(&h, reason)));
            }
            let mut table = self.lock();
            // A concurrent close of the same handle may have closed and evicted it.
            let Some(n) = table.get_mut(h.id()) else { return };
            let prior = n.state;
            n.set_state(HandleState::Closed);
            n.pending = None;
            n.wake_queue.clear();
            if n.last.is_none() {
                let r = n.result(TaskStatus::Closed, "closed");
                n.settle(r);
            } else {
                n.epoch.send_modify(|e| *e += 1);
            }
            let now = self.clock.now();
            self.retention
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .closed(&mut table, h.id(), now);
            drop(table);
            self.log(format!("{h}: {prior}→closed ({reason})"));
        })
    }

    /// A turn that ignored cancellation past the grace: book it closed ourselves so its
    /// slot and waiters are released; its task's late booking is then ignored.
    fn abandon_turn(self: &Arc<Self>, h: &Handle) {
        let mut table = self.lock();
        let Some(n) = table.get_mut(h.id()) else { return };
        n.cancel = None;
        n.set_state(HandleState::Idle);
        let r = n.result(TaskStatus::Closed, "closed");
        n.settle(r);
        let parent = n.parent.clone();
        if let Some(p) = parent {
            self.hand_over_slot(&mut table, &p);
        }
    }
}

/// The `approval` request of an `on_budget` suspension at `limit`, `data.limit` naming it.
fn approval_request(h: &Handle, limit: LimitName) -> crate::suspend::Request {
    crate::suspend::Request::new(
        "approval",
        format!("budget exhausted ({limit}) for {h}: approve to continue"),
    )
    .with_data(serde_json::Map::from_iter([(
        "limit".to_owned(),
        serde_json::Value::String(limit.as_str().to_owned()),
    )]))
}

/// `next`, the continuation of `first` on the same transcript, with both runs' spending.
fn continued(
    first: crate::client::RunResult,
    mut next: crate::client::RunResult,
) -> crate::client::RunResult {
    next.turns += first.turns;
    next.tool_call_count += first.tool_call_count;
    next.usage.add(first.usage);
    let mut calls = first.tool_calls;
    calls.append(&mut next.tool_calls);
    next.tool_calls = calls;
    next
}

/// The answer about a handle not (or no longer) in the table.
fn evicted(h: &Handle) -> TaskResult {
    TaskResult::new(
        TaskStatus::Error,
        VerbError::UnknownHandle(h.id().to_owned()).to_string(),
        Ledger::default(),
    )
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
