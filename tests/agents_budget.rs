//! `on_budget` (SPEC §7D budgets: `onBudget → stop | extend | suspend`): what a host decides
//! when a limit is hit before a turn. Each agent here may spend 4 tokens; every model reply
//! costs 4, so its first turn runs and its second finds the pool spent.

mod agents_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_support::scripted_client;
use serde_json::{Value, json};
use toolnexus::agents::{
    AgentDef, AgentRuntime, Budget, BudgetDecision, BudgetExtension, BudgetInfo, Handle, HandleState,
    LimitName, Registry, RuntimeBuilder, TaskResult, TaskStatus, VirtualClock,
};
use toolnexus::client::HttpResponse;
use toolnexus::client::transport::from_fn;
use toolnexus::suspend::{AnswerReason, WaitFor};
use toolnexus::{Answer, Request};

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("bounded wait")
}

/// A model answering `reply N` to its N-th request (4 tokens each), counting requests.
fn runtime() -> (RuntimeBuilder, Arc<AtomicUsize>) {
    let n = Arc::new(AtomicUsize::new(0));
    let c = n.clone();
    let t = from_fn(move |_req| {
        let k = c.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            Ok(HttpResponse::json(&json!({
                "choices": [{"message": {"role": "assistant", "content": format!("reply {k}")}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let b = AgentRuntime::builder(scripted_client(t));
    (b, n)
}

fn capped() -> AgentDef {
    AgentDef::new("a", "does a").budget(Budget::new().max_tokens(4))
}

/// Run `first`, then wake again with `second`: the second turn meets the spent pool.
async fn two_turns(rt: &AgentRuntime) -> (Handle, TaskResult) {
    let first = bounded(rt.run("a", "first")).await.unwrap();
    assert_eq!((first.status, first.text.as_str()), (TaskStatus::Done, "reply 1"));
    let h = rt.handle("root/a.1").unwrap();
    rt.wake(&h, Some("second".to_owned())).unwrap();
    let r = bounded(rt.wait(&h, None)).await;
    (h, r)
}

async fn transcript(rt: &AgentRuntime, h: &Handle) -> Vec<(String, String)> {
    let msgs = rt
        .conversation_store()
        .get(h.id())
        .await
        .unwrap()
        .unwrap_or_default();
    msgs.iter()
        .map(|m: &Value| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

fn states(rt: &AgentRuntime, h: &Handle) -> Vec<String> {
    rt.transitions(h).iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn stop_is_incomplete_naming_the_limit_and_the_callback_saw_it() {
    let seen = Arc::new(Mutex::new(Vec::<BudgetInfo>::new()));
    let s = seen.clone();
    let def = capped().on_budget(move |info| {
        s.lock().unwrap().push(info.clone());
        BudgetDecision::Stop
    });
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    assert_eq!(r.status, TaskStatus::Incomplete);
    assert_eq!(r.text, "budget exhausted (maxTokens); partial work preserved");
    assert_eq!(r.limit, Some(LimitName::MaxTokens));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the stopped turn never reached the model"
    );
    let info = seen.lock().unwrap().clone();
    assert_eq!(
        info,
        [BudgetInfo {
            handle: h.clone(),
            agent: "a".to_owned(),
            limit: LimitName::MaxTokens,
            exhausted_at: h.clone(),
            total_tokens: 4,
        }]
    );
    assert_eq!(
        transcript(&rt, &h).await,
        pairs(&[("user", "first"), ("assistant", "reply 1")])
    );
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Idle);
}

#[tokio::test]
async fn extend_raises_the_spent_pool_and_the_turn_runs_once_per_extension() {
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    // Extend the first time, stop the second: the third turn ends incomplete.
    let def = capped().on_budget(move |_| match a.fetch_add(1, Ordering::SeqCst) {
        0 => BudgetDecision::Extend(BudgetExtension::by(4)),
        _ => BudgetDecision::Stop,
    });
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    assert_eq!(
        (r.status, r.text.as_str(), r.total_tokens),
        (TaskStatus::Done, "reply 2", 8)
    );
    assert_eq!(rt.remaining_tokens(&h), Some(0));
    assert_eq!(
        transcript(&rt, &h).await,
        pairs(&[
            ("user", "first"),
            ("assistant", "reply 1"),
            ("user", "second"),
            ("assistant", "reply 2")
        ])
    );
    rt.wake(&h, Some("third".to_owned())).unwrap();
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(
        (r.status, r.text.as_str(), r.limit),
        (
            TaskStatus::Incomplete,
            "budget exhausted (maxTokens); partial work preserved",
            Some(LimitName::MaxTokens)
        )
    );
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(
        rt.trace()
            .contains(&"root/a.1: on_budget extend maxTokens at root/a.1 by 4".to_owned())
    );
}

#[tokio::test]
async fn an_extension_that_leaves_the_limit_spent_stops_after_one_question() {
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    let def = capped().on_budget(move |_| {
        a.fetch_add(1, Ordering::SeqCst);
        BudgetDecision::Extend(BudgetExtension::by(0))
    });
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (_, r) = two_turns(&rt).await;
    assert_eq!(
        (r.status, r.text.as_str()),
        (
            TaskStatus::Incomplete,
            "budget exhausted (maxTokens); partial work preserved"
        )
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "asked once per limit per turn, never looped"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_runtime_callback_applies_unless_the_def_sets_its_own() {
    let (b, _) = runtime();
    let rt = b
        .on_budget(|_| BudgetDecision::Extend(BudgetExtension::by(4)))
        .build(Registry::new([capped()]).unwrap())
        .unwrap();
    let (_, r) = two_turns(&rt).await;
    assert_eq!((r.status, r.text.as_str()), (TaskStatus::Done, "reply 2"));

    let (b, _) = runtime();
    let rt = b
        .on_budget(|_| BudgetDecision::Extend(BudgetExtension::by(4)))
        .build(Registry::new([capped().on_budget(|_| BudgetDecision::Stop)]).unwrap())
        .unwrap();
    let (_, r) = two_turns(&rt).await;
    assert_eq!(
        r.status,
        TaskStatus::Incomplete,
        "the def's callback replaces the runtime's"
    );
}

#[tokio::test]
async fn a_panicking_callback_is_a_stop_with_the_reason() {
    let def = capped().on_budget(|_| panic!("ledger offline"));
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    assert_eq!(r.status, TaskStatus::Incomplete);
    assert_eq!(
        r.text,
        "budget exhausted (maxTokens); partial work preserved (on_budget panicked: ledger offline)"
    );
    assert_eq!(r.limit, Some(LimitName::MaxTokens));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The runtime is intact: the handle is idle and answers the next wake.
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Idle);
    rt.close(&rt.root()).await;
    assert!(rt.is_quiescent());
}

#[tokio::test]
async fn suspend_with_no_interpreter_parks_durably_and_an_ok_answer_runs_the_turn() {
    let def = capped().on_budget(|_| BudgetDecision::Suspend);
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    assert_eq!(r.status, TaskStatus::Pending);
    assert_eq!(
        r.text,
        "budget exhausted (maxTokens) for root/a.1: approve to continue"
    );
    let req = r.pending.clone().unwrap();
    assert_eq!(req.kind, "approval");
    assert_eq!(
        Value::Object(req.data.clone().unwrap()),
        json!({"limit": "maxTokens", "path": ["root", "a.1"]})
    );
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Suspended);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // A wait on the suspended handle answers its pending at once.
    assert_eq!(bounded(rt.wait(&h, None)).await.status, TaskStatus::Pending);

    let done = bounded(rt.resume(Answer::output(&req.id, "approved")))
        .await
        .unwrap();
    assert_eq!((done.status, done.text.as_str()), (TaskStatus::Done, "reply 2"));
    assert_eq!(
        states(&rt, &h),
        [
            "idle→running",
            "running→idle",
            "idle→running",
            "running→suspended",
            "suspended→idle",
            "idle→running",
            "running→idle"
        ]
    );
    assert_eq!(
        transcript(&rt, &h).await,
        pairs(&[
            ("user", "first"),
            ("assistant", "reply 1"),
            ("user", "second"),
            ("assistant", "reply 2")
        ])
    );
}

#[tokio::test]
async fn a_declined_durable_approval_stops_incomplete() {
    let def = capped().on_budget(|_| BudgetDecision::Suspend);
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    let id = r.pending.unwrap().id;
    let r = bounded(rt.resume(Answer::declined(id, AnswerReason::Declined)))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.limit),
        (
            TaskStatus::Incomplete,
            "budget exhausted (maxTokens); partial work preserved (approval declined)",
            Some(LimitName::MaxTokens)
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Idle);
}

/// An interpreter that records each request and answers `ok`.
fn interpreter(ok: bool, seen: Arc<Mutex<Vec<Request>>>) -> WaitFor {
    Arc::new(move |req: Request| {
        seen.lock().unwrap().push(req.clone());
        Box::pin(async move {
            if ok {
                Answer::output(req.id, "yes")
            } else {
                Answer::declined(req.id, AnswerReason::Declined)
            }
        })
    })
}

#[tokio::test]
async fn suspend_with_an_interpreter_is_answered_inline() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let def = capped()
        .on_budget(|_| BudgetDecision::Suspend)
        .wait_for(interpreter(true, seen.clone()));
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    assert_eq!((r.status, r.text.as_str()), (TaskStatus::Done, "reply 2"));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, "approval");
    assert_eq!(
        asked[0].prompt,
        "budget exhausted (maxTokens) for root/a.1: approve to continue"
    );
    assert_eq!(
        states(&rt, &h)[2..],
        [
            "idle→running",
            "running→suspended",
            "suspended→running",
            "running→idle"
        ]
    );
}

#[tokio::test]
async fn an_inline_refusal_stops_incomplete_before_the_model_is_called() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let def = capped()
        .on_budget(|_| BudgetDecision::Suspend)
        .wait_for(interpreter(false, seen.clone()));
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([def]).unwrap()).unwrap();
    let (h, r) = two_turns(&rt).await;
    assert_eq!(
        (r.status, r.text.as_str(), r.limit),
        (
            TaskStatus::Incomplete,
            "budget exhausted (maxTokens); partial work preserved (approval declined)",
            Some(LimitName::MaxTokens)
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        transcript(&rt, &h).await,
        pairs(&[("user", "first"), ("assistant", "reply 1")])
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_budget_approval_climbs_to_the_nearest_interpreter_above() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let boss = AgentDef::new("boss", "holds the authority").wait_for(interpreter(true, seen.clone()));
    let def = capped().on_budget(|_| BudgetDecision::Suspend);
    let (b, calls) = runtime();
    let rt = b.build(Registry::new([boss, def]).unwrap()).unwrap();
    let boss = rt.spawn(&rt.root(), "boss", None).unwrap();
    let h = rt.spawn(&boss, "a", None).unwrap();
    assert_eq!(h.id(), "root/boss.1/a.1");
    for (prompt, reply) in [("first", "reply 1"), ("second", "reply 2")] {
        rt.wake(&h, Some(prompt.to_owned())).unwrap();
        let r = bounded(rt.wait(&h, None)).await;
        assert_eq!((r.status, r.text.as_str()), (TaskStatus::Done, reply));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].prompt,
        "budget exhausted (maxTokens) for root/boss.1/a.1: approve to continue"
    );
    assert!(
        rt.trace()
            .contains(&"root/boss.1/a.1: escalate → root/boss.1 answers (nearest interpreter)".to_owned())
    );
    assert_eq!(
        rt.inspect(&boss).unwrap().state,
        HandleState::Idle,
        "the interpreter never ran a turn"
    );
}

#[tokio::test]
async fn a_queued_wake_the_budget_stops_passes_the_freed_slot_on() {
    let release = Arc::new(tokio::sync::Notify::new());
    let (r2, n) = (release.clone(), Arc::new(AtomicUsize::new(0)));
    let t = from_fn(move |req| {
        let k = n.fetch_add(1, Ordering::SeqCst) + 1;
        let hold = req.json()["messages"].to_string().contains("hold");
        let release = r2.clone();
        async move {
            if hold {
                bounded(release.notified()).await;
            }
            Ok(HttpResponse::json(&json!({
                "choices": [{"message": {"role": "assistant", "content": format!("reply {k}")}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let parent = AgentDef::new("p", "parent").budget(Budget::new().max_concurrent(1));
    let defs = [
        parent,
        capped().on_budget(|_| BudgetDecision::Stop),
        AgentDef::new("y", "y"),
    ];
    let rt = AgentRuntime::builder(scripted_client(t))
        .build(Registry::new(defs).unwrap())
        .unwrap();
    let p = rt.spawn(&rt.root(), "p", None).unwrap();
    let a = rt.spawn(&p, "a", None).unwrap();
    rt.wake(&a, Some("first".to_owned())).unwrap();
    assert_eq!(bounded(rt.wait(&a, None)).await.text, "reply 1");
    let y1 = rt.spawn(&p, "y", None).unwrap();
    let y2 = rt.spawn(&p, "y", None).unwrap();
    rt.wake(&y1, Some("hold".to_owned())).unwrap();
    rt.wake(&a, Some("second".to_owned())).unwrap();
    rt.wake(&y2, Some("after".to_owned())).unwrap();
    assert_eq!(
        rt.inspect(&y2).unwrap().state,
        HandleState::Idle,
        "queued behind y.1"
    );
    release.notify_one();
    assert_eq!(bounded(rt.wait(&y1, None)).await.text, "reply 2");
    let r = bounded(rt.wait(&a, None)).await;
    assert_eq!(
        (r.status, r.limit),
        (TaskStatus::Incomplete, Some(LimitName::MaxTokens))
    );
    let r = bounded(rt.wait(&y2, None)).await;
    assert_eq!((r.status, r.text.as_str()), (TaskStatus::Done, "reply 3"));
    let trace = rt.trace();
    for line in [
        "root/p.1/a.1: wake QUEUED (parent concurrency 1)",
        "root/p.1/a.1: DEQUEUED wake (slot freed)",
        "root/p.1/a.1: wake refused (budget exhausted: maxTokens)",
        "root/p.1/y.2: DEQUEUED wake (slot freed)",
    ] {
        assert!(trace.contains(&line.to_owned()), "{line} in {trace:#?}");
    }
}

/// Look a term up.
#[toolnexus::tool]
fn lookup(q: String) -> String {
    format!("data({q})")
}

/// A child `a` under a coordinator `c`: its first model call reports 4 tokens and calls
/// `lookup`; its second never answers. Returns the runtime, both handles and the count of
/// model calls.
fn a_turn_that_hangs_after_one_call(
    clock: Option<VirtualClock>,
    child: Budget,
) -> (AgentRuntime, Handle, Handle, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let t = from_fn(move |_req| {
        let k = c.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if k > 1 {
                std::future::pending::<()>().await;
            }
            Ok(HttpResponse::json(&json!({
                "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                    "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let tk = toolnexus::toolkit![lookup];
    let registry = Registry::new([
        AgentDef::new("c", "coordinates").team(["a"]),
        AgentDef::new("a", "does a")
            .uses_from(&tk, ["lookup"])
            .budget(child),
    ])
    .unwrap();
    let mut b = AgentRuntime::builder(scripted_client(t));
    if let Some(clock) = clock {
        b = b.clock(Arc::new(clock));
    }
    let rt = b.build(registry).unwrap();
    let coord = rt.spawn(&rt.root(), "c", None).unwrap();
    let a = rt.spawn(&coord, "a", None).unwrap();
    rt.wake(&a, Some("go".to_owned())).unwrap();
    (rt, coord, a, calls)
}

/// Until the second (hanging) model call is in flight, so the first one is reported.
async fn second_call_in_flight(calls: &AtomicUsize) {
    bounded(async {
        while calls.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn an_interrupted_run_books_the_tokens_of_its_finished_calls_up_the_tree() {
    let (rt, coord, a, calls) = a_turn_that_hangs_after_one_call(None, Budget::new().max_tokens(100));
    second_call_in_flight(&calls).await;
    rt.interrupt(&a);
    let r = bounded(rt.wait(&a, None)).await;
    assert_eq!(
        (r.status, r.total_tokens, r.turns),
        (TaskStatus::Interrupted, 4, 1)
    );
    let view = rt.inspect(&a).unwrap();
    assert_eq!((view.state, view.tokens, view.turns), (HandleState::Idle, 4, 1));
    assert_eq!(rt.inspect(&coord).unwrap().tokens, 4);
    assert_eq!(rt.inspect(&rt.root()).unwrap().tokens, 4);
    assert_eq!(rt.remaining_tokens(&a), Some(96));
}

#[tokio::test]
async fn a_run_past_its_wall_deadline_books_what_it_spent() {
    let clock = VirtualClock::new();
    let (rt, coord, a, calls) =
        a_turn_that_hangs_after_one_call(Some(clock.clone()), Budget::new().max_wall_ms(1_000));
    second_call_in_flight(&calls).await;
    clock.advance(Duration::from_millis(1_000));
    let r = bounded(rt.wait(&a, None)).await;
    assert_eq!(
        (r.status, r.limit, r.total_tokens),
        (TaskStatus::Incomplete, Some(LimitName::MaxWallMs), 4)
    );
    assert_eq!(rt.inspect(&coord).unwrap().tokens, 4);
    rt.close_forced(&rt.root()).await;
    assert_eq!(rt.inspect(&a).unwrap().tokens, 4);
}

/// A model whose first answer waits until `release` fires, on a runtime whose `on_budget`
/// answers with `decide(k)` on its k-th question and records what it saw, including the
/// handle's state read back through `inspect` (the callback runs outside the table lock).
#[allow(clippy::type_complexity)]
fn a_slow_model_under_a_wall_budget(
    clock: &VirtualClock,
    decide: fn(usize) -> BudgetDecision,
) -> (
    AgentRuntime,
    Arc<tokio::sync::Notify>,
    Arc<AtomicUsize>,
    Arc<Mutex<Vec<(LimitName, Option<HandleState>)>>>,
) {
    let release = Arc::new(tokio::sync::Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let (r, c) = (release.clone(), calls.clone());
    let t = from_fn(move |_req| {
        let (r, c) = (r.clone(), c.clone());
        async move {
            c.fetch_add(1, Ordering::SeqCst);
            r.notified().await;
            Ok(HttpResponse::json(&json!({
                "choices": [{"message": {"role": "assistant", "content": "late answer"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rt_cell: Arc<std::sync::OnceLock<AgentRuntime>> = Arc::default();
    let (s, cell) = (seen.clone(), rt_cell.clone());
    let rt = AgentRuntime::builder(scripted_client(t))
        .clock(Arc::new(clock.clone()))
        .on_budget(move |info: &BudgetInfo| {
            let state = cell
                .get()
                .and_then(|rt| rt.inspect(&info.handle).ok())
                .map(|v| v.state);
            let mut s = s.lock().unwrap();
            s.push((info.limit, state));
            decide(s.len())
        })
        .build(
            Registry::new([AgentDef::new("a", "does a").budget(Budget::new().max_wall_ms(1_000))]).unwrap(),
        )
        .unwrap();
    rt_cell.set(rt.clone()).unwrap();
    (rt, release, calls, seen)
}

/// Until the turn's model call is in flight and its wall watcher sleeps on the clock.
async fn in_flight_and_sleeping(calls: &AtomicUsize, clock: &VirtualClock) {
    bounded(async {
        while calls.load(Ordering::SeqCst) < 1 || clock.sleepers() < 1 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_wall_deadline_passing_mid_run_asks_on_budget_and_an_extension_lets_the_run_finish() {
    let clock = VirtualClock::new();
    let (rt, release, calls, seen) =
        a_slow_model_under_a_wall_budget(&clock, |_| BudgetDecision::Extend(BudgetExtension::by(500)));
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some("go".to_owned())).unwrap();
    in_flight_and_sleeping(&calls, &clock).await;
    clock.advance(Duration::from_millis(1_000));
    bounded(async {
        while seen.lock().unwrap().is_empty() || clock.sleepers() < 1 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    // Asked once, mid-run, and its `inspect` of the running handle did not deadlock.
    assert_eq!(
        *seen.lock().unwrap(),
        [(LimitName::MaxWallMs, Some(HandleState::Running))]
    );
    release.notify_one();
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(
        (r.status, r.text.as_str(), r.total_tokens),
        (TaskStatus::Done, "late answer", 4)
    );
    assert!(
        rt.trace()
            .contains(&"root/a.1: on_budget extend maxWallMs mid-run by 500".to_owned())
    );
}

#[tokio::test]
async fn a_mid_run_stop_after_one_extension_ends_the_run_incomplete_at_max_wall_ms() {
    let clock = VirtualClock::new();
    let (rt, _release, calls, seen) = a_slow_model_under_a_wall_budget(&clock, |k| match k {
        1 => BudgetDecision::Extend(BudgetExtension::by(500)),
        _ => BudgetDecision::Stop,
    });
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some("go".to_owned())).unwrap();
    in_flight_and_sleeping(&calls, &clock).await;
    clock.advance(Duration::from_millis(1_000));
    bounded(async {
        while seen.lock().unwrap().is_empty() || clock.sleepers() < 1 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    clock.advance(Duration::from_millis(500));
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(
        (r.status, r.limit),
        (TaskStatus::Incomplete, Some(LimitName::MaxWallMs))
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (LimitName::MaxWallMs, Some(HandleState::Running)),
            (LimitName::MaxWallMs, Some(HandleState::Running))
        ]
    );
}

/// A model that calls `lookup` (4 tokens a call) on its first `calls_before_answer`
/// requests and then answers, under `max_turns(2)`, with `on_budget` answering `decide`.
fn a_long_run(
    calls_before_answer: usize,
    decide: BudgetDecision,
) -> (AgentRuntime, Arc<Mutex<Vec<LimitName>>>) {
    let n = Arc::new(AtomicUsize::new(0));
    let t = from_fn(move |_req| {
        let k = n.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            let message = if k <= calls_before_answer {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"),
                    "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]})
            } else {
                json!({"role": "assistant", "content": format!("answer after {k} calls")})
            };
            Ok(HttpResponse::json(&json!({"choices": [{"message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let tk = toolnexus::toolkit![lookup];
    let rt = AgentRuntime::builder(scripted_client(t))
        .on_budget(move |info: &BudgetInfo| {
            s.lock().unwrap().push(info.limit);
            decide
        })
        .build(
            Registry::new([AgentDef::new("a", "does a")
                .uses_from(&tk, ["lookup"])
                .budget(Budget::new().max_turns(2))])
            .unwrap(),
        )
        .unwrap();
    (rt, seen)
}

#[tokio::test]
async fn reaching_max_turns_asks_on_budget_and_an_extension_continues_the_same_transcript() {
    let (rt, seen) = a_long_run(2, BudgetDecision::Extend(BudgetExtension::by(2)));
    let r = bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.turns, r.total_tokens),
        (TaskStatus::Done, "answer after 3 calls", 3, 12)
    );
    assert_eq!(*seen.lock().unwrap(), [LimitName::MaxTurns]);
    // One transcript: the user turn once, then the three model turns and two tool results.
    let h = rt.handle("root/a.1").unwrap();
    let roles: Vec<(String, String)> = transcript(&rt, &h).await;
    let roles: Vec<&str> = roles.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    );
}

#[tokio::test]
async fn a_stop_at_max_turns_ends_incomplete_naming_it() {
    let (rt, seen) = a_long_run(5, BudgetDecision::Stop);
    let r = bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(
        (r.status, r.limit, r.turns, r.total_tokens),
        (TaskStatus::Incomplete, Some(LimitName::MaxTurns), 2, 8)
    );
    assert_eq!(*seen.lock().unwrap(), [LimitName::MaxTurns]);
}

#[tokio::test]
async fn each_extension_at_max_turns_is_asked_again_when_it_runs_out() {
    let (rt, seen) = a_long_run(5, BudgetDecision::Extend(BudgetExtension::by(2)));
    let r = bounded(rt.run("a", "go")).await.unwrap();
    // 2 turns, then +2, +2: the sixth call answers.
    assert_eq!(
        (r.status, r.text.as_str(), r.turns, r.total_tokens),
        (TaskStatus::Done, "answer after 6 calls", 6, 24)
    );
    assert_eq!(*seen.lock().unwrap(), [LimitName::MaxTurns; 2]);
}

#[tokio::test]
async fn a_suspend_at_max_turns_parks_durably_and_an_ok_answer_continues_the_same_transcript() {
    let (rt, seen) = a_long_run(2, BudgetDecision::Suspend);
    let r = bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.turns, r.total_tokens),
        (
            TaskStatus::Pending,
            "budget exhausted (maxTurns) for root/a.1: approve to continue",
            2,
            8
        )
    );
    let req = r.pending.clone().unwrap();
    assert_eq!(req.kind, "approval");
    assert_eq!(
        Value::Object(req.data.clone().unwrap()),
        json!({"limit": "maxTurns", "path": ["root", "a.1"]})
    );
    let h = rt.handle("root/a.1").unwrap();
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Suspended);
    assert_eq!(bounded(rt.wait(&h, None)).await.status, TaskStatus::Pending);

    let done = bounded(rt.resume(Answer::output(&req.id, "approved")))
        .await
        .unwrap();
    // A fresh max_turns(2) on the saved transcript: the third call answers.
    assert_eq!(
        (done.status, done.text.as_str(), done.turns, done.total_tokens),
        (TaskStatus::Done, "answer after 3 calls", 3, 12)
    );
    assert_eq!(*seen.lock().unwrap(), [LimitName::MaxTurns]);
    assert_eq!(
        states(&rt, &h),
        [
            "idle→running",
            "running→suspended",
            "suspended→idle",
            "idle→running",
            "running→idle"
        ]
    );
    // One transcript, the input once: no replay as a new user message.
    let t = transcript(&rt, &h).await;
    let roles: Vec<&str> = t.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    );
    assert_eq!((t[0].1.as_str(), t[5].1.as_str()), ("go", "answer after 3 calls"));
}

#[tokio::test]
async fn a_declined_suspension_at_max_turns_ends_incomplete_naming_it() {
    let (rt, _seen) = a_long_run(2, BudgetDecision::Suspend);
    let r = bounded(rt.run("a", "go")).await.unwrap();
    let id = r.pending.unwrap().id;
    let r = bounded(rt.resume(Answer::declined(id, AnswerReason::Declined)))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.limit, r.turns),
        (
            TaskStatus::Incomplete,
            "budget exhausted (maxTurns); partial work preserved (approval declined)",
            Some(LimitName::MaxTurns),
            2
        )
    );
    let h = rt.handle("root/a.1").unwrap();
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Idle);
    assert_eq!(transcript(&rt, &h).await.len(), 5);
}

#[tokio::test]
async fn a_suspend_at_max_turns_with_an_interpreter_is_answered_inline() {
    let seen_req = Arc::new(Mutex::new(Vec::new()));
    let n = Arc::new(AtomicUsize::new(0));
    let t = from_fn(move |_req| {
        let k = n.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            let message = if k <= 2 {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"),
                    "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]})
            } else {
                json!({"role": "assistant", "content": format!("answer after {k} calls")})
            };
            Ok(HttpResponse::json(&json!({"choices": [{"message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let tk = toolnexus::toolkit![lookup];
    let rt = AgentRuntime::builder(scripted_client(t))
        .build(
            Registry::new([AgentDef::new("a", "does a")
                .uses_from(&tk, ["lookup"])
                .budget(Budget::new().max_turns(2))
                .on_budget(|_| BudgetDecision::Suspend)
                .wait_for(interpreter(true, seen_req.clone()))])
            .unwrap(),
        )
        .unwrap();
    let r = bounded(rt.run("a", "go")).await.unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.turns),
        (TaskStatus::Done, "answer after 3 calls", 3)
    );
    let reqs = seen_req.lock().unwrap();
    assert_eq!(
        reqs.iter().map(|r| r.prompt.as_str()).collect::<Vec<_>>(),
        ["budget exhausted (maxTurns) for root/a.1: approve to continue"]
    );
}

#[tokio::test]
async fn a_suspend_at_the_wall_deadline_parks_and_an_ok_answer_runs_the_turn_with_a_fresh_window() {
    let clock = VirtualClock::new();
    let (rt, release, calls, seen) = a_slow_model_under_a_wall_budget(&clock, |_| BudgetDecision::Suspend);
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some("go".to_owned())).unwrap();
    in_flight_and_sleeping(&calls, &clock).await;
    clock.advance(Duration::from_millis(1_000));
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(
        (r.status, r.text.as_str()),
        (
            TaskStatus::Pending,
            "budget exhausted (maxWallMs) for root/a.1: approve to continue"
        )
    );
    let req = r.pending.unwrap();
    assert_eq!(
        Value::Object(req.data.clone().unwrap()),
        json!({"limit": "maxWallMs", "path": ["root", "a.1"]})
    );
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Suspended);
    assert_eq!(
        *seen.lock().unwrap(),
        [(LimitName::MaxWallMs, Some(HandleState::Running))]
    );
    // The cut run saved no transcript: the approved turn runs the input again, now with
    // a window to 2000 ms, and answers once released.
    release.notify_one();
    let done = bounded(rt.resume(Answer::output(&req.id, "approved")))
        .await
        .unwrap();
    assert_eq!(
        (done.status, done.text.as_str()),
        (TaskStatus::Done, "late answer")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(
        transcript(&rt, &h).await,
        pairs(&[("user", "go"), ("assistant", "late answer")])
    );
}

#[tokio::test]
async fn a_declined_suspension_at_the_wall_deadline_ends_incomplete_naming_it() {
    let clock = VirtualClock::new();
    let (rt, _release, calls, _seen) = a_slow_model_under_a_wall_budget(&clock, |_| BudgetDecision::Suspend);
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some("go".to_owned())).unwrap();
    in_flight_and_sleeping(&calls, &clock).await;
    clock.advance(Duration::from_millis(1_000));
    let id = bounded(rt.wait(&h, None)).await.pending.unwrap().id;
    let r = bounded(rt.resume(Answer::declined(id, AnswerReason::Declined)))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.text.as_str(), r.limit),
        (
            TaskStatus::Incomplete,
            "budget exhausted (maxWallMs); partial work preserved (approval declined)",
            Some(LimitName::MaxWallMs)
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Idle);
}

/// A model whose one answer waits for `release`, for an agent under `max_wall_ms(1000)`
/// whose `on_budget` suspends and whose own `wait_for` answers `ok`.
fn a_slow_model_with_an_interpreter(
    clock: &VirtualClock,
    ok: bool,
    seen: Arc<Mutex<Vec<Request>>>,
) -> (AgentRuntime, Arc<tokio::sync::Notify>, Arc<AtomicUsize>) {
    let release = Arc::new(tokio::sync::Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let (r, c) = (release.clone(), calls.clone());
    let t = from_fn(move |_req| {
        let (r, c) = (r.clone(), c.clone());
        async move {
            c.fetch_add(1, Ordering::SeqCst);
            r.notified().await;
            Ok(HttpResponse::json(&json!({
                "choices": [{"message": {"role": "assistant", "content": "late answer"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})))
        }
    });
    let def = AgentDef::new("a", "does a")
        .budget(Budget::new().max_wall_ms(1_000))
        .on_budget(|_| BudgetDecision::Suspend)
        .wait_for(interpreter(ok, seen));
    let rt = AgentRuntime::builder(scripted_client(t))
        .clock(Arc::new(clock.clone()))
        .build(Registry::new([def]).unwrap())
        .unwrap();
    (rt, release, calls)
}

#[tokio::test]
async fn an_inline_approval_at_the_wall_deadline_gives_the_running_turn_a_fresh_window() {
    let clock = VirtualClock::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (rt, release, calls) = a_slow_model_with_an_interpreter(&clock, true, seen.clone());
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some("go".to_owned())).unwrap();
    in_flight_and_sleeping(&calls, &clock).await;
    clock.advance(Duration::from_millis(1_000));
    // Approved: the watcher sleeps again, on the new deadline at 2000 ms.
    bounded(async {
        while seen.lock().unwrap().is_empty() || clock.sleepers() < 1 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    release.notify_one();
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!((r.status, r.text.as_str()), (TaskStatus::Done, "late answer"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        seen.lock()
            .unwrap()
            .iter()
            .map(|r| r.prompt.as_str())
            .collect::<Vec<_>>(),
        ["budget exhausted (maxWallMs) for root/a.1: approve to continue"]
    );
    assert_eq!(
        states(&rt, &h),
        [
            "idle→running",
            "running→suspended",
            "suspended→running",
            "running→idle"
        ]
    );
}

#[tokio::test]
async fn an_inline_refusal_at_the_wall_deadline_ends_the_run_incomplete() {
    let clock = VirtualClock::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (rt, _release, calls) = a_slow_model_with_an_interpreter(&clock, false, seen.clone());
    let h = rt.spawn(&rt.root(), "a", None).unwrap();
    rt.wake(&h, Some("go".to_owned())).unwrap();
    in_flight_and_sleeping(&calls, &clock).await;
    clock.advance(Duration::from_millis(1_000));
    let r = bounded(rt.wait(&h, None)).await;
    assert_eq!(
        (r.status, r.limit),
        (TaskStatus::Incomplete, Some(LimitName::MaxWallMs))
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(rt.inspect(&h).unwrap().state, HandleState::Idle);
}
