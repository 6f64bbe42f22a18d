//! Issue 14, "Bounded tool calls" (bash), and issue 20's bash items: output capped while the
//! command runs, a background job holding the pipe does not hold the call, bash (not sh)
//! runs the command, timeouts are checked, and a failed call's output has no stray newline.
//! Real child processes throughout.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{ToolContext, ToolResult, Toolkit};

async fn call(name: &str, args: Value) -> ToolResult {
    let tool = builtin::all().into_iter().find(|t| t.name() == name).unwrap();
    tool.execute(args, ToolContext::default()).await
}

/// What `bash` results' `shell` metadata says on this machine.
fn shell() -> String {
    builtin::shell(&BuiltinsConfig::default()).unwrap().join(" ")
}

/// The cut marker for `cut` bytes (the tool keeps 32 KiB at each end).
fn marker(cut: usize) -> String {
    format!("\n… [{cut} bytes of output cut; the first and last 32768 bytes are kept] …\n")
}

/// Peak resident memory of this test process, in kB.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The issue's reproduction: `yes` with a 3 s timeout ran 93.6 s and took 3.3 GB.
#[tokio::test]
async fn endless_output_is_capped_while_it_runs_and_the_timeout_holds() {
    let start = Instant::now();
    let r = call("bash", json!({"command": "yes", "timeout": 3000})).await;
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_secs(3), "{elapsed:?}");
    // SIGTERM stops `yes` at once; the 2 s grace before SIGKILL is not even needed.
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}");
    assert!(r.is_error);
    let cut = r.metadata.as_ref().unwrap()["outputCut"].as_u64().unwrap() as usize;
    assert!(cut > 1_000_000, "only {cut} bytes cut");
    let head = format!(
        "bash: command timed out after 3000ms\n{}{}",
        "y\n".repeat(16384),
        marker(cut)
    );
    let tail = r.output.strip_prefix(&head).expect("the head, then the marker");
    // Where `yes` was stopped decides whether the tail starts at a "y" or a "\n".
    assert_eq!(tail.len(), 32768);
    assert!(!tail.contains("yy") && !tail.contains("\n\n") && tail.trim_matches(['y', '\n']).is_empty());
    let meta = r.metadata.unwrap();
    assert_eq!(
        (meta["timedOut"].clone(), meta["killedTree"].clone()),
        (json!(true), json!(true))
    );
    // Bounded memory: nowhere near the gigabytes `yes` wrote.
    assert!(peak_rss_kb() < 512 * 1024, "peak RSS {} kB", peak_rss_kb());
}

#[tokio::test]
async fn large_output_keeps_its_head_and_tail_and_says_how_much_was_cut() {
    let r = call(
        "bash",
        json!({"command": "head -c 100000 /dev/zero | tr '\\0' a; printf END"}),
    )
    .await;
    let cut = 100_003 - 2 * 32768;
    assert_eq!(
        r.output,
        format!("{}{}{}END", "a".repeat(32768), marker(cut), "a".repeat(32765))
    );
    assert_eq!(
        serde_json::to_value(r.metadata.unwrap()).unwrap(),
        json!({"shell": shell(), "exitCode": 0, "outputCut": cut})
    );
    // Under the cap nothing changes and nothing is noted.
    let r = call("bash", json!({"command": "head -c 65536 /dev/zero | tr '\\0' b"})).await;
    assert_eq!(r.output, "b".repeat(65536));
    assert!(!r.metadata.unwrap().contains_key("outputCut"));
}

/// The issue's reproduction: `(sleep 30 &); echo done` ran into the full timeout as a failure.
#[tokio::test]
async fn a_background_job_holding_the_pipe_does_not_hold_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let start = Instant::now();
    let r = call(
        "bash",
        json!({"command": "(sleep 30 &); echo done", "timeout": 20000}),
    )
    .await;
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    assert_eq!(
        r.to_json(),
        json!({"output": "done\n", "isError": false, "metadata": {"shell": shell(), "exitCode": 0}})
            .to_string()
    );
    // The job is left running, as a shell leaves it: the command asked for it.
    let command = format!("sleep 30 & echo $! > {}; echo started", pidfile.display());
    let r = call("bash", json!({"command": command})).await;
    assert_eq!(r.output, "started\n");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let pid = pid.trim();
    assert!(
        std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the job was killed"
    );
    std::process::Command::new("kill").arg(pid).status().unwrap();
}

/// Issue 20: the tool is called bash, so bash runs the command when the machine has it.
#[tokio::test]
async fn bash_runs_the_command_when_bash_exists() {
    assert!(shell().ends_with("bash -c"), "{}", shell());
    let r = call(
        "bash",
        json!({"command": "[[ 1 == 1 ]] && echo bash; echo $BASH_VERSION | cut -c1"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.output);
    assert!(r.output.starts_with("bash\n"), "{}", r.output);
    // A host can name its own interpreter; it is used verbatim.
    let config = BuiltinsConfig::default().with_shell(["/bin/sh", "-c"]);
    let tk = Toolkit::new(builtin::select(&config));
    let r = tk
        .execute("bash", json!({"command": "echo sh"}), ToolContext::default())
        .await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"sh\n","isError":false,"metadata":{"shell":"/bin/sh -c","exitCode":0}}"#
    );
}

/// Issue 20: a failed call's output had a stray leading newline when the command printed
/// nothing.
#[tokio::test]
async fn failure_messages_have_no_stray_newlines() {
    let r = call("bash", json!({"command": "exit 3"})).await;
    assert_eq!(r.output, "bash: command exited with code 3");
    let r = call("bash", json!({"command": "printf partial; exit 2"})).await;
    assert_eq!(r.output, "partial\nbash: command exited with code 2");
    let r = call("bash", json!({"command": "sleep 5", "timeout": 100})).await;
    assert_eq!(r.output, "bash: command timed out after 100ms");
}

/// The issue's reproduction: a timeout of `1e308` or `-1` panicked (`bash.rs:111`,
/// `webfetch.rs:77`).
#[tokio::test]
async fn out_of_range_timeouts_are_errors_never_a_panic() {
    for (timeout, shown) in [
        (json!(1e308), "1e+308"),
        (json!(-1), "-1"),
        (json!(0), "0"),
        (json!("NaN"), "\"NaN\""),
        (json!(86_400_001), "86400001"),
    ] {
        let r = call("bash", json!({"command": "true", "timeout": timeout})).await;
        assert_eq!(
            r.to_json(),
            json!({
                "output": format!("bash: timeout must be a positive number of milliseconds (at most 86400000), got {shown}"),
                "isError": true
            })
            .to_string()
        );
        let r = call(
            "webfetch",
            json!({"url": "http://127.0.0.1:9/", "timeout": timeout}),
        )
        .await;
        assert!(
            r.output
                .starts_with("webfetch: timeout must be a positive number of seconds (at most 86400), got "),
            "{}",
            r.output
        );
    }
}
