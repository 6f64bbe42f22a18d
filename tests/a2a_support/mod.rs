//! Shared by the A2A tests: a scripted A2A peer on 127.0.0.1 that records every request,
//! and the real-SDK peer programs under `tests/peers/a2a/`.
#![allow(dead_code)] // each test file uses a different part

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

/// Serves `app` on `listener` until the returned sender fires or drops.
fn spawn_server(listener: tokio::net::TcpListener, app: Router) -> tokio::sync::oneshot::Sender<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    stop
}

/// One request the peer received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub headers: HeaderMap,
    pub body: Value,
}

/// How the peer answers the `n`-th JSON-RPC request (0-based) with `body`: status and text.
pub type Script = Arc<dyn Fn(usize, &Value) -> (StatusCode, String) + Send + Sync>;

struct PeerState {
    card: Value,
    seen: Mutex<Vec<Seen>>,
    card_headers: Mutex<Vec<HeaderMap>>,
    script: Script,
}

/// A scripted A2A agent: its card at `/.well-known/agent-card.json`, JSON-RPC at `/rpc`
/// and `/` (where a card without `url` points).
pub struct Peer {
    pub addr: SocketAddr,
    state: Arc<PeerState>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Peer {
    /// `card` may name `{rpc}`/`{origin}` in its string values; they are filled in.
    pub async fn start(card: Value, script: Script) -> Peer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let text = card
            .to_string()
            .replace("{rpc}", &format!("http://{addr}/rpc"))
            .replace("{origin}", &format!("http://{addr}"));
        let state = Arc::new(PeerState {
            card: serde_json::from_str(&text).unwrap(),
            seen: Mutex::new(Vec::new()),
            card_headers: Mutex::new(Vec::new()),
            script,
        });
        let app = Router::new()
            .route("/.well-known/agent-card.json", get(card_route))
            .route("/rpc", post(rpc_route))
            .route("/", post(rpc_route))
            .with_state(state.clone());
        Peer {
            addr,
            state,
            stop: Some(spawn_server(listener, app)),
        }
    }

    pub fn card_url(&self) -> String {
        format!("http://{}/.well-known/agent-card.json", self.addr)
    }

    /// Every JSON-RPC request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// The methods called so far.
    pub fn methods(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.method).collect()
    }

    pub fn card_headers(&self) -> Vec<HeaderMap> {
        self.state.card_headers.lock().unwrap().clone()
    }

    /// Waits (bounded) until `method` has been received `n` times.
    pub async fn wait_for(&self, method: &str, n: usize) {
        for _ in 0..200 {
            if self.methods().iter().filter(|m| *m == method).count() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{method} not received {n} times; got {:?}", self.methods());
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn card_route(State(state): State<Arc<PeerState>>, headers: HeaderMap) -> impl IntoResponse {
    state.card_headers.lock().unwrap().push(headers);
    axum::Json(state.card.clone())
}

async fn rpc_route(
    State(state): State<Arc<PeerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let n = {
        let mut seen = state.seen.lock().unwrap();
        seen.push(Seen {
            method: body["method"].as_str().unwrap_or("").to_owned(),
            headers,
            body: body.clone(),
        });
        seen.len() - 1
    };
    let (status, text) = (state.script)(n, &body);
    (status, [("content-type", "application/json")], text)
}

/// A JSON-RPC success answer echoing the request id.
pub fn ok(request: &Value, result: Value) -> (StatusCode, String) {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
    (StatusCode::OK, body.to_string())
}

/// The scripted-peer card: the SPEC's shape, endpoint `card.url`.
pub fn spec_card(skills: Value) -> Value {
    serde_json::json!({
        "name": "Travel Agent", "description": "books trips", "version": "1.0.0",
        "protocolVersion": "0.3.0", "capabilities": {"streaming": false, "pushNotifications": false},
        "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
        "skills": skills, "url": "{rpc}"
    })
}

#[path = "../peer/mod.rs"]
pub mod peer;
pub use peer::missing as peer_missing;

pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/a2a")
}

/// A python with `a2a-sdk` 1.x and uvicorn, or `None` after [`peer_missing`].
pub fn python_sdk() -> Option<String> {
    let python = std::env::var("TOOLNEXUS_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import a2a.client, a2a.server, uvicorn"])
        .output();
    if probe.is_ok_and(|o| o.status.success()) {
        return Some(python);
    }
    peer_missing(&format!(
        "`{python}` cannot import the A2A Python SDK (set TOOLNEXUS_PYTHON to a venv python with \
         `pip install -r tests/peers/a2a/requirements.txt`)"
    ));
    None
}

/// `node` when `@a2a-js/sdk` is installed under `tests/peers/a2a`, or `None` after
/// [`peer_missing`].
pub fn node_sdk() -> Option<String> {
    let installed = peers_dir()
        .join("node_modules/@a2a-js/sdk/package.json")
        .is_file();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if installed && node {
        return Some("node".into());
    }
    peer_missing(
        "the A2A JavaScript SDK is not installed (run `npm ci --prefix tests/peers/a2a`; needs node on PATH)",
    );
    None
}

/// A peer program running in the background; stdout lines arrive on `lines`. Killed on drop.
pub struct PeerProcess {
    child: tokio::process::Child,
    pub lines: mpsc::UnboundedReceiver<String>,
}

impl PeerProcess {
    /// Starts `program args…` and waits (bounded) for its `listening <url>` line.
    pub async fn start(program: &str, args: &[&str]) -> (PeerProcess, String) {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, mut lines) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let url = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                match lines.recv().await {
                    Some(line) => {
                        if let Some(url) = line.strip_prefix("listening ") {
                            return url.trim().to_owned();
                        }
                    }
                    None => panic!("{program} exited before it listened"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{program} did not listen within 60 s"));
        (PeerProcess { child, lines }, url)
    }

    /// Waits (bounded) for a stdout line starting with `prefix`.
    pub async fn expect_line(&mut self, prefix: &str) -> String {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                match self.lines.recv().await {
                    Some(line) if line.starts_with(prefix) => return line,
                    Some(_) => {}
                    None => panic!("the peer exited before printing {prefix:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no line starting with {prefix:?} within 30 s"))
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// Runs a peer client program to completion (bounded) and parses its JSON stdout.
pub async fn run_client(program: &str, args: Vec<String>) -> Value {
    let out = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(program)
            .args(&args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{program} {args:?} did not finish within 90 s"))
    .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{program}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A toolkit served as an A2A agent on 127.0.0.1 (an ephemeral port), stopped on drop.
pub struct Served {
    pub url: String,
    pub server: toolnexus::a2a::A2aServer,
    handle: toolnexus::serve::ServeHandle,
}

impl Served {
    pub async fn start(
        toolkit: &toolnexus::Toolkit,
        client: toolnexus::client::Client,
        config: toolnexus::a2a::A2aConfig,
    ) -> Served {
        let options = toolnexus::serve::ServeOptions {
            a2a: Some(toolnexus::serve::A2aProfile::new(client, config)),
            ..Default::default()
        };
        let handle = toolnexus::serve::serve(toolkit, "127.0.0.1:0", options)
            .await
            .unwrap();
        Served {
            url: handle.url().to_owned(),
            server: handle.a2a().unwrap().clone(),
            handle,
        }
    }

    /// POSTs a JSON-RPC request to `/` (with `A2A-Version: version` when given).
    pub async fn rpc(&self, method: &str, params: Value, version: Option<&str>) -> Value {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        self.post(body.to_string(), version).await.1
    }

    /// POSTs raw text to `/`: status and the JSON answer.
    pub async fn post(&self, body: String, version: Option<&str>) -> (u16, Value) {
        let mut request = reqwest::Client::new()
            .post(format!("{}/", self.url))
            .header("content-type", "application/json")
            .timeout(Duration::from_secs(30))
            .body(body);
        if let Some(v) = version {
            request = request.header("A2A-Version", v);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// Polls `GetTask` (bounded) until the task's state is `state`.
    pub async fn wait_state(&self, id: &str, state: &str) -> Value {
        for _ in 0..400 {
            let got = self.rpc("GetTask", serde_json::json!({"id": id}), None).await;
            if got["result"]["status"]["state"] == state {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {id} never reached {state}");
    }
}

/// The lease contract of [`toolnexus::a2a::TaskStore`], checked step by step on `store` with
/// virtual time (every instant is passed in, none is read from the clock): claim, renew by
/// the owner only, compare-and-set writes, cancel, and the expiry sweep that fails a task
/// once. Every backend runs it.
pub async fn check_lease_semantics(store: &dyn toolnexus::a2a::TaskStore) {
    use toolnexus::a2a::store::{Lease, lost_message};
    use toolnexus::a2a::{Task, TaskState};

    let t0 = 1_700_000_000_000_u64;
    let lease = |owner: &str, at: u64| Lease::new(owner, at, Duration::from_millis(300));
    let state = |t: Option<Task>| t.map(|t| t.status.state);

    // A claimed task: its owner writes it, nobody else does.
    let mut task = Task::new("lease-a", TaskState::Submitted);
    store.claim(&task, &lease("r1", t0)).await.unwrap();
    task.status.state = TaskState::Working;
    assert!(!store.update_owned(&task, "r2").await.unwrap());
    assert_eq!(
        state(store.get("lease-a").await.unwrap()),
        Some(TaskState::Submitted)
    );
    assert!(store.update_owned(&task, "r1").await.unwrap());
    assert_eq!(
        state(store.get("lease-a").await.unwrap()),
        Some(TaskState::Working)
    );

    // Renewal by the owner only; a renewed lease survives a sweep past the first expiry.
    assert!(!store.renew("lease-a", &lease("r2", t0 + 200)).await.unwrap());
    assert!(store.renew("lease-a", &lease("r1", t0 + 200)).await.unwrap());
    assert!(store.expire(t0 + 400).await.unwrap().is_empty());
    assert_eq!(
        state(store.get("lease-a").await.unwrap()),
        Some(TaskState::Working)
    );

    // Past the renewed expiry (t0 + 500) the sweep fails it, once, with the lost message.
    let failed = store.expire(t0 + 501).await.unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].id, "lease-a");
    assert_eq!(failed[0].status.state, TaskState::Failed);
    let expected = lost_message(t0 + 500);
    assert_eq!(
        expected,
        "the replica running this task was lost (lease expired at 2023-11-14T22:13:20.500Z)"
    );
    assert_eq!(failed[0].status.message.as_ref().unwrap().text(), expected);
    assert!(store.expire(t0 + 10_000).await.unwrap().is_empty());
    // The lost owner can neither renew nor overwrite the failure.
    assert!(!store.renew("lease-a", &lease("r1", t0 + 600)).await.unwrap());
    task.status.state = TaskState::Completed;
    assert!(!store.update_owned(&task, "r1").await.unwrap());
    let stored = store.get("lease-a").await.unwrap().unwrap();
    assert_eq!(stored, failed[0]);

    // A finished task drops its lease: no sweep touches it.
    let mut done = Task::new("lease-b", TaskState::Submitted);
    store.claim(&done, &lease("r1", t0)).await.unwrap();
    done.status.state = TaskState::Completed;
    assert!(store.update_owned(&done, "r1").await.unwrap());
    assert!(store.expire(t0 + 10_000).await.unwrap().is_empty());
    assert_eq!(store.get("lease-b").await.unwrap(), Some(done.clone()));

    // Cancel from anywhere: a running task becomes canceled and its owner loses it; a
    // finished one is returned untouched; an unknown id is None.
    let running = Task::new("lease-c", TaskState::Working);
    store.claim(&running, &lease("r1", t0)).await.unwrap();
    let canceled = store
        .cancel("lease-c", "canceled by the caller")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    assert_eq!(canceled.status.message.unwrap().text(), "canceled by the caller");
    assert!(!store.renew("lease-c", &lease("r1", t0 + 100)).await.unwrap());
    assert!(!store.update_owned(&running, "r1").await.unwrap());
    assert!(store.expire(t0 + 10_000).await.unwrap().is_empty());
    assert_eq!(
        store.cancel("lease-b", "x").await.unwrap(),
        Some(done),
        "a completed task stays completed"
    );
    assert_eq!(store.cancel("lease-none", "x").await.unwrap(), None);

    // Several sweepers at once: each expired task is failed exactly once.
    for i in 0..20 {
        let t = Task::new(format!("lease-many-{i}"), TaskState::Working);
        store.claim(&t, &lease("gone", t0)).await.unwrap();
    }
    let sweeps = futures::future::join_all((0..4).map(|_| store.expire(t0 + 1_000))).await;
    let total: usize = sweeps.into_iter().map(|s| s.unwrap().len()).sum();
    assert_eq!(total, 20);
}
