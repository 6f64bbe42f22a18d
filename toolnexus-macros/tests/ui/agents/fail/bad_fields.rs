fn main() {
    let _ = toolnexus::agents! {
        explore { does: "research", tols: [lookup] },
    };
    let _ = toolnexus::agents! {
        explore { model: "m" },
    };
}
