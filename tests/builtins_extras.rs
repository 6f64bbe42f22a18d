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
