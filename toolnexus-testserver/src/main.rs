//! `toolnexus-testserver stdio|http ADDR [--page-size N] [--extra N] [--dup-cursor]`.
fn main() {
    toolnexus_testserver::main();
}
