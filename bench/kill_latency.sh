#!/bin/sh
# kill_latency.sh — how long after its limit a run's tree is killed
# (docs/doors.md, "Limits"). Runs N times each:
#   timeout: `cordon run --timeout T -- sleep 30`: wall time minus T;
#   cpu:     `cordon run --cpu 1 -- spin`: the tree's CPU time in the report
#            (resources.tree_cpu_ms, a cgroup's counter) minus the 1000 ms
#            allowed. Wall time says little here: on a loaded machine a spinning
#            process gets a fraction of a core, so its second of CPU takes longer.
# Prints the median and the worst, in milliseconds. Meant to run on a loaded
# machine too: start a load (e.g. `stress-ng --cpu 4`) beside it.
# Usage: bench/kill_latency.sh [CORDON] [N]
set -eu
cordon=${1:-build/cordon}
n=${2:-5}
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
cd "$ws"

# Milliseconds since the epoch.
now_ms() { date +%s%3N; }

measure() {  # label allowed_ms command...
  label=$1 allowed=$2
  shift 2
  i=0 all=""
  while [ "$i" -lt "$n" ]; do
    start=$(now_ms)
    "$cordon" run --no-summary --report "$ws/r.json" "$@" >/dev/null 2>&1 || true
    end=$(now_ms)
    tree_cpu=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("resources",{}).get("tree_cpu_ms","-"))' "$ws/r.json")
    late=$((end - start - allowed))
    if [ "$label" = cpu ] && [ "$tree_cpu" != - ]; then late=$((tree_cpu - allowed)); fi
    all="$all $late"
    echo "$label run $i: $late ms after the limit (wall $((end - start)) ms, tree_cpu_ms $tree_cpu)"
    i=$((i + 1))
  done
  echo "$all" | tr ' ' '\n' | grep -v '^$' | sort -n | awk -v l="$label" '
    { v[NR] = $1 } END { printf "%s: median %d ms, worst %d ms over %d runs\n", l, v[int((NR + 1) / 2)], v[NR], NR }'
}

measure timeout 500 --timeout 0.5 -- sleep 30
measure cpu 1000 --cpu 1 --accept cpu=partial -- sh -c 'while :; do :; done'
