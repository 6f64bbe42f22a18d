//! The heartbeat on the runtime (SPEC §7E): [`AgentRuntime::start_agent`] spawns a
//! long-lived agent under the root and, every period of the runtime's clock, posts a timer
//! tick to its own inbox and wakes it only when it is idle. Ticks that arrive while a beat
//! is still running stay in the inbox and coalesce into the next idle turn. The reply is
//! classified by [`Beat::from_reply`]: `HEARTBEAT_OK` is silent, anything else reaches the
//! host's `on_beat`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::AbortHandle;

use super::delivery::InboxItem;
use super::error::SpawnError;
use super::handle::{Handle, HandleState};
use super::runtime::AgentRuntime;
use crate::persona::{Beat, HEARTBEAT_PROMPT};

/// A started agent: its handle, and the heartbeat posting to it (stopped on drop).
#[derive(Debug)]
pub struct StartedAgent {
    handle: Handle,
    timer: AbortHandle,
}

impl StartedAgent {
    /// The agent's handle (`root/<agent>.N`): post to it, wake it, wait on it.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl Drop for StartedAgent {
    fn drop(&mut self) {
        self.timer.abort();
    }
}

impl AgentRuntime {
    /// `start_agent(agent, every)`: spawn `agent` under the root and beat it every `every`
    /// on the runtime's clock. Each beat posts a tick to the agent's inbox and, when the
    /// agent is idle, wakes it with [`HEARTBEAT_PROMPT`]; a reply that is not
    /// `HEARTBEAT_OK` (and not an error) goes to `on_beat`. The beat never waits for the
    /// turn, so a slow turn cannot delay the clock; a tick refused by a full inbox is
    /// dropped (the pending ones already ask for the same turn). Needs a tokio runtime.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolnexus::agents::{AgentDef, AgentRuntime, Registry, VirtualClock};
    /// use toolnexus::client::transport::{from_fn, HttpResponse};
    /// use toolnexus::client::{Client, Style};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let model = from_fn(|_req| async {
    ///     Ok(HttpResponse::json(&json!({"choices": [{"message": {"role": "assistant", "content": "Reminder: 3pm sync"}}]})))
    /// });
    /// let clock = VirtualClock::new();
    /// let client = Client::builder()
    ///     .base_url("http://127.0.0.1:9/v1")
    ///     .style(Style::OpenAi)
    ///     .model("m")
    ///     .api_key("k")
    ///     .transport(model);
    /// let rt = AgentRuntime::builder(client)
    ///     .clock(Arc::new(clock.clone()))
    ///     .build(Registry::new([AgentDef::new("pal", "a persona")]).unwrap())
    ///     .unwrap();
    /// let reports = Arc::new(Mutex::new(Vec::new()));
    /// let sink = reports.clone();
    /// let started = rt.start_agent("pal", Duration::from_secs(60), move |r| sink.lock().unwrap().push(r)).unwrap();
    /// while clock.sleepers() == 0 { tokio::task::yield_now().await; }
    /// clock.advance(Duration::from_secs(60));
    /// while reports.lock().unwrap().is_empty() { tokio::task::yield_now().await; }
    /// assert_eq!(*reports.lock().unwrap(), ["Reminder: 3pm sync"]);
    /// assert_eq!(started.handle().id(), "root/pal.1");
    /// # });
    /// ```
    pub fn start_agent(
        &self,
        agent: &str,
        every: Duration,
        on_beat: impl FnMut(String) + Send + 'static,
    ) -> Result<StartedAgent, SpawnError> {
        let handle = self.spawn(&self.root(), agent, None)?;
        let rt = self.clone();
        let h = handle.clone();
        let on_beat = Arc::new(Mutex::new(on_beat));
        let timer = tokio::spawn(async move {
            let clock = rt.clock();
            loop {
                clock.sleep(every).await;
                // A closed handle ends the heartbeat; a full inbox only drops this tick.
                if let Err(super::VerbError::Closed(_) | super::VerbError::UnknownHandle(_)) =
                    rt.post(&h, InboxItem::tick())
                {
                    return;
                }
                if rt.inspect(&h).map(|v| v.state).ok() != Some(HandleState::Idle) {
                    continue;
                }
                if rt.wake(&h, Some(HEARTBEAT_PROMPT.to_owned())).is_err() {
                    return;
                }
                // Collected on a task of its own so the clock never waits on a turn.
                let (rt, h, on_beat) = (rt.clone(), h.clone(), on_beat.clone());
                tokio::spawn(async move {
                    let r = rt.wait(&h, None).await;
                    if r.is_error {
                        return;
                    }
                    if let Beat::Report(text) = Beat::from_reply(&r.text) {
                        let mut f = on_beat.lock().unwrap_or_else(|e| e.into_inner());
                        f(text);
                    }
                });
            }
        })
        .abort_handle();
        Ok(StartedAgent { handle, timer })
    }
}
