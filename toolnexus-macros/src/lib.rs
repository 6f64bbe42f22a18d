//! Procedural macros for [toolnexus](https://docs.rs/toolnexus): `#[tool]` and `toolkit![]`.
