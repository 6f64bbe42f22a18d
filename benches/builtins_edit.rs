//! What the file-change metadata (`files`, `diff`) costs `edit` and `write`: one line changed
//! in a file of 1,000 and of 100,000 lines (≈22 KB and ≈2.1 MB). Each call really changes the
//! file (the line flips between two spellings), so every call diffs and writes.
//!
//! ```sh
//! cargo bench --bench builtins_edit
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{ToolContext, Toolkit};

fn edit_and_write(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tk = Toolkit::new(builtin::select(
        &BuiltinsConfig::default().with_base_dir(dir.path()),
    ));
    for lines in [1_000usize, 100_000] {
        let path = format!("f{lines}.txt");
        let text: String = (0..lines).map(|i| format!("line {i} of the file\n")).collect();
        std::fs::write(dir.path().join(&path), &text).unwrap();
        let middle = format!("line {} of the file", lines / 2);
        let other = format!("line {} OF THE FILE", lines / 2);
        let mut flip = false;
        c.bench_function(&format!("edit_one_line_of_{lines}"), |b| {
            b.to_async(&rt).iter(|| {
                flip = !flip;
                let (old, new) = if flip {
                    (&middle, &other)
                } else {
                    (&other, &middle)
                };
                let args = json!({"path": path, "oldString": old, "newString": new});
                let tk = &tk;
                async move {
                    let r = tk.execute("edit", args, ToolContext::default()).await;
                    assert!(!r.is_error, "{}", r.output);
                }
            });
        });
        let changed = text.replacen(&middle, &other, 1);
        let mut flip = false;
        c.bench_function(&format!("write_one_line_changed_of_{lines}"), |b| {
            b.to_async(&rt).iter(|| {
                flip = !flip;
                let content = if flip { &changed } else { &text };
                let args = json!({"path": path, "content": content});
                let tk = &tk;
                async move {
                    let r = tk.execute("write", args, ToolContext::default()).await;
                    assert!(!r.is_error, "{}", r.output);
                }
            });
        });
    }
}

criterion_group!(benches, edit_and_write);
criterion_main!(benches);
