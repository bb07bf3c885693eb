#!/usr/bin/env bash
# The workload suite (tests/workloads/, docs/workloads.md): real builds, venvs,
# multiprocessing, pytest, node, npm, git, a dev server, an interactive shell
# and concurrent runs, each under `cordon run`, each asserting what the work
# produced. Runs as the calling user and, when that is root, again as the
# unprivileged test user. Results go to RESULTS as gtest-style JSON
# (workloads.<user>.workloads.json), which scripts/test.sh's summary counts.
#
#   scripts/test-workloads.sh [RESULTS] [--only NAME...]
# CORDON_CLI: the CLI under test (default build/cordon).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:-$(mktemp -d /tmp/cordon-results-XXXXXX)}"
shift || true
only=("$@")
[ "${only[0]:-}" = "--only" ] && only=("${only[@]:1}")
test_user="${CORDON_TEST_USER:-cordon-test}"
cli="${CORDON_CLI:-$root/build/cordon}"
[ -x "$cli" ] || { echo "test-workloads: $cli is not built (cmake --build build --target cordon_cli)" >&2; exit 1; }
# A filtered run's network broker is the supervisor helper (docs/network.md).
helper="${CORDON_SUPERVISOR:-$root/build/src/supervisor/cordon-supervisor}"
[ -x "$helper" ] || { echo "test-workloads: $helper is not built (cmake --build build --target cordon_supervisor)" >&2; exit 1; }
mkdir -p "$results"

# A copy everyone can read and run: the build tree may be below /root.
share="$(mktemp -d /tmp/cordon-wl-share-XXXXXX)"
trap 'rm -rf "$share"' EXIT
cp "$cli" "$share/cordon"
cp "$helper" "$share/cordon-supervisor"
cp -r "$root/tests/workloads" "$share/workloads"
chmod -R a+rX "$share"
chmod 755 "$share"

# run_suite USER: every case as USER (the caller itself when USER is empty).
run_suite() {
  local user="$1" label="${1:-$(id -un)}" json="$results/workloads.${1:-$(id -un)}.workloads.json"
  local cases=() started total_start=$SECONDS
  local entries="" failures=0 skips=0 passes=0
  for script in "$share"/workloads/[a-z]*.sh; do
    local name; name="$(basename "$script" .sh)"
    [ "$name" = lib ] && continue
    if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
    local log="$results/workloads.$label.$name.log"
    started=$SECONDS
    if [ -n "$user" ]; then
      local home; home="$(getent passwd "$user" | cut -d: -f6)"
      runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TERM="${TERM:-dumb}" \
        CORDON_CLI="$share/cordon" CORDON_SUPERVISOR="$share/cordon-supervisor" WL_USER_RUN=1 \
        timeout 180 bash "$script" >"$log" 2>&1
    else
      env CORDON_CLI="$share/cordon" CORDON_SUPERVISOR="$share/cordon-supervisor" timeout 180 bash "$script" >"$log" 2>&1
    fi
    local rc=$? seconds=$((SECONDS - started)) result status
    if [ $rc -eq 0 ]; then
      passes=$((passes + 1)); status=passed
      entries+="{\"name\":\"$name\",\"status\":\"RUN\",\"result\":\"COMPLETED\",\"time\":\"${seconds}s\"},"
    elif [ $rc -eq 77 ]; then
      skips=$((skips + 1)); status=skipped
      local why; why="$(grep -m1 '^skip: ' "$log" | cut -c7- | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip() or "no reason given"))')"
      entries+="{\"name\":\"$name\",\"status\":\"RUN\",\"result\":\"SKIPPED\",\"skipped\":[{\"message\":$why}],\"time\":\"${seconds}s\"},"
    else
      failures=$((failures + 1)); status="FAILED (exit $rc)"
      local what; what="$(tail -n 20 "$log" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')"
      entries+="{\"name\":\"$name\",\"status\":\"RUN\",\"result\":\"COMPLETED\",\"failures\":[{\"failure\":$what}],\"time\":\"${seconds}s\"},"
      sed 's/^/    /' "$log" | tail -n 20
    fi
    printf '  %-26s %s (%ss)\n' "$name" "$status" "$seconds"
  done
  entries="${entries%,}"
  printf '{"testsuites":[{"name":"Workloads.%s","testsuite":[%s]}]}\n' "$label" "$entries" >"$json"
  echo "workloads as $label: $passes passed, $failures failed, $skips skipped in $((SECONDS - total_start)) s"
  [ $failures -eq 0 ]
}

status=0
echo "== workloads as $(id -un)"
run_suite "" || status=1
if [ "$(id -u)" -eq 0 ]; then
  id "$test_user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$test_user"
  echo "== workloads as $test_user"
  run_suite "$test_user" || status=1
fi
exit $status
