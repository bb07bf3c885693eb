#!/usr/bin/env python3
"""Every layer of cordon measured against its reference in one run, ratios first.

bench/run.sh runs this after bench/harness.py (the launch tables, compile, memory, stress) and
bench/broker_bench.py (filtered networking). It runs the remaining layer benchmarks, reads the
results of the other two, and rewrites docs/benchmarks.md: a section "Every layer side by side"
goes before the page's Summary, and one section per layer is appended; docs/benchmarks-layers.png
charts the ratios.

  layer                         cordon                                  against
  launch, cold                  cordon run -- /bin/true                 bubblewrap, bare exec (harness)
  launch, prepared              prepared_sandbox start-to-exit          bare fork+exec (cordon_prepared_bench)
  CPU per launch, whole tree    perf stat task-clock                    bubblewrap, bare (cpu_per_launch.sh)
  50 concurrent launches        cordon_spawn_many -j 50                 bubblewrap, bare (harness)
  policy compile                10, 1,000, 10,000 paths                 - (absolute; cordon_compile_bench)
  broker                        throughput, per-connection latency      direct loopback (broker_bench.py)
  sidecar                       round trip through cordon sidecar       unconfined server (sidecar_bench.py)
  filesystem worker             4 KiB read, 100 KiB edit                in-process (cordon_fs_worker_bench)
  governance                    decision (1,000 rules), audit appends   - (absolute; cordon_governance_bench)
  gate runner                   cordon gate run, N gates of /bin/true   N x cordon run (this script)

Every command shown is relative to the repository; the page carries no path of this machine.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
RESULTS = CACHE / "results"
DOC = ROOT / "docs" / "benchmarks.md"
CHART = ROOT / "docs" / "benchmarks-layers.png"
MARK_BEGIN = "<!-- layers: begin (bench/layers.py) -->"
MARK_END = "<!-- layers: end -->"


def log(message: str) -> None:
    print(f"[layers {time.strftime('%H:%M:%S')}] {message}", flush=True)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_busy(seconds: float = 1.0) -> float:
    """The share of the machine's CPU time that was not idle over the next `seconds` (/proc/stat)."""
    def sample():
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]  # idle + iowait
    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def settle(limit_s: float = 60.0) -> str:
    """Waits until the machine is quiet (under 10% busy over a second: the previous layer's work, the
    kernel's deferred teardown of its namespaces, is over), at most `limit_s`; says what it found. The
    load average lags by minutes, so the page states both."""
    start = time.monotonic()
    busy = cpu_busy()
    while busy > 0.10 and time.monotonic() - start < limit_s:
        busy = cpu_busy()
    return f"{load()} (busy {busy:.0%} in the second before)"


def rel(path: Path | str) -> str:
    """A path as the page shows it: relative to the repository, never this machine's."""
    text = str(path)
    text = text.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
    home = str(Path.home())
    if home not in ("/", ""):
        text = text.replace(home + "/", "~/")
    return text


def run(argv, timeout=300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, **kw)


class Layer:
    """One row of the side-by-side table, and its detail section."""

    def __init__(self, name: str):
        self.name = name
        self.rows: list[dict] = []   # {what, ratio, against, cordon, reference, cpu, note}
        self.detail: list[str] = []
        self.command = ""
        self.error = ""
        self.load = ""
        self.seconds = 0.0

    def row(self, what, ratio=None, against="", cordon="", reference="", cpu="", note=""):
        self.rows.append({"what": what, "ratio": ratio, "against": against, "cordon": cordon,
                          "reference": reference, "cpu": cpu, "note": note})


def timed(layer: Layer, fn, *args) -> Layer:
    layer.load = settle()
    start = time.monotonic()
    try:
        fn(layer, *args)
    except Exception as e:  # a failing layer costs its own row, never the page
        layer.error = f"{type(e).__name__}: {str(e)[:300]}"
        log(f"{layer.name}: {layer.error}")
    layer.seconds = time.monotonic() - start
    return layer


# --------------------------------------------------------------------------- the layers


def launch_rows(layer: Layer, launch: dict) -> None:
    """The harness's hyperfine tables: /bin/true and 50 at once (bench/harness.py)."""
    true, conc = launch["results"]["true"], launch["results"]["concurrent"]
    layer.load = launch.get("load_before", "")
    bare, bwrap = true.get("bare exec"), true.get("bubblewrap")
    c = true.get("cordon")
    if c and bwrap:
        layer.row("launch, cold: `cordon run -- /bin/true`", c["median"] / bwrap["median"], "bubblewrap",
                  f"{c['median'] * 1000:.2f} ms", f"{bwrap['median'] * 1000:.2f} ms",
                  f"{(c['user'] + c['system']) * 1000:.2f} ms user+sys (hyperfine, mean)", "target ≤ 0.6×")
    if c and bare:
        layer.row("launch, cold, against bare exec", c["median"] / bare["median"], "bare exec",
                  f"{c['median'] * 1000:.2f} ms", f"{bare['median'] * 1000:.2f} ms")
    fj = true.get("firejail")
    if c and fj:
        layer.row("launch, cold, against firejail", c["median"] / fj["median"], "firejail",
                  f"{c['median'] * 1000:.2f} ms", f"{fj['median'] * 1000:.2f} ms")
    cc, cb, cbare = conc.get("cordon"), conc.get("bubblewrap"), conc.get("bare exec")
    if cc and (cb or cbare):
        ref, label = (cb, "bubblewrap") if cb else (cbare, "bare exec")
        layer.row("50 concurrent launches (50 × /bin/true, 50 at once)", cc["median"] / ref["median"], label,
                  f"{cc['median'] * 1000:.1f} ms", f"{ref['median'] * 1000:.1f} ms")
    layer.command = "bench/harness.py (hyperfine -N; see \"Launch-to-exit of /bin/true\" below)"


def prepared(layer: Layer, build: Path, runs: int) -> None:
    binary = build / "examples" / "cordon_prepared_bench"
    if not binary.exists():
        raise RuntimeError(f"{rel(binary)} was not built")
    with tempfile.TemporaryDirectory(prefix="cordon-prepared-", dir=CACHE) as ws:
        p = run([binary, runs], cwd=ws, timeout=600)
    text = p.stdout
    m = re.search(r"bare fork\+exec ([\d.]+) ms, prepared \(pool\) ([\d.]+) ms, prepared alone ([\d.]+) ms, "
                  r"cold start_run ([\d.]+) ms", text)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"cordon_prepared_bench exit {p.returncode}: {(p.stderr or text).strip()[-300:]}")
    bare, prep, alone, cold = (float(x) for x in m.groups())
    layer.row("launch, prepared: `prepared_pool` start to exit of /bin/true", prep / bare, "bare fork+exec",
              f"{prep:.2f} ms", f"{bare:.2f} ms", note="target ≤ 2×")
    layer.row("launch, one sandbox prepared alone: `prepared_sandbox::start` to exit", alone / bare,
              "bare fork+exec", f"{alone:.2f} ms", f"{bare:.2f} ms")
    layer.row("launch, cold `start_run` (library, supervisor helper)", cold / bare, "bare fork+exec",
              f"{cold:.2f} ms", f"{bare:.2f} ms")
    layer.command = f"build/examples/cordon_prepared_bench {runs}   (in an empty workspace; bench/prepared.sh)"
    layer.detail = ["```", text.strip(), "```"]


def cpu_per_launch(layer: Layer, cordon: Path, runs: int, rounds: int) -> None:
    if not shutil.which("perf"):
        raise RuntimeError("perf (linux-perf) is not installed")
    p = run([ROOT / "bench" / "cpu_per_launch.sh", os.path.relpath(cordon, ROOT), runs, rounds], cwd=ROOT,
            timeout=600)
    m = re.search(r"median of rounds: (.*?)\s+\(", p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"cpu_per_launch.sh exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
    cpu = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+) ms", m.group(1))}
    if "bwrap" in cpu:
        layer.row("CPU per launch, every process of the tree (perf task-clock)", cpu["cordon"] / cpu["bwrap"],
                  "bubblewrap", f"{cpu['cordon']:.2f} ms", f"{cpu['bwrap']:.2f} ms", note="target ≤ 1.0×")
    layer.row("CPU per launch, against bare exec", cpu["cordon"] / cpu["bare"], "bare exec",
              f"{cpu['cordon']:.2f} ms", f"{cpu['bare']:.2f} ms")
    layer.command = f"bench/cpu_per_launch.sh {rel(cordon)} {runs} {rounds}"
    layer.detail = ["```", rel(p.stdout.strip()), "```"]


def compile_rows(layer: Layer, launch: dict) -> None:
    comp = launch.get("compile", {})
    for n in (10, 1000, 10000):
        key = f"BM_Compile/paths:{n}"
        if key in comp:
            cpu = comp.get(key + " (cpu)")
            layer.row(f"policy compile, {n:,} paths", None, "", f"{comp[key]:.3f} ms",
                      cpu=f"{cpu:.3f} ms" if cpu is not None else "")
    if not layer.rows:
        raise RuntimeError(launch.get("compile_error") or "the compile benchmark did not run")
    layer.command = "bench/.cache/build/bench/cordon_compile_bench (Google Benchmark; see \"Policy compile time\")"


def broker_rows(layer: Layer) -> None:
    path = CACHE / "broker" / "results.json"
    if not path.exists():
        raise RuntimeError("bench/broker_bench.py did not run")
    results = json.loads(path.read_text())["results"]
    med = lambda key, field: statistics.median(  # noqa: E731
        r[field] if not isinstance(r[field], dict) else r[field]["median"] for r in results[key])
    d_down, b_down = med("direct", "download_mib_s"), med("broker_tcp", "download_mib_s")
    d_up, b_up = med("direct", "upload_mib_s"), med("broker_tcp", "upload_mib_s")
    d_lat, b_lat = med("direct", "latency_ms"), med("broker_tcp", "latency_ms")
    layer.row("broker throughput, download (HTTP CONNECT)", b_down / d_down, "direct loopback",
              f"{b_down:.0f} MiB/s", f"{d_down:.0f} MiB/s", note="higher is better")
    layer.row("broker throughput, upload", b_up / d_up, "direct loopback", f"{b_up:.0f} MiB/s", f"{d_up:.0f} MiB/s",
              note="higher is better")
    layer.row("broker, per-connection latency (connect + 1-byte echo + close)", b_lat / d_lat, "direct loopback",
              f"{b_lat:.3f} ms", f"{d_lat:.3f} ms")
    layer.command = "bench/broker_bench.py (see \"Filtered networking\")"


def sidecar(layer: Layer, cordon: Path, requests: int, runs: int) -> None:
    p = run([sys.executable, ROOT / "bench" / "sidecar_bench.py", "--cordon", cordon, "--requests", requests,
             "--runs", runs], timeout=600)
    rows = dict(re.findall(r"^\| (\w+) \| ([\d.]+) µs", p.stdout, re.M))
    if p.returncode != 0 or "bare" not in rows:
        raise RuntimeError(f"sidecar_bench.py exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
    bare = float(rows["bare"])
    for key, label in (("mcp", "sidecar round trip, MCP framing (JSON-RPC)"), ("raw", "sidecar round trip, raw relay")):
        if key in rows:
            layer.row(label, float(rows[key]) / bare, "unconfined server", f"{float(rows[key]):.1f} µs",
                      f"{bare:.1f} µs")
    layer.command = f"python3 bench/sidecar_bench.py --cordon {rel(cordon)} --requests {requests} --runs {runs}"
    layer.detail = [rel(p.stdout.strip())]


def fs_worker(layer: Layer, build: Path, seconds: float) -> None:
    binary = build / "bench" / "cordon_fs_worker_bench"
    if not binary.exists():
        raise RuntimeError(f"{rel(binary)} was not built")
    p = run([binary, seconds], cwd=build, timeout=600)
    found = re.findall(r"^(read 4 KiB|edit 100 KiB)\s+([\d.]+)\s+([\d.]+)", p.stdout, re.M)
    if p.returncode != 0 or not found:
        raise RuntimeError(f"cordon_fs_worker_bench exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
    for what, worker, local in found:
        w, l_ = float(worker), float(local)
        # Time per request, so that the ratio reads like the others (cordon's cost over the reference's).
        layer.row(f"filesystem worker, {what} per request", l_ / w, "in-process (same code, no sandbox)",
                  f"{1e6 / w:.1f} µs", f"{1e6 / l_:.1f} µs")
    layer.command = f"bench/.cache/build/bench/cordon_fs_worker_bench {seconds}"
    layer.detail = ["```", rel(p.stdout.strip()), "```"]


def governance(layer: Layer, build: Path, seconds: float) -> None:
    binary = build / "bench" / "cordon_governance_bench"
    if not binary.exists():
        raise RuntimeError(f"{rel(binary)} was not built")
    work = CACHE / "governance"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    p = run([binary, work, seconds], timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"cordon_governance_bench exit {p.returncode}: {p.stderr.strip()[-300:]}")
    for what, value in re.findall(r"^\s+(shell, 5 segments[^\d]*?|filesystem_read, 2 paths|network_outbound, 1 host)"
                                  r"\s+([\d.]+) us", p.stdout, re.M):
        layer.row(f"governance decision (1,000 rules): {what.strip()}", None, "", f"{float(value):.1f} µs")
    for what, value in re.findall(r"^\s+(fsync per event|batched \(64 events or 200 ms\))\s+([\d.]+)$", p.stdout,
                                  re.M):
        layer.row(f"audit appends, {what}", None, "", f"{1e6 / float(value):.1f} µs per event",
                  note=f"{float(value):,.0f} events/s")
    layer.command = f"bench/.cache/build/bench/cordon_governance_bench bench/.cache/governance {seconds}"
    layer.detail = ["The audit log lies in the benchmark's cache, on the repository's disk.", "", "```",
                    rel(p.stdout.strip()), "```"]


def gate_runner(layer: Layer, cordon: Path, gates: int, runs: int) -> None:
    """`cordon gate run` of N gates of /bin/true against N plain `cordon run -- /bin/true`: what the runner
    adds per gate (manifest, every gate's compile, the run record, each gate's report and logs)."""
    work = CACHE / "gates"
    if work.exists():
        shutil.rmtree(work)
    ws = work / "ws"
    ws.mkdir(parents=True)
    manifest = ws / "gates.toml"
    manifest.write_text("".join(f'[[gate]]\nname = "g{i:02d}"\ncmd = ["/bin/true"]\n'
                                f'sandbox_policy = "workspace-write"\n\n' for i in range(gates)))
    c = str(cordon)
    loop = lambda body: ["sh", "-c", f"i=0; while [ $i -lt {gates} ]; do {body}; i=$((i+1)); done"]  # noqa: E731
    commands = [
        ("gate", [c, "gate", "run", str(manifest), "--out", str(work / "record"), "--workspace", str(ws)]),
        ("run", loop(f"{c} run --workspace {ws} -- /bin/true")),
        ("bare", loop("/bin/true")),
    ]
    check = run(commands[0][1], cwd=ws)
    if check.returncode != 0:
        raise RuntimeError(f"cordon gate run exit {check.returncode}: {(check.stderr or check.stdout).strip()[-300:]}")
    out = work / "hyperfine.json"
    argv = ["hyperfine", "-N", "--warmup", "1", "--runs", str(runs), "--export-json", str(out)]
    for name, a in commands:
        argv += ["-n", name, shlex.join(a)]
    p = run(argv, cwd=ws, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"hyperfine exit {p.returncode}: {p.stderr.strip()[-300:]}")
    res = {r["command"]: r for r in json.loads(out.read_text())["results"]}
    per = {k: statistics.median(v["times"]) * 1000 / gates for k, v in res.items()}
    cpu = {k: (v["user"] + v["system"]) * 1000 / gates for k, v in res.items()}
    layer.row(f"gate runner: `cordon gate run`, {gates} gates of /bin/true, per gate", per["gate"] / per["run"],
              "`cordon run -- /bin/true`", f"{per['gate']:.2f} ms", f"{per['run']:.2f} ms",
              f"{cpu['gate']:.2f} ms against {cpu['run']:.2f} ms user+sys",
              f"the runner adds {per['gate'] - per['run']:+.2f} ms per gate")
    shown = [(n, rel(shlex.join(a)).replace(rel(work), "bench/.cache/gates")) for n, a in commands]
    layer.command = "; ".join(f"{n}: `{s}`" for n, s in shown)
    layer.detail = [f"hyperfine -N, {runs} runs after 1 warm-up, the three commands interleaved by hyperfine's "
                    "order; each gate is `/bin/true` under `workspace-write`, one at a time (`--jobs 1`).", "",
                    "| command | median total (ms) | per gate (ms) | CPU user+sys per gate (ms) |",
                    "| --- | ---: | ---: | ---: |"]
    for n, s in shown:
        layer.detail.append(f"| `{s}` | {statistics.median(res[n]['times']) * 1000:.1f} | {per[n]:.2f} | "
                            f"{cpu[n]:.2f} |")


# --------------------------------------------------------------------------- the page


def fmt_ratio(r) -> str:
    return "—" if r is None else (f"{r:.2f}×" if r < 10 else f"{r:.1f}×")


def section(layers: list[Layer], quick: bool, total_s: float) -> list[str]:
    out = [MARK_BEGIN, "## Every layer side by side", ""]
    out.append(f"Written by `bench/layers.py` (run by `bench/run.sh`{', BENCH_QUICK=1: short runs' if quick else ''}) "
               f"in {total_s:.0f} s, load average {load()} at the end on {os.cpu_count()} cores. **Ratio** is "
               "cordon's time over the reference's, measured in the same run (below 1 is faster, except where "
               "a row says higher is better); absolute times follow, then CPU where it was measured; the load "
               "column is the 1-, 5- and 15-minute load average when the layer started, after waiting (at most "
               "a minute) for the machine to be under 10% busy over a second, and how busy that second was: the "
               "load average lags by minutes behind the layer before. Rows without a reference are absolute "
               "costs.")
    out.append("")
    out.append("| layer | ratio | against | cordon | reference | CPU | load | note |")
    out.append("| --- | ---: | --- | ---: | ---: | --- | --- | --- |")
    for layer in layers:
        if layer.error:
            out.append(f"| {layer.name} | — | — | — | — | — | {layer.load} | not measured: {layer.error} |")
            continue
        for r in layer.rows:
            out.append(f"| {r['what']} | {fmt_ratio(r['ratio'])} | {r['against']} | {r['cordon']} | "
                       f"{r['reference']} | {r['cpu']} | {layer.load} | {r['note']} |")
    out.append("")
    if CHART.exists():
        out.append("![Every layer against its reference](benchmarks-layers.png)")
        out.append("")
    out.append("How each layer was measured (commands relative to the repository):")
    out.append("")
    for layer in layers:
        out.append(f"- **{layer.name}** ({layer.seconds:.0f} s): {layer.command or '—'}")
    out.append("")
    out.append(MARK_END)
    return out


def details(layers: list[Layer]) -> list[str]:
    out = []
    for layer in layers:
        if layer.detail:
            out += [f"## {layer.name}: details", "", f"Load average when it started: {layer.load}.", ""]
            out += layer.detail + [""]
    return out


def chart(layers: list[Layer]) -> str:
    if not shutil.which("gnuplot"):
        CHART.unlink(missing_ok=True)
        return "gnuplot is not installed: no chart"
    rows = [(r["what"], r["ratio"]) for layer in layers if not layer.error for r in layer.rows
            if r["ratio"] is not None]
    if not rows:
        return "no ratios to chart"
    data = RESULTS / "layers.dat"
    labels = [re.sub(r'[`"]', "", w)[:64] for w, _ in rows]
    data.write_text("".join(f'"{label}" {max(r, 0.001):.4f}\n' for label, (_, r) in zip(labels, rows)))
    script = f"""
set terminal pngcairo size 1100,{160 + 26 * len(rows)} font "sans,10"
set output '{CHART}'
set title "cordon against each layer's reference, same run (ratio, log scale; 1 = the reference)"
set style fill solid 0.85 border -1
set logscale x
set xrange [0.05:*]
set yrange [{len(rows)}:-1]
set ytics nomirror
set grid xtics
set arrow from 1, graph 0 to 1, graph 1 nohead lc rgb "#444444" dt 2
unset key
plot '{data}' using 2:0:(0.05):2:($0-0.35):($0+0.35):ytic(1) with boxxyerror lc rgb "#4477aa", \\
     '' using 2:0:(sprintf(" %.2fx", $2)) with labels left font ",9"
"""
    p = run(["gnuplot"], input=script, timeout=60)
    return "" if p.returncode == 0 else f"gnuplot failed: {p.stderr.strip()[:300]}"


def rewrite_page(layers: list[Layer], quick: bool, total_s: float) -> None:
    page = DOC.read_text()
    page = re.sub(re.escape(MARK_BEGIN) + r".*?" + re.escape(MARK_END) + r"\n*", "", page, flags=re.S)
    page = re.sub(r"\n## [^\n]*: details\n.*", "\n", page, flags=re.S) if "\n## " in page else page
    block = "\n".join(section(layers, quick, total_s)) + "\n\n"
    at = page.find("\n## Summary")
    page = page[:at + 1] + block + page[at + 1:] if at >= 0 else page + "\n" + block
    page = page.rstrip("\n") + "\n\n" + "\n".join(details(layers)).rstrip("\n") + "\n"
    DOC.write_text(rel(page))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cordon", type=Path, required=True)
    ap.add_argument("--build", type=Path, required=True)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    q = a.quick
    cordon, build = a.cordon.resolve(), a.build.resolve()
    RESULTS.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    launch_path = RESULTS / "launch.json"
    launch = json.loads(launch_path.read_text()) if launch_path.exists() else None

    def from_launch(name, fn):
        layer = Layer(name)
        if launch is None:
            layer.error = "bench/harness.py did not run"
            return layer
        return timed(layer, fn, launch)

    layers = [from_launch("Launch, cold", launch_rows)]
    log("prepared sandboxes")
    layers.append(timed(Layer("Launch, prepared"), prepared, build, 10 if q else 60))
    log("CPU per launch")
    layers.append(timed(Layer("CPU per launch"), cpu_per_launch, cordon, 10 if q else 30, 2 if q else 5))
    layers.append(from_launch("Policy compile", compile_rows))
    layers.append(timed(Layer("Network broker"), broker_rows))
    log("sidecar")
    layers.append(timed(Layer("Sidecar"), sidecar, cordon, 200 if q else 2000, 1 if q else 3))
    log("filesystem worker")
    layers.append(timed(Layer("Filesystem worker"), fs_worker, build, 0.3 if q else 2))
    log("governance")
    layers.append(timed(Layer("Governance"), governance, build, 0.5 if q else 2))
    log("gate runner")
    layers.append(timed(Layer("Gate runner"), gate_runner, cordon, 5 if q else 10, 2 if q else 10))
    note = chart(layers)
    if note:
        log(note)
    rewrite_page(layers, q, time.monotonic() - start)
    (RESULTS / "layers.json").write_text(json.dumps([{"name": l_.name, "rows": l_.rows, "error": l_.error,
                                                      "load": l_.load} for l_ in layers], indent=1))
    for layer in layers:
        for r in layer.rows:
            print(f"{fmt_ratio(r['ratio']):>8}  {r['what']}: {r['cordon']} vs {r['reference']} {r['against']}")
        if layer.error:
            print(f"       —  {layer.name}: {layer.error}")
    log(f"wrote {rel(DOC)} in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
