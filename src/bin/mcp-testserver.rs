//! The MCP test peer, built as part of this package so tests find it via `CARGO_BIN_EXE_*`.
fn main() {
    toolnexus_testserver::main();
}
