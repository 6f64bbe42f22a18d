//! The ten built-in tools (SPEC §4A), exercised through their public `Tool`s against real
//! files in temp dirs, real child processes and a real HTTP server on 127.0.0.1.

use serde_json::{Value, json};
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{ToolContext, ToolResult, ToolSource, Toolkit, adapter};

/// Run one built-in by name with default context.
async fn call(name: &str, args: Value) -> ToolResult {
    let tool = builtin::all()
        .into_iter()
        .find(|t| t.name() == name)
        .expect("a built-in");
    tool.execute(args, ToolContext::default()).await
}

// ---------------------------------------------------------------------------------------
// Names, schemas, selection
// ---------------------------------------------------------------------------------------

/// `tests/fixtures/builtins_openai.json` is the Python port 0.21.0's output, produced with
///
/// ```sh
/// /work/ref/venv/bin/python -c 'import json, toolnexus; print(json.dumps(toolnexus.to_openai(toolnexus.create_builtin_tools()), separators=(",", ":"), ensure_ascii=False), end="")' > tests/fixtures/builtins_openai.json
/// ```
///
/// (compact JSON, raw UTF-8, in the ports' fixed build order).
#[test]
fn openai_schemas_match_the_python_port_byte_for_byte() {
    let expected = include_str!("fixtures/builtins_openai.json");
    let ours = serde_json::to_string(&adapter::to_openai(&builtin::all())).unwrap();
    assert_eq!(ours, expected);
    // Through a Toolkit the order is by name; the per-tool JSON is unchanged.
    let fixture: Vec<Value> = serde_json::from_str(expected).unwrap();
    let mut by_name: Vec<String> = fixture.iter().map(|t| t.to_string()).collect();
    by_name.sort_by_key(|t| serde_json::from_str::<Value>(t).unwrap()["function"]["name"].to_string());
    let tk = Toolkit::new(builtin::all());
    let sorted: Vec<String> = tk.to_openai().iter().map(|t| t.to_string()).collect();
    assert_eq!(sorted, by_name);
}

#[test]
fn all_is_the_ten_in_build_order_with_source_builtin() {
    let tools = builtin::all();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, builtin::NAMES);
    assert!(tools.iter().all(|t| t.source() == ToolSource::Builtin));
}

#[test]
fn select_applies_the_whole_source_toggle_and_the_per_tool_map() {
    let names = |c: &BuiltinsConfig| {
        builtin::select(c)
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    let parse = |v: Value| serde_json::from_value::<BuiltinsConfig>(v).unwrap();
    assert_eq!(names(&BuiltinsConfig::default()), builtin::NAMES);
    assert_eq!(names(&parse(json!(null))), builtin::NAMES);
    assert_eq!(names(&parse(json!(true))), builtin::NAMES);
    for off in [
        json!(false),
        json!({"disabled": true}),
        json!({"enabled": false}),
        json!({"disabled": true, "enabled": true}),
    ] {
        assert!(names(&parse(off.clone())).is_empty(), "{off}");
    }
    // Whole-source-off short-circuits the map.
    assert!(names(&parse(json!({"enabled": false, "tools": {"bash": true}}))).is_empty());
    // Per-tool map on the all-on baseline; unknown names ignored; true keeps.
    let c = parse(json!({"tools": {"bash": false, "write": false, "read": true, "nope": false}}));
    assert_eq!(
        names(&c),
        [
            "read",
            "edit",
            "grep",
            "glob",
            "webfetch",
            "question",
            "apply_patch",
            "todowrite"
        ]
    );
    assert_eq!(
        names(&parse(json!({"disabled": false, "enabled": true}))).len(),
        10
    );
    // Other keys of a config object are not ours to refuse.
    assert_eq!(names(&parse(json!({"base_dir": "/x"}))).len(), 10);
}

#[test]
fn config_rejects_wrong_types_with_a_clear_error() {
    for bad in [
        json!("off"),
        json!(1),
        json!({"tools": {"bash": "no"}}),
        json!({"disabled": "yes"}),
        json!({"tools": []}),
    ] {
        let err = serde_json::from_value::<BuiltinsConfig>(bad.clone())
            .unwrap_err()
            .to_string();
        assert!(err.contains("invalid type"), "{bad}: {err}");
    }
}
