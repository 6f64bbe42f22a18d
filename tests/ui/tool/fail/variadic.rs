use toolnexus::tool;

#[tool]
unsafe extern "C" fn sum(first: i32, mut rest: ...) -> i32 {
    first + unsafe { rest.arg::<i32>() }
}

fn main() {}
