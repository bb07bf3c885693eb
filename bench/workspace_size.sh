#!/bin/sh
# The cost of the repository scan as the workspace grows (docs/benchmarks.md,
# "Workspace size"): `cordon run -- /bin/true` start-to-exit, cold (a new
# `cordon run` each time), in workspaces of 80, 1,700 (one node_modules),
# 20,000 and 150,000 directories, each a git repository, side by side in one
# run, the sizes interleaved. Not a test: numbers for the document.
#   bench/workspace_size.sh [RUNS]   (default 9; needs build/cordon, or CORDON=path)
set -eu
cd "$(dirname "$0")/.."
cordon=${CORDON:-$(pwd)/build/cordon}
[ -x "$cordon" ] || { echo "build it first: cmake --build build --target cordon" >&2; exit 2; }
runs=${1:-9}
base=$(mktemp -d "${TMPDIR:-/var/tmp}/cordon-wssize.XXXXXX")
trap 'rm -rf "$base"' EXIT
sizes="80 1700 20000 150000"
for n in $sizes; do
  # n directories: a tree of fan-out 20 (as deep as a node_modules), under a git repository.
  python3 - "$base/ws$n" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(root)
made, level = 0, [root]
while made < n:
    nxt = []
    for d in level:
        for i in range(20):
            if made >= n: break
            p = os.path.join(d, "d%d" % i)
            os.mkdir(p); nxt.append(p); made += 1
    level = nxt
PY
  git init -q "$base/ws$n"
done
# One timing in ms of `cordon run -- /bin/true` in workspace $1.
once() {
  start=$(date +%s%N)
  (cd "$1" && "$cordon" run -- /bin/true) >/dev/null 2>&1 || echo "run failed in $1" >&2
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}
for n in $sizes; do : > "$base/t$n"; done
i=0
while [ $i -lt "$runs" ]; do
  for n in $sizes; do once "$base/ws$n" >> "$base/t$n"; done
  i=$((i + 1))
done
printf '%-12s %8s %8s %8s\n' directories median min max
for n in $sizes; do
  sort -n "$base/t$n" | awk -v n="$n" '{ a[NR] = $1 } END { printf "%-12s %8d %8d %8d\n", n, a[int((NR + 1) / 2)], a[1], a[NR] }'
done
