use toolnexus::tool;

#[tool(name = "a_tool_name_that_is_far_too_long_for_openai_anthropic_gemini_and_mcp")]
fn search(query: String) -> String {
    query
}

fn main() {}
