//! The compiler's view of `#[tool]`, `toolkit![]` and `agents!{}` (trybuild): every form that
//! must compile and run, and every message the macros emit, each pinned by the `.stderr`
//! beside its case. The tool and toolkit cases live in the workspace's
//! `tests/ui/{tool,toolkit}/{pass,fail}`, the agents cases in `tests/ui/agents/{pass,fail}`
//! here. This harness sits in the macro crate so trybuild builds a small dependency set
//! (toolnexus with `client` only), not the workspace's whole dev tree.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for m in ["tool", "toolkit"] {
        t.pass(format!("../tests/ui/{m}/pass/*.rs"));
        t.compile_fail(format!("../tests/ui/{m}/fail/*.rs"));
    }
    // `agents!{}` expands to the agent runtime's `Registry`, so the dev-dependency enables
    // toolnexus's `client` feature; the runs themselves are in tests/agents_macro.rs.
    t.pass("tests/ui/agents/pass/*.rs");
    t.compile_fail("tests/ui/agents/fail/*.rs");
}
