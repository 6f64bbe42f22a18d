fn main() {
    let _ = toolnexus::agents! {
        toolz: [lookup];
        explore { does: "read-only research" },
    };
}
