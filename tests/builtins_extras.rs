//! The built-ins beyond the default ten's plain behaviour: the file-change metadata of
//! `write`, `edit` and `apply_patch`, and the opt-in extras.

use serde_json::{Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{ToolContext, ToolResult, Toolkit};

/// The built-ins `config` selects, as a toolkit.
fn toolkit(config: &BuiltinsConfig) -> Toolkit {
    Toolkit::new(builtin::select(config))
}

async fn run(tk: &Toolkit, name: &str, args: Value) -> ToolResult {
    tk.execute(name, args, ToolContext::default()).await
}

/// `metadata` minus the keys each tool had before the change metadata.
fn change_meta(r: &ToolResult) -> Value {
    let mut m = r.metadata.clone().expect("metadata");
    m.retain(|k, _| matches!(k.as_str(), "files" | "diff" | "diffCut"));
    Value::Object(m)
}

// ---------------------------------------------------------------------------------------
// File-change metadata
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn write_reports_a_modified_file_with_a_relative_diff() {
    let base = tempfile::tempdir().unwrap();
    let tk = toolkit(&BuiltinsConfig::default().with_base_dir(base.path()));
    std::fs::write(base.path().join("notes.md"), "# Notes\nold line\nkeep\n").unwrap();
    let r = run(
        &tk,
        "write",
        json!({"path": "notes.md", "content": "# Notes\nnew line\nkeep\nmore\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.output);
    assert_eq!(r.output, "Wrote 27 bytes to notes.md");
    assert_eq!(
        change_meta(&r),
        json!({
            "files": [{"path": "notes.md", "status": "modified", "additions": 2, "deletions": 1}],
            "diff": "--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,4 @@\n # Notes\n-old line\n+new line\n keep\n+more\n",
        })
    );
    // The same content again: a modification with nothing in it.
    let r = run(
        &tk,
        "write",
        json!({"path": "notes.md", "content": "# Notes\nnew line\nkeep\nmore\n"}),
    )
    .await;
    assert_eq!(
        change_meta(&r),
        json!({"files": [{"path": "notes.md", "status": "modified", "additions": 0, "deletions": 0}], "diff": ""})
    );
}

/// The README's example, verbatim.
#[tokio::test]
async fn write_reports_an_added_file() {
    let dir = tempfile::tempdir().unwrap();
    let tk = Toolkit::new(builtin::select(
        &BuiltinsConfig::default().with_base_dir(dir.path()),
    ));
    let r = tk
        .execute(
            "write",
            json!({"path": "a.txt", "content": "hi\n"}),
            ToolContext::default(),
        )
        .await;
    let meta = r.metadata.unwrap();
    assert_eq!(
        meta["files"],
        json!([{"path": "a.txt", "status": "added", "additions": 1, "deletions": 0}])
    );
    assert_eq!(meta["diff"], "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hi\n");
}

#[tokio::test]
async fn edit_diff_keeps_three_lines_of_context_and_splits_far_hunks() {
    let base = tempfile::tempdir().unwrap();
    let tk = toolkit(&BuiltinsConfig::default().with_base_dir(base.path()));
    let text: String = (1..=20).map(|i| format!("l{i} x\n")).collect();
    std::fs::write(base.path().join("f.txt"), &text).unwrap();
    let r = run(
        &tk,
        "edit",
        json!({"path": "f.txt", "oldString": " x\n", "newString": " x\n", "replaceAll": true}),
    )
    .await;
    assert_eq!(change_meta(&r)["files"][0]["additions"], 0);
    std::fs::write(
        base.path().join("f.txt"),
        text.replace("l2 x", "l2 y").replace("l18 x", "l18 y"),
    )
    .unwrap();
    let r = run(
        &tk,
        "edit",
        json!({"path": "f.txt", "oldString": " y", "newString": " z", "replaceAll": true}),
    )
    .await;
    assert_eq!(r.output, "Edited f.txt (2 replacements)");
    assert_eq!(
        change_meta(&r),
        json!({
            "files": [{"path": "f.txt", "status": "modified", "additions": 2, "deletions": 2}],
            "diff": "--- a/f.txt\n+++ b/f.txt\n\
                     @@ -1,5 +1,5 @@\n l1 x\n-l2 y\n+l2 z\n l3 x\n l4 x\n l5 x\n\
                     @@ -15,6 +15,6 @@\n l15 x\n l16 x\n l17 x\n-l18 y\n+l18 z\n l19 x\n l20 x\n",
        })
    );
}

#[tokio::test]
async fn apply_patch_lists_each_file_once_and_skips_one_it_created_and_deleted() {
    let base = tempfile::tempdir().unwrap();
    let tk = toolkit(&BuiltinsConfig::default().with_base_dir(base.path()));
    std::fs::write(base.path().join("blob.bin"), b"\xff\xfe\x00raw\n").unwrap();
    std::fs::write(base.path().join("k.txt"), "a\nb\n").unwrap();
    let patch = "*** Begin Patch\n\
                 *** Add File: tmp.txt\n+scratch\n\
                 *** Delete File: tmp.txt\n\
                 *** Delete File: blob.bin\n\
                 *** Update File: k.txt\n-b\n+B\n\
                 *** Update File: k.txt\n+c\n\
                 *** End Patch";
    let r = run(&tk, "apply_patch", json!({"patchText": patch})).await;
    assert_eq!(r.output, "Applied patch: 5 file operations");
    // A file that is not UTF-8 still gets its deletion counted (undecodable bytes replaced).
    assert_eq!(
        change_meta(&r),
        json!({
            "files": [
                {"path": "blob.bin", "status": "deleted", "additions": 0, "deletions": 1},
                {"path": "k.txt", "status": "modified", "additions": 2, "deletions": 1},
            ],
            "diff": "--- a/blob.bin\n+++ /dev/null\n@@ -1 +0,0 @@\n-\u{fffd}\u{fffd}\u{0}raw\n\
                     --- a/k.txt\n+++ b/k.txt\n@@ -1,2 +1,3 @@\n a\n-b\n+B\n+c\n\\ No newline at end of file\n",
        })
    );
    // A failed patch carries no change metadata: nothing changed.
    let r = run(
        &tk,
        "apply_patch",
        json!({"patchText": "*** Begin Patch\n*** Delete File: nope\n*** End Patch"}),
    )
    .await;
    assert!(r.is_error);
    assert_eq!(r.metadata, None);
}
