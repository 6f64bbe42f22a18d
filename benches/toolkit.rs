//! `Toolkit::execute` on a native `#[tool]` (the toolkit's overhead: routing, argument
//! parsing, panic/timeout/cancel guards, result normalization) and `to_openai` over 100 tools.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolnexus::{Tool, ToolContext, ToolResult, Toolkit, tool, toolkit};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn execute(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tk = toolkit![add];
    let args = json!({"a": 1, "b": 2});
    c.bench_function("toolkit_execute_native_add", |b| {
        b.to_async(&rt)
            .iter(|| tk.execute("add", args.clone(), ToolContext::default()));
    });
    // The same call with a hand-written tool and no argument parsing: the floor the
    // toolkit's guards cost on their own.
    let raw = Toolkit::new([Tool::new("add", |_, _| async { ToolResult::success(3) })]);
    c.bench_function("toolkit_execute_raw_tool", |b| {
        b.to_async(&rt)
            .iter(|| raw.execute("add", args.clone(), ToolContext::default()));
    });
    // What every call above pays before the toolkit runs: the caller's arguments and context.
    c.bench_function("args_clone_and_context_only", |b| {
        b.iter(|| (args.clone(), ToolContext::default()))
    });
}

fn to_openai(c: &mut Criterion) {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "minimum": 0, "default": 10},
            "order": {"type": "string", "enum": ["newest", "relevance"]}
        },
        "required": ["query"]
    });
    let tk = Toolkit::new((0..100).map(|i| {
        Tool::new(format!("tool_{i:03}"), |_, _| async { ToolResult::success("") })
            .with_description("Search the catalog for products matching a query.")
            .with_schema(schema.clone())
    }));
    c.bench_function("to_openai_100_tools", |b| b.iter(|| tk.to_openai()));
    c.bench_function("to_openai_100_tools_serialized", |b| {
        b.iter(|| serde_json::to_string(&tk.to_openai()).unwrap())
    });
    // What the client sends each turn: rendered once per tool set, then shared.
    c.bench_function("to_openai_json_100_tools_cached", |b| {
        b.iter(|| tk.to_openai_json())
    });
    c.bench_function("to_gemini_100_tools", |b| b.iter(|| tk.to_gemini()));
}

criterion_group!(benches, execute, to_openai);
criterion_main!(benches);
