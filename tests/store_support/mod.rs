//! Shared by the store tests: a fresh database per test (SQLite in a temp dir, or a new
//! PostgreSQL database on `TOOLNEXUS_PG_URL`), and a TCP proxy that can be cut and restored to
//! play a database going away and coming back.
//!
//! A test file using it declares `mod peer;` (the skip rule) next to `mod store_support;`.
#![allow(dead_code)] // each test file uses a different part

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::Connection as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use toolnexus::store::{Db, DbOptions, StoreUrl};

use crate::peer;

/// A fresh database and what keeps it alive. `db` is migrated; open more handles on the same
/// database (a second replica) with [`TestDb::reopen`].
pub struct TestDb {
    /// Where it is (a PostgreSQL URL carries its password: print it through `StoreUrl`).
    pub url: StoreUrl,
    /// The first handle.
    pub db: Db,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// Another, independent handle (its own pool) on the same database: "replica B".
    pub async fn reopen(&self) -> Db {
        Db::open(&self.url, DbOptions::default())
            .await
            .unwrap_or_else(|e| panic!("reopening {}: {e}", self.url))
    }

    /// The PostgreSQL URL with its password (for a [`Proxy`] or `via`).
    pub fn url_raw(&self) -> String {
        match &self.url {
            StoreUrl::Postgres(raw) => raw.clone(),
            other => panic!("{other} is not PostgreSQL"),
        }
    }

    /// `true` for the PostgreSQL one.
    pub fn is_postgres(&self) -> bool {
        matches!(self.url, StoreUrl::Postgres(_))
    }
}

/// A fresh SQLite database file in its own temp dir.
pub async fn fresh() -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = StoreUrl::Sqlite(dir.path().join("toolnexus.db"));
    let db = Db::open(&url, DbOptions::default())
        .await
        .unwrap_or_else(|e| panic!("opening {url}: {e}"));
    TestDb {
        url,
        db,
        _dir: Some(dir),
    }
}

/// `server` (a PostgreSQL URL) with its database name replaced by `name`.
pub fn with_database(server: &str, name: &str) -> String {
    let mut url = url::Url::parse(server).expect("TOOLNEXUS_PG_URL is a URL");
    url.set_path(&format!("/{name}"));
    url.to_string()
}

/// `server` (a PostgreSQL URL) pointing at `addr` instead of its own host and port.
pub fn via(server: &str, addr: SocketAddr) -> String {
    let mut url = url::Url::parse(server).expect("a PostgreSQL URL");
    url.set_host(Some(&addr.ip().to_string())).expect("host");
    url.set_port(Some(addr.port())).expect("port");
    url.to_string()
}

/// A new, empty database on the `TOOLNEXUS_PG_URL` server, named uniquely for this test, and
/// migrated. `None` (after a visible skip) when the variable is unset outside CI.
pub async fn fresh_postgres() -> Option<TestDb> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let server = peer::postgres_url()?;
    let name = format!(
        "tn_{}_{}_{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let mut admin = tokio::time::timeout(Duration::from_secs(30), sqlx::PgConnection::connect(&server))
        .await
        .expect("connecting to TOOLNEXUS_PG_URL timed out")
        .expect("connecting to TOOLNEXUS_PG_URL");
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await
        .expect("CREATE DATABASE");
    let _ = admin.close().await;
    let url: StoreUrl = with_database(&server, &name).parse().expect("a store URL");
    let db = Db::open(&url, DbOptions::default())
        .await
        .unwrap_or_else(|e| panic!("opening {url}: {e}"));
    Some(TestDb { url, db, _dir: None })
}

/// Both engines: the SQLite one, then the PostgreSQL one when it is available.
pub async fn each_engine() -> Vec<TestDb> {
    let mut all = vec![fresh().await];
    all.extend(fresh_postgres().await);
    all
}

/// A TCP relay on 127.0.0.1 to `target`. [`Proxy::cut`] drops every relayed connection and
/// refuses new ones until [`Proxy::restore`]: to the client, the database went away.
/// [`Proxy::lose_answer`] drops the server's answer that carries a marker, and everything
/// after it on that connection: a statement that is applied while its answer is lost.
pub struct Proxy {
    addr: SocketAddr,
    cut: Arc<AtomicBool>,
    lose: Lose,
    dropped: Arc<AtomicU32>,
    live: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free 127.0.0.1 port, relaying to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let cut = Arc::new(AtomicBool::new(false));
        let lose: Lose = Arc::default();
        let dropped = Arc::new(AtomicU32::new(0));
        let live: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (cut, lose, dropped, live) = (cut.clone(), lose.clone(), dropped.clone(), live.clone());
            async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    if cut.load(Ordering::SeqCst) {
                        dropped.fetch_add(1, Ordering::SeqCst);
                        continue; // dropped: connection reset for the client
                    }
                    let lose = lose.clone();
                    let relay = tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(target).await {
                            let (mut from_client, mut to_client) = inbound.split();
                            let (mut from_server, mut to_server) = outbound.split();
                            tokio::select! {
                                _ = tokio::io::copy(&mut from_client, &mut to_server) => {}
                                _ = answers(&mut from_server, &mut to_client, &lose) => {}
                            }
                        }
                    });
                    let mut live = live.lock().unwrap();
                    live.retain(|h| !h.is_finished());
                    live.push(relay);
                }
            }
        });
        Proxy {
            addr,
            cut,
            lose,
            dropped,
            live,
            accept,
        }
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops every relayed connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for relay in self.live.lock().unwrap().drain(..) {
            relay.abort();
        }
    }

    /// How many connections it dropped while cut: each is one failed attempt of a client.
    pub fn dropped(&self) -> u32 {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Relays new connections again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }

    /// The next answer of the server whose bytes contain `marker` (e.g. PostgreSQL's command
    /// tag `UPDATE 1`) is dropped, with everything after it on its connection; what the
    /// client sends is still relayed. Once.
    pub fn lose_answer(&self, marker: &'static [u8]) {
        *self.lose.lock().unwrap() = Some(marker);
    }
}

/// The marker of the answer to lose, if one is armed.
type Lose = Arc<Mutex<Option<&'static [u8]>>>;

/// Copies the server's answers to the client until either side closes, or until the answer
/// `lose` names, which it drops together with what follows.
async fn answers(
    from_server: &mut tokio::net::tcp::ReadHalf<'_>,
    to_client: &mut tokio::net::tcp::WriteHalf<'_>,
    lose: &Lose,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut buf = vec![0; 16 * 1024];
    let mut silent = false;
    loop {
        let n = match from_server.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if !silent {
            let mut armed = lose.lock().unwrap();
            if armed.is_some_and(|m| buf[..n].windows(m.len()).any(|w| w == m)) {
                *armed = None;
                silent = true;
            }
        }
        if !silent && to_client.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// The host and port of a PostgreSQL URL.
pub fn pg_addr(server: &str) -> SocketAddr {
    let url = url::Url::parse(server).expect("a PostgreSQL URL");
    let host = url.host_str().expect("host");
    format!("{host}:{}", url.port().unwrap_or(5432))
        .parse()
        .expect("TOOLNEXUS_PG_URL names 127.0.0.1:<port>")
}
