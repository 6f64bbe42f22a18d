//! One module per subcommand; [`ToolkitArgs`] are the flags every toolkit-building
//! subcommand shares.

pub mod call;
pub mod prompt;
pub mod run;
pub mod serve;
pub mod tools;

/// A `--style` flag's value: a usage error when it names no style.
pub fn parse_style(text: &str) -> Result<Style, Failure> {
    text.parse().map_err(|e: UnknownStyle| Failure::usage(e))
}

use std::path::PathBuf;

use clap::Args;
use toolnexus::client::{Style, UnknownStyle};
use toolnexus::{Toolkit, ToolkitOptions};

use crate::Failure;

/// How to assemble the toolkit.
#[derive(Debug, Clone, Args)]
pub struct ToolkitArgs {
    /// MCP config file (`mcpServers` | `servers` | `mcp`, optional top-level `builtins`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub skills: SkillsArgs,
    /// Leave the ten built-in tools out.
    #[arg(long)]
    pub no_builtins: bool,
}

/// Where skills come from.
#[derive(Debug, Clone, Args)]
pub struct SkillsArgs {
    /// A skills root searched for `**/SKILL.md` (repeatable).
    #[arg(long = "skills", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

impl SkillsArgs {
    fn apply(&self, mut options: ToolkitOptions) -> Result<ToolkitOptions, Failure> {
        for dir in &self.dirs {
            // The library only warns about a missing root; on the command line it is a typo.
            if !dir.is_dir() {
                return Err(Failure::new(format!("skills dir not found: {}", dir.display())));
            }
            options = options.skills_dir(dir);
        }
        Ok(options)
    }
}

impl ToolkitArgs {
    /// Builds the toolkit these flags describe.
    pub async fn build(&self) -> Result<Toolkit, Failure> {
        self.build_with(ToolkitOptions::default()).await
    }

    /// Builds the toolkit these flags describe on top of a subcommand's own `options`.
    pub async fn build_with(&self, options: ToolkitOptions) -> Result<Toolkit, Failure> {
        let mut options = self.skills.apply(options)?;
        if let Some(config) = &self.config {
            options = options.config(config.clone());
        }
        if self.no_builtins {
            options = options.builtins(false);
        }
        Toolkit::build(options).await.map_err(Failure::new)
    }
}
