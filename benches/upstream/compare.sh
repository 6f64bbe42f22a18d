#!/usr/bin/env bash
# The side by side of BENCHMARKS.md "Against the upstream Rust crate (toolnexus 0.23.0)": this
# workspace's `toolnexus` and the upstream project's own Rust crate of the same name (crates.io
# 0.23.0), each driven through its public API by a small driver written here, in the cross-port
# scenario of `examples/bench.rs`. Both drivers talk to the same model server
# (`toolnexus-mock --scenario bench`, its own process) and the same stdio MCP server
# (`toolnexus-testserver bench`), so each process holds only its own library.
#
#   benches/upstream/compare.sh build [DRIVER..] # the drivers, in $UPBENCH (default /tmp/upbench)
#   benches/upstream/compare.sh run [ROUNDS] [RUNS]   # p50/p95/init/peak RSS, alternating
#   benches/upstream/compare.sh instr [N]        # instructions per run (callgrind, N and 2N runs)
#   benches/upstream/compare.sh size             # stripped binary sizes and crate counts
#
# Needs: cargo build --release -p toolnexus-mock -p toolnexus-testserver (this workspace).
# Profiles: `ours` is built with this workspace's release profile (copied from Cargo.toml,
# the `lean` profile below); `up` with cargo's default release profile, what a user of that
# crate gets; `up-lean` is the upstream crate under our profile and `ours-default` ours under
# cargo's default, to separate the profile's share from the library's. Nothing of the upstream crate's code is kept here.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${UPBENCH:-/tmp/upbench}
bin=$repo/target/release
# What the scenario needs of ours: the client, MCP, skills and the built-ins (no HTML to Markdown,
# no HTTP/2, no HTTP tools, no A2A). .ci/run lints and tests the library with this set.
ours_features='"client", "mcp", "skills", "builtins"'

write_driver() {
  # Two packages, each naming its library `toolnexus` (the `#[tool]` macro finds its crate by
  # that name), in one workspace: one lockfile, the profiles, the shared common.rs.
  mkdir -p "$work/ours/src" "$work/up/src"
  cat > "$work/Cargo.toml" <<EOF
[workspace]
members = ["ours", "up"]
resolver = "3"

[workspace.dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
tokio = { version = "1", features = ["rt", "macros", "time"] }
libc = "0.2"

EOF
  # This workspace's release profile, as a named profile next to cargo's default release.
  sed -n '/^\[profile.release/,/^\[profile.bench\]/p' "$repo/Cargo.toml" | sed '$d' \
    | sed 's/^\[profile.release\]/[profile.lean]\ninherits = "release"/; s/^\[profile.release.package/[profile.lean.package/' \
    >> "$work/Cargo.toml"
  for pkg in ours up; do
    # Ours with the features the scenario uses (a user leaves the rest out; .ci/run keeps this
    # set building); the upstream crate has no features to leave out.
    if [ $pkg = ours ]; then
      dep="{ path = \"$repo/toolnexus\", default-features = false, features = [$ours_features] }"
    else
      dep='"=0.23.0"'
    fi
    cat > "$work/$pkg/Cargo.toml" <<EOF
[package]
name = "$pkg"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolnexus = $dep
serde.workspace = true
serde_json.workspace = true
tokio.workspace = true
libc.workspace = true
EOF
  done

  cat > "$work/common.rs" <<'EOF'
//! What both drivers share: arguments, the timing loop and the JSON line of examples/bench.rs.
use std::path::PathBuf;
use std::time::Instant;

pub const QUESTION: &str = "What's the weather in Paris and what is 2+2?";
pub const ANSWER: &str = "The weather in Paris is Sunny, 22C. And 2 + 2 = 4.";

pub struct Args {
    pub mode: String,
    pub mock: String,
    pub mcp_cmd: Vec<String>,
    pub skills: PathBuf,
    pub runs: usize,
    pub warmup: usize,
}

pub fn args() -> Args {
    let mut a = Args { mode: "native".into(), mock: String::new(), mcp_cmd: Vec::new(),
        skills: PathBuf::new(), runs: 100, warmup: 10 };
    let mut it = std::env::args().skip(1);
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        match k.as_str() {
            "--mode" => a.mode = v,
            "--mock" => a.mock = v,
            "--mcp-cmd" => a.mcp_cmd = v.split_whitespace().map(str::to_owned).collect(),
            "--skills" => a.skills = v.into(),
            "--runs" => a.runs = v.parse().expect("--runs"),
            "--warmup" => a.warmup = v.parse().expect("--warmup"),
            _ => panic!("unknown flag {k}"),
        }
    }
    a
}

/// One run's result: the final text, the tool calls made and whether any failed.
pub struct Outcome { pub text: String, pub calls: usize, pub failed: bool }

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Warm up, time `runs` runs, print the JSON line (plus the process's peak RSS so far).
pub async fn measure<F, Fut>(name: String, a: &Args, init_ms: f64, tools: usize, mut run: F)
    -> Result<bool, Error>
where F: FnMut() -> Fut, Fut: std::future::Future<Output = Result<Outcome, Error>> {
    for _ in 0..a.warmup { run().await?; }
    let mut samples = Vec::with_capacity(a.runs);
    let mut ok = true;
    for _ in 0..a.runs {
        let t = Instant::now();
        let o = run().await?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        ok &= o.text == ANSWER && o.calls == 2 && !o.failed;
    }
    samples.sort_by(f64::total_cmp);
    let pct = |p: f64| samples[(((p / 100.0) * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    let r = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if std::env::var_os("UPBENCH_SMAPS").is_some() {
        eprint!("{}", std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default());
    }
    println!("{}", serde_json::json!({
        "name": name, "init_ms": r(init_ms), "tool_count": tools,
        "p50_ms": r(pct(50.0)), "p95_ms": r(pct(95.0)),
        "mean_ms": r(samples.iter().sum::<f64>() / samples.len() as f64),
        "n": samples.len(), "final_ok": ok, "peak_rss_kb": ru.ru_maxrss,
    }));
    Ok(ok)
}

pub fn main_with<Fut>(f: impl FnOnce(Args) -> Fut) -> std::process::ExitCode
where Fut: std::future::Future<Output = Result<bool, Error>> + Send + 'static {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // In a spawned task, as examples/bench.rs runs it.
    match rt.block_on(async { tokio::spawn(f(args())).await.unwrap() }) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => { eprintln!("a run did not end as expected"); std::process::ExitCode::FAILURE }
        Err(e) => { eprintln!("{e}"); std::process::ExitCode::FAILURE }
    }
}
EOF

  cat > "$work/ours/src/main.rs" <<'EOF'
//! This workspace's toolnexus in the cross-port scenario.
#[path = "../../common.rs"]
mod common;
use toolnexus::client::{Client, Style};
use toolnexus::{Toolkit, ToolkitOptions, tool, toolkit};
use serde_json::json;
use std::time::Instant;

/// Get the current weather for a city.
#[tool]
fn get_weather(city: String) -> String {
    format!("The weather in {city} is Sunny, 22C.")
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() -> std::process::ExitCode {
    common::main_with(|a| async move {
        let t0 = Instant::now();
        let mut o = ToolkitOptions::default();
        o = match a.mode.as_str() {
            "native" => o.extra_tools(toolkit![get_weather, add].tools().cloned()).builtins(false),
            mode => {
                let o = o.config(json!({"mcpServers": {"bench": {"command": a.mcp_cmd}}}));
                if mode == "full" { o.skills_dir(&a.skills) } else { o.builtins(false) }
            }
        };
        let tk = Toolkit::build(o).await?;
        let client = Client::builder().base_url(&a.mock).style(Style::OpenAi).model("mock-model")
            .api_key("sk-mock-not-a-real-key").build()?;
        let init = t0.elapsed().as_secs_f64() * 1e3;
        let ok = common::measure(format!("ours-{}", a.mode), &a, init, tk.len(), || async {
            let r = client.run(common::QUESTION, &tk).await?;
            let failed = r.tool_calls.iter().any(|c| c.is_error);
            Ok(common::Outcome { text: r.text, calls: r.tool_call_count, failed })
        }).await;
        tk.close().await;
        ok
    })
}
EOF

  cat > "$work/up/src/main.rs" <<'EOF'
//! The upstream crate (toolnexus 0.23.0 on crates.io) in the cross-port scenario.
#[path = "../../common.rs"]
mod common;
use serde::Deserialize;
use serde_json::json;
use std::time::Instant;
use toolnexus::client::{ClientOptions, Style, create_client};
use toolnexus::{BuiltinsConfig, McpConfigInput, ToolkitOptions, create_toolkit, define_typed_tool};

#[derive(Deserialize)]
struct City { city: String }
#[derive(Deserialize)]
struct Add { a: i64, b: i64 }

fn main() -> std::process::ExitCode {
    common::main_with(|a| async move {
        let t0 = Instant::now();
        let mut o = ToolkitOptions::default();
        if a.mode == "native" {
            o.extra_tools = vec![
                define_typed_tool("get_weather", "Get the current weather for a city.",
                    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
                    |c: City, _| async move { Ok::<_, String>(format!("The weather in {} is Sunny, 22C.", c.city)) }),
                define_typed_tool("add", "Add two integers.",
                    json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
                    |x: Add, _| async move { Ok::<_, String>((x.a + x.b).to_string()) }),
            ];
        } else {
            o.mcp_config = Some(McpConfigInput::Json(json!({"mcpServers": {"bench": {"command": a.mcp_cmd}}})));
        }
        if a.mode == "full" { o.skills_dir = vec![a.skills.clone()] } else { o.builtins = Some(BuiltinsConfig::off()) }
        let tk = create_toolkit(o).await?;
        let client = create_client(ClientOptions {
            base_url: a.mock.clone(), style: Style::OpenAI, model: "mock-model".into(),
            api_key: "sk-mock-not-a-real-key".into(), ..Default::default()
        });
        let init = t0.elapsed().as_secs_f64() * 1e3;
        let n = tk.tools().len();
        let ok = common::measure(format!("upstream-{}", a.mode), &a, init, n, || async {
            let r = client.run(common::QUESTION, &tk).await?;
            let failed = r.tool_calls.iter().any(|c| c.is_error);
            Ok(common::Outcome { text: r.text, calls: r.tool_call_count, failed })
        }).await;
        tk.close().await;
        ok
    })
}
EOF
}

build() { # [DRIVER...]: all four unless named (ours, up, up-lean, ours-default)
  write_driver
  cd "$work"
  for d in "${@:-ours up up-lean ours-default}"; do
    for d in $d; do
      case $d in
        ours) nice -n 10 cargo build --profile lean -p ours ;;
        up) nice -n 10 cargo build --release -p up ;;
        up-lean) nice -n 10 cargo build --profile lean -p up ;;
        ours-default) nice -n 10 cargo build --release -p ours ;;
        *) echo "unknown driver $d" >&2; exit 2 ;;
      esac
    done
  done
}

drivers() { # NAME PATH pairs, in the order they alternate
  echo "ours $work/target/lean/ours"
  echo "up $work/target/release/up"
  echo "up-lean $work/target/lean/up"
  echo "ours-default $work/target/release/ours"
  # One more, e.g. ours from before a change: UPBENCH_EXTRA="ours-before /path/to/binary".
  if [ -n "${UPBENCH_EXTRA:-}" ]; then echo "$UPBENCH_EXTRA"; fi
}

start_mock() {
  mock_log=$(mktemp)
  "$bin/toolnexus-mock" --scenario bench --addr 127.0.0.1:0 > "$mock_log" &
  mock_pid=$!
  trap 'kill $mock_pid 2>/dev/null || true' EXIT
  for _ in $(seq 300); do grep -q '^listening on ' "$mock_log" && break; sleep 0.1; done
  mock=$(sed -n 's/^listening on //p' "$mock_log")
}

drive() { # DRIVER MODE RUNS WARMUP [wrapper...]
  local path=$1 mode=$2 runs=$3 warmup=$4; shift 4
  # Resident code depends on what of the binary the page cache holds, and how: the kernel maps
  # the cached neighbours of each page a process touches (fault-around) and, with large
  # page-cache folios (Linux 6.18 here), whole folios. A binary just written by the linker, or
  # read whole with `cat`, is cached in large folios and keeps 0.5-1 MiB more resident, by
  # chance of their boundaries. So every measured process finds its binary cached the same way:
  # evicted, then started once (what a binary started before has cached).
  sync "$path"
  dd if="$path" iflag=nocache count=0 status=none
  start "$path" "$mode" 1 0 > /dev/null
  start "$path" "$mode" "$runs" "$warmup" "$@"
}

start() { # DRIVER MODE RUNS WARMUP [wrapper...]
  local path=$1 mode=$2 runs=$3 warmup=$4; shift 4
  "$@" "$path" --mode "$mode" --mock "$mock" --mcp-cmd "$bin/toolnexus-testserver bench" \
    --skills "$repo/examples/skills" --runs "$runs" --warmup "$warmup"
}

run() { # ROUNDS RUNS: every mode, the drivers alternating within each round
  start_mock
  for r in $(seq "${1:-3}"); do
    for mode in native mcp full; do
      while read -r name path; do
        [ -x "$path" ] || continue
        echo "round=$r driver=$name $(drive "$path" "$mode" "${2:-1000}" 50 | tail -1)"
      done < <(drivers)
    done
  done
}

instr() { # N: instructions of the driver process (callgrind), at N and 2N runs, no warm-up
  start_mock
  local n=${1:-100}
  for mode in native mcp full; do
    while read -r name path; do
      [ -x "$path" ] || continue
      for k in "$n" $((2 * n)); do
        out=$(mktemp)
        drive "$path" "$mode" "$k" 0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
          2> "$out" > /dev/null
        echo "driver=$name mode=$mode runs=$k $(grep -o 'Collected : [0-9]*' "$out")"
        rm -f "$out"
      done
    done < <(drivers)
  done
}

size() {
  while read -r name path; do
    [ -x "$path" ] || continue
    strip -o "$path.stripped" "$path"
    echo "driver=$name stripped_bytes=$(stat -c %s "$path.stripped")"
  done < <(drivers)
  # Distinct crates in each library's normal dependency tree, itself included, default features.
  cd "$work"
  for spec in "ours toolnexus@0.1.0" "up toolnexus@0.23.0"; do
    set -- $spec
    echo "driver=$1 crates=$(cargo tree -p "$2" -e normal --prefix none \
      | sed 's/ (\*)$//' | sort -u | wc -l)"
  done
}

case ${1:-} in
  build) shift; build "$@" ;;
  run) run "${2:-3}" "${3:-1000}" ;;
  instr) instr "${2:-100}" ;;
  size) size ;;
  *) sed -n '2,18p' "$0"; exit 2 ;;
esac
