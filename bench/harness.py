#!/usr/bin/env python3
"""cordon's benchmark harness: bench/run.sh installs and builds, then runs this.

It builds equivalent configurations of bare exec, cordon, bubblewrap, firejail and
srt, checks that each really confines, times them with hyperfine (one run per
workload), measures the supervisor's memory, runs the policy-compile benchmark
(Google Benchmark), the 500-run stress check and a launch profile, and writes
docs/benchmarks.md and docs/benchmarks-launch.png.

Network traffic goes only to a server this script starts on 127.0.0.1.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pickle
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
RUN = CACHE / "run"
RESULTS = CACHE / "results"
DOC = ROOT / "docs" / "benchmarks.md"
CHART = ROOT / "docs" / "benchmarks-launch.png"
CLEAN_PATH = "/usr/bin:/bin"


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(argv, timeout=120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)


def first_line(argv) -> str:
    try:
        p = run(argv, timeout=30)
        text = (p.stdout or p.stderr).strip()
        return text.splitlines()[0] if text else "?"
    except (OSError, subprocess.SubprocessError):
        return "not available"


# --------------------------------------------------------------------------- tools


@dataclass
class Tool:
    key: str
    label: str
    available: bool = True
    reason: str = ""          # why unavailable
    status: str = ""          # confinement verdict
    checks: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    version: str = ""

    def prefix(self, ws: Path) -> list[str]:  # overridden per tool
        return []

    def command(self, ws: Path, argv: list[str]) -> list[str]:
        return self.prefix(ws) + argv

    @property
    def timed(self) -> bool:
        return self.available and (self.status.startswith("verified") or self.key == "bare")


class Bare(Tool):
    def __init__(self):
        super().__init__("bare", "bare exec")
        self.version = "-"


class Cordon(Tool):
    def __init__(self, binary: Path):
        super().__init__("cordon", "cordon")
        self.binary = binary
        self.version = first_line([str(binary), "--version"])

    def prefix(self, ws):
        return [str(self.binary), "run", "--workspace", str(ws), "--"]


class Bwrap(Tool):
    def __init__(self):
        super().__init__("bwrap", "bubblewrap")
        self.version = first_line(["bwrap", "--version"])
        # The same system view as cordon's workspace-write platform defaults.
        self.system = []
        for d in ("/usr", "/etc", "/opt", "/sys"):
            if os.path.isdir(d) and not os.path.islink(d):
                self.system += ["--ro-bind", d, d]
        for link in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(link):
                self.system += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                self.system += ["--ro-bind", link, link]

    def prefix(self, ws):
        return (["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
                 "--setenv", "PATH", CLEAN_PATH, "--setenv", "HOME", "/tmp"] + self.system +
                ["--bind", str(ws), str(ws), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                 "--chdir", str(ws), "--"])


class Firejail(Tool):
    def __init__(self):
        super().__init__("firejail", "firejail")
        self.version = first_line(["firejail", "--version"])
        self.notes.append("firejail has no option to clear the environment: it runs under `env -i PATH=... HOME=/tmp`")
        self.notes.append("`--caps.drop=all --nonewprivs` added: firejail keeps root's capabilities otherwise, "
                          "and a root with CAP_SYS_ADMIN could remount the read-only view")

    def prefix(self, ws):
        return ["env", "-i", f"PATH={CLEAN_PATH}", "HOME=/tmp", "firejail", "--quiet", "--noprofile", "--net=none",
                "--private-tmp", "--read-only=/", f"--read-write={ws}", "--caps.drop=all", "--nonewprivs", "--"]


class Srt(Tool):
    def __init__(self, cli: Path | None):
        super().__init__("srt", "srt (sandbox-runtime)")
        self.cli = cli
        self.home = RUN / "srt-home"
        self.notes.append("srt passes its own environment through: it runs under `env -i PATH=... HOME=...` "
                          "(it then adds its proxy variables)")
        self.notes.append("srt runs the command through a shell (`bash -c`) inside bubblewrap, with proxies "
                          "(socat) started per run")

    def settings(self, ws: Path) -> Path:
        if not ws.is_absolute():  # a placeholder for the page's command lines
            return Path("SETTINGS.json")
        path = ws.parent / f"srt-settings-{ws.name}.json"
        path.write_text(json.dumps({
            "network": {"allowedDomains": [], "deniedDomains": [], "allowLocalBinding": False},
            "filesystem": {"denyRead": [], "allowRead": [], "allowWrite": [str(ws)], "denyWrite": []},
        }, indent=2) + "\n")
        return path

    def prefix(self, ws):
        self.home.mkdir(parents=True, exist_ok=True)
        return ["env", "-i", f"PATH={CLEAN_PATH}", f"HOME={self.home}", str(self.cli), "--settings",
                str(self.settings(ws)), "--"]

    def settings_example(self) -> str:
        return json.dumps({
            "network": {"allowedDomains": [], "deniedDomains": [], "allowLocalBinding": False},
            "filesystem": {"denyRead": [], "allowRead": [], "allowWrite": ["WS"], "denyWrite": []},
        }, indent=2)


# --------------------------------------------------------------------------- setup


def make_workspace(path: Path, git: bool = False) -> Path:
    if path.exists():
        shutil.rmtree(path)
    (path / "src").mkdir(parents=True)
    (path / "data.txt").write_text("".join(f"line {i}: the quick brown fox jumps over the lazy dog\n"
                                           for i in range(64)))
    (path / "README.md").write_text("# benchmark workspace\n")
    for i in range(20):
        (path / "src" / f"file{i:02d}.c").write_text(f"int f{i}(void) {{ return {i}; }}\n")
    if git:
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_SYSTEM="/dev/null")
        for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                     ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "init"]):
            p = run(argv, cwd=path, env=env)
            if p.returncode != 0:
                raise RuntimeError(f"{' '.join(argv)}: {p.stderr.strip()}")
    return path


class LoopbackServer:
    """A TCP server on 127.0.0.1 that accepts and closes; the target of the network probe."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                self.accepted += 1
                conn.close()
            except socket.timeout:
                continue
            except OSError:
                break

    def close(self):
        self.stop = True
        self.thread.join(timeout=2)
        self.sock.close()


# --------------------------------------------------------------------------- confinement checks

CHECKS = [
    ("ws_write", "ok", "writes its workspace"),
    ("ws_read", "ok", "reads its workspace"),
    ("sys_read", "ok", "reads /usr and /etc"),
    ("etc_write", "denied", "write to /etc fails"),
    ("outside_write", "denied", "write to a host directory outside the workspace fails"),
    ("tcp", "denied", "TCP connect to 127.0.0.1 fails"),
    ("env", "clean", "a host variable is not passed"),
]


def probe_script(ws: Path, outside: Path, port: int, tag: str) -> str:
    etc_target = f"/etc/cordon-bench-probe-{tag}"
    out_target = outside / f"probe-{tag}"
    return "; ".join([
        f"(echo x > {ws}/probe-{tag}.txt) 2>/dev/null && echo ws_write=ok || echo ws_write=fail",
        f"cat {ws}/data.txt >/dev/null 2>&1 && echo ws_read=ok || echo ws_read=fail",
        "ls /usr/bin/sh >/dev/null 2>&1 && cat /etc/passwd >/dev/null 2>&1 && echo sys_read=ok || echo sys_read=fail",
        f"(echo x > {etc_target}) 2>/dev/null && echo etc_write=ALLOWED || echo etc_write=denied",
        f"(echo x > {out_target}) 2>/dev/null && echo outside_write=ALLOWED || echo outside_write=denied",
        f"timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo tcp=ALLOWED || echo tcp=denied",
        '[ -n "$CORDON_BENCH_SECRET" ] && echo env=LEAKED || echo env=clean',
        "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status 2>/dev/null | tr -d '\\t' | "
        "sed 's/:/=/' | tr 'A-Z' 'a-z' || true",
    ])


def verify(tool: Tool, ws: Path, outside: Path, server: LoopbackServer) -> None:
    tag = tool.key
    etc_target = Path(f"/etc/cordon-bench-probe-{tag}")
    out_target = outside / f"probe-{tag}"
    for stale in (etc_target, out_target):
        stale.unlink(missing_ok=True)
    env = dict(os.environ, CORDON_BENCH_SECRET="leaked")
    argv = tool.command(ws, ["sh", "-c", probe_script(ws, outside, server.port, tag)])
    try:
        p = run(argv, timeout=90, cwd=ws, env=env)
    except subprocess.TimeoutExpired:
        tool.available, tool.reason = False, "the probe did not finish within 90 s"
        return
    except OSError as e:
        tool.available, tool.reason = False, str(e)
        return
    found = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line and " " not in line)
    tool.checks = found
    if "ws_write" not in found:
        tool.available = False
        err = (p.stderr.strip().splitlines() or ["no output"])[-1]
        tool.reason = f"does not run here (exit {p.returncode}): {err[:200]}"
        return
    # What the host sees, whatever the probe printed.
    if etc_target.exists():
        found["etc_write"] = "ALLOWED"
    if out_target.exists():
        found["outside_write"] = "ALLOWED"
    for stale in (etc_target, out_target, ws / f"probe-{tag}.txt"):
        stale.unlink(missing_ok=True)
    if tool.key == "bare":
        tool.status = "baseline (confines nothing)"
        return
    failed = [desc for key, want, desc in CHECKS if found.get(key) != want]
    tool.status = "verified" if not failed else "not equivalent: " + "; ".join(f"{d} — no" for d in failed)


# --------------------------------------------------------------------------- hyperfine


def hyperfine(name: str, commands: list[tuple[str, list[str]]], warmup: int, runs: int, cwd: Path) -> dict:
    out = RESULTS / f"hyperfine-{name}.json"
    # -i: a failing run is recorded (exit_codes in the JSON, "failed runs" on the page), not fatal.
    argv = ["hyperfine", "-N", "-i", "--style", "basic", "--warmup", str(warmup), "--runs", str(runs),
            "--export-json", str(out)]
    for label, command in commands:
        argv += ["-n", label, shlex.join(command)]
    log(f"hyperfine {name}: {len(commands)} commands x {runs} runs")
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=1800)
    (RESULTS / f"hyperfine-{name}.log").write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"hyperfine {name} failed:\n{p.stderr[-2000:]}")
    data = json.loads(out.read_text())
    return {r["command"]: r for r in data["results"]}


# --------------------------------------------------------------------------- memory


def proc_children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(root: int) -> list[int]:
    tree = proc_children()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += tree.get(pid, [])
    return out


def pss_kib(pid: int, field_name: str = "Pss:") -> int | None:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(field_name):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def stop_tree(p: subprocess.Popen, pids: list[int]) -> None:
    """SIGTERM the run's process group, then SIGKILL whatever of it is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            continue
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if p.poll() is None:
        p.kill()
        p.wait()


def measure_memory(tool: Tool, ws: Path, samples: int) -> dict:
    """PSS of the tool's own processes while the command (`sleep`) runs."""
    results = []
    for _ in range(samples):
        p = subprocess.Popen(tool.command(ws, ["sleep", "5"]), cwd=ws, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        seen: list[int] = []
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and p.poll() is None:
                seen = descendants(p.pid)
                if any(comm(x) == "sleep" for x in seen):
                    time.sleep(0.3)  # let start-up settle
                    seen = descendants(p.pid)
                    results.append([(x, comm(x), pss_kib(x), pss_kib(x, "Pss_Anon:")) for x in seen])
                    break
                time.sleep(0.05)
        finally:
            stop_tree(p, seen)
    if not results:
        return {"error": "no sample (the command never started)"}
    supervisor = [s[0][2] for s in results if s and s[0][1] != "sleep" and s[0][2] is not None]
    total = [sum(x[2] or 0 for x in s if x[1] != "sleep") for s in results]
    second = [s[1][2] for s in results if len(s) > 2 and s[1][1] != "sleep" and s[1][2] is not None]
    anon = [s[0][3] for s in results if s and s[0][1] != "sleep" and s[0][3] is not None]
    return {
        "supervisor_kib": statistics.median(supervisor) if supervisor else None,
        "supervisor_anon_kib": statistics.median(anon) if anon else None,
        "second_kib": statistics.median(second) if second else None,
        "total_kib": statistics.median(total),
        "processes": [x[1] for x in results[-1]],
        "samples": results,
    }


# --------------------------------------------------------------------------- stress


def snapshot(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    st = root.lstat()
    out["."] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def stress(tool: Tool, spawn_many: Path, total: int, jobs: int) -> dict:
    ws = make_workspace(RUN / f"stress-{tool.key}" / "ws", git=True)
    before = snapshot(ws)
    argv = [str(spawn_many), "-j", str(jobs), "-n", str(total), "--summary", "--"] + \
        tool.command(ws, ["sh", "-c", "ls -la . >/dev/null && cat README.md src/file00.c >/dev/null"])
    started = time.monotonic()
    try:
        p = run(argv, timeout=600, cwd=ws)
    except subprocess.TimeoutExpired:
        return {"error": "did not finish within 600 s", "total": total, "jobs": jobs}
    elapsed = time.monotonic() - started
    after = snapshot(ws)
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    summary = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
    errors = [line for line in p.stderr.splitlines() if line.strip()]
    return {"total": total, "jobs": jobs, "failed": summary.get("failed"), "exit_codes": summary.get("exit_codes"),
            "latency_ms": summary.get("latency_ms"), "seconds": round(elapsed, 1), "added": added,
            "removed": removed, "changed": changed, "stderr_sample": errors[:5], "stderr_lines": len(errors)}


# --------------------------------------------------------------------------- profile

SYSCALLS: dict[int, str] = {}


def syscall_names() -> dict[int, str]:
    if not SYSCALLS:
        for header in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
            if os.path.exists(header):
                for line in open(header):
                    m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
                    if m:
                        SYSCALLS[int(m.group(2))] = m.group(1)
                break
    return SYSCALLS


PHASES = [
    ("startup", "process start-up: exec, dynamic loading and relocation, static init, CLI parsing"),
    ("policy", "policy load (built-in profile JSON), workspace choice, validation, token resolution"),
    ("scan", "compile: host facts, repository scan of the workspace, mount table (every path resolved on the host)"),
    ("seccomp", "compile: seccomp program (prebuilt; the kernel's actions checked), Landlock rules, contract; launch "
                "preparation"),
    ("clone", "clone3 into 7 new namespaces (in the supervisor)"),
    ("pid1", "PID 1 wakes: go byte, setgroups/uid_map/gid_map, host name"),
    ("mounts", "mounts: staging tmpfs, pivot_root, /proc, /dev, mount table, detach old root, pivot_root"),
    ("landlock", "Landlock: create ruleset, add rules, restrict self"),
    ("caps", "capabilities and securebits dropped"),
    ("seccomp_install", "seccomp filter installed"),
    ("fork_exec", "hand-over to the supervisor, fork the command, setsid, reset signals, close_range, execvp "
                  "(until the kernel has loaded it)"),
    ("command", "the command itself (/bin/true: its own ld.so and libc start-up, exit)"),
    ("reap", "PID 1 reaps the command, reports to the supervisor, exits"),
    ("teardown", "namespace teardown until the supervisor's poll wakes"),
    ("finish", "supervisor: wait4, repository re-check, report, exit"),
]


def parse_perf_script(text: str) -> dict | None:
    names = syscall_names()
    events = []
    for line in text.splitlines():
        m = re.match(r"\s*(.+?)\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)", line) or \
            re.match(r"\s*(.+?)\s+(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)", line)
        if not m:
            continue
        c, pid, t, ev, rest = m.groups()
        events.append((float(t) * 1000.0, int(pid), ev.rstrip(":"), rest))
    if not events:
        return None
    events.sort(key=lambda e: e[0])
    sup = init = cmd = None
    for t, pid, ev, rest in events:
        if ev == "sched:sched_process_exec" and sup is None and "cordon" in rest:
            sup = pid
        if ev == "sched:sched_process_fork" and sup is not None:
            m = re.search(r"pid=(\d+) child_comm=\S+ child_pid=(\d+)", rest)
            if m and int(m.group(1)) == sup and init is None:
                init = int(m.group(2))
            elif m and int(m.group(1)) == init and cmd is None:
                cmd = int(m.group(2))
    if None in (sup, init, cmd):
        return None

    def first(pid, kind, name=None, after=0.0, event=None):
        for t, p, ev, rest in events:
            if p != pid or t < after:
                continue
            if event and ev == event:
                return t
            if kind and ev == f"raw_syscalls:sys_{kind}":
                nr = int(rest.split()[1])
                if names.get(nr) == name:
                    return t
        return None

    t0 = first(sup, None, event="sched:sched_process_exec")
    L = {
        "getcwd": first(sup, "enter", "getcwd"),
        "facts": first(sup, "enter", "landlock_create_ruleset"),
        "seccomp_build": first(sup, "enter", "seccomp"),
        "clone": first(sup, "enter", "clone3"),
        "clone_ret": first(sup, "exit", "clone3"),
    }
    L["mount"] = first(init, "enter", "mount")
    L["ll"] = first(init, "enter", "landlock_create_ruleset")
    L["ll_end"] = first(init, "exit", "landlock_restrict_self")
    L["seccomp_in"] = first(init, "enter", "seccomp")
    L["seccomp_out"] = first(init, "exit", "seccomp")
    L["caps_from"] = L["ll_end"] or L["ll"] or L["seccomp_in"]
    L["exec"] = first(cmd, None, event="sched:sched_process_exec")
    L["cmd_exit"] = first(cmd, None, event="sched:sched_process_exit")
    L["init_exit"] = first(init, None, event="sched:sched_process_exit")
    L["poll_wake"] = first(sup, "exit", "poll", after=L["init_exit"] or 0.0)
    L["end"] = first(sup, None, event="sched:sched_process_exit")
    bounds = [("startup", t0, L["getcwd"]), ("policy", L["getcwd"], L["facts"]),
              ("scan", L["facts"], L["seccomp_build"]), ("seccomp", L["seccomp_build"], L["clone"]),
              ("clone", L["clone"], L["clone_ret"]), ("pid1", L["clone_ret"], L["mount"]),
              ("mounts", L["mount"], L["ll"] or L["seccomp_in"]), ("landlock", L["ll"], L["ll_end"]),
              ("caps", L["caps_from"], L["seccomp_in"]), ("seccomp_install", L["seccomp_in"], L["seccomp_out"]),
              ("fork_exec", L["seccomp_out"], L["exec"]), ("command", L["exec"], L["cmd_exit"]),
              ("reap", L["cmd_exit"], L["init_exit"]), ("teardown", L["init_exit"], L["poll_wake"]),
              ("finish", L["poll_wake"], L["end"])]
    phases = {k: (b - a if a is not None and b is not None else None) for k, a, b in bounds}
    # Syscall counts and the slowest single calls of PID 1's mount phase.
    pending: dict[int, tuple[float, str]] = {}
    counts: dict[str, int] = {}
    durations: dict[str, float] = {}
    total_calls = 0
    for t, pid, ev, rest in events:
        if pid not in (sup, init):
            continue
        if ev == "raw_syscalls:sys_enter":
            name = names.get(int(rest.split()[1]), "?")
            pending[pid] = (t, name)
            total_calls += 1
            counts[name] = counts.get(name, 0) + 1
        elif ev == "raw_syscalls:sys_exit" and pid in pending:
            start, name = pending.pop(pid)
            durations[name] = durations.get(name, 0.0) + (t - start)
    # Off-CPU time of the launch's own processes, by the state they left the CPU in: D is an
    # uninterruptible wait in the kernel (e.g. an RCU grace period), R means another task took the CPU.
    off = {"D": 0.0, "R": 0.0, "S": 0.0}
    switched: dict[int, tuple[float, str]] = {}
    for t, pid, ev, rest in events:
        if pid not in (sup, init, cmd):
            continue
        if pid in switched:
            start, state = switched.pop(pid)
            off[state] = off.get(state, 0.0) + (t - start)
        if ev == "sched:sched_switch":
            m = re.search(r"prev_state=(\S+)", rest)
            state = m.group(1)[0] if m else "S"
            switched[pid] = (t, state if state in ("D", "R") else "S")
    return {"phases": phases, "total": (L["end"] - t0) if L["end"] and t0 else None, "syscalls": total_calls,
            "counts": counts, "durations": durations, "off_cpu": off}


def profile_launch(cordon: Cordon, ws: Path, runs: int) -> dict:
    if not shutil.which("perf"):
        return {"error": "perf is not installed"}
    parsed = []
    failure = ""
    for i in range(runs):
        data = RESULTS / "perf-launch.data"
        p = run(["perf", "record", "-q", "-o", str(data), "-e", "raw_syscalls:sys_enter", "-e",
                 "raw_syscalls:sys_exit", "-e", "sched:sched_process_exec", "-e", "sched:sched_process_exit", "-e",
                 "sched:sched_process_fork", "-e", "sched:sched_switch", "--"] + cordon.command(ws, ["/bin/true"]), timeout=60, cwd=ws)
        if p.returncode != 0:
            failure = p.stderr.strip()[-300:]
            break
        s = run(["perf", "script", "-i", str(data), "-F", "comm,pid,time,event,trace"], timeout=60)
        r = parse_perf_script(s.stdout)
        if r:
            parsed.append(r)
        data.unlink(missing_ok=True)
    if not parsed:
        return {"error": f"perf record/script gave no usable trace: {failure or 'landmarks not found'}"}
    phases = {}
    for key, _ in PHASES:
        values = [r["phases"][key] for r in parsed if r["phases"].get(key) is not None]
        phases[key] = statistics.median(values) if values else None
    keys = set().union(*(r["durations"].keys() for r in parsed))
    durations = {k: statistics.median(r["durations"].get(k, 0.0) for r in parsed) for k in keys}
    counts = {k: statistics.median(r["counts"].get(k, 0) for r in parsed) for k in keys}
    off_cpu = {k: statistics.median(r["off_cpu"].get(k, 0.0) for r in parsed) for k in ("D", "R", "S")}
    return {"runs": len(parsed), "phases": phases, "off_cpu": off_cpu,
            "total": statistics.median(r["total"] for r in parsed if r["total"]),
            "syscalls": statistics.median(r["syscalls"] for r in parsed), "durations": durations, "counts": counts}


CPU_BUCKETS = [
    # (label, frame substrings), first match wins; frames are searched from the innermost out.
    ("report JSON built after the run (policy digest)", ("run_report_json",)),
    ("repository re-check after the run", ("check_repository_metadata",)),
    ("PID 1: namespaces, mounts, Landlock, seccomp, fork+exec of the command", ("run_sandbox_init",)),
    ("compile: validation, repository scan, mount table, seccomp program", ("linux_backend::compile",)),
    ("policy load (built-in profile JSON)", ("builtin_profile", "load_sandbox_policy")),
    ("supervisor: prepare, clone3, poll, wait", ("supervise_launch",)),
    ("dynamic loading, relocation, lazy binding (ld.so)", ("_dl_start", "_dl_fixup", "_dl_runtime_resolve",
                                                           "_dl_relocate", "_dl_map_object", "dl_main")),
    ("exit: destructors, address-space teardown", ("__run_exit_handlers", "exit_mmap", "do_group_exit")),
    ("exec of cordon (kernel)", ("bprm_execve", "load_elf_binary")),
    ("rest of main (CLI parsing, workspace choice, static init)", ("main", "_GLOBAL__sub_I", "_init")),
]


def cpu_attribution(cordon: Cordon, ws: Path, runs: int) -> dict:
    """Where the cordon processes spend CPU (sampled with call stacks), by bucket."""
    if not shutil.which("perf"):
        return {"error": "perf is not installed"}
    data = RESULTS / "perf-cpu.data"
    loop = "; ".join([shlex.join(cordon.command(ws, ["/bin/true"]))] * runs)
    p = run(["perf", "record", "-q", "-F", "4000", "--call-graph", "dwarf,16384", "-o", str(data), "--",
             "sh", "-c", loop], timeout=300, cwd=ws)
    if p.returncode != 0:
        return {"error": f"perf record failed: {p.stderr.strip()[-200:]}"}
    s = subprocess.run(["perf", "script", "-i", str(data), "--show-task-events", "-F", "comm,pid,time,ip,sym,dso"],
                       capture_output=True, text=True, timeout=600)
    data.unlink(missing_ok=True)
    # Roles from the fork events: the loop shell's children are supervisors, theirs are PID 1s,
    # and PID 1's children are the commands (counted until they exec).
    parent: dict[int, int] = {}
    for line in s.stdout.splitlines():
        m = re.search(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)", line)
        if m:
            parent[int(m.group(1))] = int(m.group(2))
    shell = next((pid for pid, pp in parent.items() if pp not in parent), None)

    def role(pid: int) -> str:
        depth, p = 0, pid
        while p in parent and p != shell and depth < 5:
            p, depth = parent[p], depth + 1
        return {1: "supervisor", 2: "PID 1", 3: "the command before exec"}.get(depth, "other")

    counts: dict[str, int] = {}
    total = 0
    frames: list[str] = []
    comm_, pid_ = "", 0

    def flush():
        nonlocal total
        if comm_ != "cordon" or not frames:
            return
        total += 1
        for label, needles in CPU_BUCKETS:
            if any(n in f.split(" (")[0] for f in frames for n in needles):
                counts[label] = counts.get(label, 0) + 1
                return
        # Stacks the unwinder could not follow to a known frame: by library, else by process.
        for library, index in (("ld-linux", 6), ("libseccomp", 3)):
            if any(library in f for f in frames):
                label = CPU_BUCKETS[index][0]
                counts[label] = counts.get(label, 0) + 1
                return
        label = f"{role(pid_)}: stack not unwound to a known frame"
        counts[label] = counts.get(label, 0) + 1

    for line in s.stdout.splitlines():
        if not line.strip() or "PERF_RECORD_" in line:
            continue
        if not line[0].isspace():
            flush()
            frames = []
            head = line.split()
            comm_ = head[0]
            pid_ = int(head[1]) if len(head) > 1 and head[1].isdigit() else 0
        else:
            parts = line.split(None, 1)
            if len(parts) == 2:
                frames.append(parts[1])
    flush()
    if not total:
        return {"error": "no samples"}
    return {"runs": runs, "samples": total, "frequency_hz": 4000,
            "ms_per_run": {k: v / 4000 * 1000 / runs for k, v in counts.items()},
            "share": {k: v / total for k, v in counts.items()}}


def relink_static(build: Path) -> Path | None:
    """The same objects linked fully static (an experiment, not a proposal as is: a static glibc
    cannot load NSS modules, so getpwuid only sees /etc/passwd)."""
    out = CACHE / "cordon-static"
    p = run(["ninja", "-C", str(build), "-t", "commands", "cordon_cli"], timeout=60)
    if p.returncode != 0 or not p.stdout.strip():
        return None
    link = p.stdout.strip().splitlines()[-1]
    if " -o cordon " not in link:
        return None
    link = link.replace(" -o cordon ", f" -static -o {out} ")
    # Shared libraries named by path become their static archives.
    link = re.sub(r"\S*/lib(\w+)\.so\b", lambda m: f"-l:lib{m.group(1)}.a", link)
    q = subprocess.run(["sh", "-c", link], cwd=build, capture_output=True, text=True, timeout=300)
    return out if q.returncode == 0 and out.exists() else None


# --------------------------------------------------------------------------- report helpers


def ms(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    value = seconds * 1000.0
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def spread(r: dict) -> tuple[float, float]:
    times = sorted(r["times"])
    q1 = times[len(times) // 4]
    q3 = times[(3 * len(times)) // 4]
    return q1, q3


def mib(kib: float | None) -> str:
    return "—" if kib is None else f"{kib / 1024:.2f}"


def machine_facts() -> dict:
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = "?"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    virt = first_line(["systemd-detect-virt"]) if shutil.which("systemd-detect-virt") else "?"
    debian = Path("/etc/debian_version").read_text().strip() if Path("/etc/debian_version").exists() else "?"
    load = Path("/proc/loadavg").read_text().split()[:3]
    return {"nproc": os.cpu_count(), "cpu": cpu, "memory": mem, "kernel": os.uname().release,
            "debian": debian, "virt": virt, "loadavg": " ".join(load)}


def dpkg_version(package: str) -> str:
    p = run(["dpkg-query", "-W", "-f=${Version}", package])
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "not installed"


# --------------------------------------------------------------------------- chart


def write_chart(tools: list[Tool], res_true: dict, res_shell: dict, res_conc: dict) -> str:
    if not shutil.which("gnuplot"):
        return "gnuplot is not installed: no chart"
    bare_true = res_true.get("bare exec", {}).get("median")
    bare_shell = res_shell.get("bare exec", {}).get("median")
    bare_conc = res_conc.get("bare exec", {}).get("median")
    rows = []
    for t in tools:
        if t.key == "bare" or t.label not in res_true or bare_true is None:
            continue
        o1 = max((res_true[t.label]["median"] - bare_true) * 1000, 0.01)
        o2 = max((res_shell.get(t.label, {}).get("median", 0) - (bare_shell or 0)) * 1000, 0.01)
        o3 = max((res_conc.get(t.label, {}).get("median", 0) - (bare_conc or 0)) * 1000 / 50, 0.01)
        rows.append(f'"{t.label}" {o1:.3f} {o2:.3f} {o3:.3f}')
    if not rows:
        return "no data for the chart"
    data = RESULTS / "chart.dat"
    data.write_text("\n".join(rows) + "\n")
    script = f"""
set terminal pngcairo size 960,520 font "sans,11"
set output '{CHART}'
set title "Launch overhead over bare exec, median (ms, log scale)"
set label 1 "noisy 2-core VM: compare the bars with each other, not the absolute values" at screen 0.5,0.03 center font ",9"
set bmargin 4
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [0.1:*]
set ylabel "ms over bare exec"
set grid ytics
set key top left
plot '{data}' using 2:xtic(1) title "/bin/true" lc rgb "#4477aa", \\
     '' using 3 title "sh -c: ls + cat" lc rgb "#ee6677", \\
     '' using 4 title "50 at once, per launch" lc rgb "#228833", \\
     '' using ($0-0.25):2:(sprintf("%.1f", $2)) with labels offset 0,0.7 font ",9" notitle, \\
     '' using ($0):3:(sprintf("%.1f", $3)) with labels offset 0,0.7 font ",9" notitle, \\
     '' using ($0+0.25):4:(sprintf("%.1f", $4)) with labels offset 0,0.7 font ",9" notitle
"""
    p = run(["gnuplot"], input=script, timeout=60)
    return "" if p.returncode == 0 else f"gnuplot failed: {p.stderr.strip()[:300]}"


# --------------------------------------------------------------------------- the page


def workload_table(results: dict, tools: list[Tool], unit_note: str = "") -> list[str]:
    bare = results.get("bare exec", {}).get("median")
    bwrap = results.get("bubblewrap", {}).get("median")
    lines = ["| tool | median (ms) | min (ms) | max (ms) | interquartile (ms) | ratio to bare exec | "
             "ratio to bubblewrap | CPU user+sys (ms, mean) | failed runs |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in tools:
        if t.label not in results:
            why = t.reason if not t.available else t.status
            lines.append(f"| {t.label} | — | — | — | — | — | — | — | {why} |")
            continue
        r = results[t.label]
        q1, q3 = spread(r)
        failed = sum(1 for c in r.get("exit_codes", []) if c != 0)
        cpu = (r.get("user") or 0) + (r.get("system") or 0)
        lines.append(f"| {t.label} | {ms(r['median'])} | {ms(r['min'])} | {ms(r['max'])} | {ms(q1)}–{ms(q3)} | "
                     f"{ratio(r['median'], bare)} | {ratio(r['median'], bwrap)} | {ms(cpu)} | {failed} |")
    return lines


def command_block(commands: list[tuple[str, list[str]]]) -> list[str]:
    out = ["```sh"]
    for label, argv in commands:
        out.append(f"# {label}")
        out.append(shlex.join(argv))
    out.append("```")
    return out


def write_page(ctx: dict) -> None:
    tools: list[Tool] = ctx["tools"]
    R = ctx["results"]
    m = ctx["machine"]
    L: list[str] = []
    add = L.append
    add("# Benchmarks")
    add("")
    add(f"Generated by `bench/run.sh` on {ctx['date']} (cordon {ctx['cordon_commit']}); the whole page and "
        "`docs/benchmarks-launch.png` are rewritten by each run, so edit the harness, not this file.")
    add("")
    add(f"**Read the ratios, not the milliseconds.** The absolute times come from a noisy {m['nproc']}-core virtual "
        f"machine ({m['virt']}, shared with other work: load average {ctx['load_before']} when the run started, "
        f"{m['loadavg']} when it ended), where the same command moves by tens of percent from one run to the next "
        "and single runs can take several times the median. Every row of a table was measured in the same "
        "hyperfine run, interleaved in time with the others, so the ratios between rows are the result; medians "
        "are used throughout because the distributions have long tails.")
    add("")
    # ---- summary
    add("## Summary")
    add("")
    t_true = R["true"]
    c = t_true.get("cordon", {}).get("median")
    b = t_true.get("bubblewrap", {}).get("median")
    s = t_true.get("srt (sandbox-runtime)", {}).get("median")
    comp = ctx.get("compile", {})
    c1000 = comp.get("BM_Compile/paths:1000")
    c10 = comp.get("BM_Compile/paths:10")
    mem = ctx["memory"].get("cordon", {})
    st = ctx["stress"].get("cordon", {})

    def yes(flag):
        return "—" if flag is None else ("yes" if flag else "**no**")

    add("| target (issue 6) | measured | met |")
    add("| --- | --- | --- |")
    add(f"| cordon's median launch-to-exit of `/bin/true` at or below bubblewrap's | cordon {ms(c)} ms, bubblewrap "
        f"{ms(b)} ms ({ratio(c, b)} of bubblewrap) | {yes(None if c is None or b is None else c <= b)} |")
    add(f"| far below the node-based `srt` | srt {ms(s)} ms ({ratio(s, c)} cordon's time) | "
        f"{yes(None if c is None or s is None else s >= 5 * c)} |")
    c1000cpu = comp.get("BM_Compile/paths:1000 (cpu)") or c1000
    add(f"| policy compile for 1,000 paths under 5 ms | {c1000:.2f} ms wall, {c1000cpu:.2f} ms CPU (10 paths: "
        f"{c10:.2f} ms wall) | {yes(c1000cpu < 5)} |"
        if c1000 is not None and c10 is not None else "| policy compile for 1,000 paths under 5 ms | not measured | — |")
    sup = mem.get("supervisor_kib")
    add(f"| supervisor PSS under 2 MiB while the command runs | {mib(sup)} MiB (PID 1: {mib(mem.get('second_kib'))} "
        f"MiB) | {yes(None if sup is None else sup < 2048)} |")
    if st and "failed" in st and st.get("failed") is not None:
        clean = not (st["added"] or st["removed"] or st["changed"])
        add(f"| {st['total']} runs, {st['jobs']} at a time, one shared workspace: zero failures, workspace untouched | "
            f"{st['failed']} failed; workspace {'unchanged' if clean else 'CHANGED'} | {yes(st['failed'] == 0 and clean)} |")
    add("")
    add("![Launch overhead per tool](benchmarks-launch.png)")
    add("")
    if ctx.get("chart_note"):
        add(f"(chart: {ctx['chart_note']})")
        add("")
    # ---- configurations
    add("## Configurations and their confinement")
    add("")
    add("Every configuration should read the system read-only, write one workspace (a directory of its own under "
        "`bench/.cache/run/`, not under `/tmp`, which firejail replaces with a private one), have no network, and "
        "start with a clean environment. Before anything is timed, each runs a probe script (`sh -c`) that tries "
        f"each of the following; the harness also checks on the host that no probe file appeared. A TCP server "
        f"started by the harness listens on 127.0.0.1:{ctx['port']} ({ctx['accepted']} connections accepted, "
        "all from the bare-exec control). A row that fails a check is marked *not equivalent* and left out of "
        "the timings.")
    add("")
    add("| tool | version | verdict | " + " | ".join(desc for _, _, desc in CHECKS) + " | also seen inside |")
    add("| --- | --- | --- | " + " | ".join("---" for _ in CHECKS) + " | --- |")
    for t in tools:
        if not t.available:
            add(f"| {t.label} | {t.version or '—'} | **unavailable**: {t.reason} | " +
                " | ".join("—" for _ in CHECKS) + " | — |")
            continue
        cells = []
        for key, want, _ in CHECKS:
            got = t.checks.get(key, "?")
            cells.append(("✓ " if got == want else "✗ ") + got)
        extra = ", ".join(f"{k} {t.checks[k]}" for k in ("seccomp", "nonewprivs", "capeff") if k in t.checks)
        verdict = t.status if t.key != "bare" else "baseline: confines nothing (✗ expected)"
        add(f"| {t.label} | {t.version} | {verdict} | " + " | ".join(cells) + f" | {extra} |")
    add("")
    add("The exact command lines (workspace `WS`; the timed runs use the same prefix):")
    add("")
    L.extend(command_block([(t.label, t.command(Path("WS"), ["CMD", "ARGS..."])) for t in tools if t.available]))
    add("")
    srt_tool = next((t for t in tools if t.key == "srt" and t.available), None)
    if srt_tool is not None:
        add("srt's `SETTINGS.json` (written per workspace):")
        add("")
        add("```json")
        add(srt_tool.settings_example())
        add("```")
        add("")
    for t in tools:
        for note in t.notes:
            add(f"- {t.label}: {note}")
    add("- cordon does more than the others with the same intent: its default profile also masks credentials "
        "(`~/.ssh`, `/etc/shadow`, ...), protects `.git/hooks` and `.git/config`, installs a seccomp filter and a "
        "Landlock ruleset, and hardens `/proc`; bubblewrap's configuration has neither seccomp nor Landlock.")
    add("")
    # ---- workloads
    sections = [
        ("true", "Launch-to-exit of `/bin/true`", f"hyperfine -N, {ctx['runs_fast']} runs after "
         f"{ctx['warmup_fast']} warm-ups, all rows in one run."),
        ("shell", "Short shell workload", "`sh -c 'ls -la WS >/dev/null && cat WS/data.txt >/dev/null'` in the "
         f"workspace (22 entries, a 3.5 KB file); {ctx['runs_fast']} runs after {ctx['warmup_fast']} warm-ups."),
        ("concurrent", "50 concurrent launches", "`cordon_spawn_many -j 50 -n 50 -- PREFIX /bin/true` "
         "(bench/spawn_many.cpp: posix_spawn 50 copies at once, wait for all, fail if any exits non-zero); "
         f"one sample is the time for all 50. {ctx['runs_slow']} runs after {ctx['warmup_slow']} warm-up."),
    ]
    for key, title, how in sections:
        add(f"## {title}")
        add("")
        add(how)
        add("")
        L.extend(workload_table(R[key], tools))
        add("")
        add("<details><summary>command lines</summary>")
        add("")
        L.extend(command_block(ctx["commands"][key]))
        add("")
        add("</details>")
        add("")
    # ---- memory
    add("## Supervisor memory while the command runs")
    add("")
    add(f"Each tool runs `sleep 3`; once `sleep` is running the harness reads `Pss:` from `/proc/PID/smaps_rollup` "
        f"of every process in the tree. Median of {ctx['memory_samples']} samples. *Supervisor* is the process the "
        "caller started (cordon's supervisor; bubblewrap's and firejail's outer process; srt's node); *second* is "
        "the next one down (cordon's PID 1 in the sandbox, bubblewrap's and firejail's in-sandbox parent); "
        "*all* adds up every process of the tool, not counting `sleep` itself.")
    add("")
    add("| tool | supervisor PSS (MiB) | of which anonymous (MiB) | second process (MiB) | all tool processes (MiB) | "
        "processes |")
    add("| --- | ---: | ---: | ---: | ---: | --- |")
    for t in tools:
        mm = ctx["memory"].get(t.key)
        if not mm:
            continue
        if "error" in mm:
            add(f"| {t.label} | — | — | — | — | {mm['error']} |")
            continue
        procs = ", ".join(mm["processes"])
        add(f"| {t.label} | {mib(mm['supervisor_kib'])} | {mib(mm.get('supervisor_anon_kib'))} | "
            f"{mib(mm['second_kib'])} | {mib(mm['total_kib'])} | {procs} |")
    add("")
    add("PSS divides each shared page among the processes mapping it, so the file-backed part (the binary and its "
        "libraries) depends on what else runs: with many cordon runs at once it shrinks; the anonymous part "
        "(heap, stack, copied-on-write data) is the supervisor's own. cordon's supervisor gives back its start-up "
        "memory once a run has lasted 50 ms (`src/linux/memory_trim.cpp`; not in filtered-network runs, whose "
        "broker thread keeps using it): it drops its own mappings of the program's read-only pages (they stay in "
        "the page cache; what it touches again while it waits is mapped back by minor faults) and returns free "
        "heap, so the figure above is what it holds while it waits. Its PID 1 does not, and then holds the pages "
        "it shared with the supervisor alone: that is why PID 1's share (*second*) grows as the supervisor's "
        "shrinks.")
    add("")
    # ---- compile
    add("## Policy compile time")
    add("")
    add("Google Benchmark, `bench/compile_bench.cpp` linked against libcordon (`-DCORDON_BUILD_BENCH=ON`); median "
        f"of {ctx['compile_reps']} repetitions. The policy of N paths has the workspace (writable), N/5 protected "
        "and N/5 denied files inside it (and nothing else) and readable directories outside it for the rest. "
        "Compile includes validation, token resolution, the repository scan of the workspace, the mount table "
        "(each path resolved on the host), the seccomp program, the Landlock rules and the contract.")
    add("")
    add("| benchmark | median wall time (ms) | median CPU time (ms) | what |")
    add("| --- | ---: | ---: | --- |")
    what = {
        "BM_Compile/paths:10": "compile, 10 paths",
        "BM_Compile/paths:1000": "compile, 1,000 paths",
        "BM_Compile/paths:10000": "compile, 10,000 paths",
        "BM_Validate/paths:10000": "validation alone, 10,000 paths",
        "BM_CompileProfile": "compile of the default profile `workspace-write` (what `cordon run` compiles)",
        "BM_ParseProfile": "the built-in profile's JSON into a policy",
        "BM_Validate/paths:10": "validation alone, 10 paths",
        "BM_Validate/paths:1000": "validation alone, 1,000 paths",
        "BM_SeccompBuild": "the seccomp program alone (picked from the programs libseccomp built when cordon was "
                           "built, after checking the kernel's actions)",
        "BM_RepositoryScan/files:2000": "the repository scan alone, on a git work tree of 2,000 files in 100 "
                                        "directories (compile scans each writable root; the launch scans again "
                                        "after the run)",
    }
    if comp:
        for name, value in comp.items():
            if name.endswith(" (cpu)"):
                continue
            cpu_value = comp.get(name + " (cpu)")
            add(f"| `{name}` | {value:.3f} | {'—' if cpu_value is None else f'{cpu_value:.3f}'} | "
                f"{what.get(name, '')} |")
        add("")
        add("Wall time and CPU time differ when other work competes for the 2 cores; compile is single-threaded "
            "and does not wait, so the CPU time is the steadier figure.")
    else:
        add(f"| — | — | — | {ctx.get('compile_error', 'not run')} |")
    add("")
    # ---- stress
    add("## Stress: many runs sharing one workspace")
    add("")
    add("A fresh git repository (README, `data.txt`, 20 files under `src/`, one commit) is the workspace of every run; "
        "the command only reads (`sh -c 'ls -la . >/dev/null && cat README.md src/file00.c >/dev/null'`). Before and "
        "after, the harness lists every entry with its mode, size, mtime and inode (the directories' mtimes "
        "included, so a file created and removed again also shows). `cordon_spawn_many` keeps the given number "
        "running at once.")
    add("")
    add("| tool | runs | at a time | failed | workspace entries added / removed / changed | wall time (s) | "
        "per-run latency median / p95 / max (ms) |")
    add("| --- | ---: | ---: | ---: | --- | ---: | --- |")
    for t in tools:
        sres = ctx["stress"].get(t.key)
        if not sres:
            continue
        if "error" in sres:
            add(f"| {t.label} | {sres.get('total')} | {sres.get('jobs')} | — | {sres['error']} | — | — |")
            continue
        lat = sres.get("latency_ms") or {}
        changes = f"{len(sres['added'])} / {len(sres['removed'])} / {len(sres['changed'])}"
        if sres["added"] or sres["removed"] or sres["changed"]:
            sample = (sres["added"] + sres["removed"] + sres["changed"])[:4]
            changes += " (" + ", ".join(f"`{x}`" for x in sample) + ")"
        add(f"| {t.label} | {sres['total']} | {sres['jobs']} | {sres['failed']} | {changes} | {sres['seconds']} | "
            f"{lat.get('median', 0):.1f} / {lat.get('p95', 0):.1f} / {lat.get('max', 0):.1f} |")
    for t in tools:
        sres = ctx["stress"].get(t.key)
        if sres and sres.get("stderr_lines"):
            add("")
            add(f"{t.label}: {sres['stderr_lines']} lines on stderr, e.g. `{sres['stderr_sample'][0][:200]}`")
    add("")
    # ---- where the time goes
    write_profile_section(ctx, add, L)
    write_launch_changes(add)
    # ---- machine
    add("## Machine and versions")
    add("")
    add(f"- machine: {m['nproc']} cores ({m['cpu']}), {m['memory']}, {m['virt']}; Debian {m['debian']}; kernel "
        f"{m['kernel']}")
    for name, version in ctx["versions"].items():
        add(f"- {name}: {version}")
    add("")
    add("## Running it")
    add("")
    add("```sh")
    add("bench/run.sh            # installs the peers (apt, npm into bench/.cache/npm), builds, measures, rewrites this page")
    add("BENCH_QUICK=1 bench/run.sh   # fewer runs, for trying the harness")
    add("python3 bench/harness.py --render-only   # rewrite this page from the last run's raw results")
    add("```")
    add("")
    add("Raw results (hyperfine JSON, Google Benchmark JSON, memory samples, traces) stay in `bench/.cache/results/`. "
        "The harness is not part of the test suite.")
    add("")
    add("## Before you stop: the regression guard")
    add("")
    add("```sh")
    add("bench/regression_guard.sh [REV] [ROUNDS]   # this build against REV (default HEAD~1), interleaved")
    add("bench/cpu_per_launch.sh [CORDON] [RUNS]    # CPU per launch over the whole tree: cordon, bubblewrap, bare")
    add("bench/prepared.sh [RUNS]                   # /bin/true from a prepared sandbox against bare fork+exec")
    add("```")
    add("")
    add("The guard builds REV's CLI in a throw-away worktree (`bench/.cache/guard-REV`), then alternates the two "
        "binaries (bench/launch_vs.sh) and prints new/old for the launch median and the CPU per launch. It is not "
        "a timed test: a shared machine moves these figures by tens of percent, so read the ratio, and run it again "
        "before believing a change of a few percent. CPU per launch is `perf stat -e task-clock` over every process "
        "a launch creates (counters are inherited by each fork, so processes nobody waits for count too).")
    DOC.write_text(without_machine_paths("\n".join(L).rstrip() + "\n"))


def without_machine_paths(text: str) -> str:
    """The page names no path of the machine it ran on: the repository's own
    paths become relative to it (`bench/.cache/...`, `./cordon`), and the home
    directory becomes `~`."""
    text = text.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
    home = str(Path.home())
    if home not in ("/", ""):
        text = text.replace(home + "/", "~/")
    return text


# What each launch-path change of issue 6 bought, measured while it was made (not by this script): every
# commit's CLI built from the same tree, each run in turn with bubblewrap (bench/.cache, one launch of each per
# round, 3 x 500 rounds at quiet moments; the ratio is of medians in the same rounds, mean of the 3), and the
# supervisor's PSS by this script's method (median of 5). Kept here so that the page says where the numbers
# above come from; re-measure before trusting the small steps.
LAUNCH_PATH_CHANGES = [
    ("before issue 6's changes (be366c5)", "0.99", "—", "2,081"),
    ("seccomp programs built with libseccomp when cordon is built, not at every launch (2208f0f)", "0.86",
     "−0.60", "1,911"),
    ("seccomp checks laid out as a binary tree: the kernel installs the filter in ~80 µs instead of ~150 µs "
     "(65c3f67)", "0.85", "−0.02", "1,918"),
    ("the CLI loads libc only: no libseccomp, libmd, libm (28500bd)", "0.82", "−0.18", "1,846"),
    ("`--gc-sections` (a third less code) and packed relative relocations (5de3457)", "0.80", "−0.09", "1,372"),
    ("the supervisor gives back its start-up memory once a run lasts 50 ms (af6fe9f)", "0.80", "±0", "394"),
    ("mount points created in one system call; no frees before `_exit` after a run (e5225c3)", "0.78", "−0.13",
     "398"),
]


def write_launch_changes(add) -> None:
    add("## Launch path changes")
    add("")
    add("What each change of issue 6 bought, measured as it was made (not by this run): every commit's CLI built "
        "from the same tree and run in turn with bubblewrap, one launch of each per round, 3 × 500 rounds at quiet "
        "moments; the ratio is of the medians in the same rounds (mean of the three), the step is the change of "
        "cordon's median, and the supervisor's PSS is measured as in the memory section above.")
    add("")
    add("| change | ratio to bubblewrap (`/bin/true`) | step (ms) | supervisor PSS (kB) |")
    add("| --- | ---: | ---: | ---: |")
    for change, ratio_, step, pss in LAUNCH_PATH_CHANGES:
        add(f"| {change} | {ratio_} | {step} | {pss} |")
    add("")
    add("Tried and not kept: starting the namespaces and PID 1's first steps while the plan compiles (945d04c, "
        "reverted in 81ef69e): compile did overlap PID 1's first steps, but on this 2-vCPU machine PID 1 started "
        "late on the other vCPU and the medians did not move (only the minimum, by ~0.15 ms). Measured and not "
        "adopted: a fully static CLI (`-static-pie` started ~0.2 ms faster than the libstdc++-static build before "
        "libseccomp, libmd and libm were dropped; the variation above is what `-static` gives now), because a "
        "static glibc cannot load NSS modules, which the broker's name resolution and `getpwuid` need. Not tried: "
        "building the new root without the staging tmpfs (one `umount2` fewer, ~0.05 ms per run).")
    add("")


def write_profile_section(ctx: dict, add, L) -> None:
    prof = ctx.get("profile", {})
    var = ctx.get("variations", {})
    add("## Where the time goes")
    add("")
    add("How: `perf record` of the kernel's `raw_syscalls` and `sched` (exec, fork, exit) tracepoints while "
        f"cordon runs `/bin/true` under the default profile, {prof.get('runs', 0)} times; each phase runs from one "
        "landmark system call to the next (e.g. the supervisor's first `seccomp(2)` asks the kernel which "
        "filter actions it has, PID 1's first `mount(2)` opens the mount phase), median per phase. Tracing every system call "
        "costs a few microseconds each, so the traced total is above the untraced median; the shares are what "
        "matters. The variations below are untraced, in one hyperfine run.")
    add("")
    if "error" in prof or not prof:
        add(f"No trace: {prof.get('error', 'not run')}.")
        add("")
    else:
        total = sum(v for v in prof["phases"].values() if v is not None)
        add(f"Traced launch-to-exit: {prof['total']:.2f} ms median ({prof['syscalls']:.0f} system calls in the "
            f"supervisor and PID 1); the phase medians add up to {total:.2f} ms (a slow run is slow in different "
            "phases), and the shares are of that sum.")
        add("")
        add("| phase | where | median (ms) | share |")
        add("| --- | --- | ---: | ---: |")
        where = {"startup": "supervisor", "policy": "supervisor", "scan": "supervisor", "seccomp": "supervisor",
                 "clone": "kernel (clone3)", "pid1": "PID 1", "mounts": "PID 1", "landlock": "PID 1", "caps": "PID 1",
                 "seccomp_install": "PID 1", "fork_exec": "PID 1 → command", "command": "command",
                 "reap": "PID 1", "teardown": "kernel", "finish": "supervisor"}
        for key, desc in PHASES:
            v = prof["phases"].get(key)
            add(f"| {desc} | {where[key]} | {'—' if v is None else f'{v:.2f}'} | "
                f"{'—' if v is None or not total else f'{100 * v / total:.0f}%'} |")
        add("")
        off = prof.get("off_cpu", {})
        if off:
            add(f"Off the CPU (supervisor, PID 1 and the command, median per run): {off.get('D', 0):.2f} ms in "
                f"uninterruptible kernel waits (state D: RCU grace periods after unmounts, namespace teardown), "
                f"{off.get('R', 0):.2f} ms runnable but waiting for a core taken by other work, "
                f"{off.get('S', 0):.2f} ms asleep (mostly the supervisor in `poll` while PID 1 works, and PID 1 "
                "waiting for the command).")
            add("")
        d, n = prof["durations"], prof["counts"]
        slow = sorted(d.items(), key=lambda kv: -kv[1])[:8]
        add("Time inside system calls (supervisor and PID 1, median per run; `poll`/`read`/`wait4` are waits): " +
            ", ".join(f"`{k}` {v:.2f} ms ({n.get(k, 0):.0f}×)" for k, v in slow) + ".")
        add("")
    cpu = ctx.get("cpu", {})
    if cpu and "error" not in cpu:
        add(f"CPU, not wall time: `perf record --call-graph dwarf` at {cpu['frequency_hz']} Hz over {cpu['runs']} "
            "runs, samples of the cordon processes (supervisor, PID 1, and the command's process until it execs) "
            "attributed to the first recognised frame on their stack. This is what 50 concurrent launches on 2 "
            "cores pay for.")
        add("")
        add("| where the CPU goes | ms per run | share |")
        add("| --- | ---: | ---: |")
        for label, value in sorted(cpu["ms_per_run"].items(), key=lambda kv: -kv[1]):
            add(f"| {label} | {value:.2f} | {100 * cpu['share'][label]:.0f}% |")
        add(f"| total | {sum(cpu['ms_per_run'].values()):.2f} | |")
        add("")
    elif cpu:
        add(f"No CPU profile: {cpu['error']}.")
        add("")
    if var:
        add("Variations (untraced, one hyperfine run; median, ratio to cordon's default run):")
        add("")
        base = var.get("cordon run (workspace-write)", {}).get("median")
        base_min = var.get("cordon run (workspace-write)", {}).get("min")
        add("| variation | median (ms) | min (ms) | ratio of medians | ratio of minima |")
        add("| --- | ---: | ---: | ---: | ---: |")
        for label, r in var.items():
            add(f"| {label} | {ms(r['median'])} | {ms(r['min'])} | {ratio(r['median'], base)} | "
                f"{ratio(r['min'], base_min)} |")
        add("")
        add("<details><summary>command lines</summary>")
        add("")
        L.extend(command_block(ctx["commands"]["variations"]))
        add("")
        add("</details>")
        add("")
    findings = ctx.get("findings", [])
    if findings:
        add("What this says:")
        add("")
        for f in findings:
            add(f"- {f}")
        add("")


def findings(ctx: dict) -> list[str]:
    out = []
    prof = ctx.get("profile", {})
    var = ctx.get("variations", {})
    R = ctx["results"]["true"]
    ph = prof.get("phases", {}) if "error" not in prof else {}
    total = sum(v for v in ph.values() if v is not None)
    if ph and total:
        ranked = sorted(((k, v) for k, v in ph.items() if v is not None), key=lambda kv: -kv[1])[:4]
        names = dict(PHASES)
        out.append("Largest phases: " + "; ".join(f"{names[k].split(':')[0]} {v:.2f} ms ({100 * v / total:.0f}%)"
                                                 for k, v in ranked) + ".")
        before_clone = sum(ph.get(k) or 0 for k in ("startup", "policy", "scan", "seccomp"))
        out.append(f"Everything before `clone3` (start-up, policy, compile) is {before_clone:.2f} ms "
                   f"({100 * before_clone / total:.0f}% of the phases): work done in the caller on every launch.")
        off = prof.get("off_cpu", {})
        if off.get("D"):
            out.append(f"{off['D']:.2f} ms of each run (median) is spent blocked in the kernel (state D): "
                       "`umount2(MNT_DETACH)` and the namespace teardown can wait for an RCU grace period, which "
                       "takes longer when the other core is busy; "
                       f"{off.get('R', 0):.2f} ms is spent runnable, waiting for a core (other load on the machine).")
        um = prof["durations"].get("umount2")
        if um:
            out.append(f"`umount2(MNT_DETACH)` (detaching the old root, then the staging root: two calls) takes "
                       f"{um:.2f} ms per run (median); each can wait for an RCU grace period before the kernel frees "
                       "the detached mounts.")
        mounts = sum(prof["counts"].get(k, 0) for k in ("mount", "mount_setattr", "umount2", "pivot_root"))
        out.append(f"PID 1 makes {mounts:.0f} mount-related system calls (`mount`, `mount_setattr`, `umount2`, "
                   f"`pivot_root`) and {prof['counts'].get('newfstatat', 0):.0f} `stat`s; the supervisor "
                   f"{prof['counts'].get('readlink', 0):.0f} `readlink`s.")
    v = {k: r["median"] for k, r in var.items()}
    vmin = {k: r["min"] for k, r in var.items()}
    base = v.get("cordon run (workspace-write)")

    def both(key):
        return (f"{ratio(v[key], base)} of the default run's median time "
                f"({ratio(vmin[key], vmin.get('cordon run (workspace-write)'))} of its minimum)")
    if base and v.get("cordon --version (start-up only)") and v.get("bare /bin/true"):
        startup = v["cordon --version (start-up only)"] - v["bare /bin/true"]
        out.append(f"Starting the cordon binary at all costs {startup * 1000:.1f} ms more than `/bin/true` "
                   "(`cordon --version`): loading and relocating its shared libraries "
                   f"({ctx.get('libraries', '?')}) and static initialisation.")
    st = v.get("cordon run, the same objects linked fully static")
    if base and st:
        out.append(f"The same objects linked fully static (`-static`, no dynamic loader at all) take "
                   f"{both('cordon run, the same objects linked fully static')}; the default build loads "
                   f"{ctx.get('libraries', '?')}.")
    mn = v.get("cordon run --policy minimal.json")
    if base and mn:
        out.append("A minimal policy (workspace writable, platform defaults, no denied or protected paths, no "
                   f"repository protection) takes {both('cordon run --policy minimal.json')}: the difference is "
                   "what the default profile's masks, pins and repository protection cost (within the noise when "
                   "the two ratios disagree).")
    ro = v.get("cordon run --profile read-only")
    if base and ro:
        out.append(f"`read-only` (the host root bound read-only as a whole, fewer binds) takes "
                   f"{both('cordon run --profile read-only')}.")
    big = next((k for k in v if k.startswith("cordon run in a git work tree of")), None)
    if base and big:
        bw_big = next((r for k, r in v.items() if k.startswith("bubblewrap in the work tree")), None)
        bw = v.get("bubblewrap, same configuration as above")
        out.append(f"In a git work tree of {big.rsplit(' of ', 1)[1]}, `cordon run` takes {ms(v[big])} ms, "
                   f"{ratio(v[big], base)} of its time in the small workspace: cordon scans every writable root "
                   "for repositories before the run (compile) and again after it" + (f"; bubblewrap there: {ms(bw_big)} ms ({ratio(bw_big, bw)} of its small-"
                                       "workspace time)." if bw_big and bw else "."))
    ns = v.get("unshare: the same 7 namespaces, no mounts")
    if base and ns:
        out.append(f"Creating and tearing down the same namespaces with `unshare` and nothing else takes "
                   f"{ms(ns)} ms: the floor any namespace sandbox pays here.")
    c, b = R.get("cordon", {}).get("median"), R.get("bubblewrap", {}).get("median")
    if c and b:
        out.append(f"cordon vs bubblewrap on `/bin/true`: {ms(c)} ms vs {ms(b)} ms ({ratio(c, b)}).")
    return out


# --------------------------------------------------------------------------- compile benchmark


def compile_bench(binary: Path, reps: int, min_time: float) -> tuple[dict, str]:
    if not binary.exists():
        return {}, f"{binary} was not built"
    out = RESULTS / "compile-bench.json"
    p = run([str(binary), f"--benchmark_repetitions={reps}", "--benchmark_report_aggregates_only=true",
             f"--benchmark_min_time={min_time}", "--benchmark_format=json", f"--benchmark_out={out}",
             "--benchmark_out_format=json"], timeout=600)
    if p.returncode != 0 or not out.exists():
        return {}, f"compile benchmark failed: {p.stderr.strip()[-300:]}"
    data = json.loads(out.read_text())
    values = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median" or b.get("error_occurred"):
            continue
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        values[b["run_name"]] = b["real_time"] * scale
        values[b["run_name"] + " (cpu)"] = b["cpu_time"] * scale
    errors = [f"{b['name']}: {b.get('error_message')}" for b in data["benchmarks"] if b.get("error_occurred")]
    return values, "; ".join(errors)


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--render-only", action="store_true",
                    help="rewrite the page from the last run's results (bench/.cache/results/context.pickle)")
    ap.add_argument("--cordon", type=Path)
    ap.add_argument("--build", type=Path, help="the CMake build tree with the bench targets")
    ap.add_argument("--srt", default="", help="path of srt's CLI, empty when unavailable")
    ap.add_argument("--srt-reason", default="")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.render_only:
        with open(RESULTS / "context.pickle", "rb") as f:
            render(pickle.load(f))
        return 0
    if args.cordon is None or args.build is None:
        ap.error("--cordon and --build are required")

    quick = args.quick
    # 100 runs: the medians of tools within 10-20% of each other must not hinge on a burst of other load.
    warmup_fast, runs_fast = (1, 5) if quick else (5, 100)
    warmup_slow, runs_slow = (1, 3) if quick else (1, 10)
    memory_samples = 2 if quick else 5
    compile_reps = 3 if quick else 5
    stress_total = 100 if quick else 500
    peer_stress_total = 50 if quick else 100
    profile_runs = 3 if quick else 15

    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    if RUN.exists():
        shutil.rmtree(RUN)
    RUN.mkdir(parents=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    spawn_many = args.build / "bench" / "cordon_spawn_many"

    cordon = Cordon(args.cordon.resolve())
    tools: list[Tool] = [Bare(), cordon]
    for key, cls, exe in (("bwrap", Bwrap, "bwrap"), ("firejail", Firejail, "firejail")):
        if shutil.which(exe):
            tools.append(cls())
        else:
            t = Tool(key, "bubblewrap" if key == "bwrap" else key)
            t.available, t.reason = False, f"`{exe}` is not installed"
            tools.append(t)
    srt = Srt(Path(args.srt) if args.srt else None)
    if not args.srt:
        srt.available, srt.reason = False, args.srt_reason or "not installed"
    else:
        pkg = Path(args.srt).resolve().parent.parent / "package.json"
        srt.version = json.loads(pkg.read_text())["version"] if pkg.exists() else first_line([args.srt, "--version"])
    tools.append(srt)

    server = LoopbackServer()
    outside = RUN / "outside"
    outside.mkdir()
    ws = {t.key: make_workspace(RUN / t.key / "ws") for t in tools}
    log("confinement checks")
    for t in tools:
        if t.available:
            verify(t, ws[t.key], outside, server)
        log(f"  {t.label}: {t.status or t.reason}")
    bare = tools[0]
    if not all(bare.checks.get(k) == "ALLOWED" for k in ("etc_write", "outside_write", "tcp")):
        for t in tools[1:]:
            if t.status == "verified":
                t.status = "verified (control inconclusive: bare exec could not do everything the probe tries)"
    accepted = server.accepted

    timed = [t for t in tools if t.timed]
    commands = {
        "true": [(t.label, t.command(ws[t.key], ["/bin/true"])) for t in timed],
        "shell": [(t.label, t.command(ws[t.key], ["sh", "-c", f"ls -la {ws[t.key]} >/dev/null && "
                                                               f"cat {ws[t.key]}/data.txt >/dev/null"]))
                  for t in timed],
        "concurrent": [(t.label, [str(spawn_many), "-j", "50", "-n", "50", "--"] +
                        t.command(ws[t.key], ["/bin/true"])) for t in timed],
    }
    results = {
        "true": hyperfine("true", commands["true"], warmup_fast, runs_fast, RUN),
        "shell": hyperfine("shell", commands["shell"], warmup_fast, runs_fast, RUN),
        "concurrent": hyperfine("concurrent", commands["concurrent"], warmup_slow, runs_slow, RUN),
    }

    log("memory")
    memory = {t.key: measure_memory(t, ws[t.key], memory_samples) for t in timed}
    (RESULTS / "memory.json").write_text(json.dumps(memory, indent=1))

    log("compile benchmark")
    compile_values, compile_error = compile_bench(args.build / "bench" / "cordon_compile_bench", compile_reps,
                                                  0.2 if quick else 0.5)

    log(f"stress: cordon {stress_total} runs, 50 at a time")
    stress_results = {"cordon": stress(cordon, spawn_many, stress_total, 50)}
    for t in timed:
        if t.key not in ("bare", "cordon"):
            log(f"stress: {t.label} {peer_stress_total} runs, 50 at a time")
            stress_results[t.key] = stress(t, spawn_many, peer_stress_total, 50)
    (RESULTS / "stress.json").write_text(json.dumps(stress_results, indent=1))

    log("profile")
    profile = profile_launch(cordon, ws["cordon"], profile_runs)
    (RESULTS / "profile.json").write_text(json.dumps(profile, indent=1))
    cpu = cpu_attribution(cordon, ws["cordon"], 5 if quick else 20)
    (RESULTS / "cpu.json").write_text(json.dumps(cpu, indent=1))
    minimal = json.loads((ROOT / "profiles" / "workspace-write.json").read_text())
    minimal["name"] = "bench-minimal"
    minimal["filesystem"]["protected_read_only"] = []
    minimal["filesystem"]["denied"] = []
    minimal["filesystem"]["protect_vcs_metadata"] = False
    minimal_path = RUN / "minimal.json"
    minimal_path.write_text(json.dumps(minimal, indent=2) + "\n")
    cw = ws["cordon"]
    variations = [
        ("bare /bin/true", ["/bin/true"]),
        ("cordon --version (start-up only)", [str(cordon.binary), "--version"]),
        ("cordon run (workspace-write)", cordon.command(cw, ["/bin/true"])),
        ("cordon run --policy minimal.json", [str(cordon.binary), "run", "--policy", str(minimal_path),
                                              "--workspace", str(cw), "--", "/bin/true"]),
        ("cordon run --profile read-only", [str(cordon.binary), "run", "--profile", "read-only",
                                            "--workspace", str(cw), "--", "/bin/true"]),
    ]
    # A larger work tree: what the repository scans (before and after every run) cost as it grows.
    big = RUN / "big" / "ws"
    big_files = 2000 if quick else 20000
    (big / ".git" / "hooks").mkdir(parents=True)
    (big / ".git" / "config").write_text("[core]\n")
    (big / ".gitmodules").write_text("")
    for d in range(big_files // 20):
        sub = big / "src" / f"d{d:04d}"
        sub.mkdir(parents=True)
        for f in range(20):
            (sub / f"f{f:02d}.c").write_text("int x;\n")
    variations.append((f"cordon run in a git work tree of {big_files:,} files",
                       cordon.command(big, ["/bin/true"])))
    bwrap_tool = next((t for t in timed if t.key == "bwrap"), None)
    if bwrap_tool is not None:
        variations.append(("bubblewrap, same configuration as above", bwrap_tool.command(ws["bwrap"], ["/bin/true"])))
        variations.append((f"bubblewrap in the work tree of {big_files:,} files", bwrap_tool.command(big, ["/bin/true"])))
    relinked = relink_static(args.build)
    if relinked:
        variations.append(("cordon run, the same objects linked fully static",
                           [str(relinked), "run", "--workspace", str(cw), "--", "/bin/true"]))
    if shutil.which("unshare"):
        variations.append(("unshare: the same 7 namespaces, no mounts",
                           ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--net", "--ipc",
                            "--uts", "--cgroup", "/bin/true"]))
    commands["variations"] = variations
    try:
        var_results = hyperfine("variations", variations, warmup_fast, runs_fast, RUN)
    except RuntimeError as e:
        log(str(e))
        var_results = {}
    server.close()

    versions = {
        "cordon": f"{cordon.version} ({args.cordon})",
        "hyperfine": first_line(["hyperfine", "--version"]),
        "bubblewrap": first_line(["bwrap", "--version"]),
        "firejail": first_line(["firejail", "--version"]),
        "srt (@anthropic-ai/sandbox-runtime)": srt.version or srt.reason,
        "node": first_line(["node", "--version"]),
        "gnuplot": first_line(["gnuplot", "--version"]),
        "Google Benchmark (libbenchmark-dev)": dpkg_version("libbenchmark-dev"),
        "perf": first_line(["perf", "--version"]),
        "g++": first_line(["g++", "--version"]),
        "libseccomp (builds the seccomp programs when cordon is built)": dpkg_version("libseccomp2"),
        "cordon probe": ", ".join(x for x in json.loads(run([str(cordon.binary), "probe"]).stdout or "{}")
                                  .get("facts", []) if "landlock" in x or "namespaces" in x) or "?",
    }
    libraries = ", ".join(sorted({Path(line.split()[0]).name for line in run(["ldd", str(cordon.binary)]).stdout
                                  .splitlines() if "=>" in line and "vdso" not in line}))
    commit = run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]).stdout.strip() or "?"
    dirty = run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "include", "profiles"]).stdout.strip()
    ctx = {
        "tools": tools, "results": results, "commands": commands, "machine": machine_facts(),
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M %Z").strip(),
        "cordon_commit": commit + (" with uncommitted changes in src/" if dirty else ""),
        "load_before": load_before, "port": server.port, "accepted": accepted,
        "runs_fast": runs_fast, "warmup_fast": warmup_fast, "runs_slow": runs_slow, "warmup_slow": warmup_slow,
        "memory": memory, "memory_samples": memory_samples, "compile": compile_values,
        "compile_error": compile_error, "compile_reps": compile_reps, "stress": stress_results,
        "profile": profile, "cpu": cpu, "variations": var_results, "versions": versions, "libraries": libraries,
    }
    # What bench/layers.py reads for its side-by-side table (launch, 50 at once, compile).
    (RESULTS / "launch.json").write_text(json.dumps({"results": results, "compile": compile_values,
                                                     "compile_error": compile_error, "load_before": load_before}))
    with open(RESULTS / "context.pickle", "wb") as f:
        pickle.dump(ctx, f)
    render(ctx)
    return 0


def render(ctx: dict) -> None:
    ctx["findings"] = findings(ctx)
    ctx["chart_note"] = write_chart(ctx["tools"], ctx["results"]["true"], ctx["results"]["shell"],
                                    ctx["results"]["concurrent"])
    write_page(ctx)
    log(f"wrote {DOC.relative_to(ROOT)} and {CHART.relative_to(ROOT)}")
    print_summary(ctx)


def print_summary(ctx: dict) -> None:
    for key in ("true", "shell", "concurrent"):
        print(f"{key}: " + ", ".join(f"{k} {ms(v['median'])} ms" for k, v in ctx["results"][key].items()))
    for key, mm in ctx["memory"].items():
        if "error" not in mm:
            print(f"memory {key}: supervisor {mib(mm['supervisor_kib'])} MiB, all {mib(mm['total_kib'])} MiB")
    print("compile: " + ", ".join(f"{k} {v:.3f} ms" for k, v in ctx["compile"].items() if "(cpu)" not in k))
    for key, s in ctx["stress"].items():
        print(f"stress {key}: {s.get('total')} runs, failed {s.get('failed')}, added {len(s.get('added', []))}, "
              f"removed {len(s.get('removed', []))}, changed {len(s.get('changed', []))}")


if __name__ == "__main__":
    sys.exit(main())
