#!/usr/bin/env python3
"""Sidecar round trips: a JSON-RPC echo server behind `cordon sidecar` against the same server bare.

One host (this script) sends N sequential requests, each waiting for its answer, to:
  bare      python3 echo_server.py                       (no sandbox, no relay)
  raw       cordon sidecar --protocol raw  -- python3 ...  (sandbox + relay, no framing)
  mcp       cordon sidecar --protocol mcp  -- python3 ...  (sandbox + relay + JSON-RPC framing)
The clock starts after the initialize answer, so start-up (the sandbox's, Python's) is not in
any number: only the per-request cost of the relay. Each configuration runs --runs times,
interleaved; the table gives the median over runs of each run's median and p90 per request.

Usage: python3 bench/sidecar_bench.py [--cordon PATH] [--requests N] [--runs N] [--policy P]
Defaults: ./build/cordon, 2000 requests, 3 runs, the read-only profile.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SERVER = r'''
import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    m = json.loads(line)
    if "id" in m:
        out.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": m.get("params")}).encode() + b"\n")
        out.flush()
'''


def one_run(argv: list[str], requests: int) -> list[float]:
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert p.stdin and p.stdout
    reader = p.stdout

    def call(i: int) -> None:
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "echo" if i else "initialize",
                                  "params": {"n": i, "text": "hello"}}).encode() + b"\n")
        line = reader.readline()
        if json.loads(line)["id"] != i:
            raise RuntimeError(f"answer to {i} was {line!r}")

    call(0)
    times = []
    for i in range(1, requests + 1):
        t = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - t) * 1e6)
    p.stdin.close()
    if p.wait(timeout=30) != 0:
        raise RuntimeError(f"{argv[0]} exited {p.returncode}")
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cordon", default=os.path.join(os.path.dirname(__file__), "..", "build", "cordon"))
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--policy", default="read-only")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cordon-sidecar-bench-") as d:
        os.chmod(d, 0o755)
        server = os.path.join(d, "echo_server.py")
        with open(server, "w") as f:
            f.write(SERVER)
        base = [os.path.abspath(a.cordon), "sidecar", "--policy", a.policy, "--workspace", d]
        configs = {
            "bare": ["python3", server],
            "raw": base + ["--protocol", "raw", "--", "python3", server],
            "mcp": base + ["--protocol", "mcp", "--", "python3", server],
        }
        results: dict[str, list[tuple[float, float]]] = {k: [] for k in configs}
        for _ in range(a.runs):
            for name, argv in configs.items():
                t = sorted(one_run(argv, a.requests))
                results[name].append((statistics.median(t), t[int(len(t) * 0.9)]))
    bare = statistics.median(m for m, _ in results["bare"])
    print(f"Sidecar round trips: {a.requests} sequential requests, {a.runs} run(s), policy {a.policy}")
    print()
    print("| configuration | median per request | p90 per request | median overhead vs bare |")
    print("| --- | --- | --- | --- |")
    for name in configs:
        med = statistics.median(m for m, _ in results[name])
        p90 = statistics.median(p for _, p in results[name])
        print(f"| {name} | {med:.1f} µs | {p90:.1f} µs | {med - bare:+.1f} µs |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
