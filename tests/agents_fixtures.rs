//! The shared agent-runtime fixtures (SPEC §7D; tests/fixtures/agents/README.md), every
//! `subagent-*.json` and `agent-hooks.json`, on a virtual clock. Every `expect` key is
//! checked; a key this harness does not know fails the test rather than pass unread.

mod agents_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_support::{ScriptedModel, fixture, scripted_client, tool};
use serde_json::{Map, Value, json};
use toolnexus::Answer;
use toolnexus::agents::{
    AgentDef, AgentRuntime, Budget, Handle, HandleState, InboxItem, Registry, RuntimeBuilder, SpawnError,
    TaskResult, VerbError, VirtualClock,
};
use toolnexus::client::{Client, ClientBuilder, Style};

/// Every on_close, in order.
type Closes = Arc<Mutex<Vec<String>>>;

fn registry(reg: &Value, overrides: Option<&Value>, closes: &Closes) -> Registry {
    let defs = reg.as_object().expect("registry").iter().map(|(name, d)| {
        let mut d = d.clone();
        if let Some(o) = overrides.and_then(|o| o.get(name)).and_then(Value::as_object) {
            for (k, v) in o {
                d[k] = v.clone();
            }
        }
        let closes = closes.clone();
        let mut def = AgentDef::new(name, d["does"].as_str().unwrap())
            .model(d["model"].as_str().unwrap())
            .uses(
                d["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| tool(t.as_str().unwrap())),
            )
            .team(
                d["team"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| t.as_str().unwrap().to_owned()),
            )
            .on_close(move |h, _| closes.lock().unwrap().push(h.id().to_owned()));
        if let Some(b) = d.get("budget") {
            def = def.budget(serde_json::from_value::<Budget>(b.clone()).expect("a budget"));
        }
        if let Some(w) = d.get("waitFor") {
            assert!(w["behavior"].as_str().unwrap().starts_with("auto-approve"));
            def = def.wait_for(Arc::new(|req| {
                Box::pin(async move {
                    Answer {
                        id: req.id,
                        ok: true,
                        data: None,
                        reason: None,
                    }
                })
            }));
        }
        def
    });
    Registry::new(defs).expect("fixture registry")
}

fn builder(model: Arc<ScriptedModel>, runtime: Option<&Value>, clock: &VirtualClock) -> RuntimeBuilder {
    let mut b = AgentRuntime::builder(
        Client::builder()
            .base_url("http://127.0.0.1:9/v1")
            .style(Style::OpenAi)
            .model("m-default")
            .api_key("k")
            .retries(0)
            .transport(model),
    )
    .clock(Arc::new(clock.clone()));
    if let Some(cap) = runtime.and_then(|r| r["inboxCap"].as_u64()) {
        b = b.inbox_cap(cap as usize);
    }
    if let Some(n) = runtime.and_then(|r| r["maxConcurrentTurns"].as_u64()) {
        b = b.max_concurrent_turns(n as usize);
    }
    b
}

/// What the checks read: the runtime and what the last steps produced.
struct World {
    rt: AgentRuntime,
    closes: Closes,
    model: Arc<ScriptedModel>,
    entry: Option<Handle>,
    subject: Option<Handle>,
    result: Option<TaskResult>,
    spawned: Option<Result<Handle, SpawnError>>,
    posted: Option<Result<(), VerbError>>,
    waiter: Option<TaskResult>,
    waiter_task: Option<tokio::task::JoinHandle<TaskResult>>,
    tree: Vec<Handle>,
}

impl World {
    fn new(fx: &Value, scenario: &Value) -> Self {
        let closes = Closes::default();
        let reg = registry(&fx["registry"], scenario.get("registryOverride"), &closes);
        let mut model = ScriptedModel::new(&fx["mockLLM"]);
        if scenario
            .pointer("/expect/concurrentTurnsObservedAtLeast")
            .is_some()
        {
            model = model.with_rendezvous();
        }
        let clock = VirtualClock::new();
        let rt = builder(model.clone(), scenario.get("runtime"), &clock)
            .build(reg)
            .unwrap();
        Self {
            rt,
            closes,
            model,
            entry: None,
            subject: None,
            result: None,
            spawned: None,
            posted: None,
            waiter: None,
            waiter_task: None,
            tree: Vec::new(),
        }
    }

    /// A fixture's handle name: a full id, or agent names below the root
    /// (`coordinator/peer` = `root/coordinator.1/peer.1`), spawned on first mention.
    fn handle(&mut self, name: &str) -> Handle {
        if name == "root" || name.starts_with("root/") {
            return self.rt.handle(name).unwrap_or_else(|| panic!("no handle {name}"));
        }
        let mut at = self.rt.root();
        for agent in name.split('/') {
            let id = format!("{}/{agent}.1", at.id());
            at = match self.rt.handle(&id) {
                Some(h) => h,
                None => self.rt.spawn(&at, agent, None).expect("spawn a fixture handle"),
            };
        }
        at
    }

    async fn step(&mut self, step: &Value) {
        let (verb, args) = step
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| *k != "expect")
            .unwrap();
        match verb.as_str() {
            "spawn" => {
                let parent = self.handle(args["parent"].as_str().unwrap());
                let budget = args
                    .get("budget")
                    .map(|b| serde_json::from_value(b.clone()).unwrap());
                let r = self.rt.spawn(&parent, args["def"].as_str().unwrap(), budget);
                self.subject = r.as_ref().ok().cloned();
                self.spawned = Some(r);
            }
            "wakeWait" => {
                let h = self.handle(args["handle"].as_str().unwrap());
                self.rt
                    .wake(&h, args["prompt"].as_str().map(str::to_owned))
                    .unwrap();
                self.result = Some(bounded(self.rt.wait(&h, None)).await);
                self.subject = Some(h);
            }
            "wake" => {
                let h = self.handle(args["handle"].as_str().unwrap());
                self.rt
                    .wake(&h, args["prompt"].as_str().map(str::to_owned))
                    .unwrap();
                // The waiter registers now, while the turn runs.
                let (rt, w) = (self.rt.clone(), h.clone());
                let waiter = tokio::spawn(async move { rt.wait(&w, None).await });
                self.subject = Some(h);
                tokio::task::yield_now().await;
                self.waiter_task = Some(waiter);
            }
            "post" => {
                let h = self.handle(args["handle"].as_str().unwrap());
                let item = InboxItem::new(
                    args["from"].as_str().unwrap_or("external"),
                    args["channel"].as_str().unwrap_or("external"),
                    args["text"].as_str().unwrap(),
                );
                self.posted = Some(self.rt.post(&h, item));
            }
            "awaitState" => {
                let h = self.handle(args["handle"].as_str().unwrap());
                let want = args["state"].as_str().unwrap();
                bounded(async {
                    while self.rt.inspect(&h).unwrap().state.as_str() != want
                        || self.rt.turns_in_flight().0 == 0
                    {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                })
                .await;
            }
            "interrupt" => {
                let h = self.handle(args["handle"].as_str().unwrap());
                self.rt.interrupt(&h);
                let waiter = self.waiter_task.take().expect("a waiter from the wake step");
                self.waiter = Some(bounded(waiter).await.unwrap());
            }
            "closeRoot" => bounded(self.rt.close(&self.rt.root())).await,
            other => panic!("unknown step verb {other}"),
        }
        if let Some(expect) = step.get("expect") {
            self.check(expect);
        }
    }

    fn state(&self, h: &Handle) -> HandleState {
        self.rt.inspect(h).unwrap().state
    }

    fn check(&self, expect: &Value) {
        for (key, want) in expect.as_object().unwrap() {
            let result = || self.result.as_ref().expect("a result to check");
            match key.as_str() {
                "status" => assert_eq!(result().status.as_str(), want, "status: {:?}", result()),
                "errorContains" => {
                    let text = match (&self.posted, &self.result) {
                        (Some(Err(e)), _) => e.to_string(),
                        (_, Some(r)) => {
                            assert!(r.is_error, "{r:?}");
                            r.text.clone()
                        }
                        _ => panic!("errorContains without an error"),
                    };
                    assert!(text.contains(want.as_str().unwrap()), "{text:?} lacks {want}");
                }
                "isError" => {
                    let e = self
                        .spawned
                        .as_ref()
                        .unwrap()
                        .as_ref()
                        .expect_err("a refused spawn");
                    assert!(e.to_string().contains(want.as_str().unwrap()), "{e}");
                    assert_eq!(e.limit().map(|l| l.as_str()), want.as_str());
                }
                "effectiveTokens" => {
                    let h = self.spawned.as_ref().unwrap().as_ref().unwrap();
                    assert_eq!(self.rt.remaining_tokens(h), want.as_i64());
                }
                "parentPoolAfter" => {
                    let h = self.subject.as_ref().unwrap();
                    let parent = h.id().rsplit_once('/').unwrap().0;
                    assert_eq!(
                        self.rt.remaining_tokens(&self.rt.handle(parent).unwrap()),
                        want.as_i64()
                    );
                }
                "textContains" => {
                    for s in want.as_array().unwrap() {
                        assert!(
                            result().text.contains(s.as_str().unwrap()),
                            "{:?} lacks {s}",
                            result().text
                        );
                    }
                }
                "textOccurrences" => {
                    for (s, n) in want.as_object().unwrap() {
                        assert_eq!(
                            result().text.matches(s.as_str()).count() as u64,
                            n.as_u64().unwrap()
                        );
                    }
                }
                "text" => assert_eq!(result().text, want.as_str().unwrap()),
                "turns" | "parentTurns" => assert_eq!(u64::from(result().turns), want.as_u64().unwrap()),
                "parentUsageTotal" => assert_eq!(result().total_tokens, want.as_u64().unwrap()),
                "childIds" => {
                    let entry = self.rt.inspect(self.entry.as_ref().unwrap()).unwrap();
                    assert_eq!(json!(entry.children), *want);
                }
                "childrenClosedAfterTask" => {
                    let entry = self.rt.inspect(self.entry.as_ref().unwrap()).unwrap();
                    let closed = entry
                        .children
                        .iter()
                        .all(|c| self.state(&self.rt.handle(c).unwrap()) == HandleState::Closed);
                    assert_eq!(json!(closed), *want);
                }
                "concurrentTurnsObservedAtLeast" => {
                    assert!(self.rt.turns_in_flight().1 as u64 >= want.as_u64().unwrap())
                }
                "maxObservedConcurrentTurns" => {
                    assert_eq!(self.rt.turns_in_flight().1 as u64, want.as_u64().unwrap())
                }
                "transitions" => {
                    for (id, list) in want.as_object().unwrap() {
                        let got: Vec<String> = self
                            .rt
                            .transitions(&self.rt.handle(id).unwrap())
                            .iter()
                            .map(ToString::to_string)
                            .collect();
                        let want: Vec<&str> = list
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|v| v.as_str().unwrap())
                            .collect();
                        assert_eq!(got.len(), want.len(), "{id}: {got:?} vs {want:?}");
                        for (g, w) in got.iter().zip(&want) {
                            // `→closed` pins the entered state, from whatever state.
                            let ok = if w.starts_with('→') {
                                g.ends_with(w)
                            } else {
                                g == w
                            };
                            assert!(ok, "{id}: {got:?} vs {want:?}");
                        }
                    }
                }
                "traceContains" => {
                    let trace = self.rt.trace();
                    for s in want.as_array().unwrap() {
                        let s = s.as_str().unwrap();
                        assert!(
                            trace.iter().any(|l| l.contains(s)),
                            "trace lacks {s:?}: {trace:#?}"
                        );
                    }
                }
                "escalation" => {
                    let by = want["answeredBy"].as_str().unwrap();
                    let trace = self.rt.trace();
                    let line = format!("escalate → {by} answers");
                    assert!(trace.iter().any(|l| l.contains(&line)), "{trace:#?}");
                    let entry = self.rt.inspect(self.entry.as_ref().unwrap()).unwrap();
                    let child = self.rt.handle(&entry.children[0]).unwrap();
                    let got: Vec<String> = self
                        .rt
                        .transitions(&child)
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                    let seq: Vec<String> = serde_json::from_value(want["childTrace"].clone()).unwrap();
                    assert!(
                        got.windows(seq.len()).any(|w| w == seq.as_slice()),
                        "{got:?} lacks {seq:?}"
                    );
                }
                "pendingKind" => assert_eq!(result().pending.as_ref().unwrap().kind, want.as_str().unwrap()),
                "pendingDataPathEndsWithin" => {
                    let path = &result().pending.as_ref().unwrap().data.as_ref().unwrap()["path"];
                    let joined = path
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s.as_str().unwrap())
                        .collect::<Vec<_>>();
                    let joined = joined.join("/");
                    let within = want.as_str().unwrap();
                    assert!(
                        joined == within || joined.starts_with(&format!("{within}/")),
                        "{joined}"
                    );
                }
                "allHandles" | "allStates" => {
                    let list = self.rt.list();
                    assert!(!list.is_empty());
                    for v in list {
                        assert_eq!(v.state.as_str(), want.as_str().unwrap(), "{}", v.id);
                    }
                }
                "rejected" => assert_eq!(json!(self.posted.as_ref().unwrap().is_err()), *want),
                "waiterStatus" => assert_eq!(
                    self.waiter.as_ref().unwrap().status.as_str(),
                    want.as_str().unwrap()
                ),
                "finalState" => assert_eq!(self.state(self.subject.as_ref().unwrap()).as_str(), want),
                "inboxLen" => {
                    let v = self.rt.inspect(self.subject.as_ref().unwrap()).unwrap();
                    assert_eq!(v.inbox as u64, want.as_u64().unwrap());
                }
                "onCloseOrder" => {
                    assert_eq!(want, "grandchild, child, parent (leaf-first)");
                    let want: Vec<String> = self.tree.iter().rev().map(|h| h.id().to_owned()).collect();
                    assert_eq!(*self.closes.lock().unwrap(), want);
                }
                other => panic!("unhandled expect key {other}"),
            }
        }
    }
}

/// Every wait in this harness is bounded: a hang is a failure, not a stuck CI job.
async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("bounded wait")
}

async fn run_entry(w: &mut World, run: &Value) {
    let h =
        w.rt.spawn(&w.rt.root(), run["entry"].as_str().unwrap(), None)
            .unwrap();
    w.rt.wake(&h, Some(run["prompt"].as_str().unwrap().to_owned()))
        .unwrap();
    w.result = Some(bounded(w.rt.wait(&h, None)).await);
    w.entry = Some(h.clone());
    w.subject = Some(h);
}

#[tokio::test]
async fn subagent_fanout() {
    let fx = fixture("subagent-fanout.json");
    let mut w = World::new(&fx, &fx);
    run_entry(&mut w, &fx["run"]).await;
    w.check(&fx["expect"]);
    // Isolated transcripts: each child saw only its own prompt.
    let store = w.rt.conversation_store();
    for (id, prompt) in [
        ("root/coordinator.1/explore.1", "find A"),
        ("root/coordinator.1/explore.2", "find B"),
    ] {
        let t = store.get(id).await.unwrap().unwrap();
        assert_eq!(t[0], json!({"role": "user", "content": prompt}), "{id}");
        assert_eq!(t.iter().filter(|m| m["role"] == "user").count(), 1);
    }
    // The coordinator's task tool advertises only its team, from `does`.
    let first = &w.model.bodies.lock().unwrap()[0];
    assert_eq!(
        first["tools"][0]["function"]["description"],
        "Delegate a subtask to an isolated subagent. Available agents — explore: read-only research"
    );
}

#[tokio::test]
async fn subagent_budgets() {
    let fx = fixture("subagent-budgets.json");
    let mut w = World::new(&fx, &json!({}));
    for step in fx["steps"].as_array().unwrap() {
        w.result = None;
        w.posted = None;
        w.step(step).await;
    }
    let looped = w.result.unwrap();
    assert_eq!(looped.limit.map(|l| l.as_str()), Some("maxTurns"));
    assert_eq!(looped.turns, 3);
}

#[tokio::test]
async fn subagent_escalation() {
    let fx = fixture("subagent-escalation.json");
    let mut w = World::new(&fx, &fx);
    run_entry(&mut w, &fx["run"]).await;
    w.check(&fx["expect"]);
}

#[tokio::test]
async fn subagent_durable_resume() {
    let fx = fixture("subagent-durable-resume.json");
    let mut w = World::new(&fx, &fx);
    run_entry(&mut w, &fx["run"]).await;
    w.check(&fx["phase1_expect"]);
    let leaf = w.rt.handle("root/approverParent.1/asker.1").unwrap();
    let before = w.rt.inspect(&leaf).unwrap();
    let (leaf_turns, leaf_tokens) = (before.turns, before.tokens);
    // Rewound: the parked leaf's stored transcript is its pre-turn checkpoint (empty).
    let store = w.rt.conversation_store();
    assert_eq!(store.get(leaf.id()).await.unwrap(), Some(vec![]));
    let pending = w.result.as_ref().unwrap().pending.clone().unwrap();
    let mut answer: Answer = serde_json::from_value(fx["resume"]["answer"].clone()).unwrap_or(Answer {
        id: String::new(),
        ok: fx["resume"]["answer"]["ok"].as_bool().unwrap(),
        data: None,
        reason: None,
    });
    answer.id = pending.id.clone();
    w.result = Some(bounded(w.rt.resume(answer)).await.unwrap());
    let phase2 = &fx["phase2_expect"];
    let mut rest = Map::new();
    for (key, want) in phase2.as_object().unwrap() {
        match key.as_str() {
            "leafResumedAtCheckpoint" => {
                assert_eq!(want, true);
                let t = store.get(leaf.id()).await.unwrap().unwrap();
                assert_eq!(t[0], json!({"role": "user", "content": "get the secret"}));
                assert_eq!(t.iter().filter(|m| m["role"] == "user").count(), 1, "{t:#?}");
                assert_eq!(t.last().unwrap()["content"], "asker-done: secret-token");
            }
            "leafUsageGrewNotReset" => {
                assert_eq!(want, true);
                let after = w.rt.inspect(&leaf).unwrap();
                assert!(
                    leaf_tokens > 0 && after.tokens > leaf_tokens,
                    "{leaf_tokens} → {}",
                    after.tokens
                );
                assert!(after.turns > leaf_turns);
            }
            "parentCascadeReattached" => {
                assert_eq!(want, true);
                let line = format!("root/approverParent.1: task replay → REATTACH to {leaf}");
                assert!(w.rt.trace().iter().any(|l| l.starts_with(&line)));
            }
            "noDuplicateChildIds" => {
                assert_eq!(want, true);
                let entry = w.rt.inspect(w.entry.as_ref().unwrap()).unwrap();
                assert_eq!(entry.children, [leaf.id()]);
            }
            "finalParentState" => assert_eq!(w.state(w.entry.as_ref().unwrap()).as_str(), want),
            _ => {
                rest.insert(key.clone(), want.clone());
            }
        }
    }
    w.check(&Value::Object(rest));
    let r = w.result.as_ref().unwrap();
    assert_eq!(r.text, "parent-final: asker-done: secret-token");
}

async fn lifecycle(name: &str) -> World {
    let fx = fixture("subagent-lifecycle.json");
    let sc = &fx["scenarios"][name];
    assert!(sc.is_object(), "no scenario {name}");
    let mut w = World::new(&fx, sc);
    for path in sc["tree"].as_array().into_iter().flatten() {
        let h = w.handle(path.as_str().unwrap());
        w.tree.push(h);
    }
    if let Some(run) = sc.get("run") {
        run_entry(&mut w, run).await;
    }
    for step in sc["steps"].as_array().into_iter().flatten() {
        w.step(step).await;
    }
    if let Some(expect) = sc.get("expect") {
        w.check(expect);
    }
    w
}

#[tokio::test]
async fn lifecycle_coalesced_drain() {
    let w = lifecycle("coalescedDrain").await;
    // Provenance and trust: the peer and the webhook are not the peer's ancestors.
    let body = w.model.bodies.lock().unwrap()[0].clone();
    let input = body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(
        input.starts_with(
            "[inbox: 3 item(s)]\n1. [from=clock channel=timer] tick (x3 coalesced)\n<untrusted>"
        ),
        "{input}"
    );
    assert!(input.contains("2. [from=root/coordinator.1 channel=peer] update 1\n3. [from=external channel=external] webhook payload\n</untrusted>"), "{input}");
}

#[tokio::test]
async fn lifecycle_inbox_gate() {
    lifecycle("inboxGate").await;
}

#[tokio::test]
async fn lifecycle_concurrency_gate() {
    lifecycle("concurrencyGate").await;
}

#[tokio::test]
async fn lifecycle_turn_gate() {
    let w = lifecycle("turnGate").await;
    assert!(w.rt.is_quiescent());
}

#[tokio::test]
async fn lifecycle_interrupt() {
    let w = lifecycle("interrupt").await;
    // The restored item is the drained one, and the permit came back with the aborted call.
    assert!(w.rt.is_quiescent());
}

#[tokio::test]
async fn lifecycle_close_cascade() {
    lifecycle("closeCascade").await;
}

// ---- agent-hooks.json: the §8 seams on an agent run ------------------------------------

/// The hooks fixture's scenario `id`.
fn hooks_scenario(id: &str) -> Value {
    let fx = fixture("agent-hooks.json");
    fx["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no scenario {id}"))
        .clone()
}

/// A model that answers "ok", or first calls `check_secret` when `suspend` is set; every
/// request body is recorded.
fn plain_model(suspend: bool) -> (Arc<dyn toolnexus::client::HttpTransport>, Arc<Mutex<Vec<Value>>>) {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let t = toolnexus::client::transport::from_fn(move |req| {
        let body = req.json();
        seen.lock().unwrap().push(body.clone());
        async move {
            let message = if suspend
                && !body["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|m| m["role"] == "tool")
            {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "check_secret", "arguments": "{}"}}]})
            } else {
                json!({"role": "assistant", "content": "ok"})
            };
            Ok(toolnexus::client::HttpResponse::json(
                &json!({"choices": [{"message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}),
            ))
        }
    });
    (t, bodies)
}

fn plain_runtime(client: ClientBuilder) -> RuntimeBuilder {
    AgentRuntime::builder(client).clock(Arc::new(VirtualClock::new()))
}

/// A `before_llm` that counts its calls and appends a system message `inject`.
fn counting_hook(inject: &'static str) -> (toolnexus::client::Hooks, Arc<std::sync::atomic::AtomicUsize>) {
    let n = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = n.clone();
    let hooks = toolnexus::client::Hooks::new().before_llm(move |req| {
        c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            let mut messages = req.messages;
            messages.push(json!({"role": "system", "content": inject}));
            Ok(Some(toolnexus::client::hooks::LlmOverride {
                messages: Some(messages),
                ..Default::default()
            }))
        }
    });
    (hooks, n)
}

fn wire_has(bodies: &Mutex<Vec<Value>>, needle: &str) -> bool {
    bodies
        .lock()
        .unwrap()
        .iter()
        .any(|b| b["messages"].to_string().contains(needle))
}

#[tokio::test]
async fn hooks_h1_runtime_hooks_reach_the_wire() {
    let expect = &hooks_scenario("H1")["expect"];
    let (t, bodies) = plain_model(false);
    let (hooks, ran) = counting_hook("INJECTED-BY-HOOK");
    let rt = plain_runtime(scripted_client(t).hooks(hooks))
        .build(Registry::new([AgentDef::new("a", "x")]).unwrap())
        .unwrap();
    assert_eq!(bounded(rt.run("a", "go")).await.unwrap().text, "ok");
    assert_eq!(
        json!(ran.load(std::sync::atomic::Ordering::SeqCst) == 1),
        expect["hookRan"]
    );
    assert!(wire_has(
        &bodies,
        expect["wireTranscriptContains"].as_str().unwrap()
    ));
}

/// A metric sink recording event kinds.
fn metric_sink() -> (toolnexus::client::OnMetric, Arc<Mutex<Vec<String>>>) {
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let k = kinds.clone();
    let sink: toolnexus::client::OnMetric = Arc::new(move |e: &toolnexus::client::MetricEvent| {
        let kind = match e {
            toolnexus::client::MetricEvent::Llm { .. } => "llm",
            toolnexus::client::MetricEvent::Tool { .. } => "tool",
            toolnexus::client::MetricEvent::Run { .. } => "run",
            _ => "other",
        };
        k.lock().unwrap().push(kind.to_owned());
    });
    (sink, kinds)
}

#[tokio::test]
async fn hooks_h2_runtime_on_metric_receives_the_section_8_events() {
    let expect = &hooks_scenario("H2")["expect"];
    let (t, _) = plain_model(false);
    let (sink, kinds) = metric_sink();
    let rt = plain_runtime(scripted_client(t).on_metric(move |e| sink(e)))
        .build(Registry::new([AgentDef::new("a", "x")]).unwrap())
        .unwrap();
    bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(json!(*kinds.lock().unwrap()), expect["eventsReceived"]);
}

#[tokio::test]
async fn hooks_h3_a_defs_hooks_replace_the_runtimes() {
    let expect = &hooks_scenario("H3")["expect"];
    let (t, bodies) = plain_model(false);
    let (runtime_hooks, runtime_fired) = counting_hook("RUNTIME");
    let (a_hooks, a_fired) = counting_hook("AGENT-A");
    let reg = Registry::new([AgentDef::new("a", "x").hooks(a_hooks), AgentDef::new("b", "y")]).unwrap();
    let rt = plain_runtime(scripted_client(t).hooks(runtime_hooks))
        .build(reg)
        .unwrap();
    bounded(rt.run("a", "go")).await.unwrap();
    bounded(rt.run("b", "go")).await.unwrap();
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(
        a_fired.load(SeqCst) as u64,
        expect["agentAHookFired"].as_u64().unwrap()
    );
    assert_eq!(
        runtime_fired.load(SeqCst) as u64,
        expect["runtimeHookFired"].as_u64().unwrap()
    );
    let bodies = bodies.lock().unwrap();
    let a = bodies[0]["messages"].to_string();
    assert!(
        a.contains("AGENT-A") && !a.contains("RUNTIME"),
        "merged, not replaced: {a}"
    );
}

#[tokio::test]
async fn hooks_h4_hooks_and_on_metric_resolve_independently() {
    let expect = &hooks_scenario("H4")["expect"];
    let (t, bodies) = plain_model(false);
    let (runtime_hooks, runtime_fired) = counting_hook("RUNTIME");
    let (a_hooks, a_fired) = counting_hook("AGENT-A");
    let (sink, kinds) = metric_sink();
    let reg = Registry::new([AgentDef::new("a", "x").hooks(a_hooks)]).unwrap();
    let rt = plain_runtime(
        scripted_client(t)
            .hooks(runtime_hooks)
            .on_metric(move |e| sink(e)),
    )
    .build(reg)
    .unwrap();
    bounded(rt.run("a", "go")).await.unwrap();
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(
        json!(a_fired.load(SeqCst) == 1 && runtime_fired.load(SeqCst) == 0),
        expect["usesDefHooks"]
    );
    assert_eq!(
        json!(*kinds.lock().unwrap() == ["llm", "run"]),
        expect["usesRuntimeOnMetric"]
    );
    assert!(wire_has(&bodies, "AGENT-A"));
}

/// H5's seeded transcript: the leading soul and 40 user/assistant pairs of 200 chars.
fn seeded(given: &Value) -> Vec<Value> {
    let g = &given["generator"];
    let mut out = vec![g["leading"].clone()];
    for _ in 0..g["pairs"].as_u64().unwrap() {
        for m in g["group"].as_array().unwrap() {
            let content = m["content"].as_str().unwrap();
            let ch = content.split('\'').nth(1).unwrap();
            let n: usize = content.split(' ').nth(2).unwrap().parse().unwrap();
            out.push(json!({"role": m["role"], "content": ch.repeat(n)}));
        }
    }
    out
}

/// The library's §7F compactor with the fixture's options (its `summarize` returns the
/// literal `SUMMARY-OF-HEAD`), as a `before_llm` hook.
fn compactor(opts: &Value) -> toolnexus::client::Hooks {
    let summarize = |_older: Vec<Value>| {
        std::future::ready(Ok::<_, toolnexus::client::BoxError>("SUMMARY-OF-HEAD".to_owned()))
    };
    let options =
        toolnexus::compaction::CompactorOptions::new(opts["maxTokens"].as_u64().unwrap() as usize, summarize)
            .keep_tail(opts["keepTail"].as_u64().unwrap() as usize);
    toolnexus::compaction::compactor(options).hooks()
}

/// The wire form of the compactor's summary message.
const SUMMARY: &str = "[Summary of earlier conversation]\nSUMMARY-OF-HEAD";

/// Where the compactor is attached: the agent's def (the fixture's `attachedVia`) or the
/// runtime (§7F allows either).
#[derive(Clone, Copy)]
enum Via {
    Def,
    Runtime,
}

async fn seeded_agent(
    given: &Value,
    suspend: bool,
    via: Via,
) -> (AgentRuntime, Handle, Arc<Mutex<Vec<Value>>>) {
    let (t, bodies) = plain_model(suspend);
    let hooks = compactor(&given["compactorOptions"]);
    let mut def = AgentDef::new("a", "x");
    let mut client = scripted_client(t);
    match via {
        Via::Def => def = def.hooks(hooks),
        Via::Runtime => client = client.hooks(hooks),
    }
    if suspend {
        def = def.uses([tool("check_secret")]);
    }
    let rt = plain_runtime(client)
        .build(Registry::new([def]).unwrap())
        .unwrap();
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.conversation_store().save(h.id(), seeded(given)).await.unwrap();
    (rt, h, bodies)
}

#[tokio::test]
async fn hooks_h5_a_per_agent_compactor_compacts_an_agent_run() {
    let sc = hooks_scenario("H5");
    assert_eq!(sc["given"]["attachedVia"], "the agent def's hooks.beforeLLM");
    h5_compacts(&sc, Via::Def).await;
}

#[tokio::test]
async fn hooks_h5_a_runtime_wide_compactor_compacts_an_agent_run_too() {
    h5_compacts(&hooks_scenario("H5"), Via::Runtime).await;
}

async fn h5_compacts(sc: &Value, via: Via) {
    let (given, expect) = (&sc["given"], &sc["expect"]);
    let (rt, h, bodies) = seeded_agent(given, false, via).await;
    let stored = rt.conversation_store().get(h.id()).await.unwrap().unwrap();
    assert_eq!(
        stored.len() as u64,
        expect["preRunStoredMessages"].as_u64().unwrap()
    );
    rt.wake(&h, Some("go".into())).unwrap();
    assert_eq!(bounded(rt.wait(&h, None)).await.text, "ok");
    let wire = bodies.lock().unwrap()[0]["messages"].as_array().unwrap().clone();
    assert_eq!(
        json!(wire.len() < stored.len()),
        expect["wireTranscriptSmallerThanPreRun"]
    );
    assert_eq!(wire[0]["content"], expect["firstWireMessageContent"]);
    assert!(wire_has(
        &bodies,
        expect["wireTranscriptContains"].as_str().unwrap()
    ));
    // [soul verbatim, summary, the tail from a user turn]: with a 80-token tail budget and
    // 200-char messages, only the new user turn fits.
    assert_eq!(wire.len(), 3, "{wire:#?}");
    assert_eq!(wire[1], json!({"role": "system", "content": SUMMARY}));
    assert_eq!(
        wire[2],
        json!({"role": "user", "content": "go"}),
        "the tail begins at a user turn"
    );
    // A turn that completes keeps what the model saw, plus its reply (§7F: the rewrite is
    // the working transcript).
    let after = rt.conversation_store().get(h.id()).await.unwrap().unwrap();
    assert_eq!(after[..3], wire[..]);
    assert_eq!(after[3], json!({"role": "assistant", "content": "ok"}));
}

#[tokio::test]
async fn hooks_h6_a_compacted_turn_that_suspends_is_rewound_whole() {
    let sc = hooks_scenario("H6");
    let given = &hooks_scenario("H5")["given"];
    let expect = &sc["expect"];
    let (rt, h, bodies) = seeded_agent(given, true, Via::Def).await;
    rt.wake(&h, Some("go".into())).unwrap();
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(r.status.as_str(), expect["status"]);
    assert_eq!(
        bodies.lock().unwrap()[0]["messages"][1]["content"],
        SUMMARY,
        "the turn compacted"
    );
    let stored = rt.conversation_store().get(h.id()).await.unwrap().unwrap();
    assert_eq!(
        stored.len() as u64,
        expect["storedMessagesAfter"].as_u64().unwrap()
    );
    assert_eq!(
        stored,
        seeded(given),
        "the full pre-turn checkpoint, not the compacted head"
    );
    // The resumed replay starts from that full checkpoint and compacts again.
    let answer = Answer {
        id: r.pending.unwrap().id,
        ok: true,
        data: None,
        reason: None,
    };
    let done = bounded(rt.resume(answer)).await.unwrap();
    assert_eq!(done.text, "ok");
    let wires = bodies.lock().unwrap();
    let replay = wires[1]["messages"].as_array().unwrap();
    assert_eq!(replay[0]["content"], "SOUL-VERBATIM");
    assert_eq!(replay[1]["content"], SUMMARY, "the replay compacted again");
}

/// `unsetIsByteIdentical`: with neither seam set, a handle's wire bodies are exactly those
/// of a client the host builds with the same settings.
#[tokio::test]
async fn hooks_unset_is_byte_identical_to_a_host_built_client() {
    let fx = fixture("agent-hooks.json");
    assert!(fx["invariants"]["unsetIsByteIdentical"].is_string());
    let (t, agent_bodies) = plain_model(false);
    let def = AgentDef::new("a", "x").soul("SOUL").uses([tool("lookup")]);
    let rt = plain_runtime(scripted_client(t))
        .build(Registry::new([def]).unwrap())
        .unwrap();
    bounded(rt.run("a", "go")).await.unwrap();
    let (t, host_bodies) = plain_model(false);
    let client = toolnexus::client::Client::builder()
        .base_url("http://127.0.0.1:9/v1")
        .model("m")
        .api_key("k")
        .style(toolnexus::client::Style::OpenAi)
        .system_prompt("SOUL")
        .transport(t)
        .build()
        .unwrap();
    client
        .run("go", &toolnexus::Toolkit::new([tool("lookup")]))
        .await
        .unwrap();
    assert_eq!(*agent_bodies.lock().unwrap(), *host_bodies.lock().unwrap());
    let stored = rt.conversation_store().get("root/a.1").await.unwrap().unwrap();
    assert_eq!(stored.len(), 3, "system, user, assistant: {stored:#?}");
}
