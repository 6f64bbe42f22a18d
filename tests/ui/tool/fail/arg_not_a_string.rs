use toolnexus::tool;

#[tool(description = concat!("a", "b"))]
fn search(#[arg(description = 7)] query: String, #[arg(default(3))] limit: u32) -> String {
    format!("{query} {limit}")
}

fn main() {}
