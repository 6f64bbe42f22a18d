//! `toolnexus serve --a2a ADDR` (with `--mcp` on the same address): the CLI as an A2A agent
//! on the scripted model, called by the library's own A2A tools and MCP client.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolnexus::a2a::{Agent, AgentOptions};
use toolnexus::mcp::{LoadOptions, McpConfig, McpStatus, load};
use toolnexus::{ToolContext, Toolkit};
use toolnexus_mock::{MockModel, Scenario};

/// Kills the server if the test fails before it stops it.
struct Reaper(std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn skills_dir() -> String {
    format!("{}/../examples/skills", env!("CARGO_MANIFEST_DIR"))
}

#[tokio::test]
async fn serve_a2a_and_mcp_on_one_address_until_sigterm() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args([
            "serve",
            "--mcp",
            "127.0.0.1:0",
            "--a2a",
            "127.0.0.1:0",
            "--no-builtins",
        ])
        .args([
            "--skills",
            &skills_dir(),
            "--base-url",
            &model.base_url(),
            "--model",
            "mock-model",
        ])
        .args(["--agent-name", "cli agent", "--api-key-env", "OPENAI_API_KEY"])
        .env("OPENAI_API_KEY", "sk-not-needed")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reaper(child);
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let (mut mcp_url, mut base) = (String::new(), String::new());
    out.read_line(&mut mcp_url).unwrap();
    out.read_line(&mut base).unwrap();
    let (mcp_url, base) = (mcp_url.trim().to_owned(), base.trim().to_owned());
    assert_eq!(mcp_url, format!("{base}/mcp"));
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    // A2A: our own outbound tools against the served agent.
    let options = AgentOptions::default().poll_every(Duration::from_millis(20));
    let agent = Agent::resolve(format!("{base}/.well-known/agent-card.json"), options)
        .await
        .unwrap();
    let tools = agent.tools();
    assert_eq!(
        tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
        ["cli_agent_hello-world"]
    );
    let r = tools[0]
        .execute(json!({"task": "hello over a2a"}), ToolContext::default())
        .await;
    assert_eq!(
        (r.output.as_str(), r.is_error),
        ("You said: hello over a2a", false)
    );

    // The toolkit flags of another command read the config's `agents` block.
    let dir = tempfile::tempdir().unwrap();
    let cfg_file = dir.path().join("agents.json");
    let card = format!("{base}/.well-known/agent-card.json");
    std::fs::write(
        &cfg_file,
        json!({"agents": {"mine": {"card": card}, "off": {"card": card, "disabled": true}}}).to_string(),
    )
    .unwrap();
    let listed = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(["tools", "--no-builtins", "--format", "names", "--config"])
        .arg(&cfg_file)
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).trim(),
        "cli_agent_hello-world"
    );

    // MCP on the same listener.
    let cfg =
        McpConfig::from_value(&json!({"mcpServers": {"gw": {"url": mcp_url, "timeout": 10000}}})).unwrap();
    let source = load(&cfg, LoadOptions::default()).await.unwrap();
    assert_eq!(source.status()["gw"], McpStatus::Connected);
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    assert_eq!(tk.tool_names(), ["gw_skill"]);
    tk.close().await;

    let start = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &child.0.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a2a_flags_that_do_not_fit_are_usage_errors() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
            .args(args)
            .env("OPENAI_API_KEY", "sk-not-needed")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        )
    };
    assert_eq!(
        run(&["serve", "--a2a", "127.0.0.1:0", "--no-builtins"]),
        (
            Some(2),
            "toolnexus: --a2a needs --base-url and --model: the model that fulfils the agent's tasks"
                .to_owned()
        )
    );
    let (code, err) = run(&[
        "serve",
        "--a2a",
        "127.0.0.1:0",
        "--no-builtins",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--a2a-store",
        "redis:x",
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        r#"toolnexus: --store: unknown store "redis:x" (expected memory, file:<dir>, sqlite:<path> or postgres://...)"#
    );
    assert_eq!(
        run(&["serve", "--no-builtins"]),
        (
            Some(2),
            "toolnexus: serve needs --mcp ADDR, --a2a ADDR, or both".to_owned()
        )
    );
}

#[tokio::test]
async fn serve_mcp_and_a2a_on_two_addresses_are_two_guarded_listeners() {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await.unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args([
            "serve",
            "--mcp",
            "127.0.0.1:0",
            "--a2a",
            "localhost:0",
            "--no-builtins",
        ])
        .args([
            "--skills",
            &skills_dir(),
            "--base-url",
            &model.base_url(),
            "--model",
            "m",
            "--api-key-env",
            "OPENAI_API_KEY",
        ])
        .env("OPENAI_API_KEY", "sk-not-needed")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reaper(child);
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let (mut mcp_url, mut base) = (String::new(), String::new());
    out.read_line(&mut mcp_url).unwrap();
    out.read_line(&mut base).unwrap();
    let (mcp_url, base) = (mcp_url.trim().to_owned(), base.trim().to_owned());
    let mcp_base = mcp_url.strip_suffix("/mcp").unwrap().to_owned();
    assert_ne!(mcp_base, base, "two listeners, two ports");

    let http = reqwest::Client::new();
    let status = |url: String, origin: Option<&'static str>| {
        let mut request = http.get(url);
        if let Some(o) = origin {
            request = request.header("origin", o);
        }
        async move { request.send().await.unwrap().status().as_u16() }
    };
    let card = "/.well-known/agent-card.json";
    assert_eq!(status(format!("{base}{card}"), None).await, 200);
    // Each listener serves its own profile only, and each is guarded.
    assert_eq!(status(format!("{mcp_base}{card}"), None).await, 404);
    assert_eq!(status(format!("{base}/mcp"), None).await, 404);
    assert_eq!(
        status(format!("{base}{card}"), Some("http://evil.example")).await,
        403
    );
    assert_eq!(
        status(format!("{mcp_base}/mcp"), Some("http://evil.example")).await,
        403
    );
    let cfg =
        McpConfig::from_value(&json!({"mcpServers": {"gw": {"url": mcp_url, "timeout": 10000}}})).unwrap();
    let source = load(&cfg, LoadOptions::default()).await.unwrap();
    assert_eq!(source.status()["gw"], McpStatus::Connected);
    let mut tk = Toolkit::default();
    source.install(&mut tk);
    assert_eq!(tk.tool_names(), ["gw_skill"]);
    tk.close().await;
}
