//! The injectable clock (SPEC §7D "runtime obligations"): every timer, timeout and deadline
//! of the agent runtime — `wait` timeouts, the close grace period, `max_wall_ms` — reads
//! this seam, so a test drives time by hand with a [`VirtualClock`].

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::oneshot;

/// A source of monotonic time and sleeps.
pub trait Clock: Send + Sync {
    /// Time elapsed since the clock's origin.
    fn now(&self) -> Duration;
    /// Resolves once `d` has passed on this clock.
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()>;
}

/// Real time: tokio's timer, measured from when the clock was made.
#[derive(Clone, Debug)]
pub struct SystemClock {
    origin: tokio::time::Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        Self {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(d))
    }
}

/// Time that moves only when [`advance`](VirtualClock::advance)d: deterministic tests of
/// deadlines without waiting for them.
///
/// ```
/// use std::time::Duration;
/// use toolnexus::agents::{Clock, VirtualClock};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let clock = VirtualClock::new();
/// let nap = clock.sleep(Duration::from_secs(60));
/// assert_eq!(clock.sleepers(), 1);
/// clock.advance(Duration::from_secs(60));
/// nap.await; // resolved by the advance, not by a real minute
/// assert_eq!(clock.now(), Duration::from_secs(60));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct VirtualClock {
    inner: Arc<Mutex<Timeline>>,
}

#[derive(Default)]
struct Timeline {
    now: Duration,
    sleepers: Vec<(Duration, oneshot::Sender<()>)>,
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Move time forward by `d`, waking every sleep that is now due.
    pub fn advance(&self, d: Duration) {
        let due = {
            let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            t.now += d;
            let now = t.now;
            let (due, later) = std::mem::take(&mut t.sleepers)
                .into_iter()
                .partition::<Vec<_>, _>(|(at, _)| *at <= now);
            t.sleepers = later;
            due
        };
        for (_, tx) in due {
            let _ = tx.send(());
        }
    }

    /// Sleeps registered and not yet due (dropped sleeps are pruned on the next advance).
    pub fn sleepers(&self) -> usize {
        let t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        t.sleepers.iter().filter(|(_, tx)| !tx.is_closed()).count()
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).now
    }

    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        let (tx, rx) = oneshot::channel();
        {
            let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if d.is_zero() {
                return Box::pin(async {});
            }
            let at = t.now + d;
            t.sleepers.push((at, tx));
        }
        Box::pin(async move {
            // A dropped clock never fires: the sleep then never ends, like a real timer
            // that is never reached.
            if rx.await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

impl fmt::Debug for VirtualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VirtualClock").field("now", &self.now()).finish()
    }
}
