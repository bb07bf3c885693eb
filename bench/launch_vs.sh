#!/bin/sh
# Launch median of two cordon binaries side by side: `/bin/true` under the
# default profile, in alternating rounds so that load on a shared machine
# falls on both alike. Usage: bench/launch_vs.sh OLD_CORDON NEW_CORDON [ROUNDS]
set -eu
old=$1 new=$2 rounds=${3:-5}
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
i=0
while [ "$i" -lt "$rounds" ]; do
  hyperfine -N --warmup 5 --runs 30 --export-json "$ws/round$i.json" \
    -n old "$old run -- /bin/true" -n new "$new run -- /bin/true" >/dev/null
  i=$((i + 1))
done
python3 - "$ws" "$rounds" <<'PY'
import json, statistics, sys
ws, rounds = sys.argv[1], int(sys.argv[2])
times = {"old": [], "new": []}
for i in range(rounds):
    for r in json.load(open(f"{ws}/round{i}.json"))["results"]:
        times[r["command"]] += r["times"]
o, n = statistics.median(times["old"]) * 1000, statistics.median(times["new"]) * 1000
print(f"old median {o:.3f} ms, new median {n:.3f} ms, new/old {n / o:.3f} ({len(times['old'])} runs each)")
PY
