#!/usr/bin/env python3
"""The tool-use call's latency, side by side in one run (docs/benchmarks.md,
"The tool-use call"):

  bare      subprocess.run(["/bin/true"], capture_output=True): no rules, no sandbox
  cold      governance.tool_call(...): rules, audit (in memory), compile, a new sandbox,
            output captured
  pooled    the same with a cordon.Pool of prepared sandboxes
  mcp       one tools/call "shell" round trip to `cordon mcp` (pool of 1), JSON-RPC
            over its stdin/stdout, measured from the request line to the response line

Each configuration runs --runs times, interleaved; the page reports the median and
the 90th percentile in milliseconds. Not a test: numbers depend on the host.

Usage: python3 bench/tool_call_bench.py [--build DIR] [--runs N] [OUT.md]
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
from pathlib import Path

root = Path(__file__).resolve().parents[1]
RULES = {"schema_version": 1, "name": "bench",
         "rules": [{"id": "true", "reason": "bench", "decision": "allow", "commands": ["true"]}]}


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(root / "build"))
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("out", nargs="?")
    args = parser.parse_args()
    os.environ.setdefault("CORDON_BUILD_DIR", args.build)
    sys.path.insert(0, str(root / "bindings" / "python"))
    import cordon
    from cordon import governance

    workspace = tempfile.mkdtemp(prefix="cordon-bench-tool-")
    rules = governance.Rules(RULES)
    rules_file = Path(workspace) / ".." / (Path(workspace).name + "-rules.json")
    rules_file.write_text(json.dumps(RULES))
    request = {"schema_version": 1, "action": "shell", "risk": "low", "command": "true"}
    times = {"bare": [], "cold": [], "pooled": [], "mcp": []}
    mcp = subprocess.Popen([str(Path(args.build) / "cordon"), "mcp", "--rules", str(rules_file), "--workspace", workspace],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def rpc(message):
        mcp.stdin.write(json.dumps(message) + "\n")
        mcp.stdin.flush()
        return json.loads(mcp.stdout.readline())

    rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    with cordon.Pool("workspace-write", workspace=workspace, size=1) as pool:
        for i in range(args.runs):
            start = time.perf_counter()
            subprocess.run(["/bin/true"], capture_output=True, check=True)
            times["bare"].append(time.perf_counter() - start)
            start = time.perf_counter()
            r = governance.tool_call(rules, request, workspace=workspace)
            times["cold"].append(time.perf_counter() - start)
            assert r.exit_code == 0, r.reason
            start = time.perf_counter()
            r = governance.tool_call(rules, request, workspace=workspace, pool=pool)
            times["pooled"].append(time.perf_counter() - start)
            assert r.exit_code == 0 and r.pooled, (r.reason, r.warnings)
            start = time.perf_counter()
            answer = rpc({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                          "params": {"name": "shell", "arguments": {"command": "true"}}})
            times["mcp"].append(time.perf_counter() - start)
            assert not answer["result"]["isError"], answer
    mcp.stdin.close()
    mcp.wait()
    rules_file.unlink()
    lines = ["## The tool-use call", "",
             f"`/bin/true` through each path, {args.runs} runs each, interleaved (bench/tool_call_bench.py; "
             "milliseconds, median and 90th percentile, from Python):", "",
             "| path | median ms | p90 ms |", "| --- | --- | --- |"]
    for name, label in (("bare", "bare `subprocess.run`, output captured"),
                        ("cold", "`governance.tool_call`, cold (compile + new sandbox)"),
                        ("pooled", "`governance.tool_call`, from a pool"),
                        ("mcp", "`cordon mcp` tools/call round trip (pool of 1)")):
        values = [t * 1000 for t in times[name]]
        lines.append(f"| {label} | {statistics.median(values):.2f} | {percentile(values, 90):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
