#!/usr/bin/env bash
# The newcomer path: on a clean clone of this repository (committed state),
# run the README's first command and check what a newcomer reads: progress
# lines instead of build output, the demo's findings, a readable summary of
# the run report, no raw JSON, exit status 0. The build reuses ccache (the
# README's own number is measured without it: CCACHE_DISABLE=1).
#
# Usage: scripts/test-newcomer.sh [RESULTS_DIR]; with RESULTS_DIR, writes
# RESULTS_DIR/newcomer.xml (JUnit) for scripts/test.sh's summary line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:-}"
clone="$(mktemp -d /tmp/cordon-newcomer-XXXXXX)"
trap 'rm -rf "$clone"' EXIT
git clone -q "$root" "$clone/cordon"
cd "$clone/cordon"

# The same object files as any other tree: paths relative to the base
# directory, and the build directory left out of the hash (debug info only).
export CCACHE_BASEDIR="$clone" CCACHE_NOHASHDIR=1
first='./scripts/setup.sh && ./scripts/demo.sh'
[ "$(id -u)" -eq 0 ] || first='./scripts/demo.sh'  # setup.sh installs packages: root only
start=$(date +%s)
set +e
bash -c "$first" >"$clone/out" 2>&1
status=$?
set -e
seconds=$(( $(date +%s) - start ))
echo "== newcomer: '$first' on a clean clone: exit $status after ${seconds} s (ccache reused)"

failures=()
check() {  # check NAME GREP-ARGS...: the output must match
  local name=$1
  shift
  grep -q "$@" "$clone/out" || failures+=("$name")
  cases+=("$name")
}
refute() {  # refute NAME GREP-ARGS...: the output must not match
  local name=$1
  shift
  if grep -q "$@" "$clone/out"; then failures+=("$name"); fi
  cases+=("$name")
}
cases=()
[ "$status" -eq 0 ] || failures+=("exit status 0")
cases+=("exit status 0")
check "a summary line with the outcome" -E '^cordon: summary: completed, exit 0 after [0-9.]+ m?s \(policy workspace-write\)$'
check "the summary lists enforced controls" -E '^cordon:   enforced    filesystem_read, filesystem_write, '
# Under the default profile every control is enforced or not asked for on this
# kind of host; a "not fully" line, with why, appears only when one is partial.
check "the summary lists the controls not asked for, with why" -E '^cordon:   not asked   [a-z_, ]+ \(not_applicable: .+\)$'
check "the summary names the violations" -E '^cordon:   violations  '
check "the summary says where the report is" -F 'cordon report show '
check "the demo's findings" -F 'writing /etc: refused (read-only)'
refute "no compiler command lines" -E '(^/usr/bin/|-Werror|-std=c\+\+20)'
refute "no ninja step lines" -E '^\[[0-9]+/[0-9]+\] (Building|Linking)|^ninja: '
refute "no raw JSON" -E '^\s*"(schema|controls|outcome)":|^\{$'
if [ "$(grep -c '^== building cordon: ' "$clone/out")" -gt 5 ]; then failures+=("at most 5 progress lines"); fi
cases+=("at most 5 progress lines")

if [ ${#failures[@]} -gt 0 ]; then
  echo "newcomer: FAILED: ${failures[*]}; the output was:"
  cat "$clone/out"
fi
if [ -n "$results" ]; then
  {
    echo "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    echo "<testsuite name=\"newcomer\" tests=\"${#cases[@]}\" failures=\"${#failures[@]}\" skipped=\"0\">"
    for c in "${cases[@]}"; do
      echo -n "  <testcase classname=\"newcomer\" name=\"$c\""
      if printf '%s\n' "${failures[@]}" | grep -qxF "$c"; then echo "><failure message=\"failed\"/></testcase>"; else echo "/>"; fi
    done
    echo "</testsuite>"
  } >"$results/newcomer.xml"
fi
[ ${#failures[@]} -eq 0 ]
