fn main() {
    let _ = toolnexus::agents! {
        explore { does: "read-only research" },
        explore { does: "the same name again" },
    };
}
