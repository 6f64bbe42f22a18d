//! `toolnexus tools`: list the resolved tools.

use clap::{Args, ValueEnum};
use serde_json::Value;
use toolnexus::Toolkit;

use super::{Signals, ToolkitArgs, print_out};
use crate::Failure;

/// List the tools of the toolkit the flags describe.
#[derive(Debug, Args)]
pub struct Tools {
    #[command(flatten)]
    toolkit: ToolkitArgs,
    /// Output format (default: a readable table).
    #[arg(long, value_enum)]
    format: Option<Format>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// One name per line.
    Names,
    /// The OpenAI `tools` array.
    Openai,
    /// The Anthropic `tools` array.
    Anthropic,
    /// The Gemini `tools` array.
    Gemini,
}

/// Widest description shown in the table, in characters.
const DESCRIPTION_WIDTH: usize = 72;

impl Tools {
    pub async fn run(self, signals: &mut Signals) -> Result<(), Failure> {
        let format = self.format;
        signals
            .with_toolkit(&self.toolkit, async |tk| {
                print_out(&match format {
                    None => table(tk),
                    Some(Format::Names) => tk.tool_names().iter().map(|n| format!("{n}\n")).collect(),
                    Some(Format::Openai) => json_line(tk.to_openai()),
                    Some(Format::Anthropic) => json_line(tk.to_anthropic()),
                    Some(Format::Gemini) => json_line(tk.to_gemini()),
                })
            })
            .await
    }
}

fn json_line(value: Vec<Value>) -> String {
    format!("{}\n", Value::Array(value))
}

/// `NAME  SOURCE  DESCRIPTION` columns, the description cut to its first line.
fn table(tk: &Toolkit) -> String {
    let name_w = tk
        .tools()
        .map(|t| t.name().chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let source_w = tk
        .tools()
        .map(|t| t.source().as_str().len())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut out = format!("{:name_w$}  {:source_w$}  DESCRIPTION\n", "NAME", "SOURCE");
    for t in tk.tools() {
        let first = t.description().lines().next().unwrap_or("");
        let mut description: String = first.chars().take(DESCRIPTION_WIDTH).collect();
        if first.chars().count() > DESCRIPTION_WIDTH {
            description.push('…');
        }
        let line = format!(
            "{:name_w$}  {:source_w$}  {description}",
            t.name(),
            t.source().as_str()
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!("{} tools\n", tk.len()));
    out
}
