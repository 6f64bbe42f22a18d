//! Integration tests and examples for toolnexus live in `tests/` and `examples/`.
