//! Skill source (SPEC §3) against real files in temp dirs, compared byte for byte with the
//! Python port 0.21.0.
//!
//! The expected JSON below was produced by the Python port on the same trees:
//! `python tests/skills_reference.py ROOT [LIMIT]` (the tree is built by `corpus()`); the
//! root path is replaced by `{ROOT}` on both sides. Set `TOOLNEXUS_PY=/path/to/python` (with
//! toolnexus 0.21.0 importable) to also run the Python port live on the very same temp dir.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use toolnexus::ToolContext;
use toolnexus::skill::{
    SampleLimit, SkillDef, SkillOptions, SkillOrigin, SkillProvider, SkipReason, list_skills, load_skills,
};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn fixture_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/hello-world")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A skills root under `tmp` holding just the hello-world fixture.
fn fixture_root(tmp: &Path) -> std::path::PathBuf {
    let root = tmp.join("skills");
    copy_dir(&fixture_dir(), &root.join("hello-world"));
    root
}

/// A tree exercising every discovery rule: the fixture, ordering by depth then code point,
/// duplicates, missing/malformed frontmatter, the line-wise rescue, symlinked dirs (in and
/// out of tree, and a cycle), CRLF, a space and non-ASCII in paths, >10 sibling files,
/// ignored dirs and a nested SKILL.md.
fn corpus(tmp: &Path) -> std::path::PathBuf {
    let root = fixture_root(tmp);
    write(
        &root,
        "z top/SKILL.md",
        "---\nname: dup\ndescription: the top one\n---\nTop body.\n",
    );
    write(
        &root,
        "a/deep/er/SKILL.md",
        "---\nname: dup\ndescription: nested copy\n---\nDeep.\n",
    );
    write(
        &root,
        "big/SKILL.md",
        "---\nname: big\ndescription: >\n  Folded over\n  two lines.\n---\n\n  Body with |literal| text.\n\n",
    );
    for f in [
        "c.txt",
        "B.txt",
        "a.txt",
        "é.txt",
        "sub/x.md",
        "sub/deeper/y.md",
        "Z.md",
    ] {
        write(&root, &format!("big/{f}"), "x");
    }
    for i in 0..6 {
        write(&root, &format!("big/many/f{i}.txt"), "x");
    }
    write(&root, "big/node_modules/ignored.js", "x");
    write(&root, "big/.git/HEAD", "x");
    write(
        &root,
        "big/inner/SKILL.md",
        "---\nname: inner\ndescription: nested skill\n---\nInner.\n",
    );
    write(
        &root,
        "nodesc/SKILL.md",
        "---\nname: nodesc\n---\nNo description.\n",
    );
    write(
        &root,
        "missing/SKILL.md",
        "---\ndescription: no name here\n---\nBody.\n",
    );
    write(
        &root,
        "broken/SKILL.md",
        "---\nname: [oops\ndescription: x\n---\nBody.\n",
    );
    write(
        &root,
        "rescued/SKILL.md",
        "---\nname: rescued\ndescription: \"a\" b\n---\nBody.\n",
    );
    write(
        &root,
        "crlf/SKILL.md",
        "---\r\nname: crlf\r\ndescription: windows\r\n---\r\nLine 1\r\nLine 2\r\n",
    );
    write(
        &root,
        "empty/SKILL.md",
        "---\nname: empty\ndescription: \"\"\n---\n",
    );
    write(
        &root,
        "quoted/SKILL.md",
        "---\nname: \"q: x\"\ndescription: 'it''s'\n---\nQ.\n",
    );
    write(&root, "nofront/SKILL.md", "Just a body.\n");
    // YAML edge cases the two parsers must read alike (PyYAML vs yaml-rust2 and toolnexus::yaml).
    for (dir, fm) in YAML_CASES {
        write(
            &root,
            &format!("yaml/{dir}/SKILL.md"),
            &format!("---\n{fm}---\nbody\n"),
        );
    }
    write(
        tmp,
        "outside/ext/SKILL.md",
        "---\nname: ext\ndescription: out of tree\n---\nExt.\n",
    );
    write(tmp, "outside/ext/tool.py", "x");
    std::os::unix::fs::symlink(tmp.join("outside/ext"), root.join("linked")).unwrap();
    std::os::unix::fs::symlink("..", root.join("big/sub/loop")).unwrap();
    root
}

const YAML_CASES: [(&str, &str); 27] = [
    ("lit", "name: lit\ndescription: |\n  line one\n  line two\n"),
    ("litkeep", "name: litkeep\ndescription: |+\n  keep\n\n"),
    ("fold", "name: fold\ndescription: >-\n  a\n  b\n\n  c\n"),
    ("multi", "name: multi\ndescription: plain\n  continued here\n"),
    ("dq", "name: dq\ndescription: \"esc \\\"q\\\" \\t tab \\u00e9\"\n"),
    ("sq", "name: sq\ndescription: 'a ''b'' c'\n"),
    (
        "comment",
        "name: comment # trailing\ndescription: has # not comment\n",
    ),
    ("colon", "name: colon\ndescription: a: b\n"),
    ("tab", "name: tab\ndescription:\tx\n"),
    ("anchor", "name: anchor\nx: &a hello\ndescription: *a\n"),
    ("list", "name: list\ndescription: [a, b]\n"),
    ("map", "name: map\ndescription: {a: 1}\n"),
    ("nulld", "name: nulld\ndescription: ~\n"),
    ("emptyd", "name: emptyd\ndescription:\n"),
    ("tagstr", "name: tagstr\ndescription: !!str 12\n"),
    ("unicode", "name: unicode\ndescription: héllo ✓ 日本\n"),
    (
        "dupkey",
        "name: dupkey\ndescription: first\ndescription: second\n",
    ),
    ("indent", "  name: indent\n  description: x\n"),
    ("badindent", "name: badindent\n description: x\n"),
    ("quotedname", "name: 'quoted name'\ndescription: q\n"),
    ("numstr", "name: numstr\ndescription: '3.10'\n"),
    ("tabs2", "name: tabs2\ndescription: \"a\tb\"\n"),
    ("bom", "\u{feff}name: bom\ndescription: x\n"),
    ("nl", "name: nl\ndescription: \"line\\nbreak\"\n"),
    ("trailing", "name: trailing   \ndescription:    spaced   \n"),
    ("directive", "%YAML 1.2\n---\nname: directive\ndescription: d\n"),
    ("merge", "base: &b {k: v}\nname: merge\ndescription: m\n<<: *b\n"),
];

/// The Rust port's view, in the shape `skills_reference.py` prints.
async fn view(root: &Path, sample_limit: i64) -> Value {
    let r = root.to_str().unwrap();
    let sub = |s: &str| s.replace(r, "{ROOT}");
    let inv = list_skills(&[root], &[]);
    let src = load_skills(
        &SkillOptions::default()
            .dir(root)
            .sample_limit(sample_limit.into()),
    );
    let mut names: Vec<String> = src.skills().iter().map(|s| s.name.clone()).collect();
    names.push("nope".into());
    names.sort();
    let mut tool = serde_json::Map::new();
    for name in names {
        let res = src
            .tool()
            .execute(json!({ "name": name }), ToolContext::default())
            .await;
        let meta: serde_json::Map<String, Value> = res
            .metadata
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, Value::String(sub(v.as_str().unwrap()))))
            .collect();
        tool.insert(
            name,
            json!({"output": sub(&res.output), "isError": res.is_error, "metadata": meta}),
        );
    }
    json!({
        "skills": inv.skills.iter()
            .map(|s| json!({"name": s.name, "description": s.description, "location": sub(&s.location)}))
            .collect::<Vec<_>>(),
        "skipped": inv.skipped.iter()
            .map(|s| json!({"location": sub(&s.location), "reason": s.reason.as_str()}))
            .collect::<Vec<_>>(),
        "prompt": src.prompt(),
        "tool": tool,
    })
}

/// Runs the Python port on the same tree when `TOOLNEXUS_PY` is set.
fn python_view(root: &Path, sample_limit: i64) -> Option<Value> {
    let py = std::env::var("TOOLNEXUS_PY").ok()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skills_reference.py");
    let out = std::process::Command::new(py)
        .arg(script)
        .arg(root)
        .arg(sample_limit.to_string())
        .output()
        .expect("run python");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// [`view`], and equal to the Python port's on the same tree when `TOOLNEXUS_PY` is set.
async fn view_checked(root: &Path, sample_limit: i64) -> Value {
    let v = view(root, sample_limit).await;
    if let Some(py) = python_view(root, sample_limit) {
        assert_eq!(v, py);
    }
    v
}

const HELLO_OUTPUT: &str = "<skill_content name=\"hello-world\">
# Skill: hello-world

# Hello World Skill

This is the skill body. When the model calls the `skill` tool with
`{ \"name\": \"hello-world\" }`, everything below the frontmatter is injected into the
conversation, along with a sampled list of files in this directory.

## Steps

1. Read `scripts/greet.sh` in this skill's base directory.
2. Run it with the user's name.
3. Report the greeting back.

Relative paths (like `scripts/greet.sh`) are resolved against the base directory
printed in the tool output.

Base directory for this skill: file://{ROOT}/hello-world
Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
Note: file list is sampled.

<skill_files>
<file>{ROOT}/hello-world/scripts/greet.sh</file>
</skill_files>
</skill_content>";

#[tokio::test]
async fn fixture_skill_output_is_byte_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fixture_root(tmp.path());
    let v = view_checked(&root, 0).await;
    assert_eq!(v["tool"]["hello-world"]["output"], HELLO_OUTPUT);
    assert_eq!(v["tool"]["hello-world"]["isError"], false);
    assert_eq!(
        v["tool"]["hello-world"]["metadata"],
        json!({"name": "hello-world", "dir": "{ROOT}/hello-world"})
    );
    assert_eq!(
        v["prompt"],
        "Skills provide specialized instructions and workflows for specific tasks.\n\
         Use the skill tool to load a skill when a task matches its description.\n\n\
         ## Available Skills\n\
         - **hello-world**: A tiny example skill. Use when you want to see how skill loading (progressive disclosure) works end to end."
    );
    assert_eq!(
        v["tool"]["nope"]["output"],
        "Skill \"nope\" not found. Available skills: hello-world"
    );
    assert_eq!(v["tool"]["nope"]["isError"], true);
}

/// The Python port's output on `corpus()`, written by this test when run with
/// `TOOLNEXUS_PY=... TOOLNEXUS_BLESS=1` after the live comparison passed.
const CORPUS_EXPECTED: &str = include_str!("skills_corpus_expected.json");

#[tokio::test]
async fn corpus_matches_python_port() {
    let tmp = tempfile::tempdir().unwrap();
    let root = corpus(tmp.path());
    let v = view(&root, 0).await;
    if let Some(py) = python_view(&root, 0) {
        assert_eq!(v, py, "live comparison with the Python port");
        if std::env::var_os("TOOLNEXUS_BLESS").is_some() {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skills_corpus_expected.json");
            fs::write(path, serde_json::to_string_pretty(&py).unwrap() + "\n").unwrap();
            return;
        }
    }
    let expected: Value = serde_json::from_str(CORPUS_EXPECTED).unwrap();
    assert_eq!(v, expected);
}

#[tokio::test]
async fn sample_limit_caps_or_omits_the_file_list() {
    let tmp = tempfile::tempdir().unwrap();
    let root = corpus(tmp.path());
    let v = view_checked(&root, 2).await;
    let out = v["tool"]["big"]["output"].as_str().unwrap();
    assert!(
        out.ends_with("<skill_files>\n<file>{ROOT}/big/B.txt</file>\n<file>{ROOT}/big/Z.md</file>\n</skill_files>\n</skill_content>"),
        "{out}"
    );
    let v = view_checked(&root, -1).await;
    let out = v["tool"]["big"]["output"].as_str().unwrap();
    assert!(
        out.ends_with("relative to this base directory.\n</skill_content>"),
        "{out}"
    );
    assert!(!out.contains("sampled"));
}

#[tokio::test]
async fn data_skills_use_a_logical_base_and_come_after_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fixture_root(tmp.path());
    let defs = vec![
        SkillDef::new("hello-world", "shadowed by the directory skill"),
        SkillDef::new("doc", "  Use the docs.  ")
            .with_description("Docs")
            .with_resources(["a.md", "b.md", "c.md"]),
        SkillDef::new("custom", "x")
            .with_base("mem://custom/")
            .with_resources(["r"]),
        SkillDef::new("", "no name").with_base("mem://anon/"),
    ];
    let inv = list_skills(&[&root], &defs);
    let names: Vec<&str> = inv.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["hello-world", "doc", "custom"]);
    assert_eq!(
        inv.skills[1].origin,
        SkillOrigin::Data {
            resources: vec!["a.md".into(), "b.md".into(), "c.md".into()]
        }
    );
    let reasons: Vec<(&str, SkipReason)> = inv
        .skipped
        .iter()
        .map(|s| (s.location.as_str(), s.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            ("skill://hello-world/", SkipReason::DuplicateName),
            ("mem://anon/", SkipReason::MissingName)
        ]
    );

    let src = load_skills(
        &SkillOptions::default()
            .dir(root)
            .defs(defs)
            .sample_limit(SampleLimit::AtMost(2)),
    );
    let r = src
        .tool()
        .execute(json!({"name": "doc"}), ToolContext::default())
        .await;
    assert_eq!(
        r.output,
        "<skill_content name=\"doc\">\n# Skill: doc\n\nUse the docs.\n\n\
         Base directory for this skill: skill://doc/\n\
         Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.\n\
         Note: file list is sampled.\n\n<skill_files>\n<file>a.md</file>\n<file>b.md</file>\n</skill_files>\n</skill_content>"
    );
    assert_eq!(
        r.metadata.unwrap(),
        *json!({"name": "doc", "dir": "skill://doc/"}).as_object().unwrap()
    );
    let r = src
        .tool()
        .execute(json!({"name": "custom"}), ToolContext::default())
        .await;
    assert!(
        r.output
            .contains("Base directory for this skill: mem://custom/\n"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn filter_allowlists_droplists_and_ignores_unknown_names() {
    let defs: Vec<SkillDef> = ["a", "b", "c"]
        .iter()
        .map(|n| SkillDef::new(*n, "x").with_description(*n))
        .collect();
    let names = |filter: &[(&str, bool)]| {
        let filter: BTreeMap<String, bool> = filter.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let src = load_skills(&SkillOptions::default().defs(defs.clone()).filter(filter));
        src.skills().iter().map(|s| s.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(names(&[]), ["a", "b", "c"]);
    assert_eq!(names(&[("b", true), ("c", false), ("zz", true)]), ["b"]);
    assert_eq!(names(&[("b", false), ("zz", false)]), ["a", "c"]);
    // The prompt and the tool agree with the filter.
    let filter = BTreeMap::from([("a".to_string(), true)]);
    let src = load_skills(&SkillOptions::default().defs(defs).filter(filter));
    assert!(src.prompt().ends_with("## Available Skills\n- **a**: a"));
    let r = src
        .tool()
        .execute(json!({"name": "b"}), ToolContext::default())
        .await;
    assert_eq!(r.output, "Skill \"b\" not found. Available skills: a");
}

#[tokio::test]
async fn no_skills_and_bad_arguments() {
    let src = load_skills(&SkillOptions::default());
    assert_eq!(src.prompt(), "No skills are currently available.");
    let r = src.tool().execute(json!({}), ToolContext::default()).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"Skill \"\" not found. Available skills: none","isError":true}"#
    );
    let r = src
        .tool()
        .execute(json!({"name": 7}), ToolContext::default())
        .await;
    assert_eq!(r.output, "Skill \"7\" not found. Available skills: none");
    // A missing root is warned about, not fatal.
    let inv = list_skills(&["/definitely/not/here"], &[]);
    assert!(inv.skills.is_empty() && inv.skipped.is_empty());
}

#[test]
fn unreadable_and_non_utf8_files_are_typed_skips() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "bin/SKILL.md", "");
    fs::write(tmp.path().join("bin/SKILL.md"), b"---\nname: \xff\n---\n").unwrap();
    write(tmp.path(), "ok/SKILL.md", "---\nname: ok\n---\n");
    let inv = list_skills(&[tmp.path()], &[]);
    assert_eq!(inv.skills.len(), 1);
    assert_eq!(inv.skipped.len(), 1);
    assert_eq!(inv.skipped[0].reason, SkipReason::Unreadable);
    assert!(inv.skipped[0].location.ends_with("bin/SKILL.md"));
}

#[tokio::test]
async fn yaml_scalars_keep_source_text() {
    // Python's PyYAML would give "3.1", "True" and drop the date; the SPEC says keep the text.
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "v/SKILL.md",
        "---\nname: 3.10\ndescription: yes\n---\nBody\n",
    );
    let inv = list_skills(&[tmp.path()], &[]);
    assert_eq!(inv.skills[0].name, "3.10");
    assert_eq!(inv.skills[0].description.as_deref(), Some("yes"));
}

#[tokio::test]
async fn provider_failures_and_panics_are_isolated() {
    let ok = SkillProvider::new(|| async { Ok(vec![SkillDef::new("p", "from provider")]) });
    let failing = SkillProvider::new(|| async { Err("backend down".into()) });
    let panicking = SkillProvider::new(|| async { panic!("boom") });
    assert_eq!(ok.resolve().await[0].name, "p");
    assert!(failing.resolve().await.is_empty());
    assert!(panicking.resolve().await.is_empty());
}
