//! grep and glob on a big tree, against ripgrep and the Python port (issue 3: aim for at
//! most 2× `rg`).
//!
//! ```sh
//! cargo bench --bench builtins_grep            # tree of 50,000 files under $TMPDIR
//! BENCH_FILES=100000 cargo bench --bench builtins_grep
//! ```
//!
//! The tree is generated once (and reused) at `$TMPDIR/toolnexus-bench-<files>`. `rg` and
//! the Python port (`$TOOLNEXUS_PYTHON`, default `/work/ref/venv/bin/python`) are run when
//! present and skipped otherwise. Each figure is the median wall time of several runs; the
//! external tools' figures include process start-up.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::builtin;
use toolnexus::{ToolContext, ToolResult};

/// The word planted in one file in 1,000: a full scan with few matches.
const RARE: &str = "zebracorn";

fn main() {
    let files: usize = std::env::var("BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let root = ensure_tree(files);
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let tools = builtin::all();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t.name() == name)
            .expect("a built-in")
            .clone()
    };
    let (grep, glob) = (tool("grep"), tool("glob"));
    let run = |t: &toolnexus::Tool, args: Value| -> ToolResult {
        let r = rt.block_on(t.execute(args, ToolContext::default()));
        assert!(!r.is_error, "{}", r.output);
        r
    };
    let dir = root.to_str().expect("a UTF-8 temp path");
    println!("tree: {files} files under {dir}");
    println!("{:<44} {:>10} {:>10} {:>10}", "case", "toolnexus", "rg", "python");

    let grep_args = json!({"pattern": RARE, "path": dir, "limit": 1_000_000});
    let hits = run(&grep, grep_args.clone()).output.lines().count();
    let ours = median(5, || {
        run(&grep, grep_args.clone());
    });
    let rg = time_cmd(
        5,
        Command::new("rg").args(["-n", "--no-heading", "-uu", "--sort", "path", RARE, dir]),
    );
    let rg_unsorted = time_cmd(
        5,
        Command::new("rg").args(["-n", "--no-heading", "-uu", RARE, dir]),
    );
    let py = python("grep", &grep_args);
    report(&format!("grep {RARE} ({hits} hits, full scan)"), ours, rg, py);
    report(
        "  (rg without --sort path, i.e. unordered)",
        ours,
        rg_unsorted,
        None,
    );

    let grep_args = json!({"pattern": "line 7 of", "path": dir});
    let ours = median(5, || {
        run(&grep, grep_args.clone());
    });
    // rg has no overall match limit to compare with here.
    let py = python("grep", &grep_args);
    report("grep common line, default limit 100", ours, None, py);

    let glob_args = json!({"pattern": "**/*.rs", "path": dir});
    let ours = median(5, || {
        run(&glob, glob_args.clone());
    });
    let rg = time_cmd(
        5,
        Command::new("rg").args(["--files", "-uu", "--sort", "path", "-g", "*.rs", dir]),
    );
    let py = python("glob", &glob_args);
    report("glob **/*.rs (limit 100, full walk)", ours, rg, py);
}

/// Median wall time of `n` runs after one warm-up.
fn median(n: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}

/// Median wall time of an external command, or `None` when it cannot run or fails.
fn time_cmd(n: usize, cmd: &mut Command) -> Option<Duration> {
    cmd.stdout(std::process::Stdio::null());
    if !cmd.status().is_ok_and(|s| s.success()) {
        eprintln!("skipped (not runnable here): {cmd:?}");
        return None;
    }
    Some(median(n, || {
        let _ = cmd.status();
    }))
}

/// The Python port running one built-in in a fresh interpreter (start-up included, as for rg).
fn python(tool: &str, args: &Value) -> Option<Duration> {
    const SCRIPT: &str = "import asyncio, json, sys, toolnexus
tools = {t.name: t for t in toolnexus.create_builtin_tools()}
r = asyncio.run(tools[sys.argv[1]].execute(json.loads(sys.argv[2])))
assert not r.is_error, r.output";
    let python = std::env::var("TOOLNEXUS_PYTHON").unwrap_or_else(|_| "/work/ref/venv/bin/python".into());
    time_cmd(
        3,
        Command::new(python).args(["-c", SCRIPT, tool, &args.to_string()]),
    )
}

fn report(case: &str, ours: Duration, rg: Option<Duration>, py: Option<Duration>) {
    let ms = |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.1}ms", d.as_secs_f64() * 1e3));
    let ratio = rg.map_or(String::new(), |rg| {
        format!("  ({:.2}× rg)", ours.as_secs_f64() / rg.as_secs_f64())
    });
    println!(
        "{case:<44} {:>10} {:>10} {:>10}{ratio}",
        ms(Some(ours)),
        ms(rg),
        ms(py)
    );
}

/// `files` files of ~1 KiB over two directory levels (.rs, .txt, .md, .json), with the rare
/// word in one in a thousand; created once, reused by later runs.
fn ensure_tree(files: usize) -> PathBuf {
    let root = std::env::temp_dir().join(format!("toolnexus-bench-{files}"));
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let exts = ["rs", "txt", "md", "json"];
    for i in 0..files {
        let dir = root
            .join(format!("d{:03}", i % 250))
            .join(format!("s{:02}", (i / 250) % 20));
        if i < 5000 {
            std::fs::create_dir_all(&dir).expect("create the bench tree");
        }
        let mut body = String::with_capacity(1100);
        for line in 0..20 {
            body.push_str(&format!(
                "line {line} of file {i}: the quick brown fox jumps over\n"
            ));
        }
        if i % 1000 == 0 {
            body.push_str(&format!("{RARE} {i}\n"));
        }
        write(&dir.join(format!("f{i}.{}", exts[i % exts.len()])), &body);
    }
    write(&done, "");
    root
}

fn write(path: &Path, body: &str) {
    std::fs::write(path, body).expect("write the bench tree");
}
