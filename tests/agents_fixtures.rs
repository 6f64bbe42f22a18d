//! The shared agent-runtime fixtures (SPEC §7D; tests/fixtures/agents/README.md), every
//! `subagent-*.json` and `agent-hooks.json`, on a virtual clock. Every `expect` key is
//! checked; a key this harness does not know fails the test rather than pass unread.

mod agents_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_support::{ScriptedModel, fixture, tool};
use serde_json::{Map, Value, json};
use toolnexus::Answer;
use toolnexus::agents::{
    AgentDef, AgentRuntime, Budget, Handle, HandleState, InboxItem, Registry, RuntimeBuilder, SpawnError,
    TaskResult, VerbError, VirtualClock,
};

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
    let mut b = AgentRuntime::builder()
        .base_url("http://127.0.0.1:9/v1")
        .model("m-default")
        .api_key("k")
        .retries(0)
        .transport(model)
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
