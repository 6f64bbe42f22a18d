//! [`Toolkit`] (SPEC §4): the uniform set of tools handed to a model, keyed and iterated
//! sorted by name, with one `execute` router that never fails.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::adapter;
use crate::context::ToolContext;
use crate::mcp::McpStatus;
use crate::result::ToolResult;
use crate::tool::Tool;

/// Something a toolkit owns and releases on [`Toolkit::close`] (an MCP session, a child
/// process tree).
pub trait Closeable: Send + Sync {
    /// Release the resource. Must be idempotent.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// A set of tools, sorted by name, plus what the sources behind them need at run time.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let builtin_read = Tool::new("read", |_, _| async { ToolResult::success("builtin") });
/// let mcp_read = Tool::new("read", |_, _| async { ToolResult::success("mcp") });
/// let mut tk = Toolkit::new([builtin_read]);
/// tk.add_tools([mcp_read]); // later wins: one name, one slot
/// assert_eq!(tk.len(), 1);
/// assert_eq!(tk.execute("read", json!({}), ToolContext::default()).await.output, "mcp");
///
/// let r = tk.execute("nope", json!({}), ToolContext::default()).await;
/// assert_eq!(r.to_json(), r#"{"output":"unknown tool: nope","isError":true}"#);
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Toolkit {
    tools: BTreeMap<String, Tool>,
    skills_prompt: String,
    resources: Vec<Arc<dyn Closeable>>,
    mcp_status: BTreeMap<String, McpStatus>,
    #[cfg(feature = "a2a")]
    agent_status: BTreeMap<String, crate::a2a::AgentStatus>,
    #[cfg(feature = "skills")]
    skills: Arc<[crate::skill::SkillInfo]>,
    /// The declarations as JSON text, rendered on first use and reset by any change to the
    /// tool set: a client sends them on every turn, and re-rendering 14 schemas per request
    /// would cost more than the rest of the request body.
    rendered: Arc<Rendered>,
}

#[derive(Default)]
struct Rendered {
    openai: OnceLock<Arc<RawValue>>,
    anthropic: OnceLock<Arc<RawValue>>,
}

impl Toolkit {
    /// A toolkit of `tools`; on a name collision the later tool wins.
    pub fn new(tools: impl IntoIterator<Item = Tool>) -> Self {
        let mut tk = Self::default();
        tk.add_tools(tools);
        tk
    }

    /// Add tools; a later tool replaces an earlier one of the same name.
    pub fn add_tools(&mut self, tools: impl IntoIterator<Item = Tool>) -> &mut Self {
        for tool in tools {
            self.tools.insert(tool.name().to_owned(), tool);
        }
        self.rendered = Arc::default();
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// Every tool, sorted by name (code point order).
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &Tool> + Clone {
        self.tools.values()
    }

    /// Every tool name, sorted.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// `true` when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Remove a tool by name, returning it.
    pub fn remove(&mut self, name: &str) -> Option<Tool> {
        let removed = self.tools.remove(name);
        if removed.is_some() {
            self.rendered = Arc::default();
        }
        removed
    }

    /// Route a call. Never panics and never errors: an unknown name gives
    /// `unknown tool: NAME`, a panicking tool a failure with its panic message, and the
    /// toolkit keeps working afterwards.
    pub async fn execute(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        match self.tools.get(name) {
            Some(tool) => tool.execute(args, ctx).await,
            None => ToolResult::failure(format!("unknown tool: {name}")),
        }
    }

    /// The skills catalog for the system prompt (SPEC §3); `""` when the toolkit has no
    /// skill source.
    pub fn skills_prompt(&self) -> &str {
        &self.skills_prompt
    }

    /// Set the skills catalog (done by the skill source at assembly).
    pub fn set_skills_prompt(&mut self, prompt: impl Into<String>) -> &mut Self {
        self.skills_prompt = prompt.into();
        self
    }

    /// The skills behind the `skill` tool (after the filter), in discovery order; what an
    /// A2A agent card lists. Empty when the toolkit has no skill source.
    #[cfg(feature = "skills")]
    pub fn skills(&self) -> &[crate::skill::SkillInfo] {
        &self.skills
    }

    /// Set the skills catalog entries (done by the skill source at assembly).
    #[cfg(feature = "skills")]
    pub fn set_skills(&mut self, skills: impl Into<Arc<[crate::skill::SkillInfo]>>) -> &mut Self {
        self.skills = skills.into();
        self
    }

    /// `connected | disabled | failed` per configured MCP server (SPEC §2 "Status"); empty
    /// when the toolkit has no MCP source.
    pub fn mcp_status(&self) -> &BTreeMap<String, McpStatus> {
        &self.mcp_status
    }

    /// Record MCP server statuses (done by the MCP source at assembly).
    pub fn extend_mcp_status(&mut self, status: impl IntoIterator<Item = (String, McpStatus)>) -> &mut Self {
        self.mcp_status.extend(status);
        self
    }

    /// `connected | disabled | failed` per configured A2A agent (SPEC §7A), keyed by its
    /// `agents` key or, for one added by URL, its card URL; empty when there are none.
    #[cfg(feature = "a2a")]
    pub fn agent_status(&self) -> &BTreeMap<String, crate::a2a::AgentStatus> {
        &self.agent_status
    }

    /// Record A2A agent statuses (done at assembly and by `add_agent`).
    #[cfg(feature = "a2a")]
    pub fn extend_agent_status(
        &mut self,
        status: impl IntoIterator<Item = (String, crate::a2a::AgentStatus)>,
    ) -> &mut Self {
        self.agent_status.extend(status);
        self
    }

    /// Hand the toolkit a resource to release on [`close`](Self::close).
    pub fn attach(&mut self, resource: Arc<dyn Closeable>) -> &mut Self {
        self.resources.push(resource);
        self
    }

    /// Release everything the sources hold (MCP sessions, child processes). Idempotent.
    pub async fn close(&self) {
        futures::future::join_all(self.resources.iter().map(|r| r.close())).await;
    }

    /// OpenAI function-calling entries, sorted by name.
    pub fn to_openai(&self) -> Vec<Value> {
        adapter::to_openai(self.tools())
    }

    /// Anthropic tool entries, sorted by name.
    pub fn to_anthropic(&self) -> Vec<Value> {
        adapter::to_anthropic(self.tools())
    }

    /// [`to_openai`](Self::to_openai) as compact JSON text, rendered once per tool set: what
    /// goes into every request body unchanged.
    ///
    /// ```
    /// use toolnexus::{Tool, ToolResult, Toolkit};
    ///
    /// let mut tk = Toolkit::new([Tool::new("b", |_, _| async { ToolResult::success("") })]);
    /// assert_eq!(tk.to_openai_json().get(), serde_json::to_string(&tk.to_openai()).unwrap());
    /// tk.add_tools([Tool::new("a", |_, _| async { ToolResult::success("") })]);
    /// assert!(tk.to_openai_json().get().starts_with(r#"[{"type":"function","function":{"name":"a""#));
    /// ```
    pub fn to_openai_json(&self) -> Arc<RawValue> {
        render(&self.rendered.openai, || self.to_openai())
    }

    /// [`to_anthropic`](Self::to_anthropic) as compact JSON text, rendered once per tool set.
    pub fn to_anthropic_json(&self) -> Arc<RawValue> {
        render(&self.rendered.anthropic, || self.to_anthropic())
    }

    /// The single Gemini `functionDeclarations` wrapper, sorted by name.
    pub fn to_gemini(&self) -> Vec<Value> {
        adapter::to_gemini(self.tools())
    }
}

fn render(slot: &OnceLock<Arc<RawValue>>, entries: impl FnOnce() -> Vec<Value>) -> Arc<RawValue> {
    slot.get_or_init(|| {
        let raw = serde_json::value::to_raw_value(&entries());
        Arc::from(raw.expect("a list of JSON values always serializes"))
    })
    .clone()
}

impl FromIterator<Tool> for Toolkit {
    fn from_iter<I: IntoIterator<Item = Tool>>(iter: I) -> Self {
        Self::new(iter)
    }
}

impl fmt::Debug for Toolkit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Toolkit")
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn echo(name: &str) -> Tool {
        Tool::new(name, |args, _| async move { ToolResult::success(args) })
    }

    #[test]
    fn sorted_by_name() {
        let tk = Toolkit::new([echo("zeta"), echo("Alpha"), echo("beta"), echo("_x")]);
        assert_eq!(tk.tool_names(), ["Alpha", "_x", "beta", "zeta"]);
    }

    #[tokio::test]
    async fn panicking_tool_is_isolated() {
        let tk = Toolkit::new([
            Tool::new("boom", |_, _| async { panic!("kaboom {}", 7) }),
            echo("echo"),
        ]);
        let r = tk.execute("boom", json!({}), ToolContext::default()).await;
        assert_eq!(r.output, "tool \"boom\" panicked: kaboom 7");
        assert!(r.is_error);
        // The toolkit keeps working afterwards, and a second panic is just as contained.
        let r = tk.execute("echo", json!({"a": 1}), ToolContext::default()).await;
        assert_eq!(r.to_json(), r#"{"output":"{\"a\":1}","isError":false}"#);
        let r = tk.execute("boom", json!({}), ToolContext::default()).await;
        assert!(r.is_error);
    }

    struct Counter(AtomicUsize);
    impl Closeable for Counter {
        fn close(&self) -> BoxFuture<'_, ()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn close_releases_attached_resources() {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let mut tk = Toolkit::default();
        tk.attach(counter.clone());
        tk.close().await;
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
    }
}
