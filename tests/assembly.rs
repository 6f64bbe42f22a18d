//! Toolkit assembly (SPEC §4): source order, first-wins, shadowing, the builtins toggle from
//! options and from config, typed config errors.

mod mcp_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mcp_support::{TESTSERVER, wait_dead};
use serde_json::json;
use toolnexus::builtin::BuiltinsConfig;
use toolnexus::skill::{SampleLimit, SkillDef, SkillProvider};
use toolnexus::{BuildError, Tool, ToolContext, ToolResult, ToolSource, Toolkit, ToolkitOptions};

const BUILTINS: [&str; 10] = [
    "apply_patch",
    "bash",
    "edit",
    "glob",
    "grep",
    "question",
    "read",
    "todowrite",
    "webfetch",
    "write",
];

fn examples_skills() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/skills")
}

fn custom(name: &str, output: &'static str) -> Tool {
    Tool::new(name, move |_, _| async move { ToolResult::success(output) })
}

/// Why building with `options` fails.
async fn build_error(options: ToolkitOptions) -> BuildError {
    Toolkit::build(options).await.expect_err("the build fails")
}

async fn names(options: ToolkitOptions) -> Vec<String> {
    let tk = Toolkit::build(options).await.unwrap();
    tk.tool_names().into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn examples_skills_yield_the_eleven_seed_names() {
    // The same list the Python port's create_toolkit(skills_dir="examples/skills") gives.
    let tk = Toolkit::build(ToolkitOptions::default().skills_dir(examples_skills()))
        .await
        .unwrap();
    assert_eq!(
        tk.tool_names(),
        [
            "apply_patch",
            "bash",
            "edit",
            "glob",
            "grep",
            "question",
            "read",
            "skill",
            "todowrite",
            "webfetch",
            "write"
        ]
    );
    assert_eq!(tk.get("skill").unwrap().source(), ToolSource::Skill);
    assert_eq!(tk.get("bash").unwrap().source(), ToolSource::Builtin);
    assert_eq!(
        tk.skills_prompt(),
        "Skills provide specialized instructions and workflows for specific tasks.\n\
         Use the skill tool to load a skill when a task matches its description.\n\n\
         ## Available Skills\n\
         - **hello-world**: A tiny example skill. Use when you want to see how skill loading (progressive disclosure) works end to end."
    );
    let r = tk
        .execute("skill", json!({"name": "hello-world"}), ToolContext::default())
        .await;
    assert!(
        r.output
            .starts_with("<skill_content name=\"hello-world\">\n# Skill: hello-world\n")
    );
    tk.close().await;
    tk.close().await; // idempotent
}

#[tokio::test]
async fn no_skill_inputs_means_no_skill_tool_and_empty_prompt() {
    let tk = Toolkit::build(ToolkitOptions::default()).await.unwrap();
    assert_eq!(tk.tool_names(), BUILTINS);
    assert_eq!(tk.skills_prompt(), "");
}

#[tokio::test]
async fn extra_tools_shadow_builtins_but_not_the_skill_tool() {
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .skills_dir(examples_skills())
            .extra_tool(custom("bash", "sandboxed"))
            .extra_tool(custom("skill", "impostor"))
            .extra_tool(custom("mine", "mine"))
            .extra_tool(custom("mine", "second mine")),
    )
    .await
    .unwrap();
    assert_eq!(tk.len(), 12);
    let out = |name: &'static str| {
        let tk = tk.clone();
        async move { tk.execute(name, json!({}), ToolContext::default()).await.output }
    };
    assert_eq!(out("bash").await, "sandboxed");
    assert_eq!(out("mine").await, "mine", "first wins among extras");
    assert_eq!(
        tk.get("skill").unwrap().source(),
        ToolSource::Skill,
        "skill beats extra"
    );
}

#[tokio::test]
async fn disable_tools_applies_to_final_names() {
    let got = names(
        ToolkitOptions::default()
            .skills_dir(examples_skills())
            .extra_tool(custom("mine", "x"))
            .disable_tool("skill")
            .disable_tool("bash")
            .disable_tool("mine")
            .disable_tool("unknown"),
    )
    .await;
    assert_eq!(
        got,
        [
            "apply_patch",
            "edit",
            "glob",
            "grep",
            "question",
            "read",
            "todowrite",
            "webfetch",
            "write"
        ]
    );
}

#[tokio::test]
async fn builtins_toggle_from_options_and_config() {
    for off in [
        json!(false),
        json!({"disabled": true}),
        json!({"enabled": false}),
        json!({"disabled": true, "enabled": true}),
    ] {
        let got = names(ToolkitOptions::default().config(json!({ "builtins": off }))).await;
        assert!(got.is_empty(), "{off} ⇒ {got:?}");
    }
    let got = names(
        ToolkitOptions::default().config(json!({"builtins": {"tools": {"bash": false, "nope": false}}})),
    )
    .await;
    assert_eq!(
        got,
        &BUILTINS[..1]
            .iter()
            .chain(&BUILTINS[2..])
            .copied()
            .collect::<Vec<_>>()[..]
    );
    // The option wins over the config key.
    let got = names(
        ToolkitOptions::default()
            .config(json!({"builtins": false}))
            .builtins(true),
    )
    .await;
    assert_eq!(got, BUILTINS);
    let got =
        names(ToolkitOptions::default().builtins(BuiltinsConfig::default().with_tool("write", false))).await;
    assert!(!got.contains(&"write".to_owned()) && got.len() == 9);
    // A config file works like a parsed document.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cfg.json");
    std::fs::write(&path, r#"{"mcpServers": {}, "builtins": {"enabled": false}}"#).unwrap();
    assert!(names(ToolkitOptions::default().config(path)).await.is_empty());
}

#[tokio::test]
async fn bad_config_is_a_typed_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let err = build_error(ToolkitOptions::default().config(missing.clone())).await;
    assert!(matches!(err, BuildError::ConfigRead { .. }));
    assert!(
        err.to_string()
            .starts_with(&format!("cannot read config {}: ", missing.display())),
        "{err}"
    );

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"mcpServers\": ").unwrap();
    let err = build_error(ToolkitOptions::default().config(bad.clone())).await;
    assert_eq!(
        err.to_string(),
        format!(
            "malformed config {}: EOF while parsing a value at line 1 column 15",
            bad.display()
        )
    );

    let err = build_error(ToolkitOptions::default().config(json!([1]))).await;
    assert_eq!(
        err.to_string(),
        "malformed config <value>: expected a JSON object"
    );

    let err = build_error(ToolkitOptions::default().config(json!({"builtins": "yes"}))).await;
    assert!(matches!(err, BuildError::Builtins { .. }));
    assert!(
        err.to_string()
            .starts_with("malformed config <value>: `builtins`: "),
        "{err}"
    );
}

#[tokio::test]
async fn skills_compose_dirs_then_data_then_provider_with_filter_and_disable() {
    let provider = SkillProvider::new(|| async {
        Ok(vec![
            SkillDef::new("from-provider", "p").with_description("P"),
            SkillDef::new("doc", "dup"),
        ])
    });
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .skills_dir(examples_skills())
            .skill(SkillDef::new("hello-world", "shadowed").with_description("shadowed"))
            .skill(SkillDef::new("doc", "Docs body").with_description("Docs"))
            .skill(SkillDef::new("hidden", "h").with_description("H"))
            .skill_provider(provider)
            .disable_skill("hidden")
            .skill_sample_limit(SampleLimit::Omit)
            .builtins(false),
    )
    .await
    .unwrap();
    assert_eq!(tk.tool_names(), ["skill"]);
    let prompt = tk.skills_prompt();
    assert!(
        prompt.ends_with("## Available Skills\n- **doc**: Docs\n- **from-provider**: P\n- **hello-world**: A tiny example skill. Use when you want to see how skill loading (progressive disclosure) works end to end."),
        "{prompt}"
    );
    let r = tk
        .execute("skill", json!({"name": "doc"}), ToolContext::default())
        .await;
    assert!(r.output.contains("\nDocs body\n"));
    let r = tk
        .execute("skill", json!({"name": "hello-world"}), ToolContext::default())
        .await;
    assert!(
        !r.output.contains("<skill_files>"),
        "sample limit -1 omits the list"
    );
    let r = tk
        .execute("skill", json!({"name": "hidden"}), ToolContext::default())
        .await;
    assert_eq!(
        r.output,
        "Skill \"hidden\" not found. Available skills: doc, from-provider, hello-world"
    );

    // A failing provider is isolated; an explicit filter entry beats disable_skills.
    let failing = SkillProvider::new(|| async { Err("down".into()) });
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .skills_dir(examples_skills())
            .skill_provider(failing)
            .skills_filter(BTreeMap::from([("hello-world".to_owned(), true)]))
            .disable_skill("hello-world"),
    )
    .await
    .unwrap();
    assert!(tk.skills_prompt().contains("**hello-world**"));
}

#[tokio::test]
async fn mcp_tools_come_first_and_close_releases_the_servers() {
    let config = json!({
        "mcpServers": {
            "srv": {"command": [TESTSERVER, "stdio"], "timeout": 10000},
            "dead": {"command": ["/nonexistent/mcp-server"], "timeout": 2000},
            "off": {"command": ["x"], "disabled": true}
        },
        "builtins": {"tools": {"bash": false}}
    });
    let tk = Toolkit::build(
        ToolkitOptions::default()
            .config(config)
            .skills_dir(examples_skills())
            .extra_tool(custom("srv_echo", "extra loses to MCP")),
    )
    .await
    .unwrap();
    let names = tk.tool_names();
    assert!(
        names.contains(&"srv_echo") && names.contains(&"skill") && !names.contains(&"bash"),
        "{names:?}"
    );
    assert_eq!(tk.get("srv_echo").unwrap().source(), ToolSource::Mcp);
    let statuses = tk.mcp_status();
    let status: Vec<(&str, &str)> = statuses.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // Config order (SPEC §2 "Status"), not sorted by name.
    assert_eq!(
        status,
        [("srv", "connected"), ("dead", "failed"), ("off", "disabled")]
    );
    let r = tk
        .execute("srv_echo", json!({"text": "hi"}), ToolContext::default())
        .await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"hi","isError":false,"metadata":{"server":"srv"}}"#
    );
    let pid = tk
        .execute("srv_pid", json!({}), ToolContext::default())
        .await
        .output;
    tk.close().await;
    // The stdio child is gone once close() returns (a bounded wait; a zombie counts as gone).
    assert!(
        wait_dead(pid.trim().parse().unwrap(), Duration::from_secs(5)),
        "MCP server {pid} still running after close()"
    );
}

#[tokio::test]
async fn bad_mcp_server_entry_is_a_typed_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    std::fs::write(&path, r#"{"mcpServers": {"broken": {"command": 7}}}"#).unwrap();
    let err = build_error(ToolkitOptions::default().config(path.clone())).await;
    assert!(matches!(err, BuildError::Mcp(_)));
    assert!(
        err.to_string()
            .starts_with(&format!("MCP config {}: server \"broken\": ", path.display())),
        "{err}"
    );
}

#[tokio::test]
async fn a_cancelled_mcp_load_fails_the_build() {
    let cancel = toolnexus::CancellationToken::new();
    cancel.cancel();
    let load = toolnexus::mcp::LoadOptions::default().cancel(cancel);
    let config = json!({"mcpServers": {"srv": {"command": [TESTSERVER, "hang-init"], "timeout": 30000}}});
    let start = std::time::Instant::now();
    let err = build_error(ToolkitOptions::default().config(config).mcp_load(load)).await;
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(err.to_string(), "MCP load cancelled");
}

#[tokio::test]
async fn an_optional_config_is_read_when_present_and_skipped_when_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    let absent = Toolkit::build(ToolkitOptions::default().config_if_exists(&path))
        .await
        .unwrap();
    assert_eq!(
        absent.len(),
        10,
        "the built-ins, nothing else: {:?}",
        absent.tool_names()
    );
    // A required one that is absent names the file.
    let err = build_error(ToolkitOptions::default().config(path.clone())).await;
    assert!(
        err.to_string()
            .starts_with(&format!("cannot read config {}: ", path.display())),
        "{err}"
    );
    std::fs::write(&path, r#"{"mcpServers": {}, "builtins": false}"#).unwrap();
    let present = Toolkit::build(ToolkitOptions::default().config_if_exists(&path))
        .await
        .unwrap();
    assert!(present.is_empty(), "{:?}", present.tool_names());
    // Present but unreadable as JSON is still an error, not a silent skip.
    std::fs::write(&path, "{").unwrap();
    let err = build_error(ToolkitOptions::default().config_if_exists(&path)).await;
    assert!(matches!(err, BuildError::ConfigParse { .. }), "{err}");
}
