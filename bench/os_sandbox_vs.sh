#!/bin/sh
# Launch time and CPU of `/bin/true` under the default profile with the
# os_sandbox backend (CORDON_LINUX_BACKEND=os-sandbox), the namespace backend,
# and bubblewrap with the configuration of docs/benchmarks.md, side by side in
# one hyperfine run per round (alternating, so load on a shared machine falls
# on all three alike). Usage: bench/os_sandbox_vs.sh CORDON [ROUNDS] [BEFORE]
# BEFORE, when given, is another cordon binary (an earlier build) measured
# the same way under os-sandbox, as the row "os-sandbox-before". CORDON and
# BEFORE are absolute paths (the runs start in a temporary workspace).
# Prints, per tool: median launch-to-exit (ms), interquartile range, and mean
# CPU user+sys (ms) of the whole tree as hyperfine's rusage counts it.
set -eu
cordon=$1 rounds=${2:-5} before=${3:-}
ws=$(mktemp -d -p /var/tmp)  # not under /tmp: bubblewrap mounts a tmpfs there
trap 'rm -rf "$ws"' EXIT
cd "$ws"
bwrap_cmd="bwrap --unshare-all --die-with-parent --new-session --clearenv --setenv PATH /usr/bin:/bin --setenv HOME /tmp --ro-bind /usr /usr --ro-bind /etc /etc --ro-bind /opt /opt --ro-bind /sys /sys --symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib --symlink usr/lib32 /lib32 --symlink usr/lib64 /lib64 --bind $ws $ws --proc /proc --dev /dev --tmpfs /tmp --chdir $ws -- /bin/true"
i=0
while [ "$i" -lt "$rounds" ]; do
  hyperfine -N --warmup 5 --runs 30 --export-json "$ws/round$i.json" \
    -n os-sandbox "env CORDON_LINUX_BACKEND=os-sandbox $cordon run -- /bin/true" \
    -n namespaces "env CORDON_LINUX_BACKEND=namespaces $cordon run -- /bin/true" \
    -n bubblewrap "$bwrap_cmd" \
    -n env "env /bin/true" \
    ${before:+-n os-sandbox-before "env CORDON_LINUX_BACKEND=os-sandbox $before run -- /bin/true"} >/dev/null
  i=$((i + 1))
done
python3 - "$ws" "$rounds" "$before" <<'PY'
import json, statistics, sys
ws, rounds, before = sys.argv[1], int(sys.argv[2]), sys.argv[3]
times, cpu = {}, {}
for i in range(rounds):
    for r in json.load(open(f"{ws}/round{i}.json"))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
        cpu.setdefault(r["command"], []).append((r["user"] + r["system"]) * 1000)
base = statistics.median(times["env"])
bw = statistics.median(times["bubblewrap"]) - base
print("| tool | median (ms) | interquartile (ms) | median minus `env /bin/true` (ms) | ratio to bubblewrap (after `env`) | CPU user+sys (ms, mean) |")
print("| --- | --- | --- | --- | --- | --- |")
for name in ["os-sandbox"] + (["os-sandbox-before"] if before else []) + ["namespaces", "bubblewrap", "env"]:
    t = sorted(times[name])
    q = statistics.quantiles(t, n=4)
    med = statistics.median(t)
    print(f"| {name} | {med*1000:.2f} | {q[0]*1000:.2f}–{q[2]*1000:.2f} | {(med-base)*1000:.2f} | "
          f"{(med-base)/bw:.2f}× | {statistics.mean(cpu[name]):.2f} |")
print(f"({len(times['env'])} runs each, {rounds} rounds)")
PY
