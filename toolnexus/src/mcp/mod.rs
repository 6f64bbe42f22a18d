//! MCP in both directions: servers as tool sources (SPEC §2) and a toolkit served as an MCP
//! server (SPEC §7C).
//!
//! The MCP SDK underneath (`rmcp`) stays out of this API: configuration, status and errors
//! are our own types, so an SDK upgrade never breaks a user.
//!
//! - [`config`]: the `mcp.json` format ([`McpConfig`], [`ServerConfig`]).
//! - `load` / [`McpSource`] / `list_mcp_tools` (feature `mcp`): connect, list, call; over
//!   stdio, streamable HTTP, or the legacy HTTP+SSE transport a URL falls back to. Each
//!   server's session outlives its connection: a lost server is restarted on the next call
//!   (`failed` after three attempts), `tools/list_changed` re-lists it
//!   (`Toolkit::refresh_mcp_tools` applies the list), progress reaches the call's
//!   `ToolContext`, and a dropped call sends `notifications/cancelled`.
//! - `serve` (feature `serve`): the MCP profile a [`Toolkit`](crate::Toolkit) is served
//!   with at `/mcp` (mounted by `crate::serve`), on stateful sessions; a served tool's
//!   suspension is asked of the client through MCP elicitation (`elicitation`).

use std::fmt;

use serde::{Serialize, Serializer};

#[cfg(feature = "mcp")]
mod client;
pub mod config;
#[cfg(feature = "serve")]
mod elicitation;
#[cfg(feature = "mcp")]
mod resources;
#[cfg(feature = "mcp")]
mod schema;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "mcp")]
mod session;
#[cfg(feature = "mcp")]
mod sse;
#[cfg(feature = "mcp")]
mod stdio;
#[cfg(feature = "mcp")]
mod wire;

#[cfg(all(feature = "mcp", feature = "serve"))]
pub(crate) use client::tool_list_changes;
#[cfg(feature = "mcp")]
pub use client::{LoadOptions, McpInventory, McpSource, ToolInfo, list_mcp_tools, load};
pub use config::{DEFAULT_TIMEOUT, McpConfig, Secrets, ServerConfig, Transport, expand_env};

/// What [`Toolkit::mcp_status`](crate::Toolkit::mcp_status) returns: the load's statuses,
/// and `failed` for a server that was lost and could not be restarted.
pub(crate) fn live_status(toolkit: &crate::Toolkit) -> McpStatuses {
    #[cfg(feature = "mcp")]
    {
        client::live_status(toolkit)
    }
    #[cfg(not(feature = "mcp"))]
    {
        toolkit.extension::<McpStatuses>().cloned().unwrap_or_default()
    }
}

/// Each configured server's [`McpStatus`], in config order (what
/// [`Toolkit::mcp_status`](crate::Toolkit::mcp_status) returns).
pub type McpStatuses = indexmap::IndexMap<String, McpStatus>;

/// The state of one configured server after a load (SPEC §2 "Status").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpStatus {
    /// Connected, and its tools are in the toolkit.
    Connected,
    /// Skipped: `disabled: true` or `enabled: false`.
    Disabled,
    /// Could not be used; the toolkit was built without it.
    Failed {
        /// Why, for logs (never contains header values).
        reason: String,
    },
}

impl McpStatus {
    /// The wire label: `connected`, `disabled` or `failed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            McpStatus::Connected => "connected",
            McpStatus::Disabled => "disabled",
            McpStatus::Failed { .. } => "failed",
        }
    }

    /// The failure reason, when failed.
    pub fn reason(&self) -> Option<&str> {
        match self {
            McpStatus::Failed { reason } => Some(reason),
            _ => None,
        }
    }
}

impl fmt::Display for McpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serializes as the bare label, like the other ports' status maps.
impl Serialize for McpStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why an MCP configuration could not be used, or a load could not run.
/// Per-server connection failures are not errors: they are [`McpStatus::Failed`].
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The config file could not be read.
    #[error("cannot read MCP config {file}: {message}")]
    Read {
        /// The file path.
        file: String,
        /// The OS error.
        message: String,
    },
    /// The document is not JSON, or not shaped like an MCP config.
    #[error("malformed MCP config {file}: {message}")]
    Json {
        /// The file path, or `<inline>`.
        file: String,
        /// What is wrong (with line and column for a syntax error).
        message: String,
    },
    /// One server entry is malformed.
    #[error("MCP config {file}: server \"{server}\": {message}")]
    Server {
        /// The file path, or `<inline>`.
        file: String,
        /// The server's key.
        server: String,
        /// What is wrong with the entry.
        message: String,
    },
    /// The caller's cancellation token fired during a load; everything connected so far
    /// was shut down.
    #[error("MCP load cancelled")]
    Cancelled,
}

crate::debug_as_display!(McpError);
