//! The accept loop under [`Limits`]: HTTP/1.1 connections up to a cap, each watched so a
//! silent socket, a slow request head or a crowd of idle keep-alives cannot hold the server.
//!
//! A connection is *busy* while a request of it is being answered, *reading* from the first
//! byte of a request head until the head is complete, and *idle* otherwise. Idle longer than
//! [`Limits::idle_timeout`] or reading longer than [`Limits::header_read_timeout`], it is
//! closed. At the cap, a new connection closes the longest-idle one; a busy connection is
//! never cut, except by [`ServeHandle::stop`](super::ServeHandle::stop)'s deadline.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::Limits;

/// How long the loop pauses after a failed `accept` (out of file descriptors, say), so it
/// neither spins nor gives up.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `app` on `listener` until `stop` fires, then lets busy connections finish.
pub(super) async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: Arc<Limits>,
    stop: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(
        limits.max_connections.clamp(1, Semaphore::MAX_PERMITS),
    ));
    let registry = Arc::new(Registry::default());
    let mut connections = JoinSet::new();
    loop {
        let tcp = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    tracing::warn!(target: "toolnexus::serve", "accept failed: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let Some(permit) = registry.admit(&permits, &stop).await else {
            break;
        };
        let _ = tcp.set_nodelay(true);
        let conn = registry.open();
        connections.spawn(serve_connection(
            tcp,
            app.clone(),
            limits.clone(),
            conn,
            registry.clone(),
            stop.clone(),
            permit,
        ));
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Every open connection, for choosing whom to close at the cap.
#[derive(Default)]
struct Registry {
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    /// Signalled when a busy connection goes idle: one may be closed for a waiting newcomer.
    went_idle: Notify,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        // Holds handles only; a panic elsewhere cannot leave it half-updated.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open(&self) -> Arc<Conn> {
        let conn = Arc::new(Conn {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            activity: Mutex::new(Activity {
                busy: 0,
                idle_since: Instant::now(),
                head_started: None,
            }),
            changed: Notify::new(),
            close: CancellationToken::new(),
        });
        self.lock().insert(conn.id, conn.clone());
        conn
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// A slot for a new connection: free, or made free by closing the longest-idle one;
    /// when all are busy, the wait lasts until one ends or goes idle. `None` on stop.
    async fn admit(
        &self,
        permits: &Arc<Semaphore>,
        stop: &CancellationToken,
    ) -> Option<OwnedSemaphorePermit> {
        loop {
            if let Ok(permit) = permits.clone().try_acquire_owned() {
                return Some(permit);
            }
            self.close_idlest();
            tokio::select! {
                () = stop.cancelled() => return None,
                permit = permits.clone().acquire_owned() => return permit.ok(),
                () = self.went_idle.notified() => {}
            }
        }
    }

    fn close_idlest(&self) {
        let mut open = self.lock();
        let idlest = open
            .values()
            .filter_map(|c| c.activity().idle_since().map(|since| (since, c.id)))
            .min();
        if let Some((_, id)) = idlest
            && let Some(conn) = open.remove(&id)
        {
            conn.close.cancel();
        }
    }
}

/// One connection's state, shared by its reader, its service and its watchdog.
struct Conn {
    id: u64,
    activity: Mutex<Activity>,
    /// Signalled on every change of `activity`, so the watchdog re-arms.
    changed: Notify,
    /// Cancelled to close the connection (it was the idlest at the cap).
    close: CancellationToken,
}

struct Activity {
    /// Requests being answered.
    busy: usize,
    /// Since when nothing has happened, when not busy.
    idle_since: Instant,
    /// When the first byte of the next request head arrived.
    head_started: Option<Instant>,
}

impl Activity {
    /// `Some` when the connection is idle: not busy and no request head begun.
    fn idle_since(&self) -> Option<Instant> {
        (self.busy == 0 && self.head_started.is_none()).then_some(self.idle_since)
    }
}

impl Conn {
    fn activity(&self) -> MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bytes_arrived(&self) {
        let mut a = self.activity();
        if a.busy == 0 && a.head_started.is_none() {
            a.head_started = Some(Instant::now());
            drop(a);
            self.changed.notify_one();
        }
    }

    /// Resolves when the connection should close: on `stop`, when chosen at the cap, or at
    /// an idle or header deadline.
    async fn expired(&self, limits: &Limits, stop: &CancellationToken) {
        loop {
            let deadline = {
                let a = self.activity();
                match (a.busy, a.head_started) {
                    (0, Some(started)) => Some(started + limits.header_read_timeout),
                    (0, None) => Some(a.idle_since + limits.idle_timeout),
                    _ => None,
                }
            };
            // Checked against the state as it is now, so a change that raced the timer wins.
            if deadline.is_some_and(|at| at <= Instant::now()) {
                return;
            }
            let timer = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = stop.cancelled() => return,
                () = self.close.cancelled() => return,
                () = self.changed.notified() => {}
                () = timer => {}
            }
        }
    }
}

/// Marks its connection busy while it lives: one request being answered.
struct Busy {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Busy {
    fn begin(conn: &Arc<Conn>, registry: &Arc<Registry>) -> Self {
        {
            let mut a = conn.activity();
            a.busy += 1;
            a.head_started = None;
        }
        conn.changed.notify_one();
        Self {
            conn: conn.clone(),
            registry: registry.clone(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let idle = {
            let mut a = self.conn.activity();
            a.busy -= 1;
            if a.busy == 0 {
                a.idle_since = Instant::now();
                a.head_started = None;
            }
            a.busy == 0
        };
        self.conn.changed.notify_one();
        if idle {
            self.registry.went_idle.notify_one();
        }
    }
}

async fn serve_connection(
    tcp: TcpStream,
    app: Router,
    limits: Arc<Limits>,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
    stop: CancellationToken,
    _permit: OwnedSemaphorePermit,
) {
    let io = TokioIo::new(Watched {
        tcp,
        conn: conn.clone(),
    });
    let (service_conn, service_registry) = (conn.clone(), registry.clone());
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = Busy::begin(&service_conn, &service_registry);
        let app = app.clone();
        async move {
            let response = app.oneshot(request.map(Body::new)).await;
            drop(busy);
            response
        }
    });
    // Timeouts are the watchdog's: hyper's own header timer is off.
    let http = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::pin!(http);
    tokio::select! {
        _ = http.as_mut() => {}
        () = conn.expired(&limits, &stop) => {
            // Idle or mid-head: nothing to lose, close now. Busy (only on stop): finish the
            // request, then close.
            if conn.activity().busy > 0 {
                http.as_mut().graceful_shutdown();
                let _ = http.await;
            }
        }
    }
    registry.remove(conn.id);
}

/// The socket, reporting when bytes arrive so the watchdog can time a request head.
struct Watched {
    tcp: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.bytes_arrived();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
