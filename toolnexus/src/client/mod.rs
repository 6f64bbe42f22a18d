//! The unified LLM client (SPEC §8, §10, §11): a base URL, a style and a model, and a
//! [`Toolkit`](crate::Toolkit) runs as an agent.
//!
//! # Entry points
//!
//! Every run goes one way: a prompt and [`RunOptions`] into the loop (`run.rs`), a
//! [`RunResult`] out. The other entry points are that path with one option set, or one
//! provider call without the loop.
//!
//! | you want | call | built on |
//! |---|---|---|
//! | one prompt over a toolkit | [`Client::run`] | `run_with(prompt, RunOptions::new(&toolkit))` |
//! | history, cancellation, text deltas, per-run hooks or metrics sink | [`Client::run_with`] | the loop |
//! | the run as a stream of [`StreamEvent`]s | [`Client::stream`] | the loop, on a task |
//! | a conversation kept in the client's [`ConversationStore`] | [`Client::ask`] | `run_with(prompt, opts.conversation(id))` |
//! | a conversation kept in your own value | [`Client::conversation`] → [`Conversation::send`] | `run_with(prompt, opts.history(..))` |
//! | to continue a run that halted on a suspension | [`Client::run_with_answer`] | the loop, with no new user turn |
//! | one provider call for an OpenAI-shaped request (no loop) | [`Client::translate`] | the provider layer |
//!
//! A conversation is a transcript (`RunResult::messages`) passed back as the next run's
//! history: [`RunOptions::history`] takes it from you, [`RunOptions::conversation`] loads
//! and saves it in the store under an id, and a [`Conversation`] holds it for you.
//!
//! # Modules
//!
//! `builder` builds a [`Client`]; `run` is the loop; `provider` is one provider call with
//! its retries ([`resilience`]); `sse` and [`wire`] read and write the two dialects;
//! `stream`, `conversation`, [`translate`] and `in_process` are the entry points above;
//! [`hooks`], [`metrics`], [`store`] and [`transport`] are the seams a host plugs into.
//!
//! ```
//! use serde_json::json;
//! use toolnexus::client::transport::{from_fn, HttpResponse};
//! use toolnexus::client::{Client, RunStatus, Style};
//! use toolnexus::{Tool, ToolResult, Toolkit};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A scripted model: first asks for `add`, then answers.
//! let turn = std::sync::atomic::AtomicUsize::new(0);
//! let http = from_fn(move |_req| {
//!     let n = turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
//!     async move {
//!         Ok(HttpResponse::json(&if n == 0 {
//!             json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
//!                 {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}}]}}]})
//!         } else {
//!             json!({"choices": [{"message": {"role": "assistant", "content": "2 + 3 = 5"}}]})
//!         }))
//!     }
//! });
//! let add = Tool::new("add", |args: serde_json::Value, _| async move {
//!     ToolResult::success(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))
//! });
//! let client = Client::builder()
//!     .base_url("https://openrouter.ai/api/v1")
//!     .style(Style::OpenAi)
//!     .model("deepseek/deepseek-chat")
//!     .api_key("sk-test")
//!     .transport(http)
//!     .build()
//!     .unwrap();
//! let result = client.run("What is 2 + 3?", &Toolkit::new([add])).await.unwrap();
//! assert_eq!(result.status, RunStatus::Done);
//! assert_eq!(result.text, "2 + 3 = 5");
//! assert_eq!(result.tool_calls[0].output, "5");
//! # });
//! ```

mod builder;
mod cache;
mod conversation;
mod error;
mod event;
mod gemini;
pub mod hooks;
mod in_process;
mod keys;
pub mod metrics;
mod models;
mod options;
mod provider;
mod relay;
pub mod resilience;
mod result;
mod run;
mod sse;
pub mod store;
mod stream;
pub mod suspensions;
mod tiers;
pub mod translate;
pub mod transport;
pub mod wire;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::suspend::WaitFor;

pub use builder::{ClientBuilder, DEFAULT_MAX_RETRY_AFTER, DEFAULT_READ_TIMEOUT, DEFAULT_TIMEOUT};
pub use cache::PromptCache;
pub use conversation::Conversation;
pub use error::{BoxError, ClientError, ConfigError, DecodeError, ResumeError};
pub use event::StreamEvent;
pub use hooks::Hooks;
pub use in_process::{Generate, GenerateRequest, GeneratedCall, Generation};
pub use metrics::{MetricEvent, MetricsRegistry, OnMetric};
pub use models::ModelInfo;
pub use options::{OnText, OnToolProgress, Prompt, RunOptions};
pub use provider::BodyTransform;
pub use relay::{RelayResult, relay_answer, relay_tool};
pub use resilience::{ErrorDecision, ErrorInfo, OnError};
pub use result::{Limit, RunResult, RunStatus, ToolCallRecord};
pub use store::{ConversationStore, FileStore, InMemoryStore, StoreError, Version, Versioned};
pub use suspensions::{
    FileSuspensions, InMemorySuspensions, Recorded, Suspension, SuspensionError, SuspensionStore,
};
pub use tiers::{CALL_TOOL, TOOL_SEARCH, ToolPlan, ToolTiers};
pub use transport::{HttpRequest, HttpResponse, HttpTransport, ReqwestTransport, TransportError};
pub use wire::{Style, UnknownStyle, Usage};

/// The unified client. Cheap to clone (one `Arc`); safe to share across tasks.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

/// What a built client holds: the provider it talks to and how its runs go.
pub(crate) struct Inner {
    provider: provider::Provider,
    model: String,
    system_prompt: Option<String>,
    max_turns: u32,
    timeout: Option<Duration>,
    hooks: Hooks,
    on_metric: Option<OnMetric>,
    wait_for: Option<WaitFor>,
    store: Arc<dyn ConversationStore>,
    suspensions: Option<Arc<dyn SuspensionStore>>,
    registry: MetricsRegistry,
    encoder: wire::PartEncoder,
    in_process: bool,
    tiers: Option<ToolTiers>,
    plans: tiers::Plans,
}

impl Inner {
    pub(crate) fn tool_plan(&self, toolkit: &crate::Toolkit) -> Option<Arc<ToolPlan>> {
        let tiers = self.tiers.as_ref()?;
        (!toolkit.is_empty()).then(|| self.plans.get(tiers, toolkit))
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.inner.provider.shown_endpoint())
            .field("style", &self.inner.provider.style)
            .field("model", &self.inner.model)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The style this client speaks.
    pub fn style(&self) -> Style {
        self.inner.provider.style
    }

    /// The configured model id.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The conversation store (the one passed in, else the default in-memory one).
    pub fn store(&self) -> Arc<dyn ConversationStore> {
        self.inner.store.clone()
    }

    /// The tool tiers this client uses for `toolkit` — built on first use, then kept —
    /// or `None` without [`tool_tiers`](ClientBuilder::tool_tiers).
    pub fn tool_plan(&self, toolkit: &crate::Toolkit) -> Option<Arc<ToolPlan>> {
        self.inner.tool_plan(toolkit)
    }

    /// The Prometheus text of everything this client recorded (SPEC §8).
    pub fn metrics(&self) -> String {
        self.inner.registry.render()
    }
}
