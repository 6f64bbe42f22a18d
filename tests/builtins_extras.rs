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

// ---------------------------------------------------------------------------------------
// Background shells
// ---------------------------------------------------------------------------------------

#[cfg(unix)]
mod background {
    use super::*;
    use std::time::Duration;
    use toolnexus::builtin::Extra;
    use toolnexus::{ToolkitOptions, tool::BUILTIN_NAMES};

    fn with_shells() -> BuiltinsConfig {
        BuiltinsConfig::default().with_extra(Extra::BackgroundShells)
    }

    /// `true` once `pid` no longer runs: gone from /proc, or a zombie awaiting its reaper.
    fn gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => matches!(
                stat.rsplit(')')
                    .next()
                    .and_then(|s| s.trim_start().chars().next()),
                Some('Z' | 'X')
            ),
        }
    }

    /// Poll `check` every 20 ms, at most for 10 s.
    async fn eventually(mut check: impl FnMut() -> bool) -> bool {
        for _ in 0..500 {
            if check() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// Start `command` in the background; returns its id.
    async fn start(tk: &Toolkit, command: &str) -> String {
        let r = run(tk, "bash", json!({"command": command, "run_in_background": true})).await;
        assert!(!r.is_error, "{}", r.output);
        let id = r.metadata.unwrap()["backgroundId"].as_str().unwrap().to_owned();
        assert_eq!(
            r.output,
            format!(
                "Started background shell {id}. Read its output with bash_output, stop it with kill_shell."
            )
        );
        id
    }

    /// The output `bash_output` returns for `id` until its first line is complete: a pid.
    async fn read_pid(tk: &Toolkit, id: &str) -> u32 {
        let mut seen = String::new();
        for _ in 0..500 {
            let r = run(tk, "bash_output", json!({"id": id})).await;
            seen.push_str(r.output.rsplit_once("\n[status: ").unwrap().0);
            if let Some((line, _)) = seen.split_once('\n') {
                return line.trim().parse().unwrap();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no pid printed by {id}: {seen:?}");
    }

    #[tokio::test]
    async fn the_extra_adds_two_tools_and_a_bash_argument() {
        let tk = toolkit(&with_shells());
        let mut names: Vec<&str> = BUILTIN_NAMES.to_vec();
        names.extend(["bash_output", "kill_shell"]);
        names.sort();
        assert_eq!(tk.tool_names(), names);
        // The upstream crate's schema: the ten's bash, plus one property.
        assert_eq!(
            tk.get("bash").unwrap().input_schema().to_string(),
            r#"{"type":"object","properties":{"command":{"type":"string","description":"The shell command to run"},"workdir":{"type":"string","description":"Working directory (default: process cwd)"},"timeout":{"type":"number","description":"Timeout in milliseconds (default 60000)"},"description":{"type":"string","description":"Human-readable description of the command"},"run_in_background":{"type":"boolean","description":"Start the command and return at once with a background shell id; read it with bash_output, stop it with kill_shell. No timeout applies."}},"required":["command"],"additionalProperties":false}"#
        );
        assert_eq!(
            tk.get("kill_shell").unwrap().input_schema().to_string(),
            r#"{"type":"object","properties":{"id":{"type":"string","description":"The background shell id bash returned"}},"required":["id"],"additionalProperties":false}"#
        );
        // Off by default: no tools, no argument, and asking for it is an error, not a foreground run.
        let plain = toolkit(&BuiltinsConfig::default());
        assert!(plain.get("bash_output").is_none());
        assert!(
            !plain
                .get("bash")
                .unwrap()
                .input_schema()
                .to_string()
                .contains("run_in_background")
        );
        let r = run(
            &plain,
            "bash",
            json!({"command": "echo hi", "run_in_background": true}),
        )
        .await;
        assert_eq!(
            j(&r),
            r#"{"output":"bash: run_in_background needs the background_shells extra (builtins.extras)","isError":true}"#
        );
        let r = run(&tk, "bash_output", json!({"id": "bg9"})).await;
        assert_eq!(
            j(&r),
            r#"{"output":"bash_output: no background shell \"bg9\"","isError":true}"#
        );
        let r = run(&tk, "kill_shell", json!({})).await;
        assert_eq!(j(&r), r#"{"output":"kill_shell: id is required","isError":true}"#);
    }

    fn j(r: &ToolResult) -> String {
        r.to_json()
    }

    #[tokio::test]
    async fn output_arrives_in_pieces_and_the_exit_code_is_reported() {
        let tk = toolkit(&with_shells());
        let dir = tempfile::tempdir().unwrap();
        let gate = dir.path().join("go");
        let command = format!(
            "echo one; while [ ! -e {g} ]; do sleep 0.01; done; echo two >&2; exit 3",
            g = gate.display()
        );
        let id = start(&tk, &command).await;
        assert_eq!(id, "bg1");
        // Until the gate opens: "one", and the shell running.
        let mut first = String::new();
        for _ in 0..500 {
            let r = run(&tk, "bash_output", json!({"id": "bg1"})).await;
            assert_eq!(
                r.metadata.unwrap(),
                *json!({"id": "bg1", "status": "running"}).as_object().unwrap()
            );
            first.push_str(r.output.strip_suffix("\n[status: running]").unwrap());
            if !first.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(first, "one\n");
        std::fs::write(&gate, "").unwrap();
        let mut rest = String::new();
        let mut last = None;
        for _ in 0..500 {
            let r = run(&tk, "bash_output", json!({"id": "bg1"})).await;
            rest.push_str(r.output.rsplit_once("\n[status: ").unwrap().0);
            if r.output.ends_with("[status: exited with code 3]") {
                last = Some(r);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(rest, "two\n");
        let last = last.expect("the shell exited");
        assert_eq!(
            last.metadata.unwrap(),
            *json!({"id": "bg1", "status": "exited", "exitCode": 3})
                .as_object()
                .unwrap()
        );
        // Nothing new: the status alone. A finished shell is not killed.
        let r = run(&tk, "bash_output", json!({"id": "bg1"})).await;
        assert_eq!(
            j(&r),
            r#"{"output":"\n[status: exited with code 3]","isError":false,"metadata":{"id":"bg1","status":"exited","exitCode":3}}"#
        );
        let r = run(&tk, "kill_shell", json!({"id": "bg1"})).await;
        assert_eq!(
            j(&r),
            r#"{"output":"Background shell bg1 had already exited with code 3","isError":false,"metadata":{"id":"bg1","killed":false}}"#
        );
    }

    #[tokio::test]
    async fn kill_shell_stops_the_group_and_unread_output_is_capped_like_bash() {
        let tk = toolkit(&with_shells());
        let dir = tempfile::tempdir().unwrap();
        let (gate, flag) = (dir.path().join("go"), dir.path().join("written"));
        // A child in the shell's group, then (once the pid is read) 100,004 bytes unread.
        let command = format!(
            "sleep 300 & echo $!; while [ ! -e {g} ]; do sleep 0.01; done; \
             head -c 100000 /dev/zero | tr '\\0' a; echo END; touch {f}; wait",
            g = gate.display(),
            f = flag.display()
        );
        let id = start(&tk, &command).await;
        let pid = read_pid(&tk, &id).await;
        assert!(!gone(pid));
        std::fs::write(&gate, "").unwrap();
        assert!(eventually(|| flag.exists()).await);
        let r = run(&tk, "kill_shell", json!({"id": id})).await;
        assert_eq!(
            j(&r),
            r#"{"output":"Killed background shell bg1","isError":false,"metadata":{"id":"bg1","killed":true}}"#
        );
        assert!(eventually(|| gone(pid)).await, "sleep {pid} survived kill_shell");
        // What was printed after the pid line, read at last: head and tail kept, the cut counted.
        let r = run(&tk, "bash_output", json!({"id": "bg1"})).await;
        let meta = r.metadata.clone().unwrap();
        let cut = meta["outputCut"].as_u64().unwrap() as usize;
        let keep = 32 * 1024;
        assert_eq!(meta["status"], "killed");
        assert!(!meta.contains_key("exitCode"));
        let body = r.output.strip_suffix("\n[status: killed]").unwrap();
        let (head, tail) = body
            .split_once(&format!(
                "\n… [{cut} bytes of output cut; the first and last {keep} bytes are kept] …\n"
            ))
            .unwrap();
        assert_eq!(head.len(), keep);
        assert_eq!(tail.len(), keep);
        assert_eq!(head, "a".repeat(keep));
        assert_eq!(tail, "a".repeat(keep - 4) + "END\n");
        assert_eq!(head.len() + cut + tail.len(), 100_004);
        let r = run(&tk, "kill_shell", json!({"id": "bg1"})).await;
        assert_eq!(r.output, "Background shell bg1 was already killed");
    }

    #[tokio::test]
    async fn dropping_the_toolkit_kills_every_background_group() {
        let tk = toolkit(&with_shells());
        let id = start(&tk, "sleep 300 & echo $!; wait").await;
        let pid = read_pid(&tk, &id).await;
        assert!(!gone(pid));
        drop(tk);
        assert!(eventually(|| gone(pid)).await, "sleep {pid} survived the toolkit");
    }

    #[tokio::test]
    async fn closing_an_assembled_toolkit_escalates_to_sigkill_and_refuses_new_shells() {
        let config = BuiltinsConfig::default().with_extra(Extra::BackgroundShells);
        let tk = Toolkit::build(ToolkitOptions::default().builtins(config))
            .await
            .unwrap();
        // SIGTERM is ignored by the shell and, inherited, by its child: only SIGKILL stops them.
        let id = start(&tk, "trap '' TERM; sleep 300 & echo $!; wait").await;
        let pid = read_pid(&tk, &id).await;
        tk.close().await;
        assert!(eventually(|| gone(pid)).await, "sleep {pid} survived close");
        let r = run(&tk, "bash_output", json!({"id": id})).await;
        assert_eq!(r.output, "\n[status: killed]");
        let r = run(&tk, "bash", json!({"command": "true", "run_in_background": true})).await;
        assert_eq!(r.output, "bash: the background shells are closed");
        assert!(r.is_error);
    }

    #[tokio::test]
    async fn at_most_eight_run_at_once() {
        let tk = toolkit(&with_shells());
        for n in 1..=8 {
            assert_eq!(start(&tk, "exec sleep 300").await, format!("bg{n}"));
        }
        let r = run(&tk, "bash", json!({"command": "true", "run_in_background": true})).await;
        assert_eq!(
            j(&r),
            r#"{"output":"bash: 8 background shells are already running; stop one with kill_shell first","isError":true}"#
        );
        let r = run(&tk, "kill_shell", json!({"id": "bg3"})).await;
        assert_eq!(r.output, "Killed background shell bg3");
        assert_eq!(start(&tk, "true").await, "bg9");
    }
}

// ---------------------------------------------------------------------------------------
// notebook_edit
// ---------------------------------------------------------------------------------------

mod notebook {
    use super::*;
    use toolnexus::builtin::Extra;

    /// A notebook as Jupyter writes it (nbformat 4.5: cells have ids).
    const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {
    "tags": [
     "x"
    ]
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "4\n"
     ]
    }
   ],
   "source": [
    "print(2 + 2)"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    /// A toolkit with `notebook_edit`, confined to a fresh base holding `nb.ipynb`.
    fn setup() -> (tempfile::TempDir, Toolkit) {
        let base = tempfile::tempdir().unwrap();
        std::fs::write(base.path().join("nb.ipynb"), NOTEBOOK).unwrap();
        let config = BuiltinsConfig::default()
            .with_base_dir(base.path())
            .confined(true)
            .with_extra(Extra::NotebookEdit);
        (base, toolkit(&config))
    }

    fn cells(base: &tempfile::TempDir) -> Value {
        let text = std::fs::read_to_string(base.path().join("nb.ipynb")).unwrap();
        assert!(text.ends_with("}\n"), "{text}");
        serde_json::from_str::<Value>(&text).unwrap()["cells"].clone()
    }

    #[tokio::test]
    async fn replacing_a_code_cell_clears_its_outputs_and_writes_the_notebook_as_jupyter_does() {
        let (base, tk) = setup();
        let r = run(
            &tk,
            "notebook_edit",
            json!({"path": "nb.ipynb", "cell_id": "calc", "new_source": "x = 3\nprint(x * x)"}),
        )
        .await;
        assert!(!r.is_error, "{}", r.output);
        assert_eq!(r.output, "Replaced cell 1 in nb.ipynb");
        let want = NOTEBOOK.replace(
            r#"   "execution_count": 3,"#,
            r#"   "execution_count": null,"#,
        )
        .replace(
            "   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"4\\n\"\n     ]\n    }\n   ],",
            "   \"outputs\": [],",
        )
        .replace("    \"print(2 + 2)\"", "    \"x = 3\\n\",\n    \"print(x * x)\"");
        assert_eq!(
            std::fs::read_to_string(base.path().join("nb.ipynb")).unwrap(),
            want
        );
        let meta = r.metadata.unwrap();
        assert_eq!(meta["cells"], 2);
        assert_eq!(
            meta["files"],
            json!([{"path": "nb.ipynb", "status": "modified", "additions": 4, "deletions": 11}])
        );
        assert_eq!(
            meta["diff"],
            "--- a/nb.ipynb\n+++ b/nb.ipynb\n@@ -11,24 +11,17 @@\n   },\n   {\n    \"cell_type\": \"code\",\n\
             -   \"execution_count\": 3,\n+   \"execution_count\": null,\n    \"id\": \"calc\",\n    \"metadata\": {\n\
             \x20    \"tags\": [\n      \"x\"\n     ]\n    },\n-   \"outputs\": [\n-    {\n-     \"name\": \"stdout\",\n\
             -     \"output_type\": \"stream\",\n-     \"text\": [\n-      \"4\\n\"\n-     ]\n-    }\n-   ],\n\
             +   \"outputs\": [],\n    \"source\": [\n-    \"print(2 + 2)\"\n+    \"x = 3\\n\",\n+    \"print(x * x)\"\n\
             \x20   ]\n   }\n  ],\n"
        );
        // Turned into markdown by index: no outputs, no execution count at all.
        let r = run(
            &tk,
            "notebook_edit",
            json!({"path": "nb.ipynb", "cell_index": 1, "new_source": "", "cell_type": "markdown"}),
        )
        .await;
        assert_eq!(r.output, "Replaced cell 1 in nb.ipynb");
        assert_eq!(
            cells(&base)[1],
            json!({"cell_type": "markdown", "id": "calc", "metadata": {"tags": ["x"]}, "source": []})
        );
    }

    #[tokio::test]
    async fn insert_and_delete_keep_ids_and_order() {
        let (base, tk) = setup();
        let r = run(&tk, "notebook_edit", json!({"path": "nb.ipynb", "edit_mode": "insert", "cell_id": "intro", "new_source": "import os\n"})).await;
        assert_eq!(r.output, "Inserted code cell at 1 in nb.ipynb");
        let now = cells(&base);
        let new = &now[1];
        let id = new["id"].as_str().unwrap();
        assert!(id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert_eq!(
            *new,
            json!({"cell_type": "code", "execution_count": null, "id": id, "metadata": {}, "outputs": [], "source": ["import os\n"]})
        );
        assert_eq!(now[2]["id"], "calc");
        // No cell named: first.
        let r = run(
            &tk,
            "notebook_edit",
            json!({"path": "nb.ipynb", "edit_mode": "insert", "cell_type": "markdown", "new_source": "top"}),
        )
        .await;
        assert_eq!(r.output, "Inserted markdown cell at 0 in nb.ipynb");
        assert_eq!(cells(&base)[0]["source"], json!(["top"]));
        assert_eq!(r.metadata.unwrap()["cells"], 4);
        let r = run(
            &tk,
            "notebook_edit",
            json!({"path": "nb.ipynb", "edit_mode": "delete", "cell_id": "intro"}),
        )
        .await;
        assert_eq!(r.output, "Deleted cell 1 from nb.ipynb");
        let ids: Vec<Value> = cells(&base)
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].clone())
            .collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(ids[1], json!(id));
        assert_eq!(ids[2], "calc");
    }

    #[tokio::test]
    async fn an_older_notebook_gets_no_cell_ids() {
        let (base, tk) = setup();
        std::fs::write(
            base.path().join("old.ipynb"),
            r#"{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}"#,
        )
        .unwrap();
        let r = run(
            &tk,
            "notebook_edit",
            json!({"path": "old.ipynb", "edit_mode": "insert", "new_source": "1"}),
        )
        .await;
        assert_eq!(r.output, "Inserted code cell at 0 in old.ipynb");
        assert_eq!(
            std::fs::read_to_string(base.path().join("old.ipynb")).unwrap(),
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"1\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 4\n}\n"
        );
    }

    #[tokio::test]
    async fn bad_calls_are_errors_and_leave_the_file_alone() {
        let (base, tk) = setup();
        std::fs::write(base.path().join("bad.ipynb"), "{not json").unwrap();
        std::fs::write(base.path().join("list.ipynb"), "[1]").unwrap();
        std::fs::write(base.path().join("nocells.ipynb"), "{\"cells\": 3}").unwrap();
        let cases = [
            (
                json!({"path": "nb.ipynb", "cell_id": "nope", "new_source": "x"}),
                r#"notebook_edit: no cell with id "nope""#,
            ),
            (
                json!({"path": "nb.ipynb", "cell_index": 2, "new_source": "x"}),
                "notebook_edit: cell_index 2 is out of range: the notebook has 2 cells",
            ),
            (
                json!({"path": "nb.ipynb", "cell_index": -1, "new_source": "x"}),
                "notebook_edit: cell_index must be a whole number from 0, got -1",
            ),
            (
                json!({"path": "nb.ipynb", "new_source": "x"}),
                "notebook_edit: cell_id or cell_index is required",
            ),
            (
                json!({"path": "nb.ipynb", "edit_mode": "delete"}),
                "notebook_edit: cell_id or cell_index is required",
            ),
            (
                json!({"path": "nb.ipynb", "cell_index": 0}),
                "notebook_edit: new_source is required to replace a cell",
            ),
            (
                json!({"path": "nb.ipynb", "edit_mode": "insert"}),
                "notebook_edit: new_source is required to insert a cell",
            ),
            (
                json!({"path": "nb.ipynb", "cell_index": 0, "edit_mode": "move"}),
                r#"notebook_edit: edit_mode must be one of replace, insert, delete, got "move""#,
            ),
            (
                json!({"path": "nb.ipynb", "cell_index": 0, "new_source": "", "cell_type": "raw"}),
                r#"notebook_edit: cell_type must be one of code, markdown, got "raw""#,
            ),
            (
                json!({"path": "bad.ipynb", "cell_index": 0, "new_source": "x"}),
                "notebook_edit: bad.ipynb is not a notebook: key must be a string at line 1 column 2",
            ),
            (
                json!({"path": "list.ipynb", "cell_index": 0, "new_source": "x"}),
                "notebook_edit: list.ipynb is not a notebook: not a JSON object",
            ),
            (
                json!({"path": "nocells.ipynb", "cell_index": 0, "new_source": "x"}),
                "notebook_edit: nocells.ipynb is not a notebook: it has no cells array",
            ),
            (
                json!({"path": "gone.ipynb", "cell_index": 0, "new_source": "x"}),
                "notebook_edit: file not found: gone.ipynb",
            ),
            (
                json!({"path": "../nb.ipynb", "cell_index": 0, "new_source": "x"}),
                &*format!(
                    "notebook_edit: ../nb.ipynb resolves outside baseDir {}",
                    base.path().display()
                ),
            ),
            (json!({"cell_index": 0}), "notebook_edit: path is required"),
        ];
        for (args, want) in cases {
            let r = run(&tk, "notebook_edit", args.clone()).await;
            assert_eq!(
                r.to_json(),
                json!({"output": want, "isError": true}).to_string(),
                "{args}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(base.path().join("nb.ipynb")).unwrap(),
            NOTEBOOK
        );
        // Off unless named.
        assert!(toolkit(&BuiltinsConfig::default()).get("notebook_edit").is_none());
    }
}

// ---------------------------------------------------------------------------------------
// websearch
// ---------------------------------------------------------------------------------------

mod websearch {
    use super::*;
    use axum::body::Body;
    use axum::extract::{Request, State};
    use axum::http::{StatusCode, header};
    use axum::response::Response;
    use std::sync::{Arc, Mutex};
    use toolnexus::builtin::{Extra, SearchBackend, WebSearchConfig};

    /// The variable the tests' key lives in; the key itself.
    const KEY_ENV: &str = "TOOLNEXUS_TEST_WEBSEARCH_KEY";
    const KEY: &str = "sk-search-test";

    /// What the stand-in backend was sent: method, path and query, the key-bearing headers, body.
    type Seen = Arc<Mutex<Vec<String>>>;

    /// A search backend on 127.0.0.1 answering as Brave, Tavily and SearXNG do, by path.
    async fn backend() -> (String, Seen) {
        let seen: Seen = Arc::default();
        let app = axum::Router::new().fallback(answer).with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        use axum::serve::ListenerExt as _;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        (base, seen)
    }

    async fn answer(State(seen): State<Seen>, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .map(|v| format!(" {name}={}", v.to_str().unwrap()))
                .unwrap_or_default()
        };
        seen.lock().unwrap().push(format!(
            "{} {}{}{}{} {}",
            parts.method,
            parts.uri,
            header("x-subscription-token"),
            header("authorization"),
            header("accept"),
            String::from_utf8_lossy(&body)
        ));
        let (status, text) = match parts.uri.path() {
            "/brave" => (
                StatusCode::OK,
                json!({"web": {"results": [
                    {"title": "Rust <strong>Programming</strong> Language", "url": "https://www.rust-lang.org/", "description": "A language empowering  everyone."},
                    {"title": "The Book", "url": "https://doc.rust-lang.org/book/", "description": ""},
                    {"title": "Third", "url": "https://example.org/3", "description": "cut by the limit"},
                ]}})
                .to_string(),
            ),
            "/tavily" => (
                StatusCode::OK,
                json!({"query": "q", "results": [{"title": "Tavily hit", "url": "https://t.example/", "content": "found", "score": 0.9}]}).to_string(),
            ),
            "/searx" => (StatusCode::OK, json!({"query": "q", "results": []}).to_string()),
            "/limited" => (StatusCode::TOO_MANY_REQUESTS, "rate limited, try later".to_owned()),
            "/garbage" => (StatusCode::OK, "<html>not json</html>".to_owned()),
            _ => (StatusCode::NOT_FOUND, String::new()),
        };
        if let Some(to) = parts.uri.query().and_then(|q| q.strip_prefix("to=")) {
            return Response::builder()
                .status(StatusCode::FOUND)
                .header(header::LOCATION, to)
                .body(Body::empty())
                .unwrap();
        }
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(text))
            .unwrap()
    }

    fn search_toolkit(backend: SearchBackend, url: String, key_env: Option<&str>) -> Toolkit {
        // SAFETY: every test sets the same value, before any request reads it.
        unsafe { std::env::set_var(KEY_ENV, KEY) };
        let config = BuiltinsConfig::default()
            .with_extra(Extra::Websearch)
            .with_websearch(WebSearchConfig {
                backend,
                url: Some(url),
                api_key_env: key_env.map(str::to_owned),
            });
        config.check().unwrap();
        toolkit(&config)
    }

    #[tokio::test]
    async fn brave_results_come_back_as_a_bounded_numbered_list() {
        let (base, seen) = backend().await;
        let tk = search_toolkit(SearchBackend::Brave, format!("{base}/brave"), Some(KEY_ENV));
        let r = run(&tk, "websearch", json!({"query": "rust lang", "limit": 2})).await;
        assert_eq!(
            r.to_json(),
            json!({
                "output": "1. Rust Programming Language\n   https://www.rust-lang.org/\n   A language empowering everyone.\n\n2. The Book\n   https://doc.rust-lang.org/book/",
                "isError": false,
                "metadata": {"count": 2, "results": [
                    {"title": "Rust Programming Language", "url": "https://www.rust-lang.org/", "snippet": "A language empowering everyone."},
                    {"title": "The Book", "url": "https://doc.rust-lang.org/book/", "snippet": ""},
                ]},
            })
            .to_string()
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [format!(
                "GET /brave?q=rust+lang&count=2 x-subscription-token={KEY} accept=application/json "
            )]
        );
    }

    #[tokio::test]
    async fn tavily_gets_a_json_post_with_a_bearer_key_and_searxng_no_key() {
        let (base, seen) = backend().await;
        let tk = search_toolkit(SearchBackend::Tavily, format!("{base}/tavily"), Some(KEY_ENV));
        let r = run(&tk, "websearch", json!({"query": "q"})).await;
        assert_eq!(r.output, "1. Tavily hit\n   https://t.example/\n   found");
        let tk = search_toolkit(SearchBackend::Searxng, format!("{base}/searx"), None);
        let r = run(&tk, "websearch", json!({"query": "nothing here", "limit": 100})).await;
        assert_eq!(
            r.to_json(),
            r#"{"output":"No results.","isError":false,"metadata":{"count":0}}"#
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [
                format!(
                    r#"POST /tavily authorization=Bearer {KEY} accept=application/json {{"query":"q","max_results":5}}"#
                ),
                "GET /searx?q=nothing+here&format=json accept=application/json ".to_owned(),
            ]
        );
    }

    #[tokio::test]
    async fn failures_are_errors_and_the_key_never_leaves_its_host() {
        let (base, seen) = backend().await;
        let (elsewhere, elsewhere_seen) = backend().await;
        let cases = [
            ("/limited", "websearch: 127.0.0.1 answered HTTP 429: rate limited, try later".to_owned()),
            ("/garbage", "websearch: the reply of 127.0.0.1 is not the expected JSON: expected value at line 1 column 1".to_owned()),
            // A redirect is not followed: the key header would go with it.
            (&*format!("/brave?to={elsewhere}/brave"), "websearch: 127.0.0.1 answered HTTP 302".to_owned()),
        ];
        for (path, want) in cases {
            let tk = search_toolkit(SearchBackend::Brave, format!("{base}{path}"), Some(KEY_ENV));
            let r = run(&tk, "websearch", json!({"query": "x"})).await;
            assert_eq!(
                r.to_json(),
                json!({"output": want, "isError": true}).to_string(),
                "{path}"
            );
        }
        assert_eq!(seen.lock().unwrap().len(), 3);
        assert!(elsewhere_seen.lock().unwrap().is_empty());
        // Brave's usual variable is not for a stand-in's host: refused before any request.
        let tk = search_toolkit(SearchBackend::Brave, format!("{base}/brave"), None);
        let r = run(&tk, "websearch", json!({"query": "x"})).await;
        assert_eq!(
            r.output,
            format!(
                "websearch: the brave backend at {base}/brave needs websearch.api_key_env naming its key \
                 (its usual variable is used only with its own endpoint)"
            )
        );
        let tk = search_toolkit(
            SearchBackend::Brave,
            format!("{base}/brave"),
            Some("TOOLNEXUS_TEST_UNSET_KEY"),
        );
        let r = run(&tk, "websearch", json!({"query": "x"})).await;
        assert_eq!(
            r.output,
            "websearch: the API key variable TOOLNEXUS_TEST_UNSET_KEY is not set"
        );
        assert_eq!(seen.lock().unwrap().len(), 3);
        let r = run(&tk, "websearch", json!({"query": "  "})).await;
        assert_eq!(r.output, "websearch: query is required");
    }

    #[tokio::test]
    async fn the_extra_needs_a_backend_and_a_config_file_error_names_the_file() {
        let missing = BuiltinsConfig::default().with_extra(Extra::Websearch);
        assert_eq!(
            missing.check().unwrap_err(),
            r#"extras names websearch, which needs a websearch backend (e.g. "websearch": {"backend": "brave"})"#
        );
        let r = run(&toolkit(&missing), "websearch", json!({"query": "x"})).await;
        assert_eq!(
            r.output,
            "websearch: no search backend is configured (builtins.websearch)"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(
            &file,
            r#"{"builtins": {"extras": ["websearch"], "websearch": {"backend": "searxng"}}}"#,
        )
        .unwrap();
        let err = Toolkit::build(toolnexus::ToolkitOptions::default().config(file.clone()))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&file.display().to_string()), "{text}");
        assert!(
            text.contains("websearch.url is required for the searxng backend"),
            "{text}"
        );
        std::fs::write(&file, r#"{"builtins": {"extras": ["websearch", "teleport"]}}"#).unwrap();
        let text = Toolkit::build(toolnexus::ToolkitOptions::default().config(file.clone()))
            .await
            .unwrap_err()
            .to_string();
        assert!(text.contains("unknown variant `teleport`, expected one of `background_shells`, `notebook_edit`, `websearch`"), "{text}");
        assert!(toolkit(&BuiltinsConfig::default()).get("websearch").is_none());
    }
}
