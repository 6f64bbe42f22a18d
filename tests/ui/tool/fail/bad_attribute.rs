use toolnexus::tool;

// Every mistake is reported in one pass.
#[tool(nme = "search", description = 5)]
fn search(#[arg(desc = "what to find")] query: String, #[arg(description = 7)] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {
    // The stub keeps this use from adding errors of its own.
    let _ = search::tool();
}
