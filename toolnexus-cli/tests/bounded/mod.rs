//! Waiting for a child process of a test, bounded.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// The child's exit status; a child still running after `limit` is killed and the test fails
/// naming `what` (a server that should have refused to start would otherwise run forever).
pub fn exit_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
