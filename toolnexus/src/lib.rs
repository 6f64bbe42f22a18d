//! # toolnexus
//!
//! One uniform set of tools for any LLM — your own Rust functions, MCP servers, `SKILL.md`
//! skills, built-in shell and file tools, HTTP endpoints — plus the loop that drives a model
//! with them. The Rust member of the toolnexus family: byte-compatible with the other ports
//! (SPEC `muthuishere/toolnexus`).
//!
//! ```
//! use serde_json::json;
//! use toolnexus::{Tool, ToolContext, ToolResult, Toolkit};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let lookup = Tool::new("lookup", |args: serde_json::Value, _: ToolContext| async move {
//!     match args["id"].as_str() {
//!         Some(id) => ToolResult::success(format!("customer {id}")),
//!         // The model reads this and calls again with an id.
//!         None => ToolResult::failure("missing required argument: id"),
//!     }
//! })
//! .with_description("Look a customer up by id");
//! let tk = Toolkit::new([lookup]);
//! let r = tk.execute("lookup", json!({}), ToolContext::default()).await;
//! assert_eq!(r.to_json(), r#"{"output":"missing required argument: id","isError":true}"#);
//! let r = tk.execute("lookup", json!({"id": "42"}), ToolContext::default()).await;
//! assert_eq!(r.to_json(), r#"{"output":"customer 42","isError":false}"#);
//! # });
//! ```
#![warn(missing_docs)]

// `#[tool]` in this crate's own tests and doc tests reaches it as `::toolnexus`.
extern crate self as toolnexus;

/// `Debug` that prints the `Display` text. `main` returning `Result<_, Box<dyn Error>>`
/// reports an error with `{:?}`, and there the message is what helps, not the variant.
macro_rules! debug_as_display {
    ($t:ty) => {
        impl ::std::fmt::Debug for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(self, f)
            }
        }
    };
}
pub(crate) use debug_as_display;

#[cfg(feature = "a2a")]
pub mod a2a;
#[cfg(feature = "acp")]
pub mod acp;
pub mod adapter;
#[cfg(feature = "client")]
pub mod agents;
pub mod assembly;
#[cfg(feature = "builtins")]
pub mod builtin;
#[cfg(any(feature = "mcp", feature = "acp"))]
mod child;
#[cfg(feature = "client")]
pub mod classifier;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod compaction;
pub mod content;
pub mod context;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "client")]
pub mod judge;
pub mod mcp;
pub mod native;
#[cfg(any(
    feature = "client",
    feature = "mcp",
    feature = "http",
    feature = "builtins",
    feature = "a2a"
))]
mod net;
#[cfg(feature = "client")]
pub mod persona;
pub mod result;
pub mod schema;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "skills")]
pub mod skill;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub mod store;
pub mod suspend;
pub mod tool;
pub mod toolkit;
#[cfg(any(feature = "skills", feature = "builtins"))]
mod walk;
#[cfg(any(feature = "skills", feature = "http"))]
mod yaml;

pub use assembly::{BuildError, ToolkitOptions};
pub use content::ContentPart;
pub use context::{CancellationToken, OnElicit, OnProgress, Progress, ToolContext};
pub use native::{Args, BuildTool, IntoToolResult, Json, State, ToolDef, native_tool};
pub use result::ToolResult;
pub use suspend::{Answer, Request};
pub use tool::{Tool, ToolAnnotations, ToolFuture, ToolSource, sanitize};
pub use toolkit::{Closeable, Toolkit};
pub use toolnexus_macros::{agents, tool, toolkit};

/// Re-exported so a user's schemars version can never skew against ours.
pub use schemars;

/// Paths the macro-generated code reaches its dependencies through. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::native::same_name;
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
