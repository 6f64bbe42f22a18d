use toolnexus::tool;

#[tool]
fn echo<T: ToString>(value: String) -> String {
    value
}

fn main() {}
