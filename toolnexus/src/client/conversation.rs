//! [`Conversation`]: a transcript kept in a value of yours, continued by each
//! [`send`](Conversation::send) — `run_with` with the transcript as history.

use serde_json::Value;

use super::{Client, ClientError, Prompt, RunOptions, RunResult};
use crate::toolkit::Toolkit;

/// A stateful conversation: each [`send`](Conversation::send) continues the transcript.
/// For one kept in the client's store under an id instead, see
/// [`RunOptions::conversation`].
#[derive(Debug)]
pub struct Conversation {
    client: Client,
    toolkit: Toolkit,
    messages: Vec<Value>,
}

impl Client {
    /// A conversation over `toolkit` whose transcript lives in the returned value.
    pub fn conversation(&self, toolkit: &Toolkit) -> Conversation {
        Conversation {
            client: self.clone(),
            toolkit: toolkit.clone(),
            messages: Vec::new(),
        }
    }
}

impl Conversation {
    /// Send the next user turn.
    pub async fn send(&mut self, prompt: impl Into<Prompt>) -> Result<RunResult, ClientError> {
        let opts = RunOptions::new(&self.toolkit).history(self.messages.clone());
        let result = self.client.run_with(prompt, opts).await?;
        self.messages = result.messages.clone();
        Ok(result)
    }

    /// The transcript so far.
    pub fn messages(&self) -> &[Value] {
        &self.messages
    }

    /// Forget the transcript.
    pub fn reset(&mut self) {
        self.messages.clear();
    }
}
