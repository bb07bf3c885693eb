#!/usr/bin/env python3
"""The floor under the repository scan's cost, beside what a run pays, in one
run (docs/benchmarks.md, "Workspace size: the floor"): for workspaces of 80,
1,700, 20,000 and 150,000 directories (each a git repository, as
bench/workspace_pooled.py makes them),
  - lstat of every directory by path (os.lstat, one statx(2) each), with a
    warm dentry cache, and with a cold one when run as root with
    DROP_CACHES=1 (writes 2 to /proc/sys/vm/drop_caches: every process on
    the host pays for it once);
  - `cordon run -- /bin/true` in the workspace (cold: a new process each);
  - the same through `cordon mcp --pool 1` (pooled: tools/call shell true,
    a pause before each call so that the pool is prepared again; the pause
    is not timed).
Medians of RUNS (default 5) in milliseconds. Not a test: numbers for the
document. TREES=dir keeps the workspaces there between runs (made once).
  bench/workspace_floor.py [RUNS]   (CORDON=path, TREES=dir, DROP_CACHES=1)"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
drop = os.environ.get("DROP_CACHES") == "1"
sys.argv[1:] = []  # workspace_pooled reads its own arguments when imported
sys.path.insert(0, str(Path(__file__).resolve().parent))
from workspace_pooled import RULES, make_tree, pooled_times  # noqa: E402

root = Path(__file__).resolve().parents[1]
cordon = os.environ.get("CORDON", str(root / "build" / "cordon"))
SIZES = (80, 1700, 20000, 150000)


def directories(ws):
    out = []
    for dirpath, dirnames, _ in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        out.append(dirpath)
    return out


def lstat_all(paths):
    start = time.perf_counter()
    for p in paths:
        os.lstat(p)
    return (time.perf_counter() - start) * 1000


def drop_caches():
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("2\n")


def cold_runs(ws):
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([cordon, "run", "--", "/bin/true"], cwd=ws, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times[1:])  # the first fills the listing store


def main():
    keep = os.environ.get("TREES")
    base = keep or tempfile.mkdtemp(prefix="cordon-wsfloor-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    os.makedirs(base, exist_ok=True)
    rules_file = Path(base) / "rules.json"
    rules_file.write_text(json.dumps(RULES))
    load = os.getloadavg()[0]
    print("load %.1f, %d cores, %d runs each (medians, ms)" % (load, os.cpu_count(), runs))
    print("%-12s %12s %12s %10s %10s" % ("directories", "lstat warm", "lstat cold", "run cold", "run pooled"))
    try:
        for n in SIZES:
            ws = os.path.join(base, "ws%d" % n)
            if not os.path.isdir(ws):
                make_tree(ws, n)
            paths = directories(ws)
            cold_lstat = "-"
            if drop:
                drop_caches()
                cold_lstat = "%.0f" % lstat_all(paths)
            lstat_all(paths)
            warm = statistics.median(lstat_all(paths) for _ in range(3))
            print("%-12d %12.1f %12s %10.0f %10.0f" % (n, warm, cold_lstat, cold_runs(ws),
                                                       statistics.median(pooled_times(ws, rules_file, runs, 3.0))),
                  flush=True)
    finally:
        if not keep:
            shutil.rmtree(base)


if __name__ == "__main__":
    main()
