//! Issue 14, "File tools: a root, and bounded reads": confinement to a base directory (every
//! file tool, symlinks and `..` included, files not created yet included), and reads bounded
//! by the bytes actually read — exercised on real files, symlinks, a FIFO, `/dev/zero` and
//! `/proc`.

use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{BuildError, ToolContext, ToolResult, Toolkit, ToolkitOptions};

/// A base directory with `a.txt` and `sub/b.txt`, a sibling directory outside it holding
/// `secret.txt`, and the toolkit confined to the base.
struct Sandbox {
    base: tempfile::TempDir,
    outside: tempfile::TempDir,
    tk: Toolkit,
}

impl Sandbox {
    fn new() -> Self {
        let base = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(base.path().join("a.txt"), "alpha\n").unwrap();
        std::fs::create_dir(base.path().join("sub")).unwrap();
        std::fs::write(base.path().join("sub/b.txt"), "beta\n").unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
        let config = BuiltinsConfig::default()
            .with_base_dir(base.path())
            .confined(true);
        let tk = Toolkit::new(builtin::select(&config));
        Self { base, outside, tk }
    }

    fn base(&self) -> &Path {
        self.base.path()
    }

    fn outside(&self, name: &str) -> String {
        self.outside.path().join(name).to_str().unwrap().to_owned()
    }

    async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.tk.execute(name, args, ToolContext::default()).await
    }

    /// The refusal every tool gives for `path`.
    fn refused(&self, tool: &str, path: &str) -> String {
        format!(
            "{tool}: {path} resolves outside baseDir {}",
            self.base().display()
        )
    }

    /// Every entry of the outside directory, to show nothing was created there.
    fn outside_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

/// The issue's reproduction: `write {"path":"../escape.txt"}` wrote outside the base.
#[tokio::test]
async fn write_outside_the_base_is_refused_and_nothing_is_written() {
    let sb = Sandbox::new();
    let escape = sb.base().parent().unwrap().join("escape.txt");
    let r = sb
        .call("write", json!({"path": "../escape.txt", "content": "x"}))
        .await;
    assert_eq!(
        r.to_json(),
        json!({"output": sb.refused("write", "../escape.txt"), "isError": true}).to_string()
    );
    assert!(!escape.exists());
    // Inside, relative paths mean the base, parents are created.
    let r = sb
        .call("write", json!({"path": "new/deep/c.txt", "content": "gamma"}))
        .await;
    assert_eq!(r.output, "Wrote 5 bytes to new/deep/c.txt");
    assert_eq!(
        std::fs::read_to_string(sb.base().join("new/deep/c.txt")).unwrap(),
        "gamma"
    );
    // `..` that stays inside is fine.
    let r = sb.call("read", json!({"path": "sub/../a.txt"})).await;
    assert_eq!(r.to_json(), r#"{"output":"alpha\n","isError":false}"#);
}

#[tokio::test]
async fn every_file_tool_refuses_paths_outside_the_base() {
    let sb = Sandbox::new();
    let secret = sb.outside("secret.txt");
    let outside_dir = sb.outside.path().to_str().unwrap().to_owned();
    let patch_add = "*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch".to_owned();
    let patch_update = format!("*** Begin Patch\n*** Update File: {secret}\n-secret\n+leaked\n*** End Patch");
    let cases = [
        ("read", json!({"path": secret}), sb.refused("read", &secret)),
        (
            "read",
            json!({"path": secret, "limit": 1}),
            sb.refused("read", &secret),
        ),
        (
            "edit",
            json!({"path": secret, "oldString": "secret", "newString": "x"}),
            sb.refused("edit", &secret),
        ),
        (
            "write",
            json!({"path": secret, "content": "x"}),
            sb.refused("write", &secret),
        ),
        (
            "grep",
            json!({"pattern": "secret", "path": outside_dir}),
            sb.refused("grep", &outside_dir),
        ),
        (
            "glob",
            json!({"pattern": "*", "path": ".."}),
            sb.refused("glob", ".."),
        ),
        (
            "apply_patch",
            json!({"patchText": patch_add}),
            sb.refused("apply_patch", "../x.txt"),
        ),
        (
            "apply_patch",
            json!({"patchText": patch_update}),
            sb.refused("apply_patch", &secret),
        ),
        (
            "bash",
            json!({"command": "pwd", "workdir": ".."}),
            sb.refused("bash", ".."),
        ),
        (
            "bash",
            json!({"command": "pwd", "workdir": "/"}),
            sb.refused("bash", "/"),
        ),
    ];
    for (tool, args, want) in cases {
        let r = sb.call(tool, args.clone()).await;
        assert_eq!(
            r.to_json(),
            json!({"output": want, "isError": true}).to_string(),
            "{tool} {args}"
        );
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "secret\n");
    assert_eq!(sb.outside_entries(), ["secret.txt"]);
    // bash runs in the base by default.
    let r = sb.call("bash", json!({"command": "cat a.txt"})).await;
    assert_eq!(r.output, "alpha\n");
}

/// Symlinks are resolved before the check, also on the way to a file that does not exist
/// yet, and `..` after a symlink goes where the kernel goes (the link target's parent).
#[tokio::test]
async fn symlinks_out_of_the_base_are_refused_and_inside_ones_work() {
    let sb = Sandbox::new();
    let base = sb.base();
    symlink(sb.outside.path(), base.join("out")).unwrap();
    symlink(sb.outside("secret.txt"), base.join("leak.txt")).unwrap();
    symlink(sb.outside("planted.txt"), base.join("dangling.txt")).unwrap();
    symlink(base.join("sub"), base.join("inner")).unwrap();
    std::fs::create_dir(sb.outside.path().join("d")).unwrap();
    symlink(sb.outside.path().join("d"), base.join("sub/d")).unwrap();

    for (tool, args, path) in [
        ("read", json!({"path": "out/secret.txt"}), "out/secret.txt"),
        ("read", json!({"path": "leak.txt"}), "leak.txt"),
        (
            "write",
            json!({"path": "out/new.txt", "content": "x"}),
            "out/new.txt",
        ),
        (
            "write",
            json!({"path": "out/deep/er/new.txt", "content": "x"}),
            "out/deep/er/new.txt",
        ),
        (
            "write",
            json!({"path": "dangling.txt", "content": "x"}),
            "dangling.txt",
        ),
        ("grep", json!({"pattern": "s", "path": "out"}), "out"),
        // Lexically `sub/a.txt`; really the outside directory's `a.txt`.
        (
            "write",
            json!({"path": "sub/d/../a.txt", "content": "x"}),
            "sub/d/../a.txt",
        ),
    ] {
        let r = sb.call(tool, args.clone()).await;
        assert_eq!(r.output, sb.refused(tool, path), "{tool} {args}");
        assert!(r.is_error);
    }
    assert_eq!(sb.outside_entries(), ["d", "secret.txt"]);

    // A link that stays inside is followed, and a write through it keeps the link.
    let r = sb.call("read", json!({"path": "inner/b.txt"})).await;
    assert_eq!(r.output, "beta\n");
    let r = sb
        .call("write", json!({"path": "inner/b.txt", "content": "BETA"}))
        .await;
    assert_eq!(r.output, "Wrote 4 bytes to inner/b.txt");
    assert_eq!(std::fs::read_to_string(base.join("sub/b.txt")).unwrap(), "BETA");
    assert!(
        std::fs::symlink_metadata(base.join("inner"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The walk never follows a link out of the tree.
    let r = sb.call("glob", json!({"pattern": "**/*.txt"})).await;
    assert_eq!(r.output, "a.txt\nsub/b.txt");
    let r = sb.call("grep", json!({"pattern": "secret"})).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"","isError":false,"metadata":{"count":0}}"#
    );
}

#[tokio::test]
async fn confinement_comes_from_the_config_file_or_the_toolkit_options() {
    let sb = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    let secret = sb.outside("secret.txt");
    let base = sb.base().to_str().unwrap();
    for block in [
        json!({"base_dir": base, "confine_to_base_dir": true}),
        json!({"baseDir": base, "confineToBaseDir": true}),
    ] {
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, json!({"builtins": block}).to_string()).unwrap();
        let tk = Toolkit::build(ToolkitOptions::default().config(path.as_path()))
            .await
            .unwrap();
        let r = tk
            .execute("read", json!({"path": "a.txt"}), ToolContext::default())
            .await;
        assert_eq!(r.output, "alpha\n", "{block}");
        let r = tk
            .execute("read", json!({"path": secret}), ToolContext::default())
            .await;
        assert_eq!(r.output, sb.refused("read", &secret), "{block}");
    }
    // The options win over the file.
    let path = dir.path().join("loose.json");
    std::fs::write(&path, r#"{"builtins": {"base_dir": "/"}}"#).unwrap();
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .config(path.as_path())
            .base_dir(sb.base())
            .confine_to_base_dir(true),
    )
    .await
    .unwrap();
    let r = tk
        .execute("read", json!({"path": secret}), ToolContext::default())
        .await;
    assert_eq!(r.output, sb.refused("read", &secret));

    // Confinement without a base cannot work: the build says so, naming the file.
    let path = dir.path().join("nobase.json");
    std::fs::write(&path, r#"{"builtins": {"confine_to_base_dir": true}}"#).unwrap();
    let err = Toolkit::build(ToolkitOptions::default().config(path.as_path()))
        .await
        .unwrap_err();
    assert!(matches!(err, BuildError::Builtins { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "malformed config {}: `builtins`: confine_to_base_dir is set but base_dir is empty",
            path.display()
        )
    );
    // Built by hand, such tools fail every call with the Python port's words.
    let tools = builtin::select(&BuiltinsConfig::default().confined(true));
    let tk = Toolkit::new(tools);
    let r = tk
        .execute("read", json!({"path": "a.txt"}), ToolContext::default())
        .await;
    assert_eq!(r.output, "read: confine_to_base_dir is set but base_dir is empty");
}

/// An unconfined base directory only says what relative paths mean.
#[tokio::test]
async fn an_unconfined_base_dir_anchors_relative_paths() {
    let sb = Sandbox::new();
    let tk = Toolkit::new(builtin::select(
        &BuiltinsConfig::default().with_base_dir(sb.base()),
    ));
    let r = tk
        .execute("read", json!({"path": "sub/b.txt"}), ToolContext::default())
        .await;
    assert_eq!(r.output, "beta\n");
    let secret = sb.outside("secret.txt");
    let r = tk
        .execute("read", json!({"path": secret}), ToolContext::default())
        .await;
    assert_eq!(r.output, "secret\n");
    let r = tk
        .execute("bash", json!({"command": "ls"}), ToolContext::default())
        .await;
    assert_eq!(r.output, "a.txt\nsub\n");
    let r = tk
        .execute("glob", json!({"pattern": "*.txt"}), ToolContext::default())
        .await;
    assert_eq!(r.output, "a.txt\nsub/b.txt");
}

/// The issue's reproduction: `read /dev/zero` took 2.1 GB.
#[tokio::test]
async fn devices_and_fifos_are_refused_without_reading_or_blocking() {
    let r = builtin_call("read", json!({"path": "/dev/zero"})).await;
    assert_eq!(
        r.to_json(),
        json!({"output": "read: /dev/zero is a character device, not a regular file", "isError": true})
            .to_string()
    );
    let r = builtin_call("read", json!({"path": "/dev/zero", "offset": 1, "limit": 1})).await;
    assert_eq!(
        r.output,
        "read: /dev/zero is a character device, not a regular file"
    );
    let r = builtin_call(
        "edit",
        json!({"path": "/dev/null", "oldString": "a", "newString": "b"}),
    )
    .await;
    assert_eq!(
        r.output,
        "edit: /dev/null is a character device, not a regular file"
    );

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let shown = fifo.to_str().unwrap();
    let start = Instant::now();
    for (tool, args) in [
        ("read", json!({"path": shown})),
        ("read", json!({"path": shown, "limit": 3})),
        ("edit", json!({"path": shown, "oldString": "a", "newString": "b"})),
        ("write", json!({"path": shown, "content": "x"})),
    ] {
        let r = builtin_call(tool, args).await;
        assert!(r.is_error, "{tool}");
        assert!(r.output.contains("a named pipe (FIFO)"), "{tool}: {}", r.output);
    }
    // A media extension takes the other path, refused the same way.
    let media = dir.path().join("pipe.png");
    std::process::Command::new("mkfifo").arg(&media).status().unwrap();
    let r = builtin_call("read", json!({"path": media})).await;
    assert_eq!(
        r.output,
        format!(
            "read: {} is a named pipe (FIFO), not a regular file",
            media.display()
        )
    );
    // grep and glob walk past it.
    std::fs::write(dir.path().join("f.txt"), "needle\n").unwrap();
    let r = builtin_call("grep", json!({"pattern": "needle", "path": dir.path()})).await;
    assert_eq!(r.output, "f.txt:1:needle");
    let r = builtin_call("glob", json!({"pattern": "*", "path": dir.path()})).await;
    assert_eq!(r.output, "f.txt");
    // Nothing waited for a writer (a plain open of a FIFO blocks forever).
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

/// `/proc` files report a size of 0: reads are bounded by what is read, not by that.
#[tokio::test]
async fn proc_files_are_read_by_what_they_hold_and_grep_over_proc_is_bounded() {
    let r = builtin_call("read", json!({"path": "/proc/self/status"})).await;
    assert!(!r.is_error, "{}", r.output);
    assert!(r.output.starts_with("Name:"), "{}", r.output);
    let r = builtin_call("read", json!({"path": "/proc/self/status", "limit": 1})).await;
    assert!(
        r.output.starts_with("Name:") && !r.output.contains('\n'),
        "{}",
        r.output
    );
    // The issue's reproduction: grep over /proc/self was killed by the kernel at 24 GB.
    let r = builtin_call(
        "grep",
        json!({"pattern": "^Name:", "path": "/proc/self", "limit": 5}),
    )
    .await;
    assert!(!r.is_error, "{}", r.output);
    // The first match in path order is the process's own status (its name is the test
    // binary's, cut to 15 characters); the rest are its threads'.
    assert_eq!(
        r.output.lines().next(),
        Some("status:1:Name:\thardening_files"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn writes_are_atomic_and_keep_the_file_mode() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let shown = script.to_str().unwrap();
    let r = builtin_call(
        "write",
        json!({"path": shown, "content": "#!/bin/sh\necho new\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.output);
    let r = builtin_call(
        "edit",
        json!({"path": shown, "oldString": "new", "newString": "newer"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.output);
    let patch =
        format!("*** Begin Patch\n*** Update File: {shown}\n-echo newer\n+echo newest\n*** End Patch");
    let r = builtin_call("apply_patch", json!({"patchText": patch})).await;
    assert!(!r.is_error, "{}", r.output);
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho newest\n"
    );
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    // And the script still runs.
    let out = std::process::Command::new(&script).output().unwrap();
    assert_eq!(out.stdout, b"newest\n");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["run.sh"]);
}

/// One unconfined built-in, called once.
async fn builtin_call(name: &str, args: Value) -> ToolResult {
    let tool = builtin::all().into_iter().find(|t| t.name() == name).unwrap();
    tool.execute(args, ToolContext::default()).await
}
