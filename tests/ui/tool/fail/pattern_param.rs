use toolnexus::tool;

#[tool]
fn point((x, y): (i32, i32)) -> i32 {
    x + y
}

fn main() {}
