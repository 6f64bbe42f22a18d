use toolnexus::tool;

struct Day(u8);

#[tool]
fn report(day: Day) -> String {
    day.0.to_string()
}

fn main() {}
