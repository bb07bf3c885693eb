#!/usr/bin/env bash
# The main job on a built-in default: build cordon, make a small workspace,
# run a real command in it under the default profile (workspace-write), and
# print the run report.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/build/cordon" ]; then
  echo "== building cordon (the first build takes about two minutes on 2 cores)"
fi
"$root/scripts/build.sh" >/dev/null

workspace="$(mktemp -d /tmp/cordon-demo-XXXXXX)"
trap 'rm -rf "$workspace"' EXIT
cd "$workspace"
git init -q . && printf 'int main(void) { return 0; }\n' > main.c

echo "== cordon run -- sh -c ... (profile workspace-write, workspace $workspace)"
status=0
"$root/build/cordon" run --report "$workspace/report.json" -- sh -c '
  echo "inside: uid=$(id -u) host=$(hostname) cwd=$PWD"
  cc -o main main.c && echo "compiled main.c in the workspace"
  echo note > note.txt && echo "wrote note.txt in the workspace"
  { echo x > /etc/cordon-demo; } 2>/dev/null || echo "writing /etc: refused (read-only)"
  { echo x > .git/hooks/pre-commit; } 2>/dev/null || echo "writing .git/hooks: refused (protected)"
  ls /home >/dev/null 2>&1 || echo "listing /home: not visible"
  python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 22), 1)" 2>/dev/null || echo "TCP to 127.0.0.1: refused"
' || status=$?
echo "== exit status $status; report:"
cat "$workspace/report.json"
