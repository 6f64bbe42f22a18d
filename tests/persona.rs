//! Personas (SPEC §7E) against the shared fixture tests/fixtures/agents/persona-agent.json:
//! its `bootstrapDir` written to a temp dir, its scripted models (`mockLLM.scripts`) played
//! over the real OpenAI wire by an injected transport, and every H1–H5 `expect` key that a
//! plain client can reach (the §7D runtime's child agent and inbox are not used here).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::agents::{AgentDef, AgentRuntime, Registry, VirtualClock};
use toolnexus::client::transport::{HttpResponse, HttpTransport, from_fn};
use toolnexus::client::{Client, Style};
use toolnexus::persona::{
    BOOTSTRAP_ORDER, Beat, HEARTBEAT_PROMPT, Heartbeat, MAX_FILE_BYTES, Persona, PersonaError, memory_tool,
};
use toolnexus::{ToolContext, ToolResult, Toolkit, ToolkitOptions};
use toolnexus_mock::{Call, Reply, openai_response};

fn fixture() -> Value {
    let text = std::fs::read_to_string("tests/fixtures/agents/persona-agent.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The fixture's `bootstrapDir` (or another `{file: text}` map) written to a fresh temp dir.
fn home(files: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files.as_object().unwrap() {
        std::fs::write(dir.path().join(name), text.as_str().unwrap()).unwrap();
    }
    dir
}

/// What a scripted model saw: every request body, in order.
type Seen = Arc<Mutex<Vec<Value>>>;

fn system_of(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or("").to_owned()
}

fn last_user(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let m = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    m["content"].as_str().unwrap_or("").to_owned()
}

/// The fixture's `mockLLM.scripts`, played on the OpenAI wire.
fn script(name: &str, body: &Value) -> Reply {
    let system = system_of(body);
    let tool_msgs: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    match name {
        "m-echo-soul" => {
            let found: Vec<&str> = BOOTSTRAP_ORDER
                .iter()
                .copied()
                .filter(|f| system.contains(&format!("## {f}")))
                .collect();
            Reply::Text(format!("sections:[{}]", found.join(",")))
        }
        "m-remember" if tool_msgs.is_empty() => Reply::Calls(vec![Call {
            id: "call_1".into(),
            name: "memory".into(),
            arguments: json!({"action": "add", "target": "user", "text": "Prefers dark roast"}),
        }]),
        "m-remember" => Reply::Text(format!("saved: {}", tool_msgs[0]["content"].as_str().unwrap())),
        "m-recall" if system.contains("Prefers dark roast") => Reply::Text("I recall: dark roast".into()),
        "m-recall" => Reply::Text("no memory".into()),
        "m-heartbeat"
            if system.contains("remind about the 3pm sync") && last_user(body).contains("Heartbeat") =>
        {
            Reply::Text("Reminder: 3pm sync 🔔".into())
        }
        "m-heartbeat" => Reply::Text("HEARTBEAT_OK".into()),
        other => panic!("no script {other}"),
    }
}

fn model(name: &'static str, seen: Seen) -> Arc<dyn HttpTransport> {
    from_fn(move |req| {
        let body = req.json();
        let reply = script(name, &body);
        seen.lock().unwrap().push(body);
        // The fixture's usagePerCall.
        let text = openai_response("mock-model", &reply, (30, 10));
        async move { Ok(HttpResponse::new(200, vec![], text)) }
    })
}

/// A client whose system prompt is the persona's soul, talking to script `name`.
fn persona_client(persona: &Persona, transport: Arc<dyn HttpTransport>) -> Client {
    Client::builder()
        .base_url("http://127.0.0.1:9/v1")
        .style(Style::OpenAi)
        .model("mock-model")
        .api_key("test-key")
        .system_prompt(persona.soul())
        .transport(transport)
        .build()
        .unwrap()
}

#[tokio::test]
async fn h1_sections_in_order_reach_the_system_prompt() {
    let f = fixture();
    assert_eq!(f["bootstrapOrder"], json!(BOOTSTRAP_ORDER));
    assert_eq!(f["maxFileBytes"], MAX_FILE_BYTES);
    let dir = home(&f["bootstrapDir"]);
    let persona = Persona::from_dir(dir.path()).unwrap();
    assert_eq!(
        json!(persona.sections()),
        f["expect"]["H1_composedSoulSectionsInOrder"]
    );
    assert_eq!(
        persona.soul(),
        "## SOUL.md\n\nYou are Ava, a calm support assistant.\n\n## USER.md\n\nThe user is Muthu; timezone IST.\n\n\
         ## HEARTBEAT.md\n\nIf it is time, remind about the 3pm sync.\n\n## MEMORY.md\n\n- Onboarded 2026-07."
    );
    // The same soul on a plain client's conversation (the CLI's path).
    let seen = Seen::default();
    let client = persona_client(&persona, model("m-echo-soul", seen.clone()));
    let r = client.run("who are you?", &Toolkit::default()).await.unwrap();
    assert_eq!(r.text, "sections:[SOUL.md,USER.md,HEARTBEAT.md,MEMORY.md]");
    assert_eq!(system_of(&seen.lock().unwrap()[0]), persona.soul());
}

#[test]
fn all_seven_files_compose_in_bootstrap_order_whatever_order_they_were_written() {
    let dir = tempfile::tempdir().unwrap();
    for name in BOOTSTRAP_ORDER.iter().rev() {
        std::fs::write(dir.path().join(name), format!("  {name} body\n\n")).unwrap();
    }
    std::fs::write(dir.path().join("NOTES.md"), "not a bootstrap file").unwrap();
    let persona = Persona::from_dir(dir.path()).unwrap();
    assert_eq!(persona.sections(), BOOTSTRAP_ORDER);
    let expected: Vec<String> = BOOTSTRAP_ORDER
        .iter()
        .map(|n| format!("## {n}\n\n{n} body"))
        .collect();
    assert_eq!(persona.soul(), expected.join("\n\n"));
    assert!(persona.truncated().is_empty());
}

#[test]
fn h2_a_file_over_the_cap_is_cut_with_a_notice_and_left_untouched_on_disk() {
    assert_eq!(fixture()["expect"]["H2_over2MBFileTruncatedWithNotice"], true);
    let dir = tempfile::tempdir().unwrap();
    // 3 MB of two-byte characters after one ASCII byte: the cap falls inside a character.
    let soul = format!("x{}", "é".repeat(3 * 1024 * 1024 / 2));
    std::fs::write(dir.path().join("SOUL.md"), &soul).unwrap();
    std::fs::write(dir.path().join("MEMORY.md"), "- kept").unwrap();
    let persona = Persona::from_dir(dir.path()).unwrap();
    assert_eq!(persona.truncated(), ["SOUL.md"]);
    assert_eq!(persona.sections(), ["SOUL.md", "MEMORY.md"]);
    let notice = format!(
        "\n\n[truncated: SOUL.md is {} bytes; only its first {MAX_FILE_BYTES} bytes are loaded]",
        soul.len()
    );
    let body = persona
        .soul()
        .strip_prefix("## SOUL.md\n\n")
        .unwrap()
        .split_once(&notice)
        .expect("notice after the cut body")
        .0;
    // The last whole character within the cap: 1 + 2·1048575 bytes.
    assert_eq!(body.len(), MAX_FILE_BYTES - 1);
    assert_eq!(body, &soul[..MAX_FILE_BYTES - 1]);
    assert!(persona.soul().ends_with("## MEMORY.md\n\n- kept"));
    assert_eq!(std::fs::read_to_string(dir.path().join("SOUL.md")).unwrap(), soul);
}

#[test]
fn a_missing_directory_and_a_non_utf8_file_are_typed_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("nope");
    let err = Persona::from_dir(&gone).unwrap_err();
    assert!(matches!(&err, PersonaError::NotFound { dir } if *dir == gone));
    assert_eq!(
        err.to_string(),
        format!("persona directory not found: {}", gone.display())
    );
    std::fs::write(dir.path().join("USER.md"), b"ok \xff\xfe").unwrap();
    let err = Persona::from_dir(dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: not UTF-8 text (invalid byte at offset 3)",
            dir.path().join("USER.md").display()
        )
    );
    // A bootstrap name that is a directory cannot be read: a read error naming it.
    std::fs::remove_file(dir.path().join("USER.md")).unwrap();
    std::fs::create_dir(dir.path().join("SOUL.md")).unwrap();
    let err = Persona::from_dir(dir.path()).unwrap_err();
    assert!(
        matches!(&err, PersonaError::Read { file, .. } if file.ends_with("SOUL.md")),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
}

async fn memory(dir: &Path, args: Value) -> ToolResult {
    memory_tool(dir).execute(args, ToolContext::default()).await
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[tokio::test]
async fn h3_add_replace_remove_and_the_loud_miss() {
    let f = fixture();
    let e = &f["expect"];
    let dir = home(&f["bootstrapDir"]);
    let d = dir.path();
    // H3_memoryAddAppendsEntry (target defaults to self: MEMORY.md).
    assert_eq!(e["H3_memoryAddAppendsEntry"], true);
    let r = memory(d, json!({"action": "add", "text": "Ships on Fridays"})).await;
    assert_eq!(
        (r.output.as_str(), r.is_error),
        (
            "saved to MEMORY.md (added); it loads at the start of your next session",
            false
        )
    );
    assert_eq!(read(d, "MEMORY.md"), "- Onboarded 2026-07.\n- Ships on Fridays\n");
    // H3_memoryReplaceSwapsSubstring.
    assert_eq!(e["H3_memoryReplaceSwapsSubstring"], true);
    let r = memory(
        d,
        json!({"action": "replace", "text": "Fridays", "with": "Thursdays"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.output);
    assert_eq!(
        read(d, "MEMORY.md"),
        "- Onboarded 2026-07.\n- Ships on Thursdays\n"
    );
    // H3_memoryRemoveDeletesEntry.
    assert_eq!(e["H3_memoryRemoveDeletesEntry"], true);
    let r = memory(d, json!({"action": "remove", "text": "- Ships on Thursdays\n"})).await;
    assert!(!r.is_error, "{}", r.output);
    assert_eq!(read(d, "MEMORY.md"), "- Onboarded 2026-07.\n");
    // H3_missingSubstringIsLoudError: isError, and the file is unchanged.
    assert_eq!(e["H3_missingSubstringIsLoudError"], true);
    for action in ["replace", "remove"] {
        let r = memory(d, json!({"action": action, "text": "tea", "with": "coffee"})).await;
        assert!(r.is_error);
        assert_eq!(
            r.output,
            "\"tea\" is not in MEMORY.md: nothing was changed (read the file's section in your prompt for its exact text)"
        );
    }
    assert_eq!(read(d, "MEMORY.md"), "- Onboarded 2026-07.\n");
    // H3_targetUserWritesUSERmd.
    assert_eq!(e["H3_targetUserWritesUSERmd"], true);
    let r = memory(
        d,
        json!({"action": "add", "target": "user", "text": "Prefers dark roast"}),
    )
    .await;
    assert_eq!(
        r.output,
        "saved to USER.md (added); it loads at the start of your next session"
    );
    assert_eq!(
        read(d, "USER.md"),
        "The user is Muthu; timezone IST.\n- Prefers dark roast\n"
    );
    assert_eq!(read(d, "MEMORY.md"), "- Onboarded 2026-07.\n");
}

#[tokio::test]
async fn bad_memory_calls_are_errors_the_model_can_act_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            json!({"action": "forget", "text": "x"}),
            "unknown action \"forget\": use add, replace or remove",
        ),
        (
            json!({"action": "add", "target": "boss", "text": "x"}),
            "unknown target \"boss\": use self (MEMORY.md) or user (USER.md)",
        ),
        (
            json!({"text": "x"}),
            "missing \"action\": use add, replace or remove",
        ),
        (
            json!({"action": "add", "text": "  "}),
            "missing \"text\": the entry to add, or the existing text to replace or remove",
        ),
    ];
    for (args, message) in cases {
        let r = memory(d, args).await;
        assert_eq!((r.output.as_str(), r.is_error), (message, true));
    }
    std::fs::write(d.join("MEMORY.md"), "- a\n").unwrap();
    let r = memory(d, json!({"action": "replace", "text": "a"})).await;
    assert_eq!(
        r.output,
        "replace needs \"with\": the new text (to delete, use remove)"
    );
    assert_eq!(read(d, "MEMORY.md"), "- a\n");
    // An entry that would take the file past what a session loads is refused.
    let r = memory(d, json!({"action": "add", "text": "x".repeat(MAX_FILE_BYTES)})).await;
    assert!(
        r.is_error && r.output.starts_with("MEMORY.md would grow past 2097152 bytes"),
        "{}",
        r.output
    );
    std::fs::write(d.join("USER.md"), b"\xff").unwrap();
    let r = memory(d, json!({"action": "add", "target": "user", "text": "x"})).await;
    assert_eq!(r.output, "USER.md is not UTF-8 text: not changed");
    assert_eq!(std::fs::read(d.join("USER.md")).unwrap(), b"\xff");
}

/// Every file name in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

#[tokio::test]
async fn a_home_that_cannot_be_written_is_an_error_and_leaves_no_half_written_file() {
    // /proc/self refuses new files even to root (which ignores permission bits).
    let r = memory(Path::new("/proc/self"), json!({"action": "add", "text": "x"})).await;
    assert!(r.is_error);
    assert!(r.output.starts_with("cannot write MEMORY.md: "), "{}", r.output);
    // A file's place taken by a directory cannot be read.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("USER.md")).unwrap();
    let r = memory(d, json!({"action": "add", "target": "user", "text": "x"})).await;
    assert!(
        r.is_error && r.output.starts_with("cannot read USER.md: "),
        "{}",
        r.output
    );
    // A read-only home (for a user who is not root): the old file survives whole and no
    // temporary file is left behind.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::write(d.join("MEMORY.md"), "- a\n").unwrap();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o555)).unwrap();
        let r = memory(d, json!({"action": "add", "text": "b"})).await;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            r.is_error && r.output.starts_with("cannot write MEMORY.md: "),
            "{}",
            r.output
        );
        assert_eq!(read(d, "MEMORY.md"), "- a\n");
        assert_eq!(names(d), ["MEMORY.md", "USER.md"]);
    }
}

#[tokio::test]
async fn every_write_goes_through_a_temporary_file_and_a_rename() {
    // The file is replaced, not rewritten in place: a reader holding the old file keeps
    // reading the old bytes, and nothing else is left in the directory.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("MEMORY.md"), "- a\n").unwrap();
    let mut old = std::fs::File::open(d.join("MEMORY.md")).unwrap();
    let r = memory(d, json!({"action": "add", "text": "b"})).await;
    assert!(!r.is_error, "{}", r.output);
    let mut held = String::new();
    std::io::Read::read_to_string(&mut old, &mut held).unwrap();
    assert_eq!(held, "- a\n");
    assert_eq!(read(d, "MEMORY.md"), "- a\n- b\n");
    assert_eq!(names(d), ["MEMORY.md"]);
}

#[tokio::test]
async fn parallel_memory_calls_of_one_turn_keep_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let tool = memory_tool(dir.path());
    let calls = (0..20).map(|i| {
        tool.execute(
            json!({"action": "add", "text": format!("e{i}")}),
            ToolContext::default(),
        )
    });
    for r in futures::future::join_all(calls).await {
        assert!(!r.is_error, "{}", r.output);
    }
    let text = read(dir.path(), "MEMORY.md");
    assert_eq!(text.lines().count(), 20);
    for i in 0..20 {
        assert!(text.contains(&format!("- e{i}\n")), "{text}");
    }
}

#[tokio::test]
async fn the_memory_tool_is_never_a_default_builtin() {
    let tk = Toolkit::build(ToolkitOptions::default()).await.unwrap();
    assert!(tk.get("bash").is_some());
    assert!(tk.get("memory").is_none());
    let persona_tool = memory_tool("/nonexistent");
    assert!(
        persona_tool
            .description()
            .contains("load at the START of your next session")
    );
    assert_eq!(persona_tool.input_schema()["required"], json!(["action", "text"]));
}

#[tokio::test]
async fn h4_the_write_lands_on_disk_and_only_the_next_session_sees_it() {
    let f = fixture();
    let e = &f["expect"];
    let dir = home(&f["bootstrapDir"]);
    // Session 1: the model stores a fact about the user.
    let persona = Persona::from_dir(dir.path()).unwrap();
    let seen = Seen::default();
    let client = persona_client(&persona, model("m-remember", seen.clone()));
    let tk = Toolkit::new([persona.memory_tool()]);
    let r = client.run("I like dark roast", &tk).await.unwrap();
    assert_eq!(
        r.text,
        "saved: saved to USER.md (added); it loads at the start of your next session"
    );
    // H4_writeLandsOnDisk.
    let want = &e["H4_writeLandsOnDisk"];
    let on_disk = read(dir.path(), want["file"].as_str().unwrap());
    assert!(on_disk.contains(want["contains"].as_str().unwrap()), "{on_disk}");
    // Frozen snapshot: the same session's next request still carries the old soul.
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    assert_eq!(system_of(&bodies[1]), persona.soul());
    assert!(!system_of(&bodies[1]).contains("Prefers dark roast"));
    // A client of the same session's soul does not recall it…
    let same = persona_client(&persona, model("m-recall", Seen::default()));
    assert_eq!(same.run("coffee?", &tk).await.unwrap().text, "no memory");
    // …H4_nextSessionSnapshotCarriesMemory: the next session's does.
    let next = Persona::from_dir(dir.path()).unwrap();
    let want = &e["H4_nextSessionSnapshotCarriesMemory"];
    assert_eq!(want["model"], "m-recall");
    let client = persona_client(&next, model("m-recall", Seen::default()));
    let r = client
        .run("coffee?", &Toolkit::new([next.memory_tool()]))
        .await
        .unwrap();
    assert_eq!(r.text, want["text"].as_str().unwrap());
}

#[tokio::test]
async fn h5_heartbeat_ok_is_silent() {
    let f = fixture();
    assert_eq!(f["expect"]["H5_heartbeatOKisSilent"], true);
    let dir = home(&f["bootstrapDir"]);
    std::fs::write(
        dir.path().join("HEARTBEAT.md"),
        f["heartbeatNotDue"]["HEARTBEAT.md"].as_str().unwrap(),
    )
    .unwrap();
    let persona = Persona::from_dir(dir.path()).unwrap();
    let seen = Seen::default();
    let client = persona_client(&persona, model("m-heartbeat", seen.clone()));
    let mut convo = client.conversation(&Toolkit::default());
    let heartbeat = Heartbeat::new();
    heartbeat.ticks().post();
    assert_eq!(heartbeat.beat(&mut convo).await.unwrap(), Beat::Silent);
    assert_eq!(last_user(&seen.lock().unwrap()[0]), HEARTBEAT_PROMPT);
}

#[tokio::test]
async fn h5_a_due_heartbeat_reaches_on_beat() {
    let f = fixture();
    let dir = home(&f["bootstrapDir"]);
    let persona = Persona::from_dir(dir.path()).unwrap();
    let client = persona_client(&persona, model("m-heartbeat", Seen::default()));
    let mut convo = client.conversation(&Toolkit::default());
    // A real interval this time: the first beat comes one period after start.
    let heartbeat = Heartbeat::every(Duration::from_millis(20));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = tokio::select! {
        e = heartbeat.run(&mut convo, |text| { let _ = tx.send(text); }) => panic!("heartbeat stopped: {e}"),
        r = async { rx.recv().await } => r.unwrap(),
        () = tokio::time::sleep(Duration::from_secs(10)) => panic!("no beat within 10 s"),
    };
    let want = f["expect"]["H5_dueHeartbeatSurfaces"]["beatContains"]
        .as_str()
        .unwrap();
    assert!(report.contains(want), "{report}");
    assert_eq!(report, "Reminder: 3pm sync 🔔");
    // The beat is a turn of the persona's conversation.
    assert_eq!(convo.messages()[1]["content"], HEARTBEAT_PROMPT);
}

#[tokio::test]
async fn h5_ticks_coalesce_into_one_turn() {
    let f = fixture();
    assert_eq!(f["expect"]["H5_ticksCoalesceToOneTurn"], true);
    let dir = home(&f["bootstrapDir"]);
    let persona = Persona::from_dir(dir.path()).unwrap();
    let heartbeat = Heartbeat::new();
    let ticks = heartbeat.ticks().clone();
    // Ticks that arrive while the first beat's turn runs: posted by the model mid-turn.
    let turns = Arc::new(AtomicUsize::new(0));
    let counter = turns.clone();
    let inner = model("m-heartbeat", Seen::default());
    let transport = from_fn(move |req| {
        if counter.fetch_add(1, Ordering::SeqCst) == 0 {
            for _ in 0..3 {
                ticks.post();
            }
        }
        let inner = inner.clone();
        async move { inner.post(req).await }
    });
    let client = persona_client(&persona, transport);
    let mut convo = client.conversation(&Toolkit::default());
    // Five ticks while idle: one turn.
    for _ in 0..5 {
        heartbeat.ticks().post();
    }
    assert!(matches!(
        heartbeat.beat(&mut convo).await.unwrap(),
        Beat::Report(_)
    ));
    assert_eq!(turns.load(Ordering::SeqCst), 1);
    // The three posted during that turn: one more turn, then nothing pending.
    assert!(heartbeat.ticks().is_pending());
    heartbeat.beat(&mut convo).await.unwrap();
    assert_eq!(turns.load(Ordering::SeqCst), 2);
    assert!(!heartbeat.ticks().is_pending());
}

/// A runtime whose agent `ava` carries the persona's soul, on a virtual clock.
fn persona_runtime(
    persona: &Persona,
    transport: Arc<dyn HttpTransport>,
    clock: &VirtualClock,
    defs: Vec<AgentDef>,
) -> AgentRuntime {
    let mut all = vec![AgentDef::new("ava", "the persona").soul(persona.soul())];
    all.extend(defs);
    AgentRuntime::builder(
        Client::builder()
            .base_url("http://127.0.0.1:9/v1")
            .style(Style::OpenAi)
            .model("mock-model")
            .api_key("test-key")
            .transport(transport),
    )
    .clock(Arc::new(clock.clone()))
    .build(Registry::new(all).unwrap())
    .unwrap()
}

/// Yield until `cond` holds; bounded at 10 s of real time.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let polled = tokio::time::timeout(Duration::from_secs(10), async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    assert!(polled.is_ok(), "timed out waiting for {what}");
}

#[tokio::test]
async fn h5_start_agent_beats_on_the_runtime_clock_silent_ok_and_due_report() {
    let f = fixture();
    let dir = home(&f["bootstrapDir"]);
    // Not due first: HEARTBEAT_OK stays silent.
    std::fs::write(
        dir.path().join("HEARTBEAT.md"),
        f["heartbeatNotDue"]["HEARTBEAT.md"].as_str().unwrap(),
    )
    .unwrap();
    let persona = Persona::from_dir(dir.path()).unwrap();
    let seen = Seen::default();
    let clock = VirtualClock::new();
    let rt = persona_runtime(&persona, model("m-heartbeat", seen.clone()), &clock, vec![]);
    let reports = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = reports.clone();
    let started = rt
        .start_agent("ava", Duration::from_secs(1800), move |r| {
            sink.lock().unwrap().push(r)
        })
        .unwrap();
    let h = started.handle().clone();
    assert_eq!(h.id(), "root/ava.1");
    until("the heartbeat's sleep", || clock.sleepers() == 1).await;
    // Nothing happens before a full period.
    clock.advance(Duration::from_secs(1799));
    tokio::task::yield_now().await;
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(clock.sleepers(), 1, "still asleep one second short of the period");
    clock.advance(Duration::from_secs(1));
    until("the first beat's turn", || rt.inspect(&h).unwrap().turns == 1).await;
    let r = rt.wait(&h, None).await;
    assert_eq!(r.text, "HEARTBEAT_OK");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert!(system_of(&seen[0]).contains("## HEARTBEAT.md"));
        assert!(
            last_user(&seen[0]).starts_with(HEARTBEAT_PROMPT),
            "{}",
            last_user(&seen[0])
        );
    }
    assert!(reports.lock().unwrap().is_empty());
    // Dropping the started agent stops its heartbeat; the agent itself stays usable.
    until("the next sleep", || clock.sleepers() == 1).await;
    drop(started);
    until("the heartbeat to stop", || clock.sleepers() == 0).await;
    assert_eq!(
        rt.inspect(&h).unwrap().state,
        toolnexus::agents::HandleState::Idle
    );

    // A persona whose HEARTBEAT.md is due: its report reaches on_beat.
    let dir = home(&f["bootstrapDir"]);
    let persona = Persona::from_dir(dir.path()).unwrap();
    let clock = VirtualClock::new();
    let rt = persona_runtime(&persona, model("m-heartbeat", Seen::default()), &clock, vec![]);
    let sink = reports.clone();
    let _started = rt
        .start_agent("ava", Duration::from_secs(60), move |r| {
            sink.lock().unwrap().push(r)
        })
        .unwrap();
    until("the heartbeat's sleep", || clock.sleepers() == 1).await;
    clock.advance(Duration::from_secs(60));
    until("the report", || !reports.lock().unwrap().is_empty()).await;
    let want = f["expect"]["H5_dueHeartbeatSurfaces"]["beatContains"]
        .as_str()
        .unwrap();
    let got = reports.lock().unwrap().clone();
    assert_eq!(got, ["Reminder: 3pm sync 🔔"]);
    assert!(got[0].contains(want));
}

#[tokio::test]
async fn h5_ticks_coalesce_to_one_turn_on_the_runtime_inbox() {
    let f = fixture();
    assert_eq!(f["expect"]["H5_ticksCoalesceToOneTurn"], true);
    let dir = home(&f["bootstrapDir"]);
    let persona = Persona::from_dir(dir.path()).unwrap();
    // The first turn's model call is held until released, so ticks arrive mid-turn.
    let release = Arc::new(tokio::sync::Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Seen::default();
    let inner = model("m-heartbeat", seen.clone());
    let (gate, counter) = (release.clone(), calls.clone());
    let transport = from_fn(move |req| {
        let first = counter.fetch_add(1, Ordering::SeqCst) == 0;
        let (inner, gate) = (inner.clone(), gate.clone());
        async move {
            if first {
                gate.notified().await;
            }
            inner.post(req).await
        }
    });
    let clock = VirtualClock::new();
    let rt = persona_runtime(&persona, transport, &clock, vec![]);
    let reports = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = reports.clone();
    let every = Duration::from_secs(60);
    let started = rt
        .start_agent("ava", every, move |r| sink.lock().unwrap().push(r))
        .unwrap();
    let h = started.handle().clone();
    let beat = || {
        let clock = clock.clone();
        async move {
            until("the heartbeat's sleep", || clock.sleepers() == 1).await;
            clock.advance(every);
        }
    };
    beat().await;
    until("the first model call", || calls.load(Ordering::SeqCst) == 1).await;
    // Three ticks while the beat's turn runs: they wait in the inbox, no new turn.
    for waiting in 1..=3 {
        beat().await;
        until("the tick", || rt.inspect(&h).unwrap().inbox == waiting).await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    release.notify_one();
    until("the first report", || reports.lock().unwrap().len() == 1).await;
    assert_eq!(rt.inspect(&h).unwrap().inbox, 3);
    // The next beat finds it idle: the three waiting ticks and its own make ONE turn.
    beat().await;
    until("the second report", || reports.lock().unwrap().len() == 2).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(rt.inspect(&h).unwrap().inbox, 0);
    let second = last_user(&seen.lock().unwrap()[1]);
    assert!(
        second.contains("[from=clock channel=timer] tick (x4 coalesced)"),
        "{second}"
    );
    assert!(!second.contains("x1 coalesced"), "{second}");
}

#[tokio::test]
async fn h1_soul_reaches_a_child_agents_system_prompt_on_the_runtime() {
    let f = fixture();
    assert_eq!(f["expect"]["H1_soulReachesChildSystemPrompt"], true);
    let dir = home(&f["bootstrapDir"]);
    let persona = Persona::from_dir(dir.path()).unwrap();
    // The coordinator (model `coord`) delegates to `ava` through `task` and repeats what it
    // heard; `ava` inherits the runtime's model, which plays `m-echo-soul`.
    let seen = Seen::default();
    let echo = model("m-echo-soul", seen.clone());
    let coord_seen = Seen::default();
    let coord_log = coord_seen.clone();
    let transport = from_fn(move |req| {
        let body = req.json();
        let echo = echo.clone();
        let coord_log = coord_log.clone();
        async move {
            if body["model"] != "coord" {
                return echo.post(req).await;
            }
            let heard: Vec<String> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap().to_owned())
                .collect();
            coord_log.lock().unwrap().push(body);
            let reply = match heard.first() {
                None => Reply::Calls(vec![Call {
                    id: "call_1".into(),
                    name: "task".into(),
                    arguments: json!({"agent": "ava", "prompt": "who are you?"}),
                }]),
                Some(h) => Reply::Text(format!("ava said: {h}")),
            };
            Ok(HttpResponse::new(
                200,
                vec![],
                openai_response("coord", &reply, (30, 10)),
            ))
        }
    });
    let clock = VirtualClock::new();
    let coordinator = AgentDef::new("coordinator", "delegates")
        .soul("You coordinate.")
        .model("coord")
        .team(["ava"]);
    let rt = persona_runtime(&persona, transport, &clock, vec![coordinator]);
    let r = rt.run("coordinator", "ask ava").await.unwrap();
    assert_eq!(
        r.text,
        "ava said: sections:[SOUL.md,USER.md,HEARTBEAT.md,MEMORY.md]"
    );
    let ids: Vec<String> = rt.list().into_iter().map(|v| v.id).collect();
    assert_eq!(ids, ["root/coordinator.1", "root/coordinator.1/ava.1"]);
    // The child's request carries the persona's soul verbatim as its system prompt; the
    // coordinator's does not.
    let child = seen.lock().unwrap();
    assert_eq!(child.len(), 1);
    assert_eq!(system_of(&child[0]), persona.soul());
    assert_eq!(system_of(&coord_seen.lock().unwrap()[0]), "You coordinate.");
}
