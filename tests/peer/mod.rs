//! One rule for tests whose real peer (an npm MCP server, a Python or JS SDK, PostgreSQL) is
//! not installed: in CI (`TOOLNEXUS_REQUIRE_PEERS=1`, set by `.ci/run`, which installs every
//! peer) that is a failure; elsewhere the test returns early and says so where it is seen.
//!
//! libtest captures `println!`/`eprintln!` of a passing test, so the line is written to the
//! stderr handle directly, and the test binary ends with a summary of everything it skipped.

use std::io::Write as _;
use std::sync::Mutex;

static SKIPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// `true` when a missing peer must fail the test.
pub fn required() -> bool {
    std::env::var_os("TOOLNEXUS_REQUIRE_PEERS").is_some_and(|v| v == "1")
}

/// The peer `what` describes (and how to install it) is missing: panic in CI, else a visible
/// `SKIPPED` line now and in the binary's closing summary. The caller then returns.
pub fn missing(what: &str) {
    if required() {
        panic!("{what} (TOOLNEXUS_REQUIRE_PEERS=1: every peer must be installed)");
    }
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {what}");
    let mut skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if skipped.is_empty() {
        // SAFETY: `summary` is a plain `extern "C" fn` that only takes a lock and writes.
        unsafe { libc::atexit(summary) };
    }
    skipped.push(test);
}

extern "C" fn summary() {
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {} test(s) whose peer is not installed (see the lines above; .ci/run installs them): {}",
        skipped.len(),
        skipped.join(", ")
    );
}

/// The PostgreSQL server of `TOOLNEXUS_PG_URL` (set by `.ci/pg-start`), or `None` after
/// [`missing`].
#[allow(dead_code)] // only the store tests need a database
pub fn postgres_url() -> Option<String> {
    match std::env::var("TOOLNEXUS_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            missing("PostgreSQL: TOOLNEXUS_PG_URL is not set (`. .ci/pg-start` starts one and sets it)");
            None
        }
    }
}
