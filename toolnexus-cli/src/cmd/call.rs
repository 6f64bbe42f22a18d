//! `toolnexus call`: execute one tool and print its result.

use clap::Args;
use serde_json::Value;
use toolnexus::ToolContext;

use super::ToolkitArgs;
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
    pub async fn run(self) -> Result<(), Failure> {
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
        let tk = self.toolkit.build().await?;
        let result = tk.execute(&self.name, args, ToolContext::default()).await;
        tk.close().await;
        println!("{}", result.to_json());
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
