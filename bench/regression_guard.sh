#!/bin/sh
# Regression guard (docs/benchmarks.md, "Before you stop"): the launch
# median and the CPU per launch of the current build against a previous
# commit's, in one interleaved run. Builds the old commit's CLI in a
# throw-away worktree (bench/.cache/guard-REV), then alternates the two.
# Not a timed test: it prints ratios for a developer to read.
#   bench/regression_guard.sh [REV] [ROUNDS]   (defaults: HEAD~1, 3; needs build/cordon)
set -eu
cd "$(dirname "$0")/.."
rev=${1:-HEAD~1} rounds=${2:-3}
new=build/cordon
[ -x "$new" ] || { echo "build the current tree first: cmake --build build --target cordon_cli" >&2; exit 2; }
sha=$(git rev-parse --short "$rev")
tree=bench/.cache/guard-$sha
if [ ! -x "$tree/build/cordon" ]; then
  rm -rf "$tree"
  git worktree add --detach "$tree" "$sha" >/dev/null
  (cd "$tree" && cmake --preset default >/dev/null && cmake --build build --target cordon_cli -j2 >/dev/null)
fi
old=$tree/build/cordon
echo "launch wall time (hyperfine, alternating rounds): $sha vs the working tree"
bench/launch_vs.sh "$(pwd)/$old" "$(pwd)/$new" "$rounds"
echo "CPU per launch (perf stat task-clock over the whole tree):"
for tool in old new; do
  bin=$old; [ "$tool" = new ] && bin=$new
  printf '%s ' "$tool"; bench/cpu_per_launch.sh "$bin" 20 "$rounds" | sed -n 2p
done
