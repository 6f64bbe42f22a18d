fn main() {
    let _ = toolnexus::agents! {
        a { does: "delegates to b", team: [b] },
        b { does: "delegates to c", team: [c] },
        c { does: "delegates back to a", team: [a] },
    };
}
