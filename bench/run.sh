#!/usr/bin/env bash
# bench/run.sh — cordon's benchmarks side by side with bare exec, bubblewrap, firejail and srt.
#
# One command: installs the peers (Debian packages; srt from npm into bench/.cache/npm), builds
# cordon with the benchmark targets (bench/.cache/build, RelWithDebInfo like the default preset),
# checks that every configuration confines, times them, and rewrites docs/benchmarks.md and
# docs/benchmarks-launch.png; then measures the network broker (filtered mode) against a direct
# loopback connection, and every other layer (bench/layers.py: prepared sandboxes, CPU per launch over
# the whole process tree, sidecar, filesystem worker, governance, gate runner), and writes the
# side-by-side table of all of them at the top of the page. Under 10 minutes on 2 cores, once built.
#
#   BENCH_QUICK=1      fewer runs (to try the harness; the page says how many runs it used)
#   BENCH_NO_INSTALL=1 install nothing; missing peers become "unavailable" rows
#   CORDON_BIN=PATH    time this cordon binary instead of the one built here
#   BENCH_BUILD=DIR    an existing build tree configured with -DCORDON_BUILD_BENCH=ON (default
#                      bench/.cache/build, configured here on first use)
#
# Network traffic: the package registries while installing, then only a server the harness
# starts on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache="$root/bench/.cache"
mkdir -p "$cache"
started=$(date +%s)
say() { echo "[bench] $*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

# --- 1. install -------------------------------------------------------------------------------
if [ "${BENCH_NO_INSTALL:-0}" != 1 ]; then
  as_root ./scripts/setup.sh >/dev/null || say "scripts/setup.sh failed; building with what is installed"
  wanted=(hyperfine bubblewrap firejail gnuplot-nox libbenchmark-dev linux-perf util-linux python3 git
          ripgrep socat)  # ripgrep and socat: srt refuses to start without them
  command -v node >/dev/null || wanted+=(nodejs)
  command -v npm >/dev/null || wanted+=(npm)
  missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || true
    # One at a time, so that a package this release lacks costs only its own row.
    for p in "${missing[@]}"; do
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" \
        >/dev/null 2>&1 || say "could not install $p"
    done
  fi
fi
for tool in hyperfine cmake ninja python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done

# srt (@anthropic-ai/sandbox-runtime) into a local prefix, never globally.
srt_cli="" srt_reason=""
srt_prefix="$cache/npm"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  srt_reason="node/npm not installed"
else
  node_version=$(node -p 'process.versions.node')
  if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=11)?0:1)'; then
    srt_reason="srt needs node >= 20.11, this machine has $node_version"
  else
    if [ ! -x "$srt_prefix/node_modules/.bin/srt" ] && [ "${BENCH_NO_INSTALL:-0}" != 1 ]; then
      say "npm install @anthropic-ai/sandbox-runtime into bench/.cache/npm"
      npm install --prefix "$srt_prefix" --no-audit --no-fund --loglevel=error @anthropic-ai/sandbox-runtime \
        >"$cache/npm-install.log" 2>&1 || true
    fi
    if [ -x "$srt_prefix/node_modules/.bin/srt" ]; then
      srt_cli="$srt_prefix/node_modules/.bin/srt"
    else
      srt_reason="npm install failed: $(tail -n 1 "$cache/npm-install.log" 2>/dev/null || echo 'not attempted')"
    fi
  fi
fi

# --- 2. build ---------------------------------------------------------------------------------
build="${BENCH_BUILD:-$cache/build}"
case $build in /*) ;; *) build="$root/$build" ;; esac  # the harness runs commands from other directories
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=g++ \
    -DCORDON_BUILD_BENCH=ON -DCORDON_BUILD_TESTS=OFF >/dev/null
fi
say "building cordon and the benchmark targets in ${build#"$root"/}"
# Only what the benchmarks run: the CLI, its helpers, and the bench programs.
cmake --build "$build" --target cordon_cli cordon_supervisor cordon_fs_worker cordon_prepared_bench \
  cordon_compile_bench cordon_spawn_many cordon_broker_bench cordon_governance_bench cordon_fs_worker_bench cordon_c \
  >"$cache/build.log" 2>&1 || { tail -n 30 "$cache/build.log" >&2; echo "bench: build failed (bench/.cache/build.log)" >&2; exit 1; }
cordon_bin="${CORDON_BIN:-$build/cordon}"

# --- 3. measure and write the page ------------------------------------------------------------
args=(--cordon "$cordon_bin" --build "$build" --srt "$srt_cli" --srt-reason "$srt_reason")
[ "${BENCH_QUICK:-0}" = 1 ] && args+=(--quick)
python3 "$root/bench/harness.py" "${args[@]}"

# Filtered networking: the broker against a direct loopback connection (bench/broker_bench.py),
# appended to the same page.
broker_args=(--cordon "$cordon_bin" --client "$build/bench/cordon_broker_bench")
[ "${BENCH_QUICK:-0}" = 1 ] && broker_args+=(--quick)
say "broker throughput and connection latency"
python3 "$root/bench/broker_bench.py" "${broker_args[@]}" "$cache/broker-section.md" >/dev/null
{ echo; cat "$cache/broker-section.md"; } >>"$root/docs/benchmarks.md"

# The tool-use call cold and pooled against a bare subprocess, and the cordon mcp round trip
# (bench/tool_call_bench.py), appended to the same page.
say "the tool-use call and the MCP round trip"
CORDON_LIBRARY="$build/src/capi/libcordon_c.so.1" python3 "$root/bench/tool_call_bench.py" --build "$build" \
  --runs "$([ "${BENCH_QUICK:-0}" = 1 ] && echo 10 || echo 50)" "$cache/tool-call-section.md" >/dev/null
{ echo; cat "$cache/tool-call-section.md"; } >>"$root/docs/benchmarks.md"

# The repository scan's cost as the workspace grows (bench/workspace_size.sh), appended.
say "workspace size"
{
  echo; echo "## Workspace size"; echo
  echo "\`cordon run -- /bin/true\` start-to-exit (ms), cold, in git repositories of N directories (bench/workspace_size.sh); load average $(cut -d' ' -f1-3 /proc/loadavg) before it."
  echo; echo '```'; CORDON="$cordon_bin" "$root/bench/workspace_size.sh" "$([ "${BENCH_QUICK:-0}" = 1 ] && echo 3 || echo 9)"; echo '```'
} >>"$root/docs/benchmarks.md"

# Every other layer (prepared sandboxes, CPU per launch, sidecar, filesystem worker, governance, the
# gate runner) and the side-by-side table of them all, ratios first, before the page's Summary, with
# docs/benchmarks-layers.png (bench/layers.py).
layer_args=(--cordon "$cordon_bin" --build "$build")
[ "${BENCH_QUICK:-0}" = 1 ] && layer_args+=(--quick)
say "every layer side by side"
python3 "$root/bench/layers.py" "${layer_args[@]}"
say "done in $(( $(date +%s) - started )) s"
