use toolnexus::tool;

struct ToolContext;
struct Args<T>(T);

#[tool]
fn first(ctx: ToolContext) -> String {
    let _ = ctx;
    String::new()
}

#[tool]
fn second(args: Args<String>) -> String {
    args.0
}

fn main() {}
