//! A description from `#[doc = include_str!(..)]`, alone or around `///` lines, is kept.

use toolnexus::tool;

#[doc = include_str!("doc_include_str.md")]
#[tool]
fn included() {}

/// First line.
#[doc = include_str!("doc_include_str.md")]
/// Last line.
#[tool]
fn mixed() {}

fn main() {
    assert_eq!(included::tool().description(), "Look things up.\n\nIn the **catalog**.");
    assert_eq!(
        mixed::tool().description(),
        "First line.\nLook things up.\n\nIn the **catalog**.\n\nLast line."
    );
}
