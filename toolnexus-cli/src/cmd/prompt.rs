//! `toolnexus prompt`: print the skills catalog for a system prompt.

use clap::Args;
use toolnexus::{Toolkit, ToolkitOptions};

use super::{SkillsArgs, print_out};
use crate::Failure;

/// Print `skills_prompt()` for the given skills roots.
#[derive(Debug, Args)]
pub struct Prompt {
    #[command(flatten)]
    skills: SkillsArgs,
}

impl Prompt {
    pub async fn run(self) -> Result<(), Failure> {
        let options = self.skills.apply(ToolkitOptions::default().builtins(false))?;
        let tk = Toolkit::build(options).await.map_err(Failure::new)?;
        print_out(&format!("{}\n", tk.skills_prompt()))
    }
}
