//! `serve(agent)` (SPEC §7D Level 1): §7B's A2A serve of an agent, unchanged. The seam is
//! thin: the A2A profile of [`crate::serve`] runs its usual client loop over an in-process
//! model whose one "generation" is a whole run of the agent on the runtime — a fresh handle
//! per task, closed when it ends — so the card, the JSON-RPC methods, the task store, every
//! limit and every guard (Host, Origin, bearer token) are the served listener's own.

use super::agent::Agent;
use super::error::AgentError;
use super::handle::TaskStatus;
use super::runtime::RuntimeBuilder;
use crate::a2a::A2aConfig;
use crate::assembly::ToolkitOptions;
use crate::client::{Client, Generation};
use crate::serve::{A2aProfile, ServeHandle, ServeOptions};
use crate::skill::SkillDef;
use crate::toolkit::Toolkit;

impl Agent {
    /// This agent as an A2A agent (feature `serve`): the card's name and description default
    /// to the agent's name and `does`, and its one skill is the agent (id = name,
    /// description = `does`); each `SendMessage` runs the agent on the latest user
    /// text. A run that ends other than `done` fails its task with `[status] text` (a
    /// suspension cannot be answered over A2A yet). It is served at `addr` by
    /// [`crate::serve::serve`] with `options` (token, hosts, limits); `options.a2a` is set here.
    ///
    /// ```
    /// use toolnexus::a2a::A2aConfig;
    /// use toolnexus::agents::{agent, AgentRuntime};
    /// use toolnexus::client::{Client, Style};
    /// use toolnexus::serve::ServeOptions;
    ///
    /// let client = Client::builder()
    ///     .base_url("http://127.0.0.1:9/v1")
    ///     .style(Style::OpenAi)
    ///     .model("m")
    ///     .api_key("k");
    /// let rt = AgentRuntime::builder(client);
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let served = agent("explore", "read-only research")
    ///     .serve(rt, A2aConfig::default(), "127.0.0.1:0", ServeOptions::default())
    ///     .await
    ///     .unwrap();
    /// let card = served.a2a().unwrap().card();
    /// assert_eq!((card.name.as_str(), card.description.as_str()), ("explore", "read-only research"));
    /// assert_eq!(card.skills[0].id, "explore");
    /// served.stop().await;
    /// # });
    /// ```
    pub async fn serve(
        &self,
        runtime: RuntimeBuilder,
        mut config: A2aConfig,
        addr: &str,
        options: ServeOptions,
    ) -> Result<ServeHandle, AgentError> {
        let rt = self.runtime(runtime)?;
        config.name.get_or_insert_with(|| self.name().to_owned());
        config
            .description
            .get_or_insert_with(|| self.def().does().to_owned());
        let name = self.name().to_owned();
        let client = Client::in_process(name.clone(), move |req| {
            let (rt, name) = (rt.clone(), name.clone());
            async move {
                let prompt = req
                    .messages
                    .iter()
                    .rev()
                    .find(|m| m["role"] == "user")
                    .and_then(|m| m["content"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                let h = rt.spawn(&rt.root(), &name, None).map_err(|e| e.to_string())?;
                rt.wake(&h, Some(prompt)).map_err(|e| e.to_string())?;
                let r = rt.wait(&h, None).await;
                rt.close(&h).await;
                match r.status {
                    TaskStatus::Done => Ok(Generation::text(r.text)),
                    status => Err(format!("[{status}] {}", r.text)),
                }
            }
        })
        .build()?;
        // The card lists skills, never tools: the agent is advertised as one data skill.
        let skill = SkillDef::new(self.name(), self.def().does()).with_description(self.def().does());
        let card = Toolkit::build(ToolkitOptions::default().builtins(false).skill(skill)).await?;
        let options = ServeOptions {
            a2a: Some(A2aProfile::new(client, config)),
            ..options
        };
        Ok(crate::serve::serve(&card, addr, options).await?)
    }
}
