#!/usr/bin/env python3
"""Filtered networking: cordon's network broker against a direct loopback connection.

Measures, in one run, with the same client binary (bench/broker_bench.cpp):
  (a) throughput: a 1 GiB download and a 1 GiB upload on one connection each, between a
      server on the host's 127.0.0.1 and a client that is either bare on the host
      (direct) or inside `cordon run` with a filtered policy allowing only that server,
      going through the broker with HTTP CONNECT (on 127.0.0.1:3128 or on the unix socket
      /dev/cordon-proxy.sock);
  (b) connection latency: 1,000 sequential connections, each connect (+ CONNECT
      handshake through the broker) + a 1-byte echo + close; median and p90 per connection;
  (c) memory: 400 connections through the broker to a destination that never reads, each
      filled until nothing more moves; the broker's own peak (report: network.memory);
  (d) link-bound throughput (--link-rates, root only): the transfers of (a) again, direct and
      through the broker, in a network namespace this script creates, whose loopback a tbf
      queueing discipline limits to each rate: what the broker relays when the link, not the
      2 cores every process here shares, is the limit.
The client times itself, so cordon's own start-up is not in any number. Each configuration
runs --runs times (interleaved); the page reports the median and the range over the runs.

Writes a markdown section to stdout and to OUT (for docs/benchmarks.md), and the raw
numbers to bench/.cache/broker/results.json.

Usage:
  python3 bench/broker_bench.py [--cordon PATH] [--client PATH] [--runs N] [--bytes N]
                                [--connections N] [--link-rates R,R,...] [--quick] OUT.md

Defaults: the binaries bench/run.sh builds (bench/.cache/build/cordon and
bench/.cache/build/bench/cordon_broker_bench). To build them alone:
  cmake -S . -B bench/.cache/build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \\
        -DCORDON_BUILD_BENCH=ON -DCORDON_BUILD_TESTS=OFF
  cmake --build bench/.cache/build --target cordon_cli cordon_broker_bench

Network traffic goes only to the server this script starts on 127.0.0.1 (for (d), the
127.0.0.1 of the network namespace it creates).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
WORK = CACHE / "broker"
BROKER_TCP = "127.0.0.1:3128"
BROKER_UNIX = "/dev/cordon-proxy.sock"
TARGET_THROUGHPUT = 0.90   # the targets
TARGET_ADDED_MS = 0.3
LINK_RATES = "8gbit,16gbit"  # below and near the broker's CPU-bound rate on a 2-core machine (docs/network.md)


def log(message: str) -> None:
    print(f"[broker-bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def first_line(argv) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        text = (p.stdout or p.stderr).strip()
        return text.splitlines()[0] if text else "?"
    except (OSError, subprocess.SubprocessError):
        return "not available"


def machine_facts() -> dict:
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"nproc": os.cpu_count(), "cpu": cpu, "kernel": os.uname().release,
            "loadavg": " ".join(Path("/proc/loadavg").read_text().split()[:3])}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def display(argv: list[str], names: dict[str, str]) -> str:
    """A command line for the page, with the long run-specific paths shortened."""
    text = shlex.join(argv)
    for long, short in sorted(names.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(long, short)
    return text


class Server:
    """cordon_broker_bench serve: 127.0.0.1, an ephemeral port, until its stdin closes."""

    def __init__(self, client: Path):
        self.proc = subprocess.Popen([str(client), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.proc.kill()
            raise RuntimeError(f"the server did not start (printed {line!r})")
        self.port = int(line)

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_json(argv: list[str], timeout: int = 600) -> tuple[dict, float]:
    before = children_cpu()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    cpu = children_cpu() - before
    if p.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {p.returncode}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout.strip().splitlines()[-1]), cpu


def stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def write_policy(work: Path, port: int) -> Path:
    """The filtered policy of every brokered configuration: one rule, 127.0.0.1:PORT."""
    policy = work / "filtered.json"
    policy.write_text(json.dumps({
        "schema_version": 1, "name": "bench-filtered",
        "filesystem": {"read": "restricted", "readable": ["{workspace}"],
                       "writable": ["{workspace}", "{run_tmp}"]},
        "network": {"mode": "filtered", "rules": [{"host": "127.0.0.1", "port": port, "action": "allow"}],
                    "default_action": "deny"},
        "environment": {"set": {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}},
    }, indent=2) + "\n")
    return policy


def configurations(args, cordon: Path, ws: Path, policy: Path, report: Path, target: str,
                   connections: int) -> list[tuple[str, str, list[str]]]:
    """(key, label, argv) of each configuration; the sandboxed client is the copy in WS."""
    work = ["--bytes", str(args.bytes), "--connections", str(connections)]
    inside_client = ws / "cordon_broker_bench"
    sandbox = [str(cordon), "run", "--policy", str(policy), "--workspace", str(ws)]
    return [
        ("direct", "direct, bare on the host",
         [str(args.client.resolve()), "client", "--to", target] + work),
        ("broker_tcp", f"broker: HTTP CONNECT via {BROKER_TCP} (cordon run, filtered)",
         sandbox + ["--report", str(report), "--", str(inside_client), "client", "--to", target,
                    "--via", BROKER_TCP] + work),
        ("broker_unix", f"broker: HTTP CONNECT via {BROKER_UNIX} (cordon run, filtered)",
         sandbox + ["--", str(inside_client), "client", "--to", target, "--via", "unix:" + BROKER_UNIX] + work),
        ("broker_transparent", "broker: transparent (a plain connect inside cordon run, filtered)",
         sandbox + ["--", str(inside_client), "client", "--to", target] + work),
        ("sandbox_direct", "direct inside cordon run --net any (no broker: the sandbox alone)",
         [str(cordon), "run", "--net", "any", "--workspace", str(ws), "--", str(inside_client), "client",
          "--to", target] + work),
    ]


LINK_CONFIGS = ("direct", "broker_tcp", "broker_transparent")


def link_child(args, cordon: Path) -> int:
    """Inside `unshare --net`: loopback up and limited to args.link_child by tbf, then the
    throughput of LINK_CONFIGS, args.runs times interleaved; JSON to args.out."""
    rate = args.link_child
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    # burst: at least one timer tick's worth at these rates; latency bounds the queue.
    subprocess.run(["tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", rate, "burst", "16mb",
                    "latency", "20ms"], check=True)
    work_dir = CACHE / "broker-link"
    if work_dir.exists():
        shutil.rmtree(work_dir)
    ws = work_dir / "ws"
    ws.mkdir(parents=True)
    shutil.copy2(args.client, ws / "cordon_broker_bench")
    server = Server(args.client.resolve())
    try:
        policy = write_policy(work_dir, server.port)
        configs = [c for c in configurations(args, cordon, ws, policy, work_dir / "report.json",
                                             f"127.0.0.1:{server.port}", 0) if c[0] in LINK_CONFIGS]
        results: dict[str, list[dict]] = {key: [] for key, _, _ in configs}
        for i in range(args.runs):
            for key, label, argv in configs:
                log(f"link {rate}, run {i + 1}/{args.runs}: {label}")
                data, cpu = run_json(argv)
                data["cpu_s"] = cpu
                results[key].append(data)
    finally:
        server.close()
    args.out.write_text(json.dumps(results))
    return 0


def link_bound(args, cordon: Path) -> tuple[dict, str]:
    """Runs link_child once per rate in a network namespace of its own. Returns the results by
    rate, or {} and the reason it did not run."""
    rates = [r for r in args.link_rates.split(",") if r]
    if not rates:
        return {}, "not asked for (--link-rates is empty)"
    if os.geteuid() != 0:
        return {}, "not measured: a network namespace with a queueing discipline on its loopback needs root"
    for tool in ("unshare", "ip", "tc"):
        if shutil.which(tool) is None:
            return {}, f"not measured: {tool} is not installed"
    by_rate = {}
    for rate in rates:
        out = CACHE / f"broker-link-{rate}.json"
        argv = ["unshare", "--net", "--", sys.executable, str(Path(__file__).resolve()), "--cordon", str(cordon),
                "--client", str(args.client), "--runs", str(args.runs), "--bytes", str(args.bytes),
                "--link-child", rate, str(out)]
        p = subprocess.run(argv, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=1800)
        if p.returncode != 0:
            raise RuntimeError(f"the link-bound run at {rate} failed: {p.stderr.strip()[-500:]}")
        by_rate[rate] = json.loads(out.read_text())
    return by_rate, ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="where to write the markdown section")
    ap.add_argument("--cordon", type=Path, default=CACHE / "build" / "cordon")
    ap.add_argument("--client", type=Path, default=CACHE / "build" / "bench" / "cordon_broker_bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bytes", type=int, default=1 << 30)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--stalled", type=int, default=400, help="stalled connections for the memory check")
    ap.add_argument("--link-rates", default=LINK_RATES,
                    help="tbf rates (tc(8) units, comma-separated) for the link-bound throughput; empty: none")
    ap.add_argument("--link-child", help=argparse.SUPPRESS)  # one rate, inside the namespace (link_bound)
    ap.add_argument("--quick", action="store_true", help="2 runs of 256 MiB and 200 connections (to try it)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.bytes, args.connections = 2, 256 << 20, 200
    for binary in (args.cordon, args.client):
        if not binary.exists():
            print(f"broker_bench: {binary} does not exist (see --help for how to build it)", file=sys.stderr)
            return 2
    cordon = args.cordon.resolve()
    if args.link_child:
        return link_child(args, cordon)

    if WORK.exists():
        shutil.rmtree(WORK)
    ws = WORK / "ws"
    ws.mkdir(parents=True)
    inside_client = ws / "cordon_broker_bench"  # the sandbox reads its workspace: the client goes there
    shutil.copy2(args.client, inside_client)
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])

    server = Server(args.client.resolve())
    try:
        port = server.port
        target = f"127.0.0.1:{port}"
        policy = write_policy(WORK, port)
        report = WORK / "report.json"
        sandbox = [str(cordon), "run", "--policy", str(policy), "--workspace", str(ws)]
        configs = configurations(args, cordon, ws, policy, report, target, args.connections)

        # Confinement: inside the filtered sandbox a direct connection to a port no rule
        # allows fails at connect (one to the allowed server is routed to the broker:
        # the "transparent" configuration), and the broker's evidence shows every
        # brokered connection.
        log("checks")
        check = subprocess.run(sandbox + ["--", str(inside_client), "connect", "--to", "127.0.0.1:1"],
                               capture_output=True, text=True, timeout=60)
        direct_inside = check.stdout.strip() or check.stderr.strip()
        checks = {"direct connect inside the filtered sandbox to a port no rule allows": direct_inside}
        if direct_inside != "refused EACCES":
            raise RuntimeError(f"a direct connection inside the filtered sandbox was not refused: {direct_inside}")

        results: dict[str, list[dict]] = {key: [] for key, _, _ in configs}
        for i in range(args.runs):
            for key, label, argv in configs:
                log(f"run {i + 1}/{args.runs}: {label}")
                data, cpu = run_json(argv)
                data["cpu_s"] = cpu
                results[key].append(data)
                if key == "broker_tcp":
                    n = json.loads(report.read_text())["network"]
                    expected = (2 if args.bytes else 0) + args.connections
                    first = n["connections"][0] if n["connections"] else {}
                    if n["allowed"] != expected or n["total"] != expected or \
                            (args.bytes and first.get("bytes_received") != args.bytes):
                        raise RuntimeError(f"the broker's evidence does not match the run: "
                                           f"{ {k: v for k, v in n.items() if k != 'connections'} }, first {first}")
                    data["broker_peak_mib"] = n.get("memory", {}).get("peak_bytes", 0) / (1 << 20)
                    checks["broker evidence (last run)"] = (
                        f"{n['allowed']} connections allowed, {n['denied']} denied, {n['unreachable'] + n['malformed'] + n['error']} failed; "
                        f"the download's entry: {first.get('bytes_received'):,} bytes received from "
                        f"{first.get('address')}")
        if args.stalled:
            log(f"{args.stalled} stalled connections")
            stall_report = WORK / "stall-report.json"
            stall_argv = sandbox + ["--report", str(stall_report), "--", str(inside_client), "stall", "--to", target,
                                    "--via", BROKER_TCP, "--connections", str(args.stalled)]
            data, _ = run_json(stall_argv)
            memory = json.loads(stall_report.read_text())["network"]["memory"]
            results["stalled"] = [{"connections": args.stalled, "written_mib": data["written_mib"],
                                   "peak_mib": memory["peak_bytes"] / (1 << 20),
                                   "budget_mib": memory["budget_bytes"] / (1 << 20)}]
            checks["stalled connections (command line)"] = stall_argv  # shortened by render()
    finally:
        server.close()
    log("link-bound throughput")
    link, link_reason = link_bound(args, cordon)

    (WORK / "results.json").write_text(json.dumps({"results": results, "checks": checks, "link": link}, indent=1))
    page = render(args, configs, results, checks, port, load_before, cordon, link, link_reason)
    args.out.write_text(page)
    print(page, end="")
    log(f"wrote {args.out}")
    return 0


def render(args, configs, results, checks, port, load_before, cordon, link, link_reason) -> str:
    facts = machine_facts()
    summary = {}
    stalled = results.get("stalled", [None])[0]
    for key, _, _ in configs:
        runs = results[key]
        summary[key] = {
            "down": stats([r["download_mib_s"] for r in runs]),
            "up": stats([r["upload_mib_s"] for r in runs]),
            "lat": stats([r["latency_ms"]["median"] for r in runs]),
            "p90": stats([r["latency_ms"]["p90"] for r in runs]),
            "cpu": stats([r["cpu_s"] for r in runs]),
        }
    d = summary["direct"]
    size = f"{args.bytes / (1 << 30):g} GiB" if args.bytes >= 1 << 30 else f"{args.bytes / (1 << 20):g} MiB"

    def rng(s, fmt):
        return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}–{fmt.format(s['max'])})"

    commit = first_line(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "include"],
                           capture_output=True, text=True).stdout.strip()
    names = {str(cordon): "cordon", str(args.client.resolve()): "cordon_broker_bench",
             str(WORK / "ws" / "cordon_broker_bench"): "WS/cordon_broker_bench",
             str(WORK / "filtered.json"): "filtered.json", str(WORK / "report.json"): "report.json",
             str(WORK / "stall-report.json"): "stall-report.json",
             str(WORK / "ws"): "WS", f"127.0.0.1:{port}": "127.0.0.1:PORT"}
    out = []
    out.append("## Filtered networking: the broker against a direct connection\n")
    out.append(f"Measured {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} on {facts['nproc']} × {facts['cpu']}, "
               f"Linux {facts['kernel']} (load average before: {load_before}, after: {facts['loadavg']}); "
               f"cordon {commit}"
               f"{' with uncommitted changes in src/' if dirty else ''}. "
               f"{args.runs} runs of each configuration, interleaved; each cell is the median over the runs "
               "with the range (min–max) in parentheses.\n")
    out.append(f"The server (`cordon_broker_bench serve`) runs on the host and listens on 127.0.0.1 only. The "
               f"same client binary runs bare on the host (direct) and inside `cordon run` with a filtered policy "
               f"whose only rule allows `127.0.0.1:PORT`, where it reaches the server through the broker with "
               f"HTTP CONNECT. It times itself (cordon's start-up is not included): a {size} download and a {size} "
               f"upload on one connection each, then {args.connections:,} connections one after another, each "
               f"connect (+ `CONNECT` handshake through the broker) + a 1-byte echo + close.\n")
    out.append("### Throughput\n")
    out.append(f"| configuration | download MiB/s | of direct | upload MiB/s | of direct | CPU s per run |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for key, label, _ in configs:
        s = summary[key]
        out.append(f"| {label} | {rng(s['down'], '{:.0f}')} | {s['down']['median'] / d['down']['median']:.0%} | "
                   f"{rng(s['up'], '{:.0f}')} | {s['up']['median'] / d['up']['median']:.0%} | "
                   f"{s['cpu']['median']:.2f} |")
    out.append("")
    out.append("CPU s: user + system time of every process of the run (the client, and for the sandboxed rows "
               "cordon with its broker process), not the server's; the latency phase is included.\n")
    out.extend(render_link(link, link_reason, size))
    out.append("### Connection latency\n")
    out.append(f"| configuration | median per connection, ms | p90, ms | added to direct (median), ms |")
    out.append("|---|---:|---:|---:|")
    for key, label, _ in configs:
        s = summary[key]
        added = s["lat"]["median"] - d["lat"]["median"]
        out.append(f"| {label} | {rng(s['lat'], '{:.3f}')} | {rng(s['p90'], '{:.3f}')} | "
                   f"{'–' if key == 'direct' else f'{added:+.3f}'} |")
    out.append("")
    b = summary["broker_tcp"]
    down_ratio = b["down"]["median"] / d["down"]["median"]
    up_ratio = b["up"]["median"] / d["up"]["median"]
    added = b["lat"]["median"] - d["lat"]["median"]
    verdict = lambda ok: "met" if ok else "**not met**"  # noqa: E731
    out.append("### Against the targets\n")
    out.append(f"- Throughput through the broker (TCP listener) ≥ {TARGET_THROUGHPUT:.0%} of direct: download "
               f"{down_ratio:.0%}, upload {up_ratio:.0%} (medians; the best runs against each other: "
               f"{b['down']['max'] / d['down']['max']:.0%} and {b['up']['max'] / d['up']['max']:.0%}): "
               f"{verdict(min(down_ratio, up_ratio) >= TARGET_THROUGHPUT)}.")
    out.append(f"- Added latency per connection < {TARGET_ADDED_MS:g} ms: {added:.3f} ms (medians; the best runs: "
               f"{b['lat']['min'] - d['lat']['min']:.3f} ms; p90 {b['p90']['median'] - d['p90']['median']:.3f} ms): "
               f"{verdict(added < TARGET_ADDED_MS)}.")
    if link:
        worst = min(link_ratio(runs, key, way) for runs in link.values() for key in ("broker_tcp", "broker_transparent")
                    for way in ("download_mib_s", "upload_mib_s"))
        out.append(f"- The same target when the link is the limit (loopback limited to {', '.join(link)} in a "
                   f"namespace of the bench's own, above): the lowest of the brokered medians is {worst:.0%} of "
                   f"direct: {verdict(worst >= TARGET_THROUGHPUT)}.")
    out.append("- Both legs of every brokered connection are loopback here, and the client, the broker process and "
               f"the server share {facts['nproc']} cores: a direct transfer keeps two busy, a brokered one three "
               "(the broker moves every byte a second time: socket to socket with splice(2), or through a "
               "user-space buffer where splice is unavailable). The added latency includes the supervisor "
               "answering the seccomp notification every `connect(2)` in a filtered sandbox raises, the "
               "`CONNECT` exchange, and the broker's own connect to the server.\n")
    if stalled:
        out.append("### Broker memory\n")
        out.append(f"- {stalled['connections']} connections through the broker (HTTP CONNECT via {BROKER_TCP}) to a "
                   f"destination that never reads, the client writing to each until nothing more moves "
                   f"({stalled['written_mib']:.1f} MiB taken in all, most of it in the client's and the "
                   f"destination's own buffers): the broker held at most **{stalled['peak_mib']:.1f} MiB** "
                   f"(kernel socket queues of its sockets, pipe contents and its buffers; the report's "
                   f"`network.memory.peak_bytes`; bulk-buffer budget {stalled['budget_mib']:.0f} MiB).")
        peaks = [r.get("broker_peak_mib", 0) for r in results["broker_tcp"]]
        out.append(f"- During the throughput runs (one bulk transfer at a time): peak {max(peaks):.1f} MiB.\n")
    out.append("Checks made before timing:\n")
    for k, v in checks.items():
        out.append(f"- {k}: `{display(v, names) if isinstance(v, list) else v}`")
    out.append("")
    out.append("Command lines (`WS` is the workspace holding a copy of the client, `PORT` the server's port):\n")
    out.append("```")
    out.append(display([str(args.client.resolve()), "serve"], names) + "   # on the host; prints PORT")
    for _, label, argv in configs:
        out.append(f"# {label}")
        out.append(display(argv, names))
    out.append("```")
    out.append("")
    out.append("`filtered.json`:\n")
    out.append("```json")
    out.append('{"schema_version": 1, "name": "bench-filtered",\n'
               ' "filesystem": {"read": "restricted", "readable": ["{workspace}"], '
               '"writable": ["{workspace}", "{run_tmp}"]},\n'
               ' "network": {"mode": "filtered", "rules": [{"host": "127.0.0.1", "port": PORT, "action": "allow"}], '
               '"default_action": "deny"},\n'
               ' "environment": {"set": {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}}}')
    out.append("```")
    out.append("")
    out.append(f"Reproduce: `python3 bench/broker_bench.py --runs {args.runs} --bytes {args.bytes} "
               f"--connections {args.connections} OUT.md` (with the binaries bench/run.sh builds; "
               "bench/broker_bench.py and bench/broker_bench.cpp; raw numbers in bench/.cache/broker/results.json).\n")
    return "\n".join(out)


def link_ratio(runs: dict, key: str, way: str) -> float:
    return statistics.median(r[way] for r in runs[key]) / statistics.median(r[way] for r in runs["direct"])


def render_link(link: dict, reason: str, size: str) -> list[str]:
    """The link-bound section: direct and brokered throughput with the loopback limited by tbf."""
    out = ["### Throughput when the link is the limit\n"]
    if not link:
        out.append(f"Link-bound throughput: {reason}.\n")
        return out
    out.append("The configurations above all cross an unlimited loopback and share the machine's cores, so the "
               "CPU is the limit: a brokered byte crosses the TCP stack twice, and the broker's process pays "
               "the second crossing in the kernel (docs/network.md, \"Throughput\"). Here the "
               "same transfers run in a network namespace the bench creates (`unshare --net`), whose loopback a "
               "token bucket (`tc qdisc add dev lo root tbf rate RATE burst 16mb latency 20ms`) limits, as a "
               "network link would: the server, the direct client and the broker's upstream leg cross it, the "
               "sandbox's own loopback (client to broker) does not. "
               f"A {size} download and upload per run, medians over the runs.\n")
    out.append("| link | direct down / up, MiB/s | CONNECT via 127.0.0.1:3128 down / up | of direct | "
               "transparent down / up | of direct |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for rate, runs in link.items():
        def med(key, way):
            return statistics.median(r[way] for r in runs[key])
        cells = [f"{med('direct', 'download_mib_s'):.0f} / {med('direct', 'upload_mib_s'):.0f}"]
        for key in ("broker_tcp", "broker_transparent"):
            cells.append(f"{med(key, 'download_mib_s'):.0f} / {med(key, 'upload_mib_s'):.0f}")
            cells.append(f"{link_ratio(runs, key, 'download_mib_s'):.0%} / {link_ratio(runs, key, 'upload_mib_s'):.0%}")
        out.append(f"| `tbf rate {rate}` | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Reproduce one rate: `python3 bench/broker_bench.py --link-rates 8gbit OUT.md` as root.\n")
    return out


if __name__ == "__main__":
    sys.exit(main())
