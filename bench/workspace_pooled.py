#!/usr/bin/env python3
"""The repository scan's cost in a pooled run as the workspace grows
(docs/benchmarks.md, "Workspace size"): one `cordon mcp --pool 1` per
workspace of 80, 1,700, 20,000 and 150,000 directories (each a git
repository, as bench/workspace_size.sh makes them), `tools/call shell true`
round trips, a pause between calls so that the pool is prepared again before
the next (the pause is not timed). Not a test: numbers for the document.
  bench/workspace_pooled.py [RUNS] [PAUSE_SECONDS]   (default 7 and 3; CORDON=path)"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
cordon = os.environ.get("CORDON", str(root / "build" / "cordon"))
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
RULES = {"schema_version": 1, "name": "bench",
         "rules": [{"id": "true", "reason": "bench", "decision": "allow", "commands": ["true"]}]}


def make_tree(path, n):
    os.makedirs(path)
    made, level = 0, [path]
    while made < n:
        nxt = []
        for d in level:
            for i in range(20):
                if made >= n:
                    break
                p = os.path.join(d, "d%d" % i)
                os.mkdir(p)
                nxt.append(p)
                made += 1
        level = nxt
    subprocess.run(["git", "init", "-q", path], check=True)


def pooled_times(ws, rules_file, calls, pause_seconds):
    """The round trips (ms) of `calls` tools/call after one warm-up call, each
    after a pause (not timed) in which the pool prepares its next sandbox."""
    mcp = subprocess.Popen([cordon, "mcp", "--pool", "1", "--rules", str(rules_file), "--workspace", ws],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def rpc(message):
        mcp.stdin.write(json.dumps(message) + "\n")
        mcp.stdin.flush()
        return json.loads(mcp.stdout.readline())

    rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"}}})
    times = []
    for i in range(calls + 1):
        time.sleep(pause_seconds)
        start = time.perf_counter()
        answer = rpc({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                      "params": {"name": "shell", "arguments": {"command": "true"}}})
        elapsed = (time.perf_counter() - start) * 1000
        assert not answer["result"]["isError"], answer
        if i > 0:
            times.append(elapsed)  # the first call warms the store
    mcp.stdin.close()
    mcp.wait()
    return times


def main():
    base = tempfile.mkdtemp(prefix="cordon-wspool-", dir=os.environ.get("TMPDIR", "/var/tmp"))
    rules_file = Path(base) / "rules.json"
    rules_file.write_text(json.dumps(RULES))
    print("%-12s %8s %8s %8s" % ("directories", "median", "min", "max"))
    try:
        for n in (80, 1700, 20000, 150000):
            ws = os.path.join(base, "ws%d" % n)
            make_tree(ws, n)
            times = pooled_times(ws, rules_file, runs, pause)
            print("%-12d %8d %8d %8d" % (n, statistics.median(times), min(times), max(times)), flush=True)
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
