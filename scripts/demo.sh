#!/usr/bin/env bash
# The main job on a built-in default: build the cordon CLI (only that target),
# make a small workspace, run a real command in it under the default profile
# (workspace-write), and print a readable summary of the run report.
#
# Build output goes to build/demo-build.log; the terminal gets one progress
# line, and on failure the compiler's errors.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
log="$root/build/demo-build.log"
mkdir -p "$root/build"

# Prints "== building cordon: [done/total]" as ninja reports steps: one line
# rewritten in place on a terminal, a line per quarter otherwise.
progress() {
  local line shown=-1 tty=0
  [ -t 1 ] && tty=1
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    if [[ "$line" =~ ^\[([1-9][0-9]*)/([0-9]+)\] ]]; then
      local n=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
      if [ $tty -eq 1 ]; then
        printf '\r== building cordon: [%s/%s]' "$n" "$total"
        shown=0
      elif [ $((n * 4 / total)) -gt "$shown" ]; then
        shown=$((n * 4 / total))
        printf '== building cordon: [%s/%s]\n' "$n" "$total"
      fi
    fi
  done
  if [ $tty -eq 1 ] && [ "$shown" -eq 0 ]; then printf '\n'; fi
}

# Shows what went wrong: the compiler's messages, not the command lines.
build_failed() {
  echo "demo: the build failed; the compiler said (full log: $log):" >&2
  grep -E -v '^\[[0-9]+/[0-9]+\]|^FAILED: |^ninja: build stopped' "$log" | grep -E -v '^/usr/bin/[^ ]+ .* -c ' | head -60 >&2
  exit 1
}

: >"$log"
if [ ! -f build/build.ninja ]; then
  echo "== configuring (cmake --preset default)"
  cmake --preset default >>"$log" 2>&1 || build_failed
fi
pending="$(ninja -C build -n cordon_cli 2>/dev/null || true)"  # not piped into grep -q: pipefail
if grep -q '^\[' <<<"$pending"; then
  echo "== building the cordon CLI (several minutes on 2 idle cores without ccache, much longer on busy ones; details in build/demo-build.log)"
fi
set +e
NINJA_STATUS='[%f/%t] ' cmake --build build --target cordon_cli 2>&1 | progress
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || build_failed

# One level below /tmp: a writable root directly in /tmp would make writes beside
# it land in the run's private /tmp and be discarded (docs/workloads.md).
scratch="$(mktemp -d /tmp/cordon-demo-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
workspace="$scratch/workspace"
mkdir "$workspace"
cd "$workspace"
git init -q . && printf 'int main(void) { return 0; }\n' > main.c

report="$root/build/demo-report.json"
echo "== cordon run --summary --report build/demo-report.json -- sh -c ... (workspace $workspace)"
status=0
"$root/build/cordon" run --summary --report "$report" -- sh -c '
  echo "inside: uid=$(id -u) host=$(hostname) cwd=$PWD"
  cc -o main main.c && echo "compiled main.c in the workspace"
  echo note > note.txt && echo "wrote note.txt in the workspace"
  { echo x > /etc/cordon-demo; } 2>/dev/null || echo "writing /etc: refused (read-only)"
  { echo x > .git/hooks/pre-commit; } 2>/dev/null || echo "writing .git/hooks: refused (protected)"
  ls /home >/dev/null 2>&1 || echo "listing /home: not visible"
  python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 22), 1)" 2>/dev/null || echo "TCP to 127.0.0.1: refused"
' || status=$?
echo "== exit status $status"
echo "== the whole report: build/cordon report show build/demo-report.json (JSON: build/demo-report.json)"
exit "$status"
