//! Issue 14, "Proof": property tests fuzzing each parser — `mcp.json`, `SKILL.md`
//! frontmatter, `apply_patch`, OpenAPI import — on stable Rust with proptest, for a bounded
//! number of cases (a few seconds each in CI). None may panic or hang; each also checks what
//! a valid result must satisfy. Inputs that once failed are kept below as plain tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::http::{OpenApiOptions, OpenApiSource, http_tools_from_openapi};
use toolnexus::mcp::{McpConfig, Transport};
use toolnexus::skill::list_skills;
use toolnexus::{ToolContext, Toolkit};

/// `n` cases from a fixed seed, so CI is reproducible; `PROPTEST_RNG_SEED` and
/// `PROPTEST_CASES` explore further (`PROPTEST_RNG_SEED=$RANDOM PROPTEST_CASES=20000`).
/// Failures are kept as explicit tests below, not in files.
fn cases(n: u32) -> ProptestConfig {
    let from_env = ProptestConfig::default();
    let set = |var| std::env::var_os(var).is_some();
    ProptestConfig {
        cases: if set("PROPTEST_CASES") { from_env.cases } else { n },
        rng_seed: if set("PROPTEST_RNG_SEED") {
            from_env.rng_seed
        } else {
            proptest::test_runner::RngSeed::Fixed(0x7001_4e55)
        },
        failure_persistence: None,
        ..from_env
    }
}

static RT: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
});

/// Short text: printable ASCII, the awkward values the parsers meet, or any Unicode.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,12}",
        select(vec![
            "",
            " ",
            "http://127.0.0.1:1/mcp",
            "https://h.example/x?key=k",
            "ftp://x",
            "http://",
            "http://[::1",
            "${HOME}",
            "${",
            "a\nb",
            "a\r\nb",
            "\t",
            "stdio",
            "remote",
            "local",
            "sse",
            "/nonexistent/dir",
            "..",
            "../x",
            "\u{0}",
            "é中🙂",
            "~",
            "null",
        ])
        .prop_map(String::from),
        any::<String>(),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        text().prop_map(Value::String),
    ]
}

/// An object from `(key, value)` pairs (later keys win, as in a parsed document).
fn object(pairs: Vec<(String, Value)>) -> Value {
    Value::Object(pairs.into_iter().collect::<Map<_, _>>())
}

fn json_value(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((key(keys), inner), 0..5).prop_map(object),
        ]
    })
}

/// A key: mostly one the parser knows, sometimes anything.
fn key(known: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![4 => select(known).prop_map(String::from), 1 => text()]
}

// ---------------------------------------------------------------------------------------
// mcp.json
// ---------------------------------------------------------------------------------------

const SERVER_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "url",
    "headers",
    "env",
    "environment",
    "cwd",
    "enabled",
    "disabled",
    "timeout",
    "tools",
];
const TOP_KEYS: &[&str] = &[
    "mcpServers",
    "servers",
    "mcp",
    "builtins",
    "agents",
    "a2a",
    "mcpServer",
    "fs",
    "api",
];

/// A number as configs write timeouts: the edge cases, or any finite float.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        select(vec![
            json!(0),
            json!(-1),
            json!(1e308),
            json!(-1e308),
            json!(30000),
            json!(0.5),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(86_400_000),
            json!(86_400_001),
            json!(5e-324),
        ]),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
    ]
}

/// A value of the type the key wants, mostly, so parsing gets past the first field.
fn field_value(key: &str) -> BoxedStrategy<Value> {
    let strings = || vec(text(), 0..4).prop_map(|v| json!(v));
    let map = || {
        vec((text(), text()), 0..3)
            .prop_map(|kv| object(kv.into_iter().map(|(k, v)| (k, json!(v))).collect()))
    };
    let typed: BoxedStrategy<Value> = match key {
        "timeout" => number().boxed(),
        "command" => prop_oneof![strings(), text().prop_map(Value::String)].boxed(),
        "args" => strings().boxed(),
        "url" | "cwd" => text().prop_map(Value::String).boxed(),
        "headers" | "env" | "environment" => map().boxed(),
        "enabled" | "disabled" => any::<bool>().prop_map(Value::Bool).boxed(),
        "type" => select(vec![
            "local",
            "remote",
            "sse",
            "stdio",
            "http",
            "streamable-http",
            "",
        ])
        .prop_map(|t| json!(t))
        .boxed(),
        "tools" => vec((text(), any::<bool>()), 0..3)
            .prop_map(|kv| object(kv.into_iter().map(|(k, v)| (k, json!(v))).collect()))
            .boxed(),
        _ => json_value(SERVER_KEYS).boxed(),
    };
    prop_oneof![4 => typed, 1 => json_value(SERVER_KEYS)].boxed()
}

fn server_entry() -> impl Strategy<Value = Value> {
    let field = key(SERVER_KEYS).prop_flat_map(|k| field_value(&k).prop_map(move |v| (k.clone(), v)));
    prop_oneof![
        4 => vec(field, 0..6).prop_map(object),
        1 => json_value(SERVER_KEYS),
    ]
}

fn mcp_doc() -> impl Strategy<Value = Value> {
    let servers = || vec((key(TOP_KEYS), server_entry()), 0..4).prop_map(object);
    prop_oneof![
        3 => (select(vec!["mcpServers", "servers", "mcp"]), servers())
            .prop_map(|(wrapper, servers)| json!({ wrapper: servers })),
        2 => servers(),
        1 => json_value(TOP_KEYS),
    ]
}

/// What every parsed config must satisfy.
fn check_config(doc: &Value, cfg: &McpConfig) {
    let names: Vec<&String> = match doc.get("mcpServers").or(doc.get("servers")).or(doc.get("mcp")) {
        Some(Value::Object(m)) => m.keys().collect(),
        _ => doc.as_object().map(|m| m.keys().collect()).unwrap_or_default(),
    };
    for server in cfg.servers() {
        assert!(
            names.contains(&&server.name),
            "{} not in the document",
            server.name
        );
        assert!(server.timeout > Duration::ZERO && server.timeout <= toolnexus::context::MAX_TIMEOUT);
        match &server.transport {
            Transport::Remote { url, .. } => {
                let lower = url.to_ascii_lowercase();
                assert!(
                    lower.starts_with("http://") || lower.starts_with("https://"),
                    "{url}"
                );
            }
            Transport::Local { command, .. } => assert!(!command[0].is_empty()),
        }
    }
}

/// `text` with characters inserted or removed at the given places.
fn mutate(text: &str, edits: &[(prop::sample::Index, Option<char>)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for (at, edit) in edits {
        let i = at.index(chars.len() + 1);
        match edit {
            Some(c) => chars.insert(i, *c),
            None if i < chars.len() => {
                chars.remove(i);
            }
            None => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(cases(512))]

    /// A document parses or is refused with a message naming `<inline>`; the strict text
    /// parser (duplicate keys refused) agrees with serde_json on text without duplicates.
    #[test]
    fn mcp_config_documents_never_panic(doc in mcp_doc()) {
        let from_value = McpConfig::from_value(&doc);
        match &from_value {
            Ok(cfg) => check_config(&doc, cfg),
            Err(e) => prop_assert!(e.to_string().contains("<inline>"), "{e}"),
        }
        let text = doc.to_string();
        // (Through text, not `doc` itself: serde_json's float parsing is not exact.)
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(McpConfig::from_json_str(&text), McpConfig::from_value(&reparsed));
    }

    /// Broken JSON text (inserted and deleted characters) is an error, never a panic.
    #[test]
    fn mcp_config_text_never_panics(
        doc in mcp_doc(),
        edits in vec((any::<prop::sample::Index>(), proptest::option::of(select(vec!['"', '{', '}', ',', ':', '[', '\\', '\u{0}', 'é', ' ']))), 0..4),
    ) {
        let text = mutate(&doc.to_string(), &edits);
        if let Ok(cfg) = McpConfig::from_json_str(&text) {
            check_config(&serde_json::from_str(&text).unwrap(), &cfg);
        }
    }
}

// ---------------------------------------------------------------------------------------
// SKILL.md frontmatter
// ---------------------------------------------------------------------------------------

fn yaml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,16}",
        select(vec![
            "'quoted'",
            "\"dq \\\" x\"",
            "\"unterminated",
            "'",
            "3.10",
            "yes",
            "~",
            "null",
            "[a, b]",
            "{a: b}",
            "&anchor v",
            "*anchor",
            "*missing",
            "|",
            ">-",
            "!tag v",
            "!!binary aGk=",
            "é ü 中",
            "\t tab",
            "a: b: c",
            "- x",
            "%TAG",
            "@at",
            "`tick`",
            "\u{FEFF}bom",
        ])
        .prop_map(String::from),
        any::<String>(),
    ]
}

fn yaml_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (select(vec!["name", "description", "license", "metadata", "allowed-tools", "Name", " name", "name ", "? name"]), yaml_value())
            .prop_map(|(k, v)| format!("{k}: {v}")),
        2 => select(vec![
            "- item", "  nested: x", "#comment", "", "---", "...", "name:", "name: |", "  block line",
            "description: >-", "key: [1, 2", "key: {a: 1", "&a name: x", "<<: *a", "\t", "name: x\r",
        ])
        .prop_map(String::from),
        1 => "[ -~]{0,20}",
    ]
}

fn skill_md() -> impl Strategy<Value = String> {
    (
        select(vec!["---\n", "---\r\n", "--- \n", "", "\u{FEFF}---\n"]),
        vec(yaml_line(), 0..8),
        select(vec![
            "\n---\n",
            "\n---",
            "\r\n---\r\n",
            "\n",
            "\n--- \n",
            "\n----\n",
        ]),
        "[ -~\n]{0,40}",
    )
        .prop_map(|(open, lines, close, body)| format!("{open}{}{close}{body}", lines.join("\n")))
}

/// Discover the one SKILL.md under `root`, and render it through the `skill` tool.
fn discover(root: &Path) {
    let inventory = list_skills(&[root], &[]);
    assert_eq!(inventory.skills.len() + inventory.skipped.len(), 1);
    let options = toolnexus::skill::SkillOptions::default().dir(root);
    let source = toolnexus::skill::load_skills(&options);
    let _ = source.prompt();
    for skill in &inventory.skills {
        assert!(!skill.name.is_empty());
        let r = RT.block_on(
            source
                .tool()
                .execute(json!({"name": skill.name}), ToolContext::default()),
        );
        assert!(!r.is_error, "{}", r.output);
    }
}

proptest! {
    #![proptest_config(cases(384))]

    #[test]
    fn skill_frontmatter_never_panics(text in skill_md()) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("s")).unwrap();
        std::fs::write(dir.path().join("s/SKILL.md"), &text).unwrap();
        discover(dir.path());
    }
}

// ---------------------------------------------------------------------------------------
// apply_patch
// ---------------------------------------------------------------------------------------

fn patch_path() -> impl Strategy<Value = String> {
    select(vec![
        "a.txt",
        "./a.txt",
        "b.txt",
        "d/c.txt",
        "d",
        "d/",
        "new.txt",
        "n/e/w.txt",
        "../x.txt",
        "/tmp/toolnexus-fuzz-abs.txt",
        "a.txt/x",
        "link.txt",
        "",
        " ",
        "é.txt",
    ])
    .prop_map(String::from)
}

fn patch_line() -> impl Strategy<Value = String> {
    let t = || {
        select(vec![
            "one",
            "two",
            "three",
            "",
            " ",
            "x",
            "é",
            "*** End Patch",
            "@@",
        ])
    };
    prop_oneof![
        3 => (select(vec!["Add", "Update", "Delete", "Move", "add"]), patch_path())
            .prop_map(|(k, p)| format!("*** {k} File: {p}")),
        4 => (select(vec!["+", "-", " ", ""]), t()).prop_map(|(m, t)| format!("{m}{t}")),
        1 => select(vec!["@@", "@@ two", "*** Begin Patch", "*** End Patch", "", "***"]).prop_map(String::from),
    ]
}

fn patch_text() -> impl Strategy<Value = String> {
    (
        select(vec![
            "*** Begin Patch\n",
            "",
            "  *** Begin Patch\n",
            "\n*** Begin Patch\r\n",
        ]),
        vec(patch_line(), 0..12),
        select(vec!["\n*** End Patch", "\n*** End Patch\n", "", "\n"]),
    )
        .prop_map(|(open, lines, close)| format!("{open}{}{close}", lines.join("\n")))
}

/// Every file under `dir` with its content (a symlink as its target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                out.insert(
                    path.clone(),
                    format!("-> {}", std::fs::read_link(&path).unwrap().display()),
                );
            } else if meta.is_dir() {
                out.insert(path.clone(), "/".into());
                walk(&path, out);
            } else {
                out.insert(
                    path.clone(),
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

proptest! {
    #![proptest_config(cases(384))]

    /// Confined to a base inside a wrapper directory: a failed patch changes nothing, a
    /// successful one leaves no temporary file, and nothing ever appears outside the base.
    #[test]
    fn apply_patch_is_atomic_on_any_patch(text in patch_text()) {
        let wrapper = tempfile::tempdir().unwrap();
        let base = wrapper.path().join("base");
        std::fs::create_dir_all(base.join("d")).unwrap();
        std::fs::write(base.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(base.join("b.txt"), "x\n").unwrap();
        std::fs::write(base.join("d/c.txt"), "two\n").unwrap();
        std::os::unix::fs::symlink("a.txt", base.join("link.txt")).unwrap();
        let tk = Toolkit::new(builtin::select(&BuiltinsConfig::default().with_base_dir(&base).confined(true)));
        let before = snapshot(wrapper.path());
        let r = RT.block_on(tk.execute("apply_patch", json!({"patchText": text}), ToolContext::default()));
        let after = snapshot(wrapper.path());
        if r.is_error {
            prop_assert_eq!(&after, &before, "{}", r.output);
        } else {
            prop_assert!(r.output.starts_with("Applied patch: "), "{}", r.output);
        }
        for path in after.keys() {
            prop_assert!(path.starts_with(&base), "{} appeared outside the base", path.display());
            let name = path.file_name().unwrap().to_string_lossy();
            prop_assert!(!name.contains(".toolnexus"), "leftover {}", path.display());
        }
        prop_assert!(!Path::new("/tmp/toolnexus-fuzz-abs.txt").exists());
    }
}

// ---------------------------------------------------------------------------------------
// OpenAPI import
// ---------------------------------------------------------------------------------------

const SCHEMA_KEYS: &[&str] = &[
    "type",
    "properties",
    "items",
    "required",
    "$ref",
    "allOf",
    "description",
    "enum",
];

fn ref_target() -> impl Strategy<Value = Value> {
    select(vec![
        "#/components/schemas/A",
        "#/components/schemas/B",
        "#/components/parameters/P",
        "#/nope",
        "#",
        "#/",
        "other.yaml#/x",
        "#/components/schemas/A/properties/a",
        "#/paths/~1x~2",
        "#/components/schemas/A/items/0",
    ])
    .prop_map(|r| json!({ "$ref": r }))
}

fn schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => select(vec![json!({"type": "string"}), json!({"type": "integer"}), json!({})]),
        2 => ref_target(),
        1 => scalar(),
    ]
    .prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            vec((text(), inner.clone()), 0..4).prop_map(
                |props| json!({"type": "object", "properties": object(props), "required": ["a", 1]})
            ),
            inner
                .clone()
                .prop_map(|items| json!({"type": "array", "items": items})),
            vec(inner.clone(), 0..3).prop_map(|all| json!({"allOf": all})),
            vec((key(SCHEMA_KEYS), inner), 0..4).prop_map(object),
        ]
    })
}

fn parameter() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (text(), select(vec![json!("path"), json!("query"), json!("header"), json!("cookie"), json!(1)]), scalar(), schema())
            .prop_map(|(name, loc, required, schema)| json!({"name": name, "in": loc, "required": required, "schema": schema, "description": "d"})),
        1 => ref_target(),
        1 => scalar(),
    ]
}

fn operation() -> impl Strategy<Value = Value> {
    (
        prop_oneof![text().prop_map(Value::String), scalar()],
        vec(parameter(), 0..3),
        proptest::option::of(schema()),
        proptest::option::of(schema()),
        scalar(),
    )
        .prop_map(|(id, params, json_body, form_body, required)| {
            let mut content = Map::new();
            if let Some(s) = json_body {
                content.insert("application/json".into(), json!({ "schema": s }));
            }
            if let Some(s) = form_body {
                content.insert("application/x-www-form-urlencoded".into(), json!({ "schema": s }));
            }
            json!({
                "operationId": id, "summary": "s", "parameters": params,
                "requestBody": {"content": content, "required": required}
            })
        })
}

fn openapi_doc() -> impl Strategy<Value = Value> {
    let method = select(vec![
        "get",
        "put",
        "post",
        "delete",
        "patch",
        "trace",
        "parameters",
        "x-ext",
    ]);
    let item = vec(
        (
            method,
            prop_oneof![4 => operation(), 1 => ref_target(), 1 => scalar()],
        ),
        0..3,
    )
    .prop_map(|ops| object(ops.into_iter().map(|(m, o)| (m.to_owned(), o)).collect()));
    (
        vec((prop_oneof![text(), "/[a-z{}/]{0,10}"], item), 0..4),
        schema(),
        schema(),
        parameter(),
        select(vec![
            json!([{"url": "http://127.0.0.1:1/api/"}]),
            json!([{"url": ""}]),
            json!([]),
            json!("x"),
            json!([{"url": 5}]),
        ]),
    )
        .prop_map(|(paths, a, b, p, servers)| {
            json!({
                "openapi": "3.0.0",
                "servers": servers,
                "paths": object(paths),
                "components": {"schemas": {"A": a, "B": b}, "parameters": {"P": p}}
            })
        })
}

/// Import `source`; every tool it yields must be usable: a sanitized name and an object
/// schema that renders for every provider.
fn import(source: OpenApiSource) {
    let options = OpenApiOptions::default();
    if let Ok(tools) = RT.block_on(http_tools_from_openapi(source, options)) {
        for tool in &tools {
            assert!(
                tool.name()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{}",
                tool.name()
            );
            assert_eq!(tool.input_schema()["type"], "object", "{}", tool.input_schema());
        }
        let tk = Toolkit::new(tools);
        let _ = (tk.to_openai(), tk.to_anthropic(), tk.to_gemini());
    }
}

proptest! {
    #![proptest_config(cases(384))]

    #[test]
    fn openapi_documents_never_panic(doc in openapi_doc()) {
        let start = Instant::now();
        import(OpenApiSource::Value(doc));
        prop_assert!(start.elapsed() < Duration::from_secs(20), "import took {:?}", start.elapsed());
    }

    /// Text that is neither JSON nor YAML, or nearly one of them, through a file.
    #[test]
    fn openapi_text_never_panics(
        doc in openapi_doc(),
        yaml in any::<bool>(),
        edits in vec((any::<prop::sample::Index>(), proptest::option::of(select(vec!['"', '{', '}', ':', '-', '\n', ' ', '&', '*', '!', '|']))), 0..4),
    ) {
        let text = if yaml {
            serde_json::to_string_pretty(&doc).unwrap().replace(['{', '}', ','], "\n")
        } else {
            doc.to_string()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openapi.yaml");
        std::fs::write(&path, mutate(&text, &edits)).unwrap();
        import(OpenApiSource::Path(path));
    }
}

// ---------------------------------------------------------------------------------------
// Inputs that once failed, kept as explicit cases
// ---------------------------------------------------------------------------------------

/// Found reviewing `inline_refs` for the OpenAPI target (the generator above did not reach
/// it in 384 cases): a schema using a `$ref` to itself several times per level was inlined
/// to depth 16 — 4^16 copies, an import that never finished.
#[test]
fn regression_openapi_self_referencing_fan_out_is_bounded() {
    let a = json!({"type": "object", "properties": {
        "p": {"$ref": "#/components/schemas/A"}, "q": {"$ref": "#/components/schemas/A"},
        "r": {"$ref": "#/components/schemas/A"}, "s": {"$ref": "#/components/schemas/A"}
    }});
    let doc = json!({
        "servers": [{"url": "http://127.0.0.1:1"}],
        "paths": {"/x": {"post": {"operationId": "x", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}},
        "components": {"schemas": {"A": a}}
    });
    let start = Instant::now();
    let tools = RT
        .block_on(http_tools_from_openapi(
            OpenApiSource::Value(doc),
            OpenApiOptions::default(),
        ))
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    let schema = tools[0].input_schema().to_string();
    assert!(schema.len() < 2_000_000, "{} bytes", schema.len());
    assert!(
        schema.starts_with(r#"{"type":"object","properties":{"p":{"type":"object","properties":{"p":"#),
        "{schema:.200}"
    );
}

/// Found by `mcp_config_documents_never_panic`: run against the code before the fix (and
/// reported in the issue), a timeout of 1e308 panicked in `Duration::from_secs_f64`; after
/// it, 6.78e-199 ms passed as "positive" yet made a zero `Duration` (every phase timing out at
/// once).
#[test]
fn regression_mcp_timeout_out_of_range() {
    for t in [
        json!(1e308),
        json!(-1),
        json!(u64::MAX),
        json!(6.783664876934507e-199),
    ] {
        let err = McpConfig::from_value(&json!({"s": {"command": ["x"], "timeout": t}})).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"timeout\" must be a positive number of milliseconds"),
            "{err}"
        );
    }
}

/// Found writing the frontmatter target: a YAML alias bomb ("billion laughs", nine levels
/// of nine aliases) took 6.9 s per parse (debug build) under the parser's default budget. A
/// frontmatter's own budget refuses it at once, and the line-wise fallback still finds the
/// name and description.
#[test]
fn regression_skill_frontmatter_alias_bomb_is_bounded() {
    let mut yaml = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let p = i - 1;
        yaml.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("s")).unwrap();
    std::fs::write(
        dir.path().join("s/SKILL.md"),
        format!("---\nname: bomb\ndescription: d\n{yaml}---\nbody\n"),
    )
    .unwrap();
    let start = Instant::now();
    discover(dir.path());
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    let inventory = list_skills(&[dir.path()], &[]);
    assert_eq!(inventory.skills[0].name, "bomb");
    assert_eq!(inventory.skills[0].description.as_deref(), Some("d"));
}

/// An OpenAPI document in YAML is read whole into a tree: an alias bomb (nine levels of nine
/// aliases, 387 million nodes expanded) and nesting thousands of levels deep, in a file of a
/// few KB, are refused with where they were found, at once and without the memory they would
/// expand to. The bomb passes its 250,000 copied nodes at l5's second alias (l0..l4 anchored
/// and aliased copy 149,450 nodes, each alias of l4 66,430 more).
#[test]
fn regression_openapi_yaml_alias_bomb_and_deep_nesting_are_bounded() {
    let mut bomb =
        String::from("servers: [{url: 'http://127.0.0.1:1'}]\nl0: &l0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let p = i - 1;
        bomb.push_str(&format!(
            "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
        ));
    }
    bomb.push_str("paths: {}\n");
    let deep = format!("paths:\n  x:\n    {}x\n", "- ".repeat(5_000));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openapi.yaml");
    for (doc, message) in [
        (
            bomb,
            "anchors and aliases expand to more than 250000 nodes at line 7 column 15",
        ),
        (deep, "nested deeper than 128 levels at line 3 column 257"),
    ] {
        std::fs::write(&path, doc).unwrap();
        let start = Instant::now();
        let err = RT
            .block_on(http_tools_from_openapi(
                OpenApiSource::Path(path.clone()),
                OpenApiOptions::default(),
            ))
            .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
        assert_eq!(
            err.to_string(),
            format!(
                "OpenAPI spec {}: not valid JSON or YAML: {message}",
                path.display()
            )
        );
    }
}
