//! The turn gate (SPEC §7D backpressure gate 3): a global cap on model HTTP calls in
//! flight. It wraps ONLY the HTTP call — never a whole run, which would deadlock a parent
//! waiting on children that need the slot it holds — and its permit is an RAII value
//! owned by the call's future and its response body, so a cancelled, timed-out or
//! panicking turn can never leak it. (Gates 1 and 2, the inbox cap and the per-parent
//! concurrency, are checked inside the runtime's verbs, atomically with them.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt as _;
use futures::future::BoxFuture;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::client::{HttpRequest, HttpResponse, HttpTransport, TransportError};

/// The shared cap and its counters.
#[derive(Debug)]
pub(crate) struct TurnGate {
    permits: Arc<Semaphore>,
    cap: usize,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

/// One held slot: the permit and the in-flight count, both released on drop.
struct Slot {
    gate: Arc<TurnGate>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.gate.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl TurnGate {
    pub fn new(cap: usize) -> Arc<Self> {
        let cap = cap.max(1);
        Arc::new(Self {
            permits: Arc::new(Semaphore::new(cap)),
            cap,
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    async fn enter(self: &Arc<Self>) -> Result<Slot, TransportError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| TransportError::fatal("the agent runtime's turn gate is closed"))?;
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        Ok(Slot {
            gate: self.clone(),
            _permit: permit,
        })
    }

    /// Model calls in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The most model calls ever in flight at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// Whether every permit is back.
    pub fn is_idle(&self) -> bool {
        self.in_flight() == 0 && self.permits.available_permits() == self.cap
    }
}

/// The transport every handle's client talks through: the host's transport behind the gate.
pub(crate) struct GatedTransport {
    pub gate: Arc<TurnGate>,
    pub inner: Arc<dyn HttpTransport>,
}

impl HttpTransport for GatedTransport {
    fn post(&self, request: HttpRequest) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
        Box::pin(async move {
            let slot = self.gate.enter().await?;
            let mut response = self.inner.post(request).await?;
            // The body is part of the call: the slot rides the stream and is released
            // when the client has read (or dropped) it.
            response.body = response
                .body
                .map(move |chunk| {
                    let _held = &slot;
                    chunk
                })
                .boxed();
            Ok(response)
        })
    }
}
