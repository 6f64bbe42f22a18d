use toolnexus::tool;

#[tool(name = "search", name = "find", crate = toolnexus, crate = toolnexus)]
fn search(#[arg(description = "a", description = "b", default, default = 3)] limit: u32) -> u32 {
    limit
}

fn main() {}
