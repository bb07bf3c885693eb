# lib.sh — what every workload script in tests/workloads/ sources.
#
# A script is one test case: exit 0 passes, 77 skips (the first line of
# stdout after "skip: " is the reason), anything else fails. It runs the CLI
# in $CORDON_CLI on real tools, in a workspace of its own below $WL_TMP, and
# asserts what the work produced, not only the exit status.
set -uo pipefail

CORDON="${CORDON_CLI:?CORDON_CLI names the cordon binary under test}"
WL_TMP="${WL_TMP:-/tmp}"
# A private directory for this script; the workspace is one level below it so
# that writes beside the workspace are visible as failures (docs/workloads.md).
WL_DIR="$(mktemp -d "$WL_TMP/cordon-wl-XXXXXX")"
WS="$WL_DIR/ws"
mkdir -p "$WS"
trap 'rm -rf "$WL_DIR"' EXIT
# The host's tools: the system interpreter, whatever the caller's PATH has in front.
PY=/usr/bin/python3

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

skip() {
  echo "skip: $*"
  exit 77
}

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
  [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# expect_contains HAYSTACK NEEDLE WHAT
expect_contains() {
  case "$1" in
    *"$2"*) ;;
    *) fail "$3: expected to contain '$2', got: $1" ;;
  esac
}

expect_not_contains() {
  case "$1" in
    *"$2"*) fail "$3: expected not to contain '$2', got: $1" ;;
    *) ;;
  esac
}

need() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed: scripts/setup.sh installs it"
  done
}

# run_in [CORDON FLAGS...] -- COMMAND...: runs cordon from $WS with a report
# in $WL_DIR/report.json; stdout in $OUT, stderr in $ERR, status in $RC.
run_in() {
  local out="$WL_DIR/out" err="$WL_DIR/err"
  (cd "$WS" && "$CORDON" run --no-summary --report "$WL_DIR/report.json" "$@") >"$out" 2>"$err"
  RC=$?
  OUT="$(cat "$out")"
  ERR="$(cat "$err")"
}

# report_get PYTHON-EXPRESSION over the report as `r`, e.g. report_get 'r["outcome"]'
report_get() {
  "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); v = eval(sys.argv[2]); print(v if isinstance(v, str) else json.dumps(v))' \
    "$WL_DIR/report.json" "$1"
}

# A git identity for the host-side setup (the sandbox gets its own, see docs/workloads.md).
export GIT_AUTHOR_NAME="Workload Test" GIT_AUTHOR_EMAIL="wl@example.invalid"
export GIT_COMMITTER_NAME="Workload Test" GIT_COMMITTER_EMAIL="wl@example.invalid"
export GIT_CONFIG_NOSYSTEM=1
