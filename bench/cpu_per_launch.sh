#!/bin/sh
# CPU per launch over the whole process tree: `perf stat -e task-clock`
# counts every process a launch creates (perf's counters are inherited by
# each fork, so the supervisor, PID 1, the command and any process nobody
# waits for, such as a cgroup janitor, are all in it), for `/bin/true`
# bare, under cordon's default profile, and under bubblewrap with a
# comparable view. Rounds alternate the tools so that load falls on each
# alike. Prints ratios first, then milliseconds, then the machine's load.
#   bench/cpu_per_launch.sh [CORDON] [RUNS] [ROUNDS]   (defaults: build/cordon, 20, 3)
set -eu
cd "$(dirname "$0")/.."
cordon=${1:-build/cordon} runs=${2:-20} rounds=${3:-3}
command -v perf >/dev/null || { echo "perf (linux-perf) is needed" >&2; exit 2; }
ws=$(mktemp -d "${TMPDIR:-/var/tmp}/cordon-cpu.XXXXXX")
trap 'rm -rf "$ws"' EXIT
bwrap_argv="bwrap --unshare-all --die-with-parent --new-session --clearenv --setenv PATH /usr/bin:/bin \
--ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
--bind $ws $ws --proc /proc --dev /dev --tmpfs /tmp --chdir $ws -- /bin/true"
# task-clock in ms per launch (perf -r: the mean of RUNS launches).
cpu() { perf stat -x, -e task-clock -r "$runs" -- "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'; }
out=$ws/cpu.txt
: >"$out"
i=0
while [ "$i" -lt "$rounds" ]; do
  echo "bare $(cpu /bin/true)" >>"$out"
  echo "cordon $(cd "$ws" && cpu "$OLDPWD/$cordon" run --workspace "$ws" -- /bin/true)" >>"$out"
  command -v bwrap >/dev/null && echo "bwrap $(cpu $bwrap_argv)" >>"$out"
  i=$((i + 1))
done
python3 - "$out" "$runs" "$rounds" <<'PY'
import statistics, sys, os
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 2]
by = {}
for tool, ms in rows:
    by.setdefault(tool, []).append(float(ms))
m = {t: statistics.median(v) for t, v in by.items()}
if "bwrap" in m:
    print(f"cordon/bwrap {m['cordon'] / m['bwrap']:.2f}x   cordon/bare {m['cordon'] / m['bare']:.2f}x   "
          f"bwrap/bare {m['bwrap'] / m['bare']:.2f}x")
print("task-clock per launch, whole tree, median of rounds: " +
      ", ".join(f"{t} {v:.3f} ms" for t, v in m.items()) + f"  ({sys.argv[3]} rounds x {sys.argv[2]} launches)")
print("load average %s on %d cores" % (" ".join(open("/proc/loadavg").read().split()[:3]), os.cpu_count()))
PY
