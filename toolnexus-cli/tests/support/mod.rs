//! A minimal MCP stdio server in POSIX sh, for tests of the real binary that need a real
//! child process with exact behaviour (a stubborn one, a schema the SDK servers do not send).

use std::path::Path;

/// `$1` is a directory: the server writes its pid to `$1/server.pid` and its background
/// child's (a `sleep` holding its stdout) to `$1/child.pid`, touches `$1/asked` on the first
/// request and `$1/called` on a `tools/call`, which it never answers, and lists the tools in
/// `$1/tools.json`. With `$2 = mute` it answers nothing. It ignores SIGINT, SIGTERM and
/// SIGHUP, and stays up after stdin closes unless `$3 = polite`.
const SERVER: &str = r#"#!/bin/sh
echo $$ > "$1/server.pid"
sleep 1000 &
echo $! > "$1/child.pid"
trap '' INT TERM HUP
while IFS= read -r line; do
  : > "$1/asked"
  [ "$2" = mute ] && continue
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}\n' "$id" "$(cat "$1/tools.json")" ;;
    *'"method":"tools/call"'*)
      : > "$1/called" ;;
  esac
done
if [ "$3" = polite ]; then kill "$(cat "$1/child.pid")"; exit 0; fi
while :; do sleep 1; done
"#;

/// Writes the server and its tool list (each a JSON object) into `dir`; returns the config's
/// `command` up to `$1` (append the mode and politeness).
pub fn script_server(dir: &Path, tools: &[&str]) -> Vec<String> {
    let script = dir.join("server.sh");
    std::fs::write(&script, SERVER).unwrap();
    std::fs::write(dir.join("tools.json"), format!("[{}]", tools.join(","))).unwrap();
    vec![
        "sh".into(),
        script.to_str().unwrap().into(),
        dir.to_str().unwrap().into(),
    ]
}
