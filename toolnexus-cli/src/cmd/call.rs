//! `toolnexus call`: execute one tool and print its result.

use clap::Args;
use serde_json::Value;
use toolnexus::mcp::McpStatus;
use toolnexus::{ToolContext, ToolResult, Toolkit};

use super::{Signals, ToolkitArgs, print_out};
use crate::Failure;

/// Call one tool and print its `ToolResult` as JSON (exit 1 when the result is an error).
#[derive(Debug, Args)]
pub struct Call {
    /// The tool's name, as `toolnexus tools` lists it.
    name: String,
    /// The arguments, a JSON object.
    #[arg(value_name = "ARGS_JSON", default_value = "{}")]
    args: String,
    #[command(flatten)]
    toolkit: ToolkitArgs,
}

impl Call {
    pub async fn run(self, signals: &mut Signals) -> Result<(), Failure> {
        let args: Value = serde_json::from_str(&self.args).map_err(|e| Failure {
            message: format!("ARGS_JSON is not valid JSON: {e}"),
            code: 2,
        })?;
        if !args.is_object() {
            return Err(Failure {
                message: "ARGS_JSON must be a JSON object".into(),
                code: 2,
            });
        }
        let name = self.name;
        let result = signals
            .with_toolkit(&self.toolkit, async |tk| {
                Ok(match failed_server(tk, &name) {
                    Some(failure) => failure,
                    None => tk.execute(&name, args, ToolContext::default()).await,
                })
            })
            .await?;
        print_out(&format!("{}\n", result.to_json()))?;
        if result.is_error {
            Err(Failure {
                message: String::new(),
                code: 1,
            })
        } else {
            Ok(())
        }
    }
}

/// A tool missing because the MCP server whose name prefixes it failed: says which server
/// and why, where the toolkit alone could only say `unknown tool`.
fn failed_server(tk: &Toolkit, name: &str) -> Option<ToolResult> {
    if tk.get(name).is_some() {
        return None;
    }
    // MCP tools are named `SERVER_TOOL` (both sanitized); the longest matching server wins.
    let statuses = tk.mcp_status();
    let (server, reason) = statuses
        .iter()
        .filter_map(|(server, status)| match status {
            McpStatus::Failed { reason } => Some((server, reason)),
            _ => None,
        })
        .filter(|(server, _)| {
            name.strip_prefix(&toolnexus::sanitize(server))
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('_'))
        })
        .max_by_key(|(server, _)| server.len())?;
    Some(ToolResult::failure(format!(
        "tool {name} is unavailable: MCP server \"{server}\" failed: {reason}"
    )))
}
