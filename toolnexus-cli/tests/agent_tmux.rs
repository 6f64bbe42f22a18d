//! `toolnexus agent DIR` in a real terminal: tmux runs the binary in a pane, the test types
//! into it (`send-keys`) and reads the screen (`capture-pane`), against the scripted mock
//! model on 127.0.0.1. Two turns, a tool call, an interrupted turn, Ctrl-C to quit, and a
//! second start that resumes the saved conversation.

#[path = "../../tests/peer/mod.rs"]
mod peer;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use toolnexus_mock::{MockModel, Scenario};

/// A tmux server of our own (its own socket), killed when the test ends however it ends.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start() -> Tmux {
        Tmux {
            socket: format!("toolnexus-agent-test-{}", std::process::id()),
        }
    }

    fn cmd(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Run `shell` in a new 200×50 session named `name`; the pane stays after it exits.
    fn session(&self, name: &str, shell: &str) {
        let keep = format!("{shell}; echo agent-exited-$?; sleep 600");
        self.cmd(&["new-session", "-d", "-s", name, "-x", "200", "-y", "50", &keep]);
    }

    fn type_line(&self, name: &str, text: &str) {
        self.cmd(&["send-keys", "-t", name, "-l", text]);
        self.cmd(&["send-keys", "-t", name, "Enter"]);
    }

    fn ctrl_c(&self, name: &str) {
        self.cmd(&["send-keys", "-t", name, "C-c"]);
    }

    fn screen(&self, name: &str) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-t", name, "-S", "-200"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Poll the screen until it shows `want` `times` times (at most 30 s).
    fn wait_for(&self, name: &str, want: &str, times: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen(name);
            if screen.matches(want).count() >= times {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {want:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_turns_a_tool_call_an_interrupt_and_a_resumed_session() {
    if Command::new("tmux").arg("-V").output().is_err() {
        peer::missing("tmux is not installed (apt-get install tmux)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt
        .block_on(MockModel::start("127.0.0.1:0", Scenario::Planner))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    std::fs::write(dir.join("SOUL.md"), "You are Ava, a calm support assistant.").unwrap();
    let agent = format!(
        "cd {dir} && env OPENAI_API_KEY=test-key {bin} agent {dir} --base-url {url} --model mock-model --api-key-env OPENAI_API_KEY",
        dir = dir.display(),
        bin = env!("CARGO_BIN_EXE_toolnexus"),
        url = mock.base_url(),
    );
    let tmux = Tmux::start();
    tmux.session("one", &agent);
    tmux.wait_for("one", "(SOUL.md) — new session", 1);
    // capture-pane drops trailing blanks: the prompt reads "you>".
    tmux.wait_for("one", "you>", 1);

    // Turn 1: a plain answer, streamed.
    tmux.type_line("one", "hello there");
    tmux.wait_for("one", "You said: hello there", 1);

    // Turn 2: the model calls the memory tool; the call and its result are one line.
    tmux.type_line(
        "one",
        r#"memory {"action":"add","target":"user","text":"Prefers dark roast"}"#,
    );
    let screen = tmux.wait_for("one", "- memory: saved to USER.md", 1);
    assert!(
        screen.contains(
            "  ⚙ memory {\"action\":\"add\",\"target\":\"user\",\"text\":\"Prefers dark roast\"} → saved to USER.md (added); it loads at the start of your next session\nHere is what the tools returned:"
        ),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("USER.md")).unwrap(),
        "- Prefers dark roast\n"
    );

    // Turn 3 runs a slow tool; Ctrl-C once it is running interrupts the turn, not the agent.
    let started = dir.join("started");
    tmux.type_line("one", r#"bash {"command":"touch started && sleep 30"}"#);
    wait_for_file(&started);
    tmux.ctrl_c("one");
    let screen = tmux.wait_for("one", "^C turn interrupted (Ctrl-C at the prompt quits)", 1);
    assert!(
        !screen.contains("⚙ bash"),
        "the interrupted call reported a result:\n{screen}"
    );
    assert!(!screen.contains("agent-exited"), "{screen}");

    // The agent is still there: another turn.
    tmux.type_line("one", "still there?");
    tmux.wait_for("one", "You said: still there?", 1);

    // Ctrl-C at the prompt quits, cleanly.
    tmux.ctrl_c("one");
    let screen = tmux.wait_for("one", "agent-exited-0", 1);
    assert!(screen.contains("bye\n"), "{screen}");

    // The conversation was saved without the interrupted turn: system, 2 + 4 + 2 messages,
    // at version 3 (one compare-and-set save per finished turn: the interrupted one saved nothing).
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(".toolnexus/session.json")).unwrap()).unwrap();
    assert_eq!(file["version"], 3, "{file:#}");
    let saved = file["messages"].as_array().unwrap();
    assert_eq!(saved.len(), 9, "{saved:#?}");
    assert!(saved.iter().all(|m| !m.to_string().contains("sleep 30")));

    // A second start resumes it, with this session's soul (the memory written last time).
    tmux.session("two", &agent);
    tmux.wait_for("two", "(SOUL.md, USER.md) — resumed 9 messages", 1);
    tmux.type_line("two", "back again");
    tmux.wait_for("two", "You said: back again", 1);
    tmux.ctrl_c("two");
    tmux.wait_for("two", "agent-exited-0", 1);
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(".toolnexus/session.json")).unwrap()).unwrap();
    assert_eq!(file["version"], 4, "{file:#}");
    let saved = file["messages"].as_array().unwrap();
    assert_eq!(saved.len(), 11);
    assert!(
        saved[0]["content"]
            .as_str()
            .unwrap()
            .contains("## USER.md\n\n- Prefers dark roast")
    );
    drop(mock);
}
