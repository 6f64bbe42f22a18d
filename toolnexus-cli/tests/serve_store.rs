//! `toolnexus serve --store URL` on the real binary: bad URLs are usage errors naming them, a
//! refused PostgreSQL login fails with the URL shown without its password.

mod bounded;
#[path = "../../tests/peer/mod.rs"]
mod peer;

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `toolnexus ARGS` to its exit (killed after 60 s: a server that should have refused to
/// start would otherwise serve forever) and returns the exit code and trimmed stderr.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(args)
        .env("OPENAI_API_KEY", "sk-not-needed")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = bounded::exit_within(
        &mut child,
        Duration::from_secs(60),
        &format!("toolnexus {args:?}"),
    );
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), err.trim().to_owned())
}

#[test]
fn a_bad_store_url_is_a_usage_error_naming_it() {
    assert_eq!(
        run(&["serve", "--mcp", "127.0.0.1:0", "--no-builtins", "--store", "mysql://root:hunter2@h/db"]),
        (
            Some(2),
            r#"toolnexus: --store: unknown store "mysql://root:***@h/db" (expected memory, file:<dir>, sqlite:<path> or postgres://...)"#
                .to_owned()
        )
    );
    assert_eq!(
        run(&["serve", "--mcp", "127.0.0.1:0", "--no-builtins", "--store", "sqlite::memory:"]),
        (
            Some(2),
            r#"toolnexus: --store: store "sqlite::memory:": an in-memory SQLite database is neither durable nor shared; use `memory` or sqlite:<path>"#
                .to_owned()
        )
    );
}

#[test]
fn a_wrong_postgres_password_fails_with_the_url_redacted() {
    let Ok(server) = std::env::var("TOOLNEXUS_PG_URL") else {
        peer::missing("PostgreSQL: TOOLNEXUS_PG_URL is not set (`. .ci/pg-start` starts one and sets it)");
        return;
    };
    // postgres://USER:PASSWORD@HOST:PORT/DB -> the same with another password.
    let (userinfo, host) = server.trim_start_matches("postgres://").split_once('@').unwrap();
    let user = userinfo.split(':').next().unwrap();
    let wrong = format!("postgres://{user}:Wr0ng-pa55@{host}");
    let (code, err) = run(&[
        "serve",
        "--mcp",
        "127.0.0.1:0",
        "--no-builtins",
        "--store",
        &wrong,
    ]);
    assert_eq!(code, Some(1), "{err}");
    let prefix = format!("toolnexus: cannot connect to postgres://{user}:***@{host} after 1 attempt(s): ");
    assert!(err.starts_with(&prefix), "{err}");
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("Wr0ng-pa55"), "{err}");
}
