//! The workspace root package: it owns the cross-crate tests (`tests/`), the examples
//! (`examples/`) and the benchmarks (`benches/`). Its documentation is the README, so the
//! README's Rust examples are doc tests.
#![doc = include_str!("../README.md")]
