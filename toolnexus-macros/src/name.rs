//! The tool-name rule checked at compile time.

/// The longest name every provider accepts.
const MAX_LEN: usize = 64;

/// `None` when `name` matches `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` — the intersection of what
/// OpenAI, Anthropic, Gemini and MCP hosts accept — else why not.
pub(crate) fn problem(name: &str) -> Option<String> {
    let rule = "a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (what OpenAI, Anthropic, Gemini and MCP hosts all accept)";
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Some(format!("the tool name is empty; {rule}"));
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some(format!(
            "invalid tool name \"{name}\": it must start with a letter or `_`; {rule}"
        ));
    }
    if let Some(bad) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Some(format!(
            "invalid tool name \"{name}\": {bad:?} is not allowed; {rule}"
        ));
    }
    let len = name.len();
    (len > MAX_LEN).then(|| {
        format!("tool name \"{name}\" is {len} characters long, at most {MAX_LEN} are allowed; {rule}")
    })
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn accepts_the_provider_intersection() {
        for ok in ["a", "_x", "search_docs", "get-weather", "A9", &"a".repeat(64)] {
            assert_eq!(problem(ok), None, "{ok}");
        }
        for bad in ["", "9lives", "-x", "my tool", "a.b", "café", &"a".repeat(65)] {
            assert!(problem(bad).is_some(), "{bad}");
        }
    }
}
