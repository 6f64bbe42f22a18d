//! `agents! {}` (compile-time checked team declarations) against the real runtime, and the
//! runtime check's wording for the same mistakes in agents built as data. The refusals at
//! compile time are pinned by trybuild in toolnexus-macros/tests/ui/agents/fail.

use serde_json::{Value, json};
use toolnexus::agents::{AgentDef, AgentRuntime, Budget, Registry, TaskStatus};
use toolnexus::client::HttpResponse;
use toolnexus::client::transport::from_fn;
use toolnexus::client::{Client, Style};
use toolnexus::{agents, tool};

/// Look a term up.
#[tool]
fn lookup(q: String) -> String {
    format!("data({q})")
}

#[tokio::test]
async fn a_declared_team_runs_with_its_tools_and_settings() {
    let registry = agents! {
        tools: [lookup];
        coordinator { does: "splits and delegates", team: [explore], model: "m-coord", budget: Budget::new().max_turns(4) },
        explore { does: "read-only research", uses: [lookup], soul: "You research." },
    }
    .unwrap();
    assert_eq!(registry.names(), ["coordinator", "explore"]);
    assert_eq!(registry.get("coordinator").unwrap().team_names(), ["explore"]);
    assert_eq!(registry.get("explore").unwrap().model_name(), "inherit");

    let model = from_fn(|req| async move {
        let body = req.json();
        let msgs = body["messages"].as_array().unwrap().clone();
        let tool_msg = msgs
            .iter()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].clone());
        let call = |name: &str, args: Value| {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]})
        };
        let message = match (body["model"].as_str().unwrap(), tool_msg) {
            ("m-coord", None) => call("task", json!({"agent": "explore", "prompt": "find x"})),
            ("m-coord", Some(t)) => {
                json!({"role": "assistant", "content": format!("coordinator: {}", t.as_str().unwrap())})
            }
            (_, None) => {
                assert_eq!(msgs[0], json!({"role": "system", "content": "You research."}));
                call("lookup", json!({"q": "x"}))
            }
            (_, Some(t)) => json!({"role": "assistant", "content": t}),
        };
        Ok(HttpResponse::json(&json!({"choices": [{"message": message}]})))
    });
    let rt = AgentRuntime::builder(
        Client::builder()
            .base_url("http://127.0.0.1:9/v1")
            .style(Style::OpenAi)
            .model("m-default")
            .api_key("k")
            .transport(model),
    )
    .build(registry)
    .unwrap();
    let r = rt.run("coordinator", "go").await.unwrap();
    assert_eq!(
        (r.status, r.text.as_str()),
        (TaskStatus::Done, "coordinator: data(x)")
    );
}

/// The runtime refuses agents built as data with the words the macro uses at compile time.
#[test]
fn runtime_checks_use_the_macros_wording() {
    let err = |defs: Vec<AgentDef>| Registry::new(defs).unwrap_err().to_string();
    assert_eq!(
        err(vec![AgentDef::new("coordinator", "x").team(["explorer"])]),
        "agent `coordinator` lists `explorer` in its team, but no agent `explorer` is declared"
    );
    let tk = toolnexus::toolkit![lookup];
    assert_eq!(
        err(vec![AgentDef::new("explore", "x").uses_from(&tk, ["lokup"])]),
        "agent `explore` uses `lokup`, but no tool `lokup` is declared"
    );
    assert_eq!(
        err(vec![AgentDef::new("explore", "x"), AgentDef::new("explore", "y")]),
        "duplicate agent name `explore`"
    );
    assert_eq!(
        err(vec![
            AgentDef::new("a", "x").team(["b"]),
            AgentDef::new("b", "y").team(["a"])
        ]),
        "team cycle: a → b → a"
    );
}
