use toolnexus::{Args, tool};

#[derive(serde::Deserialize, toolnexus::schemars::JsonSchema)]
#[schemars(crate = "toolnexus::schemars")]
struct Query {
    text: String,
}

#[tool]
fn search(Args(q): Args<Query>, limit: u32) -> String {
    format!("{} {limit}", q.text)
}

fn main() {}
