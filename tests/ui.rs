//! Compile-fail tests pinning the compiler messages of `#[tool]` and `toolkit![]`, one file
//! per failure mode (tests/ui/*.rs with the expected *.stderr beside it).

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
