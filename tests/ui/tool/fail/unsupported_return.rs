use toolnexus::tool;

struct Report {
    rows: usize,
}

#[tool]
async fn report(day: String) -> Report {
    Report { rows: day.len() }
}

fn main() {}
