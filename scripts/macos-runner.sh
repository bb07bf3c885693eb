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
# 4. Everyday tools under the built-in workspace-write profile
#    (docs/macos-backend.md, "Everyday tools"): git status and commit through
#    Apple's /usr/bin shim, clang, Python multiprocessing, node child_process,
#    a unix socket in the workspace, output to the inherited terminal, case
#    variants of .git; each checks a claim the plan makes (`cordon policy
#    explain --platform macos` of the build CORDON names, else build/cordon;
#    the CI job builds it natively and sets CORDON, and a CORDON that names
#    no executable fails). A tool the image lacks is reported "skip", never
#    passed.
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

# Every ASCII letter as a case class, as the generator writes the
# repository-metadata regexes (regex_case_fold, src/macos/sbpl_text.h).
fold() { printf '%s' "$1" | perl -pe 's/([a-zA-Z])/"[".lc($1).uc($1)."]"/ge'; }

# The golden's profile text and -D arguments, with /Users/dev replaced by the
# scratch home, in plain text and in the case-folded regexes (the scratch path
# has no regex metacharacters, so those regexes stay exact), RUN_TMP made for
# real and TERMINAL the inherited terminal (/dev/null when there is none).
load() {
  local golden="$1"
  profile="$(sed -e "s#/Users/dev#$home#g" -e "s#$(fold /Users/dev)#$(fold "$home")#g" "$golden")"
  run_tmp="$(mktemp -d "$scratch/run-XXXXXX")"
  local terminal=/dev/null
  if [[ -t 1 ]]; then terminal="$(tty 2>/dev/null || echo /dev/null)"; fi
  params=()
  while IFS= read -r line; do
    local kv="${line#;; param }"
    kv="${kv% (at launch)}"
    if [[ "$kv" == RUN_TMP=* ]]; then kv="RUN_TMP=$run_tmp"; fi
    if [[ "$kv" == TERMINAL=* ]]; then kv="TERMINAL=$terminal"; fi
    params+=("-D$kv")
  done < <(printf '%s\n' "$profile" | grep '^;; param ')
}

sandboxed() { sandbox-exec -p "$profile" "${params[@]}" -- "$@"; }

expect_ok() {
  local what="$1"; shift
  if out="$(sandboxed "$@" 2>&1)"; then pass "$what"; else fail "$what (exit $?: $out)"; fi
}
# Passes when the command failed because of the sandbox (its message says so).
judge_denied() {
  local what="$1" status="$2" out="$3"
  if [[ $status -eq 0 ]]; then
    fail "$what (was allowed)"
  elif [[ "$out" == *"Operation not permitted"* || "$out" == *"Permission denied"* || "$out" == *"Connection refused"* || "$out" == *"Couldn't connect"* || "$out" == *"Failed to connect"* ]]; then
    pass "$what"
  else
    fail "$what (failed, but not by the sandbox: $out)"
  fi
}
expect_denied() {
  local what="$1"; shift
  out="$(sandboxed "$@" 2>&1)"
  judge_denied "$what" $? "$out"
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

echo "== 4. everyday tools under workspace-write"
skip() { echo "skip    $*"; }
# The command's environment as the launcher builds it for workspace-write:
# HOME and TMPDIR re-rooted to the run directory, the built-in PATH with
# Homebrew first.
tool() {
  sandboxed /usr/bin/env -i HOME="$run_tmp" TMPDIR="$run_tmp" LANG=C.UTF-8 \
    PATH=/opt/homebrew/bin:/opt/homebrew/sbin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin "$@"
}
tool_ok() {
  local what="$1"; shift
  if out="$(tool "$@" 2>&1)"; then pass "$what"; else fail "$what (exit $?: $out)"; fi
}
tool_denied() {
  local what="$1"; shift
  out="$(tool "$@" 2>&1)"
  judge_denied "$what" $? "$out"
}
ws="$home/project"

# The claims these probes check, as the plan states them.
cordon_bin="${CORDON:-$root/build/cordon}"
if [[ -x "$cordon_bin" ]]; then
  claims="$("$cordon_bin" policy explain --platform macos --profile workspace-write --workspace "$ws" 2>&1)"
  for claim in "result:     compiles" "process_tree_cleanup: policy accepts unverified on macos" \
               "bind only inside writable roots" "read and write of the inherited terminal only" \
               "read /private/var/db/xcode_select_link" "read /opt/homebrew/**"; do
    if [[ "$claims" == *"$claim"* ]]; then pass "the plan claims: $claim"; else fail "the plan does not claim: $claim"; fi
  done
elif [[ -n "${CORDON:-}" ]]; then
  fail "the plan's claims: CORDON=$CORDON is not an executable (the CI job builds it)"
else
  skip "the plan's claims (no cordon binary at $cordon_bin; set CORDON)"
fi

make_home
load "$golden_dir/builtin-workspace-write.sb"
if /usr/bin/xcode-select -p >/dev/null 2>&1; then
  git -C "$ws" init -q 2>/dev/null  # outside the sandbox: a new repository's metadata is protected inside
  echo 'int main(void) { return 0; }' >"$ws/src/hello.c"
  tool_ok "git (the /usr/bin shim) status" /usr/bin/git -C "$ws" status --short
  tool_ok "git commit in the workspace" /usr/bin/git -C "$ws" -c user.name=cordon -c user.email=cordon@invalid \
    -c core.hooksPath=/dev/null commit -q --allow-empty -m probe
  tool_ok "clang compiles and links in the workspace" /usr/bin/clang -o "$ws/src/hello" "$ws/src/hello.c"
  tool_ok "the program clang built runs" "$ws/src/hello"
else
  skip "git, clang: no developer tools on this image"
fi
tool_ok "python multiprocessing (named semaphores)" /usr/bin/python3 -c \
  'import multiprocessing as m; assert m.Pool(2).map(abs, [-1, -2]) == [1, 2]'
if command -v node >/dev/null; then
  tool_ok "node child_process" "$(command -v node)" -e \
    'const r = require("child_process").spawnSync("/bin/echo", ["hi"]); if (String(r.stdout) !== "hi\n") process.exit(1)'
else
  skip "node child_process: no node on this image"
fi
if [[ -d /opt/homebrew/bin ]]; then
  tool_ok "Homebrew's prefix is readable" /bin/ls /opt/homebrew/bin
elif [[ -d /usr/local/Cellar ]]; then
  tool_ok "Homebrew's prefix is readable" /bin/ls /usr/local/Cellar
else
  skip "Homebrew: not installed"
fi
unix_pair='import socket, sys
p = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(p)
a, _ = s.accept(); c.sendall(b"x"); assert a.recv(1) == b"x"'
tool_ok "a unix socket bound and connected in the workspace" /usr/bin/python3 -c "$unix_pair" "$ws/tool.sock"
tool_ok "a unix socket in the run directory" /usr/bin/python3 -c "$unix_pair" "$run_tmp/t.sock"
tool_denied "no unix socket bound outside writable roots" /usr/bin/python3 -c "$unix_pair" "/private/tmp/cordon-runner-$$.sock"
tool_denied "no connect to a socket the policy does not list (syslog)" /usr/bin/python3 -c \
  'import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.connect("/var/run/syslog")'
tool_denied ".GIT/hooks (case variant) cannot be created" /bin/mkdir "$ws/.GIT/hooks"
tool_denied ".Git/config (case variant) cannot be written" /bin/sh -c "echo x >> '$ws/.Git/config'"
tool_denied ".GITMODULES (case variant) cannot be created" /usr/bin/touch "$ws/.GITMODULES"
tool_ok ".GITHUB is not repository metadata" /bin/mkdir "$ws/.GITHUB"

# The terminal: a pty from script(1) as the inherited terminal; the command
# writes to it, and TIOCSTI on it is refused (no file-ioctl on terminals).
if command -v script >/dev/null; then
  printf '%s' "$profile" >"$scratch/profile.sb"
  printf '%s\n' "${params[@]}" | grep -v '^-DTERMINAL=' >"$scratch/params"
  cat >"$scratch/in-pty.sh" <<'INPTY'
#!/bin/bash
scratch="$1"; shift
params=(); while IFS= read -r p; do params+=("$p"); done <"$scratch/params"
exec sandbox-exec -f "$scratch/profile.sb" "${params[@]}" "-DTERMINAL=$(tty)" -- "$@"
INPTY
  chmod +x "$scratch/in-pty.sh"
  out="$(script -q /dev/null "$scratch/in-pty.sh" "$scratch" /bin/echo cordon-terminal-probe 2>&1)"
  if [[ "$out" == *cordon-terminal-probe* ]]; then pass "output reaches the inherited terminal"; else fail "terminal output ($out)"; fi
  out="$(script -q /dev/null "$scratch/in-pty.sh" "$scratch" /usr/bin/python3 -c \
    'import fcntl, termios, sys; fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSTI, b"x")' 2>&1)"
  if [[ "$out" == *"Operation not permitted"* ]]; then pass "TIOCSTI on the terminal is refused"; else fail "TIOCSTI ($out)"; fi
else
  skip "terminal: no script(1)"
fi

echo "macos-runner: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
