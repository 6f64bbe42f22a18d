#!/usr/bin/env bash
# The A2A round of BENCHMARKS.md: our `toolnexus serve --a2a` and the Python port's A2A
# server (PyPI toolnexus 0.21.0, py_port_server.py) on the same scripted model in one run,
# loaded by the same client (examples/a2a_bench.rs) at 1 and 32 tasks in flight, rounds
# alternating; then the peak RSS of each server after 1,000 finished tasks in memory.
#
#   benches/a2a/compare.sh PYTHON_WITH_TOOLNEXUS_0.21.0 [ROUNDS]
#
# Needs the release builds: cargo build --release -p toolnexus-cli -p toolnexus-mock && cargo build --release --example a2a_bench
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${1:?usage: compare.sh PYTHON [ROUNDS]}
rounds=${2:-3}
bin=target/release
log=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

wait_line() { # FILE PATTERN: the first line of FILE matching PATTERN (bounded wait)
  for _ in $(seq 300); do grep -q "$2" "$1" && break; sleep 0.1; done
  grep -m1 "$2" "$1"
}
start_ours() {
  OPENAI_API_KEY=sk-not-needed "$bin/toolnexus" serve --a2a 127.0.0.1:0 --no-builtins \
    --base-url "$model" --model mock-model > "$log/ours.$1" 2>/dev/null &
  pids+=($!); ours_pid=$!
  ours=$(wait_line "$log/ours.$1" '^http')
}
start_python() {
  "$python" benches/a2a/py_port_server.py "$model" > "$log/py.$1" 2>/dev/null &
  pids+=($!); py_pid=$!
  py=$(wait_line "$log/py.$1" '^listening ' | sed 's/^listening //')
}
hwm() { awk '/VmHWM/ {printf "%.1f MB", $2/1024}' "/proc/$1/status"; }

"$bin/toolnexus-mock" --scenario planner --addr 127.0.0.1:0 > "$log/mock" &
pids+=($!)
model=$(wait_line "$log/mock" '^listening on ' | sed 's/^listening on //')
start_ours a; start_python a
bench() { # NAME URL TASKS CONCURRENCY
  "$bin/examples/a2a_bench" --name "$1" --url "$2" --tasks "$3" --warmup 50 --concurrency "$4" \
    --poll-ms 1 --expect "You said: hello agent"
}
for r in $(seq "$rounds"); do
  echo "# round $r"
  bench rust "$ours" 500 1; bench python "$py" 500 1
  bench rust "$ours" 2000 32; bench python "$py" 1000 32
done

echo "# peak RSS after 1,000 finished tasks (fresh servers)"
kill "$ours_pid" "$py_pid"
start_ours b; start_python b
echo "rust idle: $(hwm "$ours_pid"); python idle: $(hwm "$py_pid")"
"$bin/examples/a2a_bench" --url "$ours" --tasks 1000 --warmup 0 --concurrency 32 --poll-ms 5 > /dev/null
"$bin/examples/a2a_bench" --url "$py" --tasks 1000 --warmup 0 --concurrency 32 --poll-ms 5 > /dev/null
echo "rust after 1000 tasks: $(hwm "$ours_pid"); python after 1000 tasks: $(hwm "$py_pid")"
