//! Tool tiers (issue 22): with many tools, send only the core schemas in full and list the
//! rest in the description of a `tool_search` tool; the model loads the schemas it needs
//! (`select:a,b` or keywords) and calls a loaded tool by name, or through `call_tool`,
//! which the loop unwraps into the real call. The [`ToolPlan`] is built once per toolkit and
//! kept by the client.

use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::wire::Call;
use crate::result::ToolResult;
use crate::tool::{Tool, ToolSource};
use crate::toolkit::Toolkit;

/// The tool that lists the tools not sent in full and loads their schemas.
pub const TOOL_SEARCH: &str = "tool_search";
/// The tool that calls a loaded tool by name with its arguments.
pub const CALL_TOOL: &str = "call_tool";

/// How many toolkits' plans a client keeps (a host runs a handful; the oldest goes first).
const PLANS_KEPT: usize = 32;

/// Which tools go in full, which only by name — given to
/// [`ClientBuilder::tool_tiers`](super::ClientBuilder::tool_tiers).
///
/// Every tool not named `core` is *listed*: its name and the first line of its description
/// appear in `tool_search`'s description. Tools named `deferred` appear by name only.
///
/// ```
/// use toolnexus::client::ToolTiers;
///
/// let tiers = ToolTiers::new().core(["read", "bash"]).deferred(["notebook_edit"]);
/// # let _ = tiers;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolTiers {
    core: Vec<String>,
    deferred: Vec<String>,
}

impl ToolTiers {
    /// No core tools: every tool is listed in `tool_search`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tools sent with their full schema on every request.
    pub fn core<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.core.extend(names.into_iter().map(Into::into));
        self
    }

    /// Tools named in `tool_search`'s description without a summary.
    pub fn deferred<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.deferred.extend(names.into_iter().map(Into::into));
        self
    }

    /// The plan for `tk`: each of its tools in its tier, and the tools a request declares.
    fn plan(&self, tk: &Toolkit) -> ToolPlan {
        let (mut core, mut listed, mut deferred): (Vec<String>, Vec<String>, Vec<String>) =
            (Vec::new(), Vec::new(), Vec::new());
        for t in tk.tools() {
            let name = t.name().to_owned();
            if self.core.contains(&name) {
                core.push(name);
            } else if self.deferred.contains(&name) {
                deferred.push(name);
            } else {
                listed.push(name);
            }
        }
        let mut desc = String::from(
            "Load the full schema of tools that are not shown in full, then call them by name (or with call_tool). \
             Query by keywords, or \"select:a,b\" for exact names.",
        );
        if !listed.is_empty() {
            desc.push_str("\n\nAvailable tools:");
            for n in &listed {
                desc.push_str("\n- ");
                desc.push_str(n);
                let line = tk.get(n).map(|t| first_line(t.description())).unwrap_or_default();
                if !line.is_empty() {
                    desc.push_str(" — ");
                    desc.push_str(&line);
                }
            }
        }
        if !deferred.is_empty() {
            desc.push_str("\n\nMore tools (name only): ");
            desc.push_str(&deferred.join(", "));
        }
        let search = loop_tool(TOOL_SEARCH, desc).with_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords, or select:name1,name2"},
                "limit": {"type": "number", "description": "Maximum results for a keyword query (default 5)"}
            },
            "required": ["query"],
            "additionalProperties": false
        }));
        let call = loop_tool(
            CALL_TOOL,
            "Call a tool loaded with tool_search, by name, with its arguments.".into(),
        )
        .with_schema(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"],
            "additionalProperties": false
        }));
        let declared = Toolkit::new(
            core.iter()
                .filter_map(|n| tk.get(n).cloned())
                .chain([search, call]),
        );
        ToolPlan {
            core,
            listed,
            deferred,
            declared,
        }
    }
}

/// A tool the loop answers itself; its handler is never reached.
fn loop_tool(name: &str, description: String) -> Tool {
    Tool::new(name, |_: Value, _| async {
        ToolResult::failure("handled by the client loop")
    })
    .with_description(description)
    .with_source(ToolSource::Builtin)
}

/// First line of a description, cut to 120 bytes on a character boundary with `…`.
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.len() <= 120 {
        return line.to_owned();
    }
    let mut n = 120;
    while !line.is_char_boundary(n) {
        n -= 1;
    }
    format!("{}…", &line[..n])
}

/// A toolkit's tiers, built once and kept by the client
/// ([`Client::tool_plan`](super::Client::tool_plan)).
#[derive(Debug)]
pub struct ToolPlan {
    core: Vec<String>,
    listed: Vec<String>,
    deferred: Vec<String>,
    /// The core tools, `tool_search` and `call_tool`: what every request declares.
    declared: Toolkit,
}

impl ToolPlan {
    /// Tools sent in full, by name.
    pub fn core(&self) -> &[String] {
        &self.core
    }
    /// Tools listed with a summary in `tool_search`'s description.
    pub fn listed(&self) -> &[String] {
        &self.listed
    }
    /// Tools named without a summary.
    pub fn deferred(&self) -> &[String] {
        &self.deferred
    }
    /// What every request declares: the core tools, `tool_search` and `call_tool`.
    pub fn declared(&self) -> &Toolkit {
        &self.declared
    }
}

/// A client's plans, one per toolkit. A toolkit is known by its rendered declarations
/// (one `Arc` per tool set, reset by any change), which the entry holds so the address is
/// never reused while the entry lives.
#[derive(Default)]
pub(crate) struct Plans {
    entries: Mutex<Vec<(Arc<RawValue>, Arc<ToolPlan>)>>,
}

impl Plans {
    pub(crate) fn get(&self, tiers: &ToolTiers, tk: &Toolkit) -> Arc<ToolPlan> {
        let id = tk.to_openai_json();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, plan)) = entries.iter().find(|(k, _)| Arc::ptr_eq(k, &id)) {
            return plan.clone();
        }
        let plan = Arc::new(tiers.plan(tk));
        if entries.len() >= PLANS_KEPT {
            entries.remove(0);
        }
        entries.push((id, plan.clone()));
        plan
    }
}

/// `call_tool {name, arguments}` as the call it wraps (same id); any other call as it is.
pub(crate) fn unwrap(call: Call) -> Call {
    if call.name != CALL_TOOL {
        return call;
    }
    let args = match &call.args {
        Ok(a) => a,
        Err(_) => return call,
    };
    let Some(name) = args["name"].as_str().filter(|n| !n.is_empty()) else {
        return Call {
            args: Err("call_tool: \"name\" is required — the name of a tool loaded with tool_search".into()),
            ..call
        };
    };
    let inner = match &args["arguments"] {
        Value::Null => "{}".to_owned(),
        v => v.to_string(),
    };
    Call::new(call.id, name.to_owned(), inner)
}

/// `tool_search`: `select:a,b` loads exact names; otherwise keywords score each tool (a hit
/// in the name 3, in the description 1) and the best `limit` (default 5) load.
pub(crate) fn search(tk: &Toolkit, args: &Value) -> ToolResult {
    let query = args["query"].as_str().unwrap_or("").trim();
    if query.is_empty() {
        return ToolResult::failure("tool_search: \"query\" is required (keywords, or select:name1,name2)");
    }
    let picked: Vec<&Tool> = match query.strip_prefix("select:") {
        Some(names) => {
            let names: Vec<&str> = names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect();
            let found: Vec<&Tool> = names.iter().filter_map(|n| tk.get(n)).collect();
            if found.is_empty() {
                return ToolResult::failure(format!("tool_search: no such tool: {}", names.join(", ")));
            }
            found
        }
        None => {
            let limit = args["limit"]
                .as_f64()
                .filter(|l| *l >= 1.0)
                .map_or(5, |l| l as usize);
            let lower = query.to_lowercase();
            let terms: Vec<&str> = lower.split_whitespace().collect();
            let mut hits: Vec<(&Tool, usize)> = tk
                .tools()
                .map(|t| {
                    let (name, desc) = (t.name().to_lowercase(), t.description().to_lowercase());
                    let score = terms
                        .iter()
                        .map(|term| 3 * usize::from(name.contains(term)) + usize::from(desc.contains(term)))
                        .sum();
                    (t, score)
                })
                .filter(|(_, s)| *s > 0)
                .collect();
            // Best first; the toolkit's name order breaks ties.
            hits.sort_by_key(|h| std::cmp::Reverse(h.1));
            hits.into_iter().take(limit).map(|(t, _)| t).collect()
        }
    };
    if picked.is_empty() {
        return ToolResult::success("No matching tools.");
    }
    let defs: Vec<Value> = picked
        .iter()
        .map(|t| json!({"name": t.name(), "description": t.description(), "inputSchema": t.input_schema()}))
        .collect();
    ToolResult::success(format!(
        "Loaded tools (call by name, or with call_tool):\n{}",
        Value::from(defs)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tk() -> Toolkit {
        let t = |n: &str, d: &str| {
            Tool::new(n, |_: Value, _| async { ToolResult::success("") }).with_description(d)
        };
        Toolkit::new([
            t("read", "Read a file\nmore"),
            t("weather", "Weather for a city"),
            t("write", "Write a file"),
        ])
    }

    #[test]
    fn the_plan_sends_core_and_lists_the_rest() {
        let plan = ToolTiers::new().core(["read"]).deferred(["write"]).plan(&tk());
        assert_eq!(
            (plan.core(), plan.listed(), plan.deferred()),
            (
                &["read".to_owned()][..],
                &["weather".to_owned()][..],
                &["write".to_owned()][..]
            )
        );
        let names: Vec<&str> = plan.declared().tools().map(|t| t.name()).collect();
        assert_eq!(names, ["call_tool", "read", "tool_search"]);
        assert_eq!(
            plan.declared().get("tool_search").unwrap().description(),
            "Load the full schema of tools that are not shown in full, then call them by name (or with call_tool). \
             Query by keywords, or \"select:a,b\" for exact names.\n\nAvailable tools:\n- weather — Weather for a city\n\n\
             More tools (name only): write"
        );
    }

    #[test]
    fn search_by_name_and_by_keywords() {
        let tk = tk();
        let r = search(&tk, &json!({"query": "select:write, nope"}));
        assert_eq!(
            r.output,
            r#"Loaded tools (call by name, or with call_tool):
[{"name":"write","description":"Write a file","inputSchema":{"type":"object"}}]"#
        );
        let r = search(&tk, &json!({"query": "FILE read", "limit": 1}));
        assert!(
            r.output.contains(r#""name":"read""#) && !r.output.contains(r#""name":"write""#),
            "{}",
            r.output
        );
        assert_eq!(
            search(&tk, &json!({"query": "zebra"})).output,
            "No matching tools."
        );
        let r = search(&tk, &json!({"query": "select:nope"}));
        assert_eq!(
            (r.is_error, r.output.as_str()),
            (true, "tool_search: no such tool: nope")
        );
        assert!(search(&tk, &json!({})).is_error);
    }

    #[test]
    fn call_tool_unwraps_into_the_real_call() {
        let c = unwrap(Call::new(
            "c1".into(),
            "call_tool".into(),
            r#"{"name":"weather","arguments":{"city":"Oslo"}}"#.into(),
        ));
        assert_eq!((c.id.as_str(), c.name.as_str()), ("c1", "weather"));
        assert_eq!(c.args.unwrap(), json!({"city": "Oslo"}));
        let c = unwrap(Call::new("c2".into(), "call_tool".into(), "{}".into()));
        assert_eq!(
            c.args.unwrap_err(),
            "call_tool: \"name\" is required — the name of a tool loaded with tool_search"
        );
        let c = unwrap(Call::new("c3".into(), "read".into(), "{}".into()));
        assert_eq!(c.name, "read");
    }
}
