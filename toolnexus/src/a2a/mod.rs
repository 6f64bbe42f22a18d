//! A2A agents in both directions.
//!
//! - **Outbound** (SPEC §7A, feature `a2a`): [`Agent::resolve`] reads a remote agent's
//!   card and [`Agent::tools`] turns each of its skills into a [`Tool`](crate::Tool) that
//!   submits a task and polls it to the end. The config file's `agents` block is read by
//!   [`config`].
//! - **Inbound** (SPEC §7B, features `a2a` + `serve` + `client`): `A2aServer` serves a
//!   toolkit as an agent — its skills on the card, each task fulfilled by the client loop.
//!
//! Both speak the SPEC's JSON subset and A2A 1.0, the dialect of the `a2a-sdk` (Python)
//! and `@a2a-js/sdk` (JavaScript) 1.x: see [`Dialect`].

mod agent;
pub mod card;
pub mod config;
#[cfg(all(feature = "serve", feature = "client"))]
pub mod server;
pub mod store;
pub mod wire;

pub use agent::{Agent, AgentOptions, DEFAULT_POLL_EVERY, DEFAULT_TIMEOUT, ResolveError};
pub use card::{AgentCard, AgentInterface, AgentSkill, Provider};
pub use config::{AgentEntry, ConfigError};
#[cfg(all(feature = "serve", feature = "client"))]
pub use server::{A2aConfig, A2aServer, OnTask, TaskEvent};
pub use store::{FileTaskStore, Lease, MemoryTaskStore, TaskStore, TaskStoreError};
pub use wire::{Artifact, Dialect, Message, Part, Role, Task, TaskState, TaskStatus};

/// How a configured agent fared at assembly: the same three states as an MCP server —
/// `connected` (its card resolved and its tools are in the toolkit), `disabled`, or
/// `failed` with the reason (never a header value).
pub type AgentStatus = crate::mcp::McpStatus;
