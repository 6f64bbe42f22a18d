//! The heartbeat (SPEC §7E): a persona's own clock. Ticks are posted to a [`Ticks`] rail,
//! where they coalesce — however many arrive while the persona is busy, it takes one
//! heartbeat turn next. A turn answering [`HEARTBEAT_OK`] is silent; anything else is a
//! [`Beat::Report`] for the host.
//!
//! Who posts the ticks is the seam: [`Heartbeat::every`] runs a tokio interval, a host's
//! inbound channel or a test posts them by hand. On the §7D agent runtime,
//! [`AgentRuntime::start_agent`](crate::agents::AgentRuntime::start_agent) is the heartbeat:
//! ticks go to the agent's own inbox on the runtime's injectable clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::client::{ClientError, Conversation};

/// The reply that means "nothing needs attention": the turn produces no report.
pub const HEARTBEAT_OK: &str = "HEARTBEAT_OK";

/// The user turn a heartbeat wakes the persona with.
pub const HEARTBEAT_PROMPT: &str = "Heartbeat. Read your HEARTBEAT.md section and follow it. If nothing needs attention, reply HEARTBEAT_OK.";

/// The tick rail: clone it to post from anywhere. Posting while a tick is already pending
/// changes nothing (ticks coalesce).
#[derive(Clone, Debug, Default)]
pub struct Ticks {
    inner: Arc<TicksInner>,
}

#[derive(Debug, Default)]
struct TicksInner {
    pending: AtomicBool,
    notify: Notify,
}

impl Ticks {
    /// Post a tick.
    pub fn post(&self) {
        self.inner.pending.store(true, Ordering::Release);
        self.inner.notify.notify_one();
    }

    /// Is a tick waiting to be taken?
    pub fn is_pending(&self) -> bool {
        self.inner.pending.load(Ordering::Acquire)
    }

    /// Wait for a tick and take it, with every tick that coalesced into it. Cancel-safe.
    pub async fn take(&self) {
        loop {
            if self.inner.pending.swap(false, Ordering::AcqRel) {
                return;
            }
            self.inner.notify.notified().await;
        }
    }
}

/// What one heartbeat turn came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Beat {
    /// The persona answered [`HEARTBEAT_OK`]: nothing to show.
    Silent,
    /// Anything else: the host's to surface.
    Report(String),
}

impl Beat {
    /// Classify a heartbeat turn's reply.
    ///
    /// ```
    /// use toolnexus::persona::Beat;
    /// assert_eq!(Beat::from_reply("HEARTBEAT_OK"), Beat::Silent);
    /// assert_eq!(Beat::from_reply("Reminder: 3pm sync"), Beat::Report("Reminder: 3pm sync".into()));
    /// ```
    pub fn from_reply(reply: &str) -> Beat {
        if reply.contains(HEARTBEAT_OK) {
            Beat::Silent
        } else {
            Beat::Report(reply.to_owned())
        }
    }
}

/// A persona's heartbeat: a [`Ticks`] rail, and optionally the timer posting to it (stopped
/// when the `Heartbeat` is dropped).
#[derive(Debug, Default)]
pub struct Heartbeat {
    ticks: Ticks,
    timer: Option<AbortHandle>,
}

impl Heartbeat {
    /// A heartbeat whose ticks the host posts ([`Heartbeat::ticks`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// A heartbeat ticking every `period` on a tokio interval (first tick one period from
    /// now; ticks missed while the process was busy are skipped, not replayed). Needs a
    /// tokio runtime.
    pub fn every(period: Duration) -> Self {
        let ticks = Ticks::default();
        let poster = ticks.clone();
        let timer = tokio::spawn(async move {
            let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                interval.tick().await;
                poster.post();
            }
        })
        .abort_handle();
        Self {
            ticks,
            timer: Some(timer),
        }
    }

    /// The rail its ticks arrive on.
    pub fn ticks(&self) -> &Ticks {
        &self.ticks
    }

    /// Wait for the next tick, then run one heartbeat turn on `conversation` (whose client
    /// carries the persona's soul as its system prompt).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolnexus::client::transport::{from_fn, HttpResponse};
    /// use toolnexus::client::{Client, Style};
    /// use toolnexus::persona::{Beat, Heartbeat};
    /// use toolnexus::Toolkit;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let model = from_fn(|_req| async {
    ///     Ok(HttpResponse::json(&json!({"choices": [{"message": {"role": "assistant", "content": "HEARTBEAT_OK"}}]})))
    /// });
    /// let client = Client::builder().base_url("http://127.0.0.1:9/v1").style(Style::OpenAi)
    ///     .model("m").api_key("k").transport(model).build().unwrap();
    /// let mut conversation = client.conversation(&Toolkit::default());
    /// let heartbeat = Heartbeat::new();
    /// heartbeat.ticks().post();
    /// assert_eq!(heartbeat.beat(&mut conversation).await.unwrap(), Beat::Silent);
    /// # });
    /// ```
    pub async fn beat(&self, conversation: &mut Conversation) -> Result<Beat, ClientError> {
        self.ticks.take().await;
        let result = conversation.send(HEARTBEAT_PROMPT).await?;
        Ok(Beat::from_reply(&result.text))
    }

    /// Beat forever: every report goes to `on_beat`, silent beats go nowhere. Returns the
    /// first error a turn meets.
    pub async fn run(&self, conversation: &mut Conversation, mut on_beat: impl FnMut(String)) -> ClientError {
        loop {
            match self.beat(conversation).await {
                Ok(Beat::Silent) => {}
                Ok(Beat::Report(text)) => on_beat(text),
                Err(e) => return e,
            }
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        if let Some(timer) = &self.timer {
            timer.abort();
        }
    }
}
