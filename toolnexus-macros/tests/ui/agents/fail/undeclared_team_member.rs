fn main() {
    let _ = toolnexus::agents! {
        coordinator { does: "splits and delegates", team: [explorer] },
        explore { does: "read-only research" },
    };
}
