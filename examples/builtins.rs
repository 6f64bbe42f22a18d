//! The built-in file tools — `write`, `read`, `edit`, `grep`, `glob` — working on real files
//! in a temporary directory, exactly as a model would call them (by name, with JSON
//! arguments). Failures come back as error results, never panics.
//!
//! Run: `cargo run --example builtins`

use serde_json::{Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{ToolContext, ToolResult, Toolkit};

async fn call(tk: &Toolkit, name: &str, args: Value) -> ToolResult {
    println!("{name} {args}");
    let r = tk.execute(name, args, ToolContext::default()).await;
    println!("  -> {}", r.to_json());
    r
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Only the five file tools: shell, web and the rest switched off.
    let config = ["bash", "webfetch", "question", "apply_patch", "todowrite"]
        .into_iter()
        .fold(BuiltinsConfig::default(), |c, name| c.with_tool(name, false));
    let tk = Toolkit::new(builtin::select(&config));
    println!("tools: {:?}", tk.tool_names());
    assert_eq!(tk.tool_names(), ["edit", "glob", "grep", "read", "write"]);

    let dir = tempfile::tempdir()?;
    let root = dir.path().to_str().ok_or("temp dir is not UTF-8")?;
    let notes = format!("{root}/docs/notes.md");

    // write creates the parent directories.
    let r = call(
        &tk,
        "write",
        json!({"path": notes, "content": "# Notes\ntodo: ship\ntodo: test\n"}),
    )
    .await;
    assert_eq!(r.output, format!("Wrote 30 bytes to {notes}"));
    call(
        &tk,
        "write",
        json!({"path": format!("{root}/src/main.rs"), "content": "fn main() {} // todo: docs\n"}),
    )
    .await;

    // read a one-based line window.
    let r = call(&tk, "read", json!({"path": notes, "offset": 2, "limit": 1})).await;
    assert_eq!(r.to_json(), r#"{"output":"todo: ship","isError":false}"#);

    // edit refuses an ambiguous replacement, then replaces one unique occurrence.
    let r = call(
        &tk,
        "edit",
        json!({"path": notes, "oldString": "todo", "newString": "done"}),
    )
    .await;
    assert!(r.is_error);
    assert_eq!(
        r.output,
        format!("edit: oldString is not unique in {notes} (2 occurrences); use replaceAll")
    );
    let r = call(
        &tk,
        "edit",
        json!({"path": notes, "oldString": "todo: ship", "newString": "done: ship"}),
    )
    .await;
    assert_eq!(r.output, format!("Edited {notes} (1 replacement)"));
    assert_eq!(
        std::fs::read_to_string(&notes)?,
        "# Notes\ndone: ship\ntodo: test\n"
    );

    // grep: path:line:text, sorted by relative path.
    let r = call(&tk, "grep", json!({"pattern": "todo", "path": root})).await;
    assert_eq!(
        r.output,
        "docs/notes.md:3:todo: test\nsrc/main.rs:1:fn main() {} // todo: docs"
    );

    // glob: relative paths; a pattern without "/" matches the file name at any depth.
    let r = call(&tk, "glob", json!({"pattern": "*.rs", "path": root})).await;
    assert_eq!(r.output, "src/main.rs");
    let r = call(&tk, "glob", json!({"pattern": "**/*", "path": root})).await;
    assert_eq!(r.output, "docs/notes.md\nsrc/main.rs");

    // Bad input is an error result the model can act on.
    let missing = format!("{root}/missing.txt");
    let r = call(&tk, "read", json!({"path": missing})).await;
    assert!(r.is_error);
    assert_eq!(r.output, format!("read: file not found: {missing}"));
    let r = call(&tk, "write", json!({"path": notes})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"write: content is required","isError":true}"#
    );
    Ok(())
}
