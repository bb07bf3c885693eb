#!/usr/bin/env bash
# scripts/macos-runner.sh — what a macOS CI job runs to prove what Linux cannot
# (docs/macos-backend.md, "What a Mac runner must still prove"). Not run on
# Linux: it exits 2 there.
#
#   scripts/macos-runner.sh [GOLDEN_DIR]     (default: tests/macos/golden)
#
# 1. Acceptance: every golden profile is handed to sandbox-exec with its
#    parameters and must run /usr/bin/true (exit 0). sandbox-exec rejects a
#    profile it cannot parse with exit 65: that fails the job.
# 2. Escape probes under the golden profiles, with /Users/dev (the example
#    home of the goldens) re-pointed at a scratch home: each forbidden action
#    must fail and each allowed one must work.
# 3. Observations that decide a documented level (hard links): printed as
#    "observe", never counted as passed.
# Ends with "macos-runner: N passed, N failed" and exits 1 on any failure.
set -u

if [[ "$(uname -s)" != "Darwin" ]]; then
  echo "macos-runner: not a Mac ($(uname -s)); this script only runs on macOS" >&2
  exit 2
fi
command -v sandbox-exec >/dev/null || { echo "macos-runner: sandbox-exec is missing" >&2; exit 2; }

root="$(cd "$(dirname "$0")/.." && pwd)"
golden_dir="${1:-$root/tests/macos/golden}"
scratch="$(mktemp -d /private/tmp/cordon-runner-XXXXXX)"
home="$scratch/home"
trap 'rm -rf "$scratch"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok      $*"; }
fail() { failed=$((failed + 1)); echo "FAILED  $*"; }

# The golden's profile text and -D arguments, with /Users/dev replaced by the
# scratch home (the scratch path has no regex metacharacters, so the
# repository-metadata regexes stay exact) and RUN_TMP made for real.
load() {
  local golden="$1"
  profile="$(sed "s#/Users/dev#$home#g" "$golden")"
  run_tmp="$(mktemp -d "$scratch/run-XXXXXX")"
  params=()
  while IFS= read -r line; do
    local kv="${line#;; param }"
    kv="${kv% (at launch)}"
    if [[ "$kv" == RUN_TMP=* ]]; then kv="RUN_TMP=$run_tmp"; fi
    params+=("-D$kv")
  done < <(printf '%s\n' "$profile" | grep '^;; param ')
}

sandboxed() { sandbox-exec -p "$profile" "${params[@]}" -- "$@"; }

expect_ok() {
  local what="$1"; shift
  if out="$(sandboxed "$@" 2>&1)"; then pass "$what"; else fail "$what (exit $?: $out)"; fi
}
expect_denied() {
  local what="$1"; shift
  if out="$(sandboxed "$@" 2>&1)"; then
    fail "$what (was allowed)"
  elif [[ "$out" == *"Operation not permitted"* || "$out" == *"Permission denied"* || "$out" == *"Connection refused"* || "$out" == *"Couldn't connect"* || "$out" == *"Failed to connect"* ]]; then
    pass "$what"
  else
    fail "$what (failed, but not by the sandbox: $out)"
  fi
}

make_home() {
  rm -rf "$home"
  mkdir -p "$home/project/.git/objects" "$home/project/src" "$home/.ssh"
  echo secret >"$home/.ssh/id_ed25519"
  echo 'export X=1' >"$home/.bashrc"
  echo '[core]' >"$home/project/.git/config"
  : >"$home/project/.git/index"
}

echo "== 1. sandbox-exec accepts every golden profile (macOS $(sw_vers -productVersion))"
for golden in "$golden_dir"/*.sb; do
  make_home
  load "$golden"
  if out="$(sandboxed /usr/bin/true 2>&1)"; then
    pass "accepts $(basename "$golden")"
  else
    fail "accepts $(basename "$golden") (exit $?: $out)"
  fi
done

echo "== 2. escape probes"
make_home
load "$golden_dir/builtin-workspace-write.sb"
expect_ok "workspace is writable" /usr/bin/touch "$home/project/src/new.c"
expect_ok "workspace is readable" /bin/cat "$home/project/.git/config"
expect_ok "run tmp is writable" /usr/bin/touch "$run_tmp/file"
expect_denied "denied ~/.ssh cannot be read" /bin/cat "$home/.ssh/id_ed25519"
expect_denied "denied ~/.ssh cannot be listed" /bin/ls "$home/.ssh"
expect_denied "protected ~/.bashrc cannot be written" /bin/sh -c "echo x >> '$home/.bashrc'"
expect_denied "home outside the workspace is not writable" /usr/bin/touch "$home/outside"
expect_denied "home outside the workspace is not readable" /bin/ls "$home"
expect_denied ".git/config cannot be written" /bin/sh -c "echo x >> '$home/project/.git/config'"
expect_denied ".git/hooks cannot be created the first time" /bin/mkdir "$home/project/.git/hooks"
expect_denied ".git cannot be renamed away" /bin/mv "$home/project/.git" "$home/project/g2"
expect_denied "a new repository's hooks are protected" /bin/mkdir -p "$home/project/sub/.git/hooks"
expect_ok ".git/index stays writable" /bin/sh -c "echo x >> '$home/project/.git/index'"
expect_denied "/tmp is not writable (only the run directory)" /usr/bin/touch /private/tmp/cordon-runner-escape
expect_denied "/etc/ssh (via the /etc link) cannot be listed" /bin/ls /etc/ssh
expect_denied "sysctl cannot be written" /usr/sbin/sysctl -w kern.maxfilesperproc=1000
python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 &
server=$!
sleep 1
expect_denied "network denied: loopback TCP" /usr/bin/curl -sS -m 3 http://127.0.0.1:18080/
expect_denied "network denied: unix socket (syslog)" /bin/sh -c '/usr/bin/nc -U -w 1 /var/run/syslog </dev/null' 
kill "$server" 2>/dev/null

make_home
load "$golden_dir/filtered-network.sb"
python3 -m http.server 3128 --bind 127.0.0.1 >/dev/null 2>&1 &
server=$!
python3 -m http.server 18081 --bind 127.0.0.1 >/dev/null 2>&1 &
other=$!
sleep 1
expect_ok "filtered: the broker's port is reachable" /usr/bin/curl -sS -m 3 -o /dev/null http://localhost:3128/
expect_denied "filtered: any other loopback port is not" /usr/bin/curl -sS -m 3 http://127.0.0.1:18081/
kill "$server" "$other" 2>/dev/null

make_home
load "$golden_dir/private-aliases.sb"
mkdir -p /private/tmp/shared/secret
expect_ok "writable /tmp/shared through the /tmp link" /usr/bin/touch /tmp/shared/file
expect_ok "writable /tmp/shared through /private/tmp" /usr/bin/touch /private/tmp/shared/file2
expect_denied "denied /tmp/shared/secret through the link" /usr/bin/touch /tmp/shared/secret/x
expect_denied "denied /tmp/shared/secret through /private" /usr/bin/touch /private/tmp/shared/secret/x
rm -rf /private/tmp/shared

echo "== 3. observations (decide documented levels; not counted)"
make_home
load "$golden_dir/builtin-workspace-write.sb"
ln "$home/.bashrc" "$home/project/bashrc-link" 2>/dev/null &&
  if sandboxed /bin/sh -c "echo x >> '$home/project/bashrc-link'" 2>/dev/null; then
    echo "observe a hard link made outside to a protected file is writable through the workspace (filesystem_deny detail)"
  else
    echo "observe a hard link to a protected file is NOT writable through the workspace"
  fi
echo "observe process-tree cleanup needs the launcher (src/macos/launcher_apple.cpp), not sandbox-exec alone"

echo "macos-runner: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
