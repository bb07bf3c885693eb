#!/usr/bin/env bash
# Launch time of `cordon run -- /bin/true` before and after a change, in
# interleaved rounds (the order alternates each round) so that load on a
# shared machine falls on both alike. Usage:
#   bench/stdio_launch.sh BEFORE_CLI AFTER_CLI [ROUNDS] [RUNS_PER_ROUND]
# Two stdio cases: pipes (hyperfine --output=pipe: stdout and stderr are
# pipes, stdin /dev/null) and a regular file as stdout (the relayed case).
set -euo pipefail
before=$1 after=$2 rounds=${3:-5} runs=${4:-30}
work=$(mktemp -d /tmp/cordon-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
for case in pipe file; do
  output=pipe
  [ "$case" = file ] && output="$work/out.txt"
  for round in $(seq "$rounds"); do
    a=$before b=$after
    [ $((round % 2)) -eq 0 ] && a=$after b=$before
    hyperfine -N --warmup 3 --runs "$runs" --output="$output" --export-json "$work/$case-$round.json" \
      "$a run -- /bin/true" "$b run -- /bin/true" >/dev/null
  done
done
python3 - "$work" "$before" "$after" "$rounds" <<'PY'
import json, statistics, sys
work, before, after, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for case in ("pipe", "file"):
    times = {before: [], after: []}
    for r in range(1, rounds + 1):
        for result in json.load(open(f"{work}/{case}-{r}.json"))["results"]:
            times[result["command"].split(" run ")[0]] += result["times"]
    b, a = times[before], times[after]
    print(f"{case:5s} before: median {statistics.median(b)*1e3:.2f} ms mean {statistics.mean(b)*1e3:.2f} ms (n={len(b)})"
          f" | after: median {statistics.median(a)*1e3:.2f} ms mean {statistics.mean(a)*1e3:.2f} ms (n={len(a)})"
          f" | after/before {statistics.median(a)/statistics.median(b):.3f}")
PY
