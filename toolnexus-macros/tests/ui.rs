//! The compiler's view of `#[tool]` and `toolkit![]` (trybuild): every signature form that
//! must compile and run, and every message the macros emit, each pinned by the `.stderr`
//! beside its case. The cases live in the workspace's `tests/ui/{tool,toolkit}/{pass,fail}`.
//! This harness sits in the macro crate so trybuild builds a small dependency set (toolnexus
//! without its network features), not the workspace's whole dev tree.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for m in ["tool", "toolkit"] {
        t.pass(format!("../tests/ui/{m}/pass/*.rs"));
        t.compile_fail(format!("../tests/ui/{m}/fail/*.rs"));
    }
    // `agents!{}`'s refusals emit only errors, so they need no `client` feature here; its
    // expansion runs against the real runtime in the workspace's tests/agents_macro.rs.
    t.compile_fail("tests/ui/agents/fail/*.rs");
}
