//! Compaction cost (SPEC §7F) on a 200-message transcript (the compaction fixture's
//! four-message groups, 50 of them, after a system prompt): the rewrite when over budget,
//! and the check alone when under it. The summarizer is a ready future, so the figure is the
//! compactor's own work. Allocations per call are counted by a wrapping global allocator and
//! printed once before the timings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolnexus::client::BoxError;
use toolnexus::compaction::{CompactorOptions, compactor};

/// The system allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn transcript() -> Vec<Value> {
    let mut m = vec![json!({"role": "system", "content": "You are Ava. SOUL."})];
    for i in 0..50 {
        m.extend([
            json!({"role": "user", "content": format!("question {i} {}", "pad ".repeat(40))}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("c{i}"), "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": format!("result {i} {}", "data ".repeat(40))}),
            json!({"role": "assistant", "content": format!("answer {i}")}),
        ]);
    }
    m
}

fn summarize(older: Vec<Value>) -> std::future::Ready<Result<String, BoxError>> {
    std::future::ready(Ok(format!("summarized {} messages", older.len())))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let input = transcript();
    let over = compactor(CompactorOptions::new(2000, summarize).keep_tail(800));
    let under = compactor(CompactorOptions::new(1_000_000, summarize));
    for (name, c) in [("over budget", &over), ("under budget", &under)] {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let out = rt.block_on(c.compact(&input));
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        eprintln!(
            "compaction of {} messages, {name}: {allocations} allocations ({} messages out)",
            input.len() - 1,
            out.map_or(input.len(), |o| o.len())
        );
    }
    let mut group = c.benchmark_group("compaction");
    group.bench_function("200_messages_over_budget", |b| {
        b.to_async(&rt).iter(|| async {
            let out = over.compact(&input).await.expect("compacts");
            assert_eq!(out.len(), 22);
        })
    });
    group.bench_function("200_messages_under_budget", |b| {
        b.to_async(&rt).iter(|| async {
            assert!(under.compact(&input).await.is_none());
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
