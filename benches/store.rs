//! What a durable store adds: the latency of one `ask` (load, run against the loopback mock
//! model, conditional save) with conversations in memory, SQLite and PostgreSQL, and store
//! operations per second with 32 concurrent writers (each `save_if` on its own conversation).
//! PostgreSQL is measured when `TOOLNEXUS_PG_URL` is set (`. .ci/pg-start`), else left out.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use toolnexus::Toolkit;
use toolnexus::client::{Client, ConversationStore, InMemoryStore, RunOptions, Style};
use toolnexus::store::{Db, DbOptions, SqlConversationStore, StoreUrl};
use toolnexus_mock::{MockModel, Scenario};

const WRITERS: usize = 32;

/// Every store to compare, by name; the temp dir keeps the SQLite file alive.
async fn stores(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn ConversationStore>)> {
    let mut all: Vec<(&'static str, Arc<dyn ConversationStore>)> =
        vec![("memory", Arc::new(InMemoryStore::new()))];
    let sqlite = Db::open(&StoreUrl::Sqlite(dir.join("bench.db")), DbOptions::default())
        .await
        .expect("sqlite");
    all.push(("sqlite", Arc::new(SqlConversationStore::new(sqlite))));
    if let Ok(url) = std::env::var("TOOLNEXUS_PG_URL") {
        let options = DbOptions {
            max_connections: WRITERS as u32,
            ..DbOptions::default()
        };
        let pg = Db::open(&url.parse().expect("a PostgreSQL URL"), options)
            .await
            .expect("postgres");
        all.push(("postgres", Arc::new(SqlConversationStore::new(pg))));
    }
    all
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let model = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Planner))
        .expect("mock model");
    let stores = rt.block_on(stores(dir.path()));
    let tk = Toolkit::new([]);
    let fresh = AtomicU64::new(0);

    let mut group = c.benchmark_group("store_ask");
    for (name, store) in &stores {
        let client = Client::builder()
            .base_url(model.base_url())
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("bench")
            .store(store.clone())
            .build()
            .expect("client");
        // A new conversation each time: the transcript (and so the row) stays one turn long.
        group.bench_function(*name, |b| {
            b.to_async(&rt).iter(|| async {
                let id = format!("ask-{}", fresh.fetch_add(1, Ordering::Relaxed));
                let r = client.ask("hello", &id, RunOptions::new(&tk)).await.expect("ask");
                assert_eq!(r.text, "You said: hello");
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("store_32_writers");
    group.throughput(Throughput::Elements(WRITERS as u64));
    for (name, store) in &stores {
        group.bench_function(*name, |b| {
            b.to_async(&rt).iter(|| async {
                let round = fresh.fetch_add(1, Ordering::Relaxed);
                let writes = (0..WRITERS).map(|w| {
                    let store = store.clone();
                    tokio::spawn(async move {
                        let id = format!("w-{round}-{w}");
                        store
                            .save_if(&id, vec![json!({"role": "user", "content": "x"})], None)
                            .await
                    })
                });
                for done in futures::future::join_all(writes).await {
                    done.expect("join").expect("save_if");
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
