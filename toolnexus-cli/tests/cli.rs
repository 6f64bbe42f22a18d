//! The `toolnexus` binary as a real child process.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn examples_skills() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/skills")
        .canonicalize()
        .unwrap()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolnexus"))
        .args(args)
        .output()
        .expect("spawn toolnexus")
}

/// `toolnexus tools --config FILE ARGS…`, with `config` written to a temp FILE.
fn tools_with_config(config: &str, args: &[&str]) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("mcp.json");
    std::fs::write(&cfg, config).unwrap();
    run(&[&["tools", "--config", cfg.to_str().unwrap()], args].concat())
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A failure: exactly one stderr line starting `toolnexus: `, nothing on stdout, no panic.
fn assert_one_line_error(o: &Output, code: i32, starts: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!("toolnexus: {starts}")), "{err}");
    assert!(!err.contains("panicked"));
    assert_eq!(stdout(o), "");
}

#[test]
fn tools_names_lists_the_eleven_tools() {
    let skills = examples_skills();
    let o = run(&["tools", "--skills", skills.to_str().unwrap(), "--format", "names"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "apply_patch\nbash\nedit\nglob\ngrep\nquestion\nread\nskill\ntodowrite\nwebfetch\nwrite\n"
    );
    let o = run(&[
        "tools",
        "--skills",
        skills.to_str().unwrap(),
        "--no-builtins",
        "--format",
        "names",
    ]);
    assert_eq!(stdout(&o), "skill\n");
}

#[test]
fn tools_adapter_formats_are_the_exact_adapter_json() {
    let skills = examples_skills();
    let tk = tokio::runtime::Runtime::new().unwrap().block_on(async {
        toolnexus::Toolkit::build(toolnexus::ToolkitOptions::default().skills_dir(&skills))
            .await
            .unwrap()
    });
    for (format, expected) in [
        ("openai", tk.to_openai()),
        ("anthropic", tk.to_anthropic()),
        ("gemini", tk.to_gemini()),
    ] {
        let o = run(&["tools", "--skills", skills.to_str().unwrap(), "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), format!("{}\n", Value::Array(expected)), "{format}");
    }
    let o = run(&["tools", "--no-builtins", "--format", "gemini"]);
    assert_eq!(stdout(&o), "[{\"functionDeclarations\":[]}]\n");
}

#[test]
fn tools_table_is_readable() {
    let skills = examples_skills();
    let o = run(&["tools", "--skills", skills.to_str().unwrap()]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "NAME         SOURCE   DESCRIPTION");
    assert_eq!(
        lines[8],
        "skill        skill    Load a specialized skill when the task at hand matches one of the skills…"
    );
    assert_eq!(
        lines[9],
        "todowrite    builtin  Replace the session todo list. Returns the rendered list."
    );
    assert_eq!(lines.last(), Some(&"11 tools"));
}

#[test]
fn call_prints_the_tool_result_json() {
    let skills = examples_skills();
    let dir = skills.join("hello-world");
    let o = run(&[
        "call",
        "skill",
        r#"{"name":"hello-world"}"#,
        "--skills",
        skills.to_str().unwrap(),
        "--no-builtins",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["isError"], false);
    assert_eq!(
        v["metadata"],
        serde_json::json!({"name": "hello-world", "dir": dir.to_str().unwrap()})
    );
    let output = v["output"].as_str().unwrap();
    assert!(output.ends_with(&format!(
        "<skill_files>\n<file>{}/scripts/greet.sh</file>\n</skill_files>\n</skill_content>",
        dir.display()
    )));

    // An error result is still printed, and the exit code says so.
    let o = run(&[
        "call",
        "skill",
        r#"{"name":"nope"}"#,
        "--skills",
        skills.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "{\"output\":\"Skill \\\"nope\\\" not found. Available skills: hello-world\",\"isError\":true}\n"
    );
    let o = run(&["call", "nope"]);
    assert_eq!(
        stdout(&o),
        "{\"output\":\"unknown tool: nope\",\"isError\":true}\n"
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn call_runs_a_builtin_on_a_real_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("out.txt");
    let args = serde_json::json!({"path": file, "content": "hi"}).to_string();
    let o = run(&["call", "write", &args]);
    assert!(o.status.success(), "{} {}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hi");
}

#[test]
fn prompt_prints_the_skills_catalog() {
    let skills = examples_skills();
    let o = run(&["prompt", "--skills", skills.to_str().unwrap()]);
    assert_eq!(
        stdout(&o),
        "Skills provide specialized instructions and workflows for specific tasks.\n\
         Use the skill tool to load a skill when a task matches its description.\n\n\
         ## Available Skills\n\
         - **hello-world**: A tiny example skill. Use when you want to see how skill loading (progressive disclosure) works end to end.\n"
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["prompt", "--skills", tmp.path().to_str().unwrap()]);
    assert_eq!(stdout(&o), "No skills are currently available.\n");
}

#[test]
fn config_file_builtins_key_is_honoured() {
    let o = tools_with_config(
        r#"{"mcpServers": {}, "builtins": {"tools": {"bash": false, "webfetch": false}}}"#,
        &["--format", "names"],
    );
    assert_eq!(
        stdout(&o),
        "apply_patch\nedit\nglob\ngrep\nquestion\nread\ntodowrite\nwrite\n"
    );
}

/// Two servers that cannot start, and a disabled one, in this config order.
const DEAD_SERVERS: &str = r#"{"mcpServers": {
    "zeta": {"command": ["/nonexistent/zeta"], "timeout": 1000},
    "off": {"command": ["/nonexistent/off"], "disabled": true},
    "dead": {"command": ["/nonexistent/bin"], "timeout": 1000}
}}"#;

const DEAD_LINES: &str = "mcp server zeta: failed: cannot start \"/nonexistent/zeta\": No such file or directory (os error 2)\n\
     mcp server dead: failed: cannot start \"/nonexistent/bin\": No such file or directory (os error 2)\n";

#[test]
fn a_dead_mcp_server_is_isolated_and_its_status_line_printed_in_config_order() {
    let o = tools_with_config(DEAD_SERVERS, &["--no-builtins", "--format", "names"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    // A disabled server is the user's choice: no line for it.
    assert_eq!(stderr(&o), DEAD_LINES);
}

#[test]
fn calling_a_tool_of_a_failed_server_says_which_server_failed_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("mcp.json");
    std::fs::write(&cfg, DEAD_SERVERS).unwrap();
    let o = run(&["call", "dead_echo", "--config", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), DEAD_LINES);
    assert_eq!(
        stdout(&o),
        "{\"output\":\"tool dead_echo is unavailable: MCP server \\\"dead\\\" failed: cannot start \\\"/nonexistent/bin\\\": No such file or directory (os error 2)\",\"isError\":true}\n"
    );
    // A name no failed server prefixes is still simply unknown.
    let o = run(&["call", "other_echo", "--config", cfg.to_str().unwrap()]);
    assert_eq!(
        stdout(&o),
        "{\"output\":\"unknown tool: other_echo\",\"isError\":true}\n"
    );
}

#[test]
fn verbose_flags_and_rust_log_control_the_log_output() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("mcp.json");
    std::fs::write(&cfg, DEAD_SERVERS).unwrap();
    let cfg = cfg.to_str().unwrap();
    let tools = |extra: &[&str], rust_log: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolnexus"));
        cmd.args(["tools", "--no-builtins", "--config", cfg]).args(extra);
        cmd.env_remove("RUST_LOG");
        if let Some(filter) = rust_log {
            cmd.env("RUST_LOG", filter);
        }
        stderr(&cmd.output().unwrap())
    };
    let library_warning = "WARN [toolnexus] MCP server \"dead\" failed: cannot start \"/nonexistent/bin\"";
    // Quiet by default: the status lines say it once.
    assert_eq!(tools(&[], None), DEAD_LINES);
    for verbose in [&["-v"][..], &["-vv"], &["--verbose"]] {
        let err = tools(verbose, None);
        assert!(err.ends_with(DEAD_LINES), "{err}");
        assert!(err.contains(library_warning), "{err}");
    }
    assert!(!tools(&["-v"], None).contains("DEBUG"));
    assert!(tools(&[], Some("warn")).contains(library_warning));
    assert_eq!(tools(&["-vv"], Some("off")), DEAD_LINES, "RUST_LOG wins");
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    use std::io::Read as _;
    use std::process::Stdio;
    // `toolnexus tools | head` when head has already left: every write fails with EPIPE.
    for args in [&["tools"][..], &["tools", "--format", "openai"], &["prompt"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolnexus"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

/// A usage error from clap: its whole message after `toolnexus: `, exit 2, nothing on stdout.
fn assert_usage_error(o: &Output, message: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert_eq!(
        stderr(o),
        format!("toolnexus: {message}\n\nFor more information, try '--help'.\n")
    );
    assert_eq!(stdout(o), "");
}

#[test]
fn usage_errors_show_clap_s_whole_message() {
    assert_usage_error(
        &run(&["tools", "--bogus"]),
        "unexpected argument '--bogus' found\n\nUsage: toolnexus tools [OPTIONS]",
    );
    assert_usage_error(
        &run(&["tools", "--format", "xml"]),
        "invalid value 'xml' for '--format <FORMAT>'\n  [possible values: names, openai, anthropic, gemini]",
    );
    assert_usage_error(
        &run(&["frobnicate"]),
        "unrecognized subcommand 'frobnicate'\n\nUsage: toolnexus [OPTIONS] <COMMAND>",
    );
    assert_usage_error(
        &run(&["call"]),
        "the following required arguments were not provided:\n  <NAME>\n\nUsage: toolnexus call <NAME> [ARGS_JSON]",
    );
}

#[test]
fn bad_flags_and_bad_config_are_one_line_errors() {
    assert_one_line_error(&run(&[]), 2, "missing command");
    assert_one_line_error(
        &run(&["call", "read", "not json"]),
        2,
        "ARGS_JSON is not valid JSON: ",
    );
    assert_one_line_error(
        &run(&["call", "read", "[1]"]),
        2,
        "ARGS_JSON must be a JSON object",
    );

    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing.json");
    assert_one_line_error(
        &run(&["tools", "--config", missing.to_str().unwrap()]),
        1,
        &format!("cannot read config {}: ", missing.display()),
    );
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, "{\n  \"mcpServers\": {,\n}").unwrap();
    assert_one_line_error(
        &run(&["call", "read", "--config", bad.to_str().unwrap()]),
        1,
        &format!(
            "malformed config {}: key must be a string at line 2 column 18",
            bad.display()
        ),
    );
    let bad_builtins = tmp.path().join("builtins.json");
    std::fs::write(&bad_builtins, r#"{"builtins": {"tools": {"bash": "no"}}}"#).unwrap();
    assert_one_line_error(
        &run(&["tools", "--config", bad_builtins.to_str().unwrap()]),
        1,
        &format!("malformed config {}: `builtins`: ", bad_builtins.display()),
    );
    let no_servers = tmp.path().join("foo.json");
    std::fs::write(&no_servers, r#"{"foo": 1}"#).unwrap();
    let o = run(&["tools", "--config", no_servers.to_str().unwrap()]);
    assert_one_line_error(&o, 1, "");
    assert_eq!(
        stderr(&o),
        format!(
            "toolnexus: malformed MCP config {}: no \"mcpServers\" key (nor \"servers\" or \"mcp\"), \
             and the top-level key \"foo\" is not a server entry (an object)\n",
            no_servers.display()
        )
    );
    assert_one_line_error(
        &run(&["prompt", "--skills", "/definitely/not/here"]),
        1,
        "skills dir not found: /definitely/not/here",
    );
}

#[test]
fn help_and_version_succeed() {
    let o = run(&["--help"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for cmd in ["tools", "call", "prompt"] {
        assert!(out.contains(&format!("  {cmd} ")), "{out}");
    }
    let o = run(&["--version"]);
    assert_eq!(stdout(&o), format!("toolnexus {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn an_mcp_tool_schema_keeps_its_dollar_schema_verbatim() {
    let tmp = tempfile::tempdir().unwrap();
    let mut command = support::script_server(
        tmp.path(),
        &[
            r#"{"name":"meta","description":"Has a dialect","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"q":{"type":"string"}}}}"#,
        ],
    );
    command.extend(["answer".into(), "polite".into()]);
    let cfg = tmp.path().join("mcp.json");
    let doc = serde_json::json!({"mcpServers": {"s": {"command": command}}});
    std::fs::write(&cfg, doc.to_string()).unwrap();
    let tools = |format: &str| {
        let o = run(&[
            "tools",
            "--no-builtins",
            "--format",
            format,
            "--config",
            cfg.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(
        tools("openai"),
        "[{\"type\":\"function\",\"function\":{\"name\":\"s_meta\",\"description\":\"Has a dialect\",\
         \"parameters\":{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\",\
         \"properties\":{\"q\":{\"type\":\"string\"}},\"additionalProperties\":false}}}]\n"
    );
    assert!(tools("anthropic").contains(
        "\"input_schema\":{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
    ));
    // Gemini's schema subset has no `$schema`.
    assert!(!tools("gemini").contains("$schema"));
}
