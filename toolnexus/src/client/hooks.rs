//! Lifecycle hooks around the loop (SPEC §8 "Hooks"): `before_llm` may replace the
//! messages/tools (or the model, for that turn) or abort the call; `after_llm` observes the
//! raw response; `before_tool` may short-circuit a call or rewrite its arguments;
//! `after_tool` may transform a result. Each is an async closure.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::error::{BoxError, ClientError};
use super::wire::Declarations;
use crate::result::ToolResult;

/// What `before_llm` sees.
#[derive(Clone, Debug)]
pub struct LlmRequest {
    /// The working transcript (provider-native shapes).
    pub messages: Vec<Value>,
    /// The tool declarations for this style.
    pub tools: Vec<Value>,
    /// The configured model.
    pub model: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// What `before_llm` may replace; `None` fields keep the current value.
#[derive(Clone, Debug, Default)]
pub struct LlmOverride {
    /// Replaces the working transcript for the rest of the run (context compaction).
    pub messages: Option<Vec<Value>>,
    /// Replaces the tool declarations (an empty list omits the `tools` key).
    pub tools: Option<Vec<Value>>,
    /// A model for this turn only.
    pub model: Option<String>,
}

/// What `after_llm` sees.
#[derive(Clone, Debug)]
pub struct LlmResponse {
    /// The raw provider payload; on a streamed turn `{"streamed":true,"usage":{…}}`.
    pub response: Value,
    /// The model this turn used.
    pub model: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// What `before_tool` sees.
#[derive(Clone, Debug)]
pub struct ToolCallInfo {
    /// Tool name.
    pub name: String,
    /// Arguments the model sent.
    pub args: Value,
    /// The provider's tool-call id.
    pub id: String,
    /// Zero-based turn index.
    pub turn: u32,
}

/// What `before_tool` may decide.
#[derive(Clone, Debug)]
pub enum BeforeTool {
    /// Do not run the tool; use this result (deny, cache hit, dry run, a guard suspension).
    Result(ToolResult),
    /// Run the tool with these arguments instead.
    Args(Value),
}

/// What `after_tool` sees.
#[derive(Clone, Debug)]
pub struct ToolOutcome {
    /// Tool name.
    pub name: String,
    /// Arguments the tool ran with.
    pub args: Value,
    /// Its result.
    pub result: ToolResult,
    /// The provider's tool-call id.
    pub id: String,
    /// Zero-based turn index.
    pub turn: u32,
}

type HookFn<E, R> = Arc<dyn Fn(E) -> BoxFuture<'static, R> + Send + Sync>;

/// The four optional hooks.
///
/// ```
/// use toolnexus::client::hooks::{BeforeTool, Hooks};
/// use toolnexus::ToolResult;
/// let hooks = Hooks::new().before_tool(|call| async move {
///     (call.name == "bash").then(|| BeforeTool::Result(ToolResult::failure("bash is not allowed here")))
/// });
/// # let _ = hooks;
/// ```
#[derive(Clone, Default)]
pub struct Hooks {
    pub(crate) before_llm: Option<HookFn<LlmRequest, Result<Option<LlmOverride>, BoxError>>>,
    pub(crate) after_llm: Option<HookFn<LlmResponse, ()>>,
    pub(crate) before_tool: Option<HookFn<ToolCallInfo, Option<BeforeTool>>>,
    pub(crate) after_tool: Option<HookFn<ToolOutcome, Option<ToolResult>>>,
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Before each LLM call. `Ok(Some(..))` replaces parts of the request; `Err(e)` aborts
    /// the run with [`ClientError::Hook`] carrying `e` as its source (the route-gate seam):
    /// `?` on any error works inside the hook, and `Err("why".into())` gives a message.
    pub fn before_llm<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(LlmRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<LlmOverride>, BoxError>> + Send + 'static,
    {
        self.before_llm = Some(Arc::new(move |e| Box::pin(f(e))));
        self
    }

    /// After each LLM call (logging, cost, tracing).
    pub fn after_llm<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(LlmResponse) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.after_llm = Some(Arc::new(move |e| Box::pin(f(e))));
        self
    }

    /// Before each tool call.
    pub fn before_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ToolCallInfo) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<BeforeTool>> + Send + 'static,
    {
        self.before_tool = Some(Arc::new(move |e| Box::pin(f(e))));
        self
    }

    /// After each tool call that produced a real result (never on a suspension); `Some`
    /// replaces the result.
    pub fn after_tool<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ToolOutcome) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<ToolResult>> + Send + 'static,
    {
        self.after_tool = Some(Arc::new(move |e| Box::pin(f(e))));
        self
    }
}

impl Hooks {
    /// `before_llm` around one LLM call (the loop's turns, `translate`'s one call): shown
    /// the call as it stands, its override is folded in — messages, tools, and a non-empty
    /// model for this call. Without the hook nothing is copied.
    pub(crate) async fn apply_before_llm(
        &self,
        turn: u32,
        messages: &mut Vec<Value>,
        tools: &mut impl ToolList,
        model: &mut String,
    ) -> Result<(), ClientError> {
        let Some(hook) = &self.before_llm else {
            return Ok(());
        };
        let request = LlmRequest {
            messages: messages.clone(),
            tools: tools.values(),
            model: model.clone(),
            turn,
        };
        let Some(change) = hook(request).await.map_err(ClientError::Hook)? else {
            return Ok(());
        };
        if let Some(m) = change.messages {
            *messages = m;
        }
        if let Some(t) = change.tools {
            tools.replace(t);
        }
        if let Some(m) = change.model.filter(|m| !m.is_empty()) {
            *model = m;
        }
        Ok(())
    }
}

/// The tool declarations of one LLM call, as `before_llm` reads and replaces them.
pub(crate) trait ToolList {
    fn values(&self) -> Vec<Value>;
    fn replace(&mut self, tools: Vec<Value>);
}

impl ToolList for Vec<Value> {
    fn values(&self) -> Vec<Value> {
        self.clone()
    }
    fn replace(&mut self, tools: Vec<Value>) {
        *self = tools;
    }
}

impl ToolList for Declarations {
    fn values(&self) -> Vec<Value> {
        self.to_values()
    }
    fn replace(&mut self, tools: Vec<Value>) {
        *self = Declarations::Listed(tools);
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("before_llm", &self.before_llm.is_some())
            .field("after_llm", &self.after_llm.is_some())
            .field("before_tool", &self.before_tool.is_some())
            .field("after_tool", &self.after_tool.is_some())
            .finish()
    }
}
