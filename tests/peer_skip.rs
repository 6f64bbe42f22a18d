//! The visible-skip rule of `tests/peer/mod.rs`, checked on a real test binary: this file's own,
//! re-executed to run `child_peer_missing` the way `cargo test` runs any test.

mod peer;

use std::process::Command;

/// Set in the child run only: there the child test meets a missing peer.
const CHILD: &str = "TOOLNEXUS_PEER_SKIP_CHILD";

#[test]
fn child_peer_missing() {
    if std::env::var_os(CHILD).is_some() {
        peer::missing("the demo peer is not installed (npm install demo-peer)");
    }
}

fn run_child(require: bool) -> (bool, String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_peer_missing", "--exact", "--test-threads=1"])
        .env(CHILD, "1");
    if require {
        cmd.env("TOOLNEXUS_REQUIRE_PEERS", "1");
    } else {
        cmd.env_remove("TOOLNEXUS_REQUIRE_PEERS");
    }
    let out = cmd.output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn a_skip_is_written_past_the_capture_and_summed_up_at_exit() {
    let (ok, stdout, stderr) = run_child(false);
    assert!(ok, "{stdout}{stderr}");
    // libtest reports the test as passed; the skip is seen anyway, without --nocapture.
    assert!(stdout.contains("test child_peer_missing ... ok"), "{stdout}");
    assert_eq!(
        stderr,
        "SKIPPED child_peer_missing: the demo peer is not installed (npm install demo-peer)\n\
         SKIPPED 1 test(s) whose peer is not installed (see the lines above; .ci/run installs them): \
         child_peer_missing\n"
    );
}

#[test]
fn in_ci_a_missing_peer_fails_the_test() {
    let (ok, stdout, _) = run_child(true);
    assert!(!ok, "{stdout}");
    assert!(stdout.contains("test child_peer_missing ... FAILED"), "{stdout}");
    assert!(
        stdout.contains("the demo peer is not installed (npm install demo-peer) (TOOLNEXUS_REQUIRE_PEERS=1: every peer must be installed)"),
        "{stdout}"
    );
}
