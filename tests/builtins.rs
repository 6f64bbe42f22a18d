//! The ten built-in tools (SPEC §4A), exercised through their public `Tool`s against real
//! files in temp dirs, real child processes and a real HTTP server on 127.0.0.1.

use serde_json::{Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::tool::BUILTIN_NAMES;
use toolnexus::{Tool, ToolContext, ToolResult, ToolSource, Toolkit, adapter};

/// The built-in called `name`.
fn builtin_named(name: &str) -> Tool {
    builtin::all()
        .into_iter()
        .find(|t| t.name() == name)
        .expect("a built-in")
}

/// What `bash` results' `shell` metadata says on this machine (bash found, or /bin/sh).
fn shell() -> String {
    builtin::shell(&BuiltinsConfig::default()).unwrap().join(" ")
}

/// Run one built-in by name with default context.
async fn call(name: &str, args: Value) -> ToolResult {
    builtin_named(name).execute(args, ToolContext::default()).await
}

// ---------------------------------------------------------------------------------------
// Names, schemas, selection
// ---------------------------------------------------------------------------------------

/// `tests/fixtures/builtins_openai.json` is the Python port 0.21.0's output, produced with
///
/// ```sh
/// /work/ref/venv/bin/python -c 'import json, toolnexus; print(json.dumps(toolnexus.to_openai(toolnexus.create_builtin_tools()), separators=(",", ":"), ensure_ascii=False), end="")' > tests/fixtures/builtins_openai.json
/// ```
///
/// (compact JSON, raw UTF-8, in the ports' fixed build order).
#[test]
fn openai_schemas_match_the_python_port_byte_for_byte() {
    let expected = include_str!("fixtures/builtins_openai.json");
    let ours = serde_json::to_string(&adapter::to_openai(&builtin::all())).unwrap();
    assert_eq!(ours, expected);
    // Through a Toolkit the order is by name; the per-tool JSON is unchanged.
    let fixture: Vec<Value> = serde_json::from_str(expected).unwrap();
    let mut by_name: Vec<String> = fixture.iter().map(|t| t.to_string()).collect();
    by_name.sort_by_key(|t| serde_json::from_str::<Value>(t).unwrap()["function"]["name"].to_string());
    let tk = Toolkit::new(builtin::all());
    let sorted: Vec<String> = tk.to_openai().iter().map(|t| t.to_string()).collect();
    assert_eq!(sorted, by_name);
}

#[test]
fn all_is_the_ten_in_build_order_with_source_builtin() {
    let tools = builtin::all();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, BUILTIN_NAMES);
    assert!(tools.iter().all(|t| t.source() == ToolSource::Builtin));
}

#[test]
fn select_applies_the_whole_source_toggle_and_the_per_tool_map() {
    let names = |c: &BuiltinsConfig| {
        builtin::select(c)
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    let parse = |v: Value| serde_json::from_value::<BuiltinsConfig>(v).unwrap();
    assert_eq!(names(&BuiltinsConfig::default()), BUILTIN_NAMES);
    assert_eq!(names(&parse(json!(null))), BUILTIN_NAMES);
    assert_eq!(names(&parse(json!(true))), BUILTIN_NAMES);
    for off in [
        json!(false),
        json!({"disabled": true}),
        json!({"enabled": false}),
        json!({"disabled": true, "enabled": true}),
    ] {
        assert!(names(&parse(off.clone())).is_empty(), "{off}");
    }
    // Whole-source-off short-circuits the map.
    assert!(names(&parse(json!({"enabled": false, "tools": {"bash": true}}))).is_empty());
    // Per-tool map on the all-on baseline; unknown names ignored; true keeps.
    let c = parse(json!({"tools": {"bash": false, "write": false, "read": true, "nope": false}}));
    assert_eq!(
        names(&c),
        [
            "read",
            "edit",
            "grep",
            "glob",
            "webfetch",
            "question",
            "apply_patch",
            "todowrite"
        ]
    );
    assert_eq!(
        names(&parse(json!({"disabled": false, "enabled": true}))).len(),
        10
    );
    // Other keys of a config object are not ours to refuse.
    assert_eq!(names(&parse(json!({"base_dir": "/x"}))).len(), 10);
}

#[test]
fn config_rejects_wrong_types_with_a_clear_error() {
    for bad in [
        json!("off"),
        json!(1),
        json!({"tools": {"bash": "no"}}),
        json!({"disabled": "yes"}),
        json!({"tools": []}),
    ] {
        let err = serde_json::from_value::<BuiltinsConfig>(bad.clone())
            .unwrap_err()
            .to_string();
        assert!(err.contains("invalid type"), "{bad}: {err}");
    }
}

/// The result as compact JSON, for exact comparisons of output, isError and metadata.
fn j(r: &ToolResult) -> String {
    r.to_json()
}

/// Every built-in refuses a non-object argument and names a missing required field.
#[tokio::test]
async fn malformed_arguments_are_errors_naming_the_problem() {
    let cases = [
        ("bash", json!({}), "bash: command is required"),
        (
            "bash",
            json!({"command": 7}),
            "bash: command must be a string, got number",
        ),
        (
            "bash",
            json!({"command": "true", "timeout": "5"}),
            "bash: timeout must be a positive number of milliseconds (at most 86400000), got \"5\"",
        ),
        (
            "read",
            json!([1]),
            "read: arguments must be a JSON object, got array",
        ),
        (
            "read",
            json!({"path": "x", "offset": true}),
            "read: offset must be a number, got boolean",
        ),
        ("write", json!({"path": "x"}), "write: content is required"),
        ("write", json!(null), "write: path is required"),
        (
            "edit",
            json!({"path": "x", "oldString": "a"}),
            "edit: newString is required",
        ),
        (
            "edit",
            json!({"path": "x", "oldString": "", "newString": "b"}),
            "edit: oldString is required",
        ),
        (
            "edit",
            json!({"path": "x", "oldString": "a", "newString": "b", "replaceAll": "yes"}),
            "edit: replaceAll must be a boolean, got string",
        ),
        (
            "grep",
            json!({"pattern": "x", "limit": "3"}),
            "grep: limit must be a number, got string",
        ),
        (
            "glob",
            json!({"pattern": ["*"]}),
            "glob: pattern must be a string, got array",
        ),
        ("webfetch", json!({}), "webfetch: url is required"),
        (
            "webfetch",
            json!({"url": "http://127.0.0.1:1/", "format": "pdf"}),
            "webfetch: format must be one of text, markdown, html, got \"pdf\"",
        ),
        (
            "question",
            json!({"questions": "why?"}),
            "question: questions must be an array, got string",
        ),
        (
            "question",
            json!({"questions": [{"header": "h"}]}),
            "question: questions[0].question is required",
        ),
        (
            "question",
            json!({"questions": [{"question": "q", "options": ["a", 2]}]}),
            "question: questions[0].options[1] must be a string, got number",
        ),
        (
            "question",
            json!({"questions": [{"question": "q", "multiple": "no"}]}),
            "question: questions[0].multiple must be a boolean, got string",
        ),
        (
            "apply_patch",
            json!({"patchText": ""}),
            "apply_patch: patchText is required",
        ),
        ("todowrite", json!({}), "todowrite: todos is required"),
        (
            "todowrite",
            json!({"todos": [{"id": "1", "text": "a"}]}),
            "todowrite: todos[0].completed is required",
        ),
        (
            "todowrite",
            json!({"todos": [3]}),
            "todowrite: todos[0] must be an object, got number",
        ),
        (
            "todowrite",
            json!({"todos": [{"id": 1, "text": "a", "completed": false}]}),
            "todowrite: todos[0].id must be a string, got number",
        ),
    ];
    for (tool, args, want) in cases {
        let r = call(tool, args.clone()).await;
        assert_eq!(
            j(&r),
            json!({"output": want, "isError": true}).to_string(),
            "{tool} {args}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// bash
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn bash_returns_combined_output_and_the_exit_code() {
    let r = call("bash", json!({"command": "echo hi"})).await;
    assert_eq!(
        j(&r),
        json!({"output": "hi\n", "isError": false, "metadata": {"shell": shell(), "exitCode": 0}})
            .to_string()
    );
    // stdout and stderr share one pipe, so their order is the order written.
    let r = call(
        "bash",
        json!({"command": "echo out; echo err >&2; echo out2; exit 3"}),
    )
    .await;
    assert_eq!(
        j(&r),
        json!({
            "output": "out\nerr\nout2\n\nbash: command exited with code 3",
            "isError": true,
            "metadata": {"shell": shell(), "exitCode": 3}
        })
        .to_string()
    );
    // A signalled shell reports minus the signal number, as Python's returncode does.
    let r = call("bash", json!({"command": "kill -9 $$"})).await;
    // No output: the message alone, without a leading newline.
    assert_eq!(r.output, "bash: command exited with code -9");
    // The command does not inherit the host's stdin.
    let r = call("bash", json!({"command": "cat; echo done"})).await;
    assert_eq!(r.output, "done\n");
}

#[tokio::test]
async fn bash_runs_in_workdir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    let workdir = dir.path().to_str().unwrap();
    let r = call(
        "bash",
        json!({"command": "ls", "workdir": workdir, "description": "list"}),
    )
    .await;
    assert_eq!(r.output, "marker.txt\n");
    let missing = dir.path().join("nope");
    let r = call("bash", json!({"command": "ls", "workdir": missing})).await;
    assert_eq!(
        r.output,
        format!("bash: workdir not found: {}", missing.display())
    );
    let file = dir.path().join("marker.txt");
    let r = call("bash", json!({"command": "ls", "workdir": file})).await;
    assert_eq!(
        r.output,
        format!("bash: workdir {} is not a directory", file.display())
    );
}

/// `true` once `pid` has exited (gone, or a zombie nobody has reaped yet).
fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Wait (bounded) for `pid` to exit.
async fn wait_gone(pid: &str) -> bool {
    for _ in 0..100 {
        if process_gone(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let command = format!("echo started; sleep 30 & echo $! > {}; wait", pidfile.display());
    let start = std::time::Instant::now();
    let r = call("bash", json!({"command": command, "timeout": 500})).await;
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        j(&r),
        json!({
            "output": "bash: command timed out after 500ms\nstarted\n",
            "isError": true,
            "metadata": {"shell": shell(), "timedOut": true, "killedTree": true}
        })
        .to_string()
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        wait_gone(pid.trim()).await,
        "grandchild sleep {pid} survived the timeout"
    );
}

#[tokio::test]
async fn bash_timeout_escalates_to_sigkill_when_sigterm_is_ignored() {
    let start = std::time::Instant::now();
    let r = call(
        "bash",
        json!({"command": "trap '' TERM; echo stubborn; sleep 30", "timeout": 200}),
    )
    .await;
    let elapsed = start.elapsed();
    assert!(elapsed < std::time::Duration::from_secs(10), "{elapsed:?}");
    assert!(r.is_error);
    assert_eq!(r.output, "bash: command timed out after 200ms\nstubborn\n");
}

#[tokio::test]
async fn cancelling_a_bash_call_stops_its_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let command = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let tool = builtin::all().remove(0);
    let ctx = ToolContext::default();
    let token = ctx.cancel.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        token.cancel();
    });
    let r = tool.execute(json!({"command": command}), ctx).await;
    canceller.await.unwrap();
    assert_eq!(r.output, "tool \"bash\" was cancelled");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        wait_gone(pid.trim()).await,
        "grandchild sleep {pid} survived the cancellation"
    );
}

// ---------------------------------------------------------------------------------------
// read / write / edit
// ---------------------------------------------------------------------------------------

fn path_of(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_owned()
}

#[tokio::test]
async fn read_returns_text_or_a_one_based_line_window() {
    let dir = tempfile::tempdir().unwrap();
    let f = path_of(&dir, "f.txt");
    std::fs::write(&f, "a\nb\nc\n").unwrap();
    let read = |args: Value| call("read", args);
    assert_eq!(
        j(&read(json!({"path": f})).await),
        r#"{"output":"a\nb\nc\n","isError":false}"#
    );
    assert_eq!(
        read(json!({"path": f, "offset": 2, "limit": 1})).await.output,
        "b"
    );
    assert_eq!(read(json!({"path": f, "offset": 2})).await.output, "b\nc\n");
    // Lines are what splitting on "\n" gives: the trailing newline ends in an empty line.
    assert_eq!(read(json!({"path": f, "offset": 3})).await.output, "c\n");
    assert_eq!(read(json!({"path": f, "limit": 2})).await.output, "a\nb");
    assert_eq!(read(json!({"path": f, "limit": 0})).await.output, "");
    assert_eq!(
        read(json!({"path": f, "offset": 0, "limit": 1})).await.output,
        "a"
    );
    assert_eq!(
        read(json!({"path": f, "offset": 2.9, "limit": 1.5})).await.output,
        "b"
    );
    assert_eq!(
        read(json!({"path": f, "offset": 99})).await,
        ToolResult::success("")
    );
}

#[tokio::test]
async fn read_refuses_what_is_not_a_readable_text_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = path_of(&dir, "nope.txt");
    let r = call("read", json!({"path": missing})).await;
    assert_eq!(
        j(&r),
        json!({"output": format!("read: file not found: {missing}"), "isError": true}).to_string()
    );
    let d = dir.path().to_str().unwrap();
    let r = call("read", json!({"path": d})).await;
    assert_eq!(r.output, format!("read: {d} is a directory, not a file"));
    assert!(r.is_error);
    let r = call("read", json!({"path": d, "offset": 1})).await;
    assert_eq!(r.output, format!("read: {d} is a directory, not a file"));
    // A NUL byte is valid UTF-8: returned as text, as the Python port does, whole or windowed.
    let nul = path_of(&dir, "a.bin");
    std::fs::write(&nul, b"ELF\0\x01\x02\nline two").unwrap();
    let r = call("read", json!({"path": nul})).await;
    assert_eq!(
        j(&r),
        json!({"output": "ELF\u{0}\u{1}\u{2}\nline two", "isError": false}).to_string()
    );
    let r = call("read", json!({"path": nul, "offset": 2})).await;
    assert_eq!((r.output.as_str(), r.is_error), ("line two", false));
    let latin1 = path_of(&dir, "l1.txt");
    std::fs::write(&latin1, b"caf\xe9\n").unwrap();
    let r = call("read", json!({"path": latin1})).await;
    assert_eq!(r.output, format!("read: {latin1} is not valid UTF-8 text"));
    let r = call("read", json!({"path": latin1, "limit": 1})).await;
    assert_eq!(r.output, format!("read: {latin1} is not valid UTF-8 text"));
    assert!(r.is_error);
}

#[tokio::test]
async fn read_is_bounded_on_huge_files_but_can_window_them() {
    let dir = tempfile::tempdir().unwrap();
    let big = path_of(&dir, "big.log");
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef012345678\n"; // 58 bytes
    let lines = 11 * 1024 * 1024 / line.len() + 1;
    std::fs::write(&big, line.repeat(lines)).unwrap();
    let size = std::fs::metadata(&big).unwrap().len();
    let r = call("read", json!({"path": big})).await;
    assert_eq!(
        r.output,
        format!("read: {big} is {size} bytes, over the 10485760-byte limit")
    );
    assert!(r.is_error);
    let r = call("read", json!({"path": big, "offset": lines, "limit": 1})).await;
    assert_eq!(r.output, line.trim_end());
    let r = call("read", json!({"path": big})).await;
    assert!(r.is_error);
    let r = call("read", json!({"path": big, "offset": 1})).await;
    assert_eq!(
        r.output,
        format!("read: the requested lines of {big} exceed the 10485760-byte limit; pass a smaller limit")
    );
}

#[tokio::test]
async fn read_returns_media_files_as_content_parts() {
    let dir = tempfile::tempdir().unwrap();
    let png = path_of(&dir, "dot.PNG");
    std::fs::write(&png, [0x89, b'P', b'N', b'G']).unwrap();
    let r = call("read", json!({"path": png})).await;
    assert_eq!(
        j(&r),
        json!({
            "output": format!("{png} (image/png, 4 bytes)"),
            "isError": false,
            "parts": [{"type": "image", "mimeType": "image/png", "data": "iVBORw==", "name": "dot.PNG"}],
        })
        .to_string()
    );
    let r = call("read", json!({"path": path_of(&dir, "none.pdf")})).await;
    assert_eq!(
        r.output,
        format!("read: file not found: {}", path_of(&dir, "none.pdf"))
    );
}

#[tokio::test]
async fn write_creates_parents_and_reports_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = path_of(&dir, "sub/dir/x.txt");
    let r = call("write", json!({"path": p, "content": "héllo"})).await;
    assert_eq!(
        j(&r),
        json!({"output": format!("Wrote 6 bytes to {p}"), "isError": false, "metadata": {
            "bytes": 6,
            "files": [{"path": p, "status": "added", "additions": 1, "deletions": 0}],
            "diff": format!("--- /dev/null\n+++ {p}\n@@ -0,0 +1 @@\n+héllo\n\\ No newline at end of file\n"),
        }})
        .to_string()
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "héllo");
    let r = call("write", json!({"path": p, "content": ""})).await;
    assert_eq!(r.output, format!("Wrote 0 bytes to {p}"));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
    let d = path_of(&dir, "sub");
    let r = call("write", json!({"path": d, "content": "x"})).await;
    assert_eq!(
        j(&r),
        json!({"output": format!("write: {d} is a directory, not a file"), "isError": true}).to_string()
    );
    // A parent that is a file cannot become a directory.
    let under_file = path_of(&dir, "sub/dir/x.txt/y.txt");
    let r = call("write", json!({"path": under_file, "content": "x"})).await;
    assert!(r.is_error);
    assert!(
        r.output
            .starts_with(&format!("write: cannot create directory {p}: ")),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn edit_replaces_a_unique_occurrence_or_all_with_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    let p = path_of(&dir, "e.txt");
    std::fs::write(&p, "one two two two\n").unwrap();
    let edit = |args: Value| call("edit", args);
    let r = edit(json!({"path": p, "oldString": "one", "newString": "1"})).await;
    assert_eq!(
        j(&r),
        json!({"output": format!("Edited {p} (1 replacement)"), "isError": false, "metadata": {
            "replacements": 1,
            "files": [{"path": p, "status": "modified", "additions": 1, "deletions": 1}],
            "diff": format!("--- {p}\n+++ {p}\n@@ -1 +1 @@\n-one two two two\n+1 two two two\n"),
        }})
        .to_string()
    );
    let r = edit(json!({"path": p, "oldString": "two", "newString": "2"})).await;
    assert_eq!(j(&r), json!({"output": format!("edit: oldString is not unique in {p} (3 occurrences); use replaceAll"), "isError": true}).to_string());
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "1 two two two\n");
    let r = edit(json!({"path": p, "oldString": "two", "newString": "", "replaceAll": true})).await;
    assert_eq!(r.output, format!("Edited {p} (3 replacements)"));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "1   \n");
    let r = edit(json!({"path": p, "oldString": "zz", "newString": "y"})).await;
    assert_eq!(
        j(&r),
        json!({"output": format!("edit: oldString not found in {p}"), "isError": true}).to_string()
    );
    let missing = path_of(&dir, "missing.txt");
    let r = edit(json!({"path": missing, "oldString": "a", "newString": "b"})).await;
    assert_eq!(r.output, format!("edit: file not found: {missing}"));
    // Text holding a NUL byte is still text (the Python port edits it too).
    let nul = path_of(&dir, "b.bin");
    std::fs::write(&nul, b"a\0b").unwrap();
    let r = edit(json!({"path": nul, "oldString": "b", "newString": "c"})).await;
    assert_eq!(r.output, format!("Edited {nul} (1 replacement)"));
    assert_eq!(std::fs::read(&nul).unwrap(), b"a\0c");
}

// ---------------------------------------------------------------------------------------
// grep / glob
// ---------------------------------------------------------------------------------------

/// A small tree: nested dirs, a hidden file, skipped dirs, a binary and a Latin-1 file.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files: [(&str, &[u8]); 11] = [
        ("b.txt", b"needle one\nhay\nneedle two\n"),
        ("a.rs", b"fn needle() {}\r\n"),
        ("a/z.rs", b"// needle\n"),
        ("a.b/c.txt", b"needle in a.b\n"),
        (".hidden", b"needle hidden\n"),
        ("deep/er/x.md", b"no match\nstill none\nneedle at 3\n"),
        ("node_modules/m.js", b"needle in node_modules\n"),
        (".git/config", b"needle in .git\n"),
        ("blob.bin", b"needle\0binary\n"),
        ("latin1.txt", b"needle caf\xe9\n"),
        ("empty.txt", b""),
    ];
    for (rel, bytes) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    dir
}

#[tokio::test]
async fn grep_lists_file_line_text_in_path_order_skipping_binaries() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let r = call("grep", json!({"pattern": "needle", "path": root})).await;
    // Sorted by relative path in code-point order ('.' < '/' so "a.b/c.txt" < "a/z.rs"); a
    // CRLF line is shown without its CR; .git, node_modules, the NUL-holding file and the
    // invalid-UTF-8 file are skipped.
    let want = ".hidden:1:needle hidden\na.b/c.txt:1:needle in a.b\na.rs:1:fn needle() {}\na/z.rs:1:// needle\nb.txt:1:needle one\nb.txt:3:needle two\ndeep/er/x.md:3:needle at 3";
    assert_eq!(
        j(&r),
        json!({"output": want, "isError": false, "metadata": {"count": 7}}).to_string()
    );
    let r = call("grep", json!({"pattern": "needle", "path": root, "limit": 3})).await;
    assert_eq!(j(&r), json!({"output": ".hidden:1:needle hidden\na.b/c.txt:1:needle in a.b\na.rs:1:fn needle() {}", "isError": false, "metadata": {"count": 3}}).to_string());
    let r = call("grep", json!({"pattern": "needle", "path": root, "limit": 0})).await;
    assert_eq!(j(&r), r#"{"output":"","isError":false,"metadata":{"count":0}}"#);
}

#[tokio::test]
async fn grep_filters_by_include_and_anchors_per_line() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let r = call(
        "grep",
        json!({"pattern": "needle", "path": root, "include": "*.rs"}),
    )
    .await;
    assert_eq!(r.output, "a.rs:1:fn needle() {}\na/z.rs:1:// needle");
    let r = call(
        "grep",
        json!({"pattern": "needle", "path": root, "include": "a/*.rs"}),
    )
    .await;
    assert_eq!(r.output, "a/z.rs:1:// needle");
    let r = call(
        "grep",
        json!({"pattern": "needle", "path": root, "include": "**/*.{md,txt}"}),
    )
    .await;
    assert_eq!(
        r.output,
        "a.b/c.txt:1:needle in a.b\nb.txt:1:needle one\nb.txt:3:needle two\ndeep/er/x.md:3:needle at 3"
    );
    let r = call("grep", json!({"pattern": "^needle t", "path": root})).await;
    assert_eq!(r.output, "b.txt:3:needle two");
    let r = call("grep", json!({"pattern": "two$", "path": root})).await;
    assert_eq!(r.output, "b.txt:3:needle two");
    let r = call("grep", json!({"pattern": "\\{\\}$", "path": root})).await;
    assert_eq!(r.output, "a.rs:1:fn needle() {}");
    let r = call("grep", json!({"pattern": "nothing-like-this", "path": root})).await;
    assert_eq!(j(&r), r#"{"output":"","isError":false,"metadata":{"count":0}}"#);
    // A file path searches that file, shown as given.
    let b = dir.path().join("b.txt");
    let r = call("grep", json!({"pattern": "two", "path": b})).await;
    assert_eq!(r.output, format!("{}:3:needle two", b.display()));
}

#[tokio::test]
async fn grep_errors_are_actionable() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let r = call("grep", json!({"pattern": "(", "path": root})).await;
    assert!(r.is_error);
    assert!(r.output.starts_with("grep: invalid regex: "), "{}", r.output);
    let r = call("grep", json!({"pattern": "x", "path": root, "include": "a/[b"})).await;
    assert!(r.is_error);
    assert!(
        r.output.starts_with("grep: invalid include glob: "),
        "{}",
        r.output
    );
    let missing = dir.path().join("nope");
    let r = call("grep", json!({"pattern": "x", "path": missing})).await;
    assert_eq!(
        j(&r),
        json!({"output": format!("grep: path not found: {}", missing.display()), "isError": true})
            .to_string()
    );
}

#[tokio::test]
async fn grep_defaults_to_100_matches() {
    let dir = tempfile::tempdir().unwrap();
    let many: String = (1..=150).map(|i| format!("hit {i}\n")).collect();
    std::fs::write(dir.path().join("many.txt"), many).unwrap();
    std::fs::write(dir.path().join("more.txt"), "hit more\n").unwrap();
    let r = call("grep", json!({"pattern": "hit", "path": dir.path()})).await;
    let lines: Vec<&str> = r.output.lines().collect();
    assert_eq!(lines.len(), 100);
    assert_eq!(lines[0], "many.txt:1:hit 1");
    assert_eq!(lines[99], "many.txt:100:hit 100");
    assert_eq!(r.metadata.unwrap()["count"], 100);
}

#[tokio::test]
async fn grep_keeps_path_order_when_searching_in_parallel() {
    // Enough files for the parallel path; every file matches, so the limit decides.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..300 {
        let sub = dir.path().join(format!("d{}", i % 7));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("f{i:03}.txt")), format!("x\nmatch {i}\n")).unwrap();
    }
    let mut expected: Vec<String> = (0..300)
        .map(|i| format!("d{}/f{i:03}.txt:2:match {i}", i % 7))
        .collect();
    expected.sort();
    for limit in [1, 37, 250, 1000] {
        let r = call(
            "grep",
            json!({"pattern": "match", "path": dir.path(), "limit": limit}),
        )
        .await;
        let want: Vec<String> = expected.iter().take(limit).cloned().collect();
        assert_eq!(r.output, want.join("\n"), "limit {limit}");
    }
}

#[tokio::test]
async fn glob_lists_sorted_relative_paths_capped_at_limit() {
    let dir = tree();
    let root = dir.path().to_str().unwrap();
    let glob = |pattern: &str, limit: Option<u64>| {
        let mut args = json!({"pattern": pattern, "path": root});
        if let Some(l) = limit {
            args["limit"] = json!(l);
        }
        call("glob", args)
    };
    // A pattern without "/" tests the file name, at any depth.
    let r = glob("*.txt", None).await;
    assert_eq!(
        j(&r),
        json!({"output": "a.b/c.txt\nb.txt\nempty.txt\nlatin1.txt", "isError": false, "metadata": {"count": 4}}).to_string()
    );
    assert_eq!(glob("*.txt", Some(2)).await.output, "a.b/c.txt\nb.txt");
    // With "/", the whole relative path; `*` stops at "/", `**` crosses it.
    assert_eq!(glob("a/*", None).await.output, "a/z.rs");
    assert_eq!(glob("*/*", None).await.output, "a.b/c.txt\na/z.rs");
    assert_eq!(glob("**/*.md", None).await.output, "deep/er/x.md");
    assert_eq!(glob("deep/**", None).await.output, "deep/er/x.md");
    assert_eq!(glob("?.rs", None).await.output, "a.rs\na/z.rs");
    // Hidden files are listed; .git and node_modules are not.
    assert_eq!(glob("*", None).await.output.lines().count(), 9);
    assert_eq!(glob("*config*", None).await.output, "");
    assert_eq!(glob("*.js", None).await.output, "");
    let r = glob("a/[", None).await;
    assert!(r.is_error);
    assert!(
        r.output.starts_with("glob: invalid glob pattern: "),
        "{}",
        r.output
    );
    let missing = dir.path().join("nope");
    let r = call("glob", json!({"pattern": "*", "path": missing})).await;
    assert_eq!(r.output, format!("glob: path not found: {}", missing.display()));
}

#[tokio::test]
async fn grep_and_glob_default_to_the_working_directory() {
    // The test binary runs in the package root; Cargo.toml is there.
    let r = call("glob", json!({"pattern": "Cargo.toml", "limit": 1})).await;
    assert_eq!(r.output, "Cargo.toml");
    let manifest = std::fs::read_to_string("Cargo.toml").unwrap();
    let line = manifest
        .lines()
        .position(|l| l == "name = \"toolnexus-tests\"")
        .unwrap()
        + 1;
    let r = call(
        "grep",
        json!({"pattern": "^name = \"toolnexus-tests\"$", "include": "Cargo.toml"}),
    )
    .await;
    assert_eq!(r.output, format!("Cargo.toml:{line}:name = \"toolnexus-tests\""));
}

// ---------------------------------------------------------------------------------------
// webfetch
// ---------------------------------------------------------------------------------------

const PAGE: &str = "<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head>\n<body><h1>Hello</h1>\n<p>Some <b>bold</b> and a <a href=\"/x\">link</a>.</p>   \n\n\n\n<ul><li>one</li><li>two</li></ul></body></html>";

/// A loopback HTTP server with one route per webfetch case; returns its base URL.
async fn web_server() -> String {
    use axum::Router;
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let app = Router::new()
        .route(
            "/page",
            get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }),
        )
        .route(
            "/plain",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/plain")],
                    "  plain <not a tag> body  \n",
                )
            }),
        )
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "no such page") }),
        )
        .route(
            "/broken",
            get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                "late"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn webfetch_converts_html_to_markdown_text_or_returns_it_raw() {
    let base = web_server().await;
    let page = format!("{base}/page");
    let r = call("webfetch", json!({"url": page})).await;
    assert_eq!(
        j(&r),
        json!({
            "output": "# Hello\n\nSome **bold** and a [link](/x).\n\n- one\n- two",
            "isError": false,
            "metadata": {"status": 200, "format": "markdown"},
        })
        .to_string()
    );
    let r = call("webfetch", json!({"url": page, "format": "text"})).await;
    // The other ports' light tag stripper, byte for byte.
    // (checked against toolnexus.builtin._strip_html of the Python port)
    assert_eq!(r.output, "T\nHello\nSome bold and a link.\n\nonetwo");
    assert_eq!(r.metadata.unwrap()["format"], "text");
    let r = call("webfetch", json!({"url": page, "format": "html"})).await;
    assert_eq!(r.output, PAGE);
    // Markdown of a non-HTML body is the body itself.
    let r = call("webfetch", json!({"url": format!("{base}/plain")})).await;
    assert_eq!(r.output, "  plain <not a tag> body  \n");
}

#[tokio::test]
async fn webfetch_reports_status_errors_timeouts_and_bad_urls() {
    let base = web_server().await;
    let r = call("webfetch", json!({"url": format!("{base}/missing")})).await;
    assert_eq!(
        j(&r),
        r#"{"output":"HTTP 404","isError":true,"metadata":{"status":404}}"#
    );
    let r = call(
        "webfetch",
        json!({"url": format!("{base}/broken"), "format": "html"}),
    )
    .await;
    assert_eq!(
        j(&r),
        r#"{"output":"HTTP 500","isError":true,"metadata":{"status":500}}"#
    );
    let slow = format!("{base}/slow");
    let start = std::time::Instant::now();
    let r = call("webfetch", json!({"url": slow, "timeout": 0.3})).await;
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        j(&r),
        json!({"output": format!("webfetch: {slow} timed out after 0.3s"), "isError": true}).to_string()
    );
    let r = call("webfetch", json!({"url": "not a url"})).await;
    assert_eq!(
        r.output,
        "webfetch: invalid URL not a url: relative URL without a base"
    );
    let r = call("webfetch", json!({"url": "file:///etc/passwd"})).await;
    assert_eq!(
        r.output,
        "webfetch: only http and https URLs can be fetched, got file:///etc/passwd"
    );
    let r = call("webfetch", json!({"url": base, "timeout": 0})).await;
    assert_eq!(
        r.output,
        "webfetch: timeout must be a positive number of seconds (at most 86400), got 0"
    );
    // Nothing listens on a freshly closed port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/", l.local_addr().unwrap())
    };
    let r = call("webfetch", json!({"url": closed})).await;
    assert!(r.is_error);
    assert!(
        r.output
            .starts_with(&format!("webfetch: cannot fetch {closed}: ")),
        "{}",
        r.output
    );
}

// ---------------------------------------------------------------------------------------
// question / todowrite
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn question_suspends_then_returns_the_answer_data() {
    let questions = json!([
        {"question": "Which?", "header": "H", "options": ["a", "b"]},
        {"question": "Why?", "options": []},
    ]);
    let args = json!({"questions": questions});
    let r = call("question", args.clone()).await;
    assert!(r.is_error);
    assert_eq!(r.output, "Which? (options: a, b)\nWhy?");
    let request = r.pending().expect("a suspension");
    assert_eq!(request.kind, "question");
    assert_eq!(request.prompt, "Which? (options: a, b)\nWhy?");
    assert_eq!(
        Value::Object(request.data.clone().unwrap()),
        json!({"questions": questions})
    );
    assert!(request.id.starts_with("pnd-"));

    let tool = builtin_named("question");
    let answer = toolnexus::Answer {
        id: request.id.clone(),
        ok: true,
        data: Some(json!({"answers": ["a", "because"], "note": "é"})),
        reason: None,
    };
    let r = tool
        .execute(args.clone(), ToolContext::default().with_answer(answer.clone()))
        .await;
    assert_eq!(
        j(&r),
        r#"{"output":"{\"answers\":[\"a\",\"because\"],\"note\":\"é\"}","isError":false}"#
    );
    let r = tool
        .execute(
            args,
            ToolContext::default().with_answer(toolnexus::Answer { data: None, ..answer }),
        )
        .await;
    assert_eq!(r.output, "{}");
}

#[tokio::test]
async fn todowrite_renders_the_list_and_echoes_it_in_metadata() {
    let todos =
        json!([{"id": "1", "text": "a", "completed": true}, {"id": "2", "text": "b", "completed": false}]);
    let r = call("todowrite", json!({"todos": todos})).await;
    assert_eq!(
        j(&r),
        json!({"output": "[x] a\n[ ] b", "isError": false, "metadata": {"todos": todos}}).to_string()
    );
    let r = call("todowrite", json!({"todos": []})).await;
    assert_eq!(
        j(&r),
        r#"{"output":"(no todos)","isError":false,"metadata":{"todos":[]}}"#
    );
}

// ---------------------------------------------------------------------------------------
// apply_patch
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn apply_patch_adds_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| path_of(&dir, n);
    std::fs::write(p("f.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(p("gone.txt"), "bye\n").unwrap();
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+hello\n+world\n*** Update File: {}\n@@\n alpha\n-beta\n+BETA\n@@\n-gamma\n+GAMMA\n*** Delete File: {}\n*** End Patch",
        p("new/n.txt"),
        p("f.txt"),
        p("gone.txt")
    );
    let r = call("apply_patch", json!({"patchText": patch})).await;
    let (n, f, g) = (p("new/n.txt"), p("f.txt"), p("gone.txt"));
    assert_eq!(
        j(&r),
        json!({"output": "Applied patch: 3 file operations", "isError": false, "metadata": {
            "added": 1, "updated": 1, "deleted": 1,
            "files": [
                {"path": n, "status": "added", "additions": 2, "deletions": 0},
                {"path": f, "status": "modified", "additions": 2, "deletions": 2},
                {"path": g, "status": "deleted", "additions": 0, "deletions": 1},
            ],
            "diff": format!(
                "--- /dev/null\n+++ {n}\n@@ -0,0 +1,2 @@\n+hello\n+world\n\\ No newline at end of file\n\
                 --- {f}\n+++ {f}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n-gamma\n+BETA\n+GAMMA\n\
                 --- {g}\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
            ),
        }})
        .to_string()
    );
    assert_eq!(std::fs::read_to_string(p("new/n.txt")).unwrap(), "hello\nworld");
    assert_eq!(
        std::fs::read_to_string(p("f.txt")).unwrap(),
        "alpha\nBETA\nGAMMA\n"
    );
    assert!(!std::path::Path::new(&p("gone.txt")).exists());
    // A hunk without old lines appends; one operation is singular.
    let patch = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n+tail\n*** End Patch\n",
        p("new/n.txt")
    );
    let r = call("apply_patch", json!({"patchText": patch})).await;
    assert_eq!(r.output, "Applied patch: 1 file operation");
    assert_eq!(
        std::fs::read_to_string(p("new/n.txt")).unwrap(),
        "hello\nworld\ntail"
    );
    // No temporary files are left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("new"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["n.txt"]);
}

#[tokio::test]
async fn apply_patch_is_atomic_a_failing_hunk_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| path_of(&dir, n);
    std::fs::write(p("a.txt"), "one\n").unwrap();
    std::fs::write(p("b.txt"), "two\n").unwrap();
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+new\n*** Update File: {}\n-one\n+ONE\n*** Delete File: {}\n*** Update File: {}\n-zzz\n+y\n*** End Patch",
        p("added.txt"),
        p("a.txt"),
        p("b.txt"),
        p("a.txt")
    );
    let r = call("apply_patch", json!({"patchText": patch})).await;
    assert_eq!(
        j(&r),
        r#"{"output":"apply_patch: hunk does not match file contents","isError":true}"#
    );
    assert!(!std::path::Path::new(&p("added.txt")).exists());
    assert_eq!(std::fs::read_to_string(p("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(p("b.txt")).unwrap(), "two\n");
}

#[tokio::test]
async fn apply_patch_grammar_and_filesystem_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| path_of(&dir, n);
    std::fs::write(p("a.txt"), "one\n").unwrap();
    let err = |text: String| async move { call("apply_patch", json!({"patchText": text})).await };
    let cases = [
        (
            "garbage".to_owned(),
            "apply_patch: missing '*** Begin Patch'".to_owned(),
        ),
        (
            "\n\n*** Begin Patch\n*** Delete File: x".to_owned(),
            "apply_patch: missing '*** End Patch'".to_owned(),
        ),
        (
            "*** Begin Patch\nhello\n*** End Patch".to_owned(),
            "apply_patch: unexpected line: hello".to_owned(),
        ),
        (
            format!("*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch", p("a.txt")),
            format!("apply_patch: file already exists: {}", p("a.txt")),
        ),
        (
            format!("*** Begin Patch\n*** Delete File: {}\n*** End Patch", p("no.txt")),
            format!("apply_patch: file not found: {}", p("no.txt")),
        ),
        (
            format!(
                "*** Begin Patch\n*** Update File: {}\n-a\n+b\n*** End Patch",
                p("no.txt")
            ),
            format!("apply_patch: file not found: {}", p("no.txt")),
        ),
        // Operations see the effect of earlier ones in the same patch.
        (
            format!(
                "*** Begin Patch\n*** Delete File: {0}\n*** Update File: {0}\n-one\n+1\n*** End Patch",
                p("a.txt")
            ),
            format!("apply_patch: file not found: {}", p("a.txt")),
        ),
    ];
    for (text, want) in cases {
        let r = err(text.clone()).await;
        assert_eq!(
            j(&r),
            json!({"output": want, "isError": true}).to_string(),
            "{text}"
        );
    }
    assert_eq!(std::fs::read_to_string(p("a.txt")).unwrap(), "one\n");
    // An empty patch applies nothing.
    let r = err("*** Begin Patch\n*** End Patch".to_owned()).await;
    assert_eq!(r.output, "Applied patch: 0 file operations");
    // Add then Update of the same new file composes.
    let patch = format!(
        "*** Begin Patch\n*** Add File: {0}\n+x\n*** Update File: {0}\n-x\n+y\n*** End Patch",
        p("c.txt")
    );
    let r = err(patch).await;
    assert_eq!(r.output, "Applied patch: 2 file operations");
    assert_eq!(std::fs::read_to_string(p("c.txt")).unwrap(), "y");
}

#[tokio::test]
async fn grep_reports_only_lines_that_exist() {
    // "a\n" is one line; the other ports also searched the empty string after the final "\n".
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join("g.txt"), "\n\nb").unwrap();
    let r = call("grep", json!({"pattern": "x*", "path": dir.path()})).await;
    assert_eq!(r.output, "f.txt:1:a\ng.txt:1:\ng.txt:2:\ng.txt:3:b");
    let r = call("grep", json!({"pattern": "^$", "path": dir.path()})).await;
    assert_eq!(r.output, "g.txt:1:\ng.txt:2:");
}
