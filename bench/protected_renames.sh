#!/usr/bin/env bash
# The cost of answering renames and removals in the supervisor
# (docs/seccomp.md, "Renames and removals of protected paths"): N times
# create, rename and unlink a file, side by side in one run, in interleaved
# rounds: bare (no cordon), under `cordon run` in a workspace without a
# repository (those calls are not notified), and in a workspace holding a git
# repository (a protected .git/config: every rename and unlink goes to the
# supervisor). Prints microseconds per create+rename+unlink, the median of the
# rounds. Usage: bench/protected_renames.sh CORDON [N] [ROUNDS]
set -euo pipefail
cordon=$(realpath "$1") n=${2:-5000} rounds=${3:-5}
work=$(mktemp -d /tmp/cordon-bench-renames.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/plain" "$work/repo"
git init -q "$work/repo"
loop="import os, time
n = $n
t = time.perf_counter()
for i in range(n):
    open('f', 'w').close()
    os.rename('f', 'g')
    os.unlink('g')
print((time.perf_counter() - t) / n * 1e6)"
declare -A results
for round in $(seq "$rounds"); do
  results[bare]+="$(cd "$work/plain" && /usr/bin/python3 -c "$loop") "
  results[plain]+="$(cd "$work/plain" && "$cordon" run -- /usr/bin/python3 -c "$loop") "
  results[repo]+="$(cd "$work/repo" && "$cordon" run -- /usr/bin/python3 -c "$loop") "
done
for case in bare plain repo; do
  python3 -c "import statistics, sys; v = [float(x) for x in sys.argv[2:]]; \
print(f'{sys.argv[1]:5s} median {statistics.median(v):.2f} us per create+rename+unlink (rounds: {len(v)})')" \
    "$case" ${results[$case]}
done
