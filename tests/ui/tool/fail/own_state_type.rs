use toolnexus::tool;

/// The user's own type, named like toolnexus' `State`: a bare `State<T>` parameter is taken
/// for toolnexus' and checked, so this says to mark it `#[arg]`.
#[derive(serde::Deserialize, toolnexus::schemars::JsonSchema)]
#[schemars(crate = "toolnexus::schemars")]
struct State<T> {
    value: T,
}

#[tool]
fn remember(state: State<String>) -> String {
    state.value
}

fn main() {}
