#!/usr/bin/env python3
"""The expectations of one kernel-matrix configuration (docs/kernels.md).

Runs inside the guest as root (tests/kernels/guest-init.sh starts it). Saves
`cordon probe` and `cordon policy explain` of the built-in profiles, as root
and as the unprivileged user, and checks what this configuration must show.
Writes gtest-shaped JSON (guest_checks.<user>.<config>.kernels.json) so that
scripts/test.sh counts every check.
"""
import json
import os
import struct
import subprocess
import time

stage = os.path.dirname(os.path.abspath(__file__))
cli = os.path.join(stage, "cordon")
config = os.environ["CORDON_MATRIX_CONFIG"]
out = os.environ["CORDON_MATRIX_OUT"]
uid = int(os.environ["CORDON_MATRIX_UID"])
gid = int(os.environ["CORDON_MATRIX_GID"])
user = os.environ["CORDON_MATRIX_USER"]
delegated = os.environ["CORDON_MATRIX_DELEGATED"]
scope = delegated + "/app.slice/matrix.scope"
solo = delegated + "/app.slice/solo.scope"
profiles = ["read-only", "workspace-write", "offline"]
results = {"root": [], "unprivileged": []}


def run(who, argv, cgroup=None, timeout=300):
    """argv as root or as the user, started in `cgroup`; (status, stdout, stderr)."""
    if who == "unprivileged":
        env = ["env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/" + user, "TERM=dumb"]
        argv = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all"] + env + argv
    cgroup = cgroup or (scope if who == "unprivileged" else None)
    if cgroup:
        argv = ["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', cgroup] + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd="/tmp")
    return p.returncode, p.stdout, p.stderr


def check(who, name, ok, detail=""):
    results[who].append((name, bool(ok), detail))
    print(f"check {'PASS' if ok else 'FAIL'} {who} {name} {detail if not ok else ''}", flush=True)


def save(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


def probe(who):
    status, text, err = run(who, [cli, "probe"])
    save(f"probe.{who}.json", text)
    _, human, _ = run(who, [cli, "probe", "--human"])
    save(f"probe.{who}.txt", human)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, {"error": err}


def workspace(who):
    """A project directory the user owns (cordon refuses /tmp as a workspace)."""
    path = f"/home/{user}/ws" if who == "unprivileged" else "/root/ws"
    os.makedirs(path, exist_ok=True)
    if who == "unprivileged":
        os.chown(path, uid, gid)
    return path


def explain(who, profile, extra=()):
    status, text, err = run(who, [cli, "policy", "explain", "--profile", profile, "--workspace", workspace(who)]
                            + list(extra))
    return status, text + err


def report_run(who, argv, flags, cgroup=None):
    path = f"/tmp/report-{who}-{time.monotonic_ns()}.json"
    if who == "unprivileged":
        path = f"/home/{user}/report-{time.monotonic_ns()}.json"
    status, _, err = run(who, [cli, "run", "--profile", "workspace-write", "--workspace", workspace(who), "--report", path]
                         + flags + ["--"] + argv, cgroup=cgroup)
    try:
        with open(path) as f:
            return status, json.load(f), err
    except (OSError, ValueError):
        return status, {}, err


def leftovers():
    found = []
    for dirpath, dirnames, _ in os.walk("/sys/fs/cgroup"):
        found += [os.path.join(dirpath, d) for d in dirnames if d.startswith("cordon-")]
    return found


def save_levels(who):
    lines = []
    for profile in profiles:
        status, text = explain(who, profile)
        save(f"explain.{profile}.{who}.txt", text)
        lines.append(status)
    return lines


def common(who):
    status, p = probe(who)
    save_levels(who)
    facts = p.get("facts", [])
    if config == "nouserns":
        return status, p, facts
    check(who, "probe_available", status == 0 and p.get("available") is True, f"status {status}: {p}")
    return status, p, facts


def control(report, name):
    return report.get("controls", {}).get(name, {})


def limits_hold(who, cgroup=None, tag=""):
    """Memory, process count and CPU enforced by a cgroup, and really holding."""
    limits = ["--memory", "64M", "--max-procs", "16", "--cpu", "2", "--timeout", "120"]
    status, text = explain(who, "workspace-write", limits)
    for c in ("memory", "process_count", "cpu"):
        line = next((l for l in text.splitlines() if l.startswith(c + " ")), "")
        check(who, f"{tag}{c}_enforced_no_flags", " enforced " in line and "cgroup v2" in line, line or text[-400:])
    # Memory bomb: 512 MiB against a 64 MiB limit.
    status, r, err = report_run(who, ["python3", "-c", "b = bytearray(512 << 20); b[::4096] = b'x' * (len(b) // 4096)"],
                                ["--memory", "64M"], cgroup)
    check(who, f"{tag}memory_bomb_killed", "memory" in r.get("limits_hit", []) and r.get("exit", {}).get("signal_name") == "SIGKILL"
          and control(r, "memory").get("level") == "enforced", f"status {status} {r.get('limits_hit')} {r.get('exit')} {err[-300:]}")
    # Fork bomb: 64 sleepers against 16 processes.
    status, r, err = report_run(who, ["sh", "-c", "n=0; while [ $n -lt 64 ]; do sleep 3 & n=$((n+1)); done; wait"],
                                ["--max-procs", "16"], cgroup)
    check(who, f"{tag}fork_bomb_refused", "processes" in r.get("limits_hit", []) and control(r, "process_count").get("level") == "enforced",
          f"status {status} {r.get('limits_hit')} {err[-300:]}")
    # CPU spin: 2 s of CPU time, then the tree is killed.
    status, r, err = report_run(who, ["sh", "-c", "while :; do :; done"], ["--cpu", "2", "--timeout", "120"], cgroup)
    check(who, f"{tag}cpu_spin_killed", "cpu" in r.get("limits_hit", []) and not r.get("timeout_fired")
          and control(r, "cpu").get("level") == "enforced", f"status {status} {r.get('limits_hit')} {r.get('exit')} {err[-300:]}")
    # A run's cgroup is removed by the run or, shortly after, by its janitor;
    # nothing else removes cordon-* groups, so one still there after 10 s
    # (polled) is left behind.
    deadline = time.monotonic() + 10
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = leftovers()
    check(who, f"{tag}nothing_left_behind", not left, " ".join(left))


def shipped(who):
    status, p, facts = common(who)
    check(who, "landlock_abi_2", "landlock abi 2" in facts, str(facts))
    status, r, err = report_run(who, ["true"], [])
    fs = control(r, "filesystem_write").get("mechanism", "")
    net = control(r, "network_deny").get("mechanism", "")
    check(who, "report_names_landlock_abi_2", "landlock abi 2" in fs, fs or err[-300:])
    # ABI 2 has no TCP rules (ABI 4) and no scopes (ABI 6): nothing may claim them.
    _, offline = explain(who, "offline")
    check(who, "no_landlock_tcp_claimed", "landlock tcp" not in offline and "tcp(" not in offline
          and "landlock tcp" not in net, net)
    check(who, "no_landlock_scope_claimed", "landlock abstract-socket scope" not in offline and "scope(" not in offline,
          offline[-400:])
    if who == "unprivileged":
        limits_hold(who)
        # A scope holding cordon alone: it moves itself into a leaf and creates the run's cgroup beside it.
        limits_hold(who, solo, "own_scope_")
        left = sorted(os.listdir(solo))
        check(who, "own_scope_restored", not any(d.startswith("cordon-") for d in left)
              and open(solo + "/cgroup.subtree_control").read().strip() == "", " ".join(left))
    else:
        limits_hold(who, None, "")


def nolandlock(who):
    status, p, facts = common(who)
    check(who, "landlock_absent", any("Landlock not available" in f for f in facts), str(facts))
    _, text = explain(who, "workspace-write")
    rows = [l for l in text.splitlines() if l.startswith("filesystem_")]
    check(who, "filesystem_without_landlock", rows and not any("landlock" in l for l in rows)
          and "the mount namespace is the only filesystem layer" in text, "\n".join(rows) + text[-300:])
    status, r, err = report_run(who, ["true"], [])
    check(who, "run_says_mount_namespace_only", r.get("outcome") == "completed"
          and any("mount namespace is the only filesystem layer" in w for w in r.get("warnings", [])), err[-300:])


def landlock_in_kernel():
    """Whether this kernel runs Landlock: read from the kernel's LSM list, not from cordon."""
    try:
        with open("/sys/kernel/security/lsm") as f:
            return "landlock" in f.read().split(",")
    except OSError:
        return False


def landlock_abi():
    """The kernel's Landlock ABI, asked of the kernel itself (landlock_create_ruleset(2) with
    LANDLOCK_CREATE_RULESET_VERSION), not of cordon; 0 without Landlock."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # x86_64
    return abi if abi > 0 else 0


def container_policy(who):
    """The default profile, requiring `container` isolation: only linux-namespaces gives it.
    Written into the workspace: an enclosing bubblewrap gives the run a /tmp of its own."""
    path = os.path.join(workspace(who), "container-policy.json")
    _, text, _ = run("root", [cli, "profile", "show", "workspace-write"])
    policy = json.loads(text)
    policy["isolation"] = "container"
    with open(path, "w") as f:
        json.dump(policy, f)
    os.chmod(path, 0o644)
    return path


def closed_userns(who, cause, wrapper=(), tag=None):
    """User namespaces closed by `cause` (a sysctl, or an enclosing sandbox):
    with Landlock, `auto` runs the default profile under linux-os-sandbox and
    says why linux-namespaces could not; a policy requiring `container` is
    refused naming the cause. Without Landlock, every run is refused, typed."""
    wrapper, tag = list(wrapper), tag or cause
    if not wrapper:
        save_levels(who)
    status, text, err = run(who, wrapper + [cli, "probe"])
    save(f"probe.{tag}.{who}.json", text)
    try:
        p = json.loads(text)
    except ValueError:
        p = {}
    facts = json.dumps(p.get("facts", [])) + json.dumps(p.get("blockers", []))
    ws = workspace(who)
    if not landlock_in_kernel():
        check(who, f"{tag}_probe_unavailable", status == 1 and p.get("available") is False and cause in facts,
              text + err)
        status, _, err = run(who, wrapper + [cli, "run", "--workspace", ws, "--", "true"])
        check(who, f"{tag}_run_refused_typed", status == 125 and "backend_unavailable" in err and cause in err,
              err[-400:])
        return
    check(who, f"{tag}_probe_os_sandbox", status == 0 and p.get("available") is True
          and p.get("backend") == "linux-os-sandbox" and p.get("isolation") == "os_sandbox" and cause in facts,
          text + err)
    report = os.path.join(ws, f"report-{tag}.json")
    if os.path.exists(os.path.join(ws, "written")):
        os.remove(os.path.join(ws, "written"))
    status, _, err = run(who, wrapper + [cli, "run", "--workspace", ws, "--report", report, "--",
                                         "sh", "-c", f"echo ok > {ws}/written && ! touch /etc/cordon-probe"])
    try:
        with open(report) as f:
            r = json.load(f)
    except (OSError, ValueError):
        r = {}
    backend = r.get("backend", {})
    if landlock_abi() >= 3:
        check(who, f"{tag}_run_os_sandbox", status == 0 and r.get("outcome") == "completed"
              and backend.get("name") == "linux-os-sandbox" and os.path.exists(os.path.join(ws, "written")),
              f"status {status} {json.dumps(backend)} {err[-400:]}")
    else:  # no truncate right before ABI 3: filesystem_write is partial, the default profile needs enforced
        check(who, f"{tag}_run_refused_below_abi3", status == 125 and r.get("outcome") == "refused"
              and backend.get("name") == "linux-os-sandbox" and "enforcement_unavailable" in err
              and "filesystem_write" in err and not os.path.exists(os.path.join(ws, "written")),
              f"status {status} {json.dumps(backend)} {err[-400:]}")
    status, _, err = run(who, wrapper + [cli, "run", "--policy", container_policy(who), "--workspace", ws, "--", "true"])
    check(who, f"{tag}_container_refused_typed", status == 125 and "isolation_insufficient" in err and cause in err,
          f"status {status} {err[-400:]}")


def nouserns():
    clone = "/proc/sys/kernel/unprivileged_userns_clone"
    if os.path.exists(clone):  # Debian's own switch: the unprivileged user only
        with open(clone, "w") as f:
            f.write("0")
        closed_userns("unprivileged", "unprivileged_userns_clone")
        status, p = probe("root")
        check("root", "unprivileged_userns_clone_root_unaffected", status == 0 and p.get("available") is True
              and p.get("backend") == "linux-namespaces", str(p))
        with open(clone, "w") as f:
            f.write("1")
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    for who in ("root", "unprivileged"):
        closed_userns(who, "max_user_namespaces")


def deny_unshare_filter(path):
    """A classic-BPF seccomp program as container runtimes' default profiles
    have: unshare(2) and clone(2) with CLONE_NEWUSER fail with EPERM, clone3(2)
    with ENOSYS (x86_64). Written as struct sock_filter[] for bwrap --seccomp."""
    ld, jeq, and_, ret = 0x20, 0x15, 0x54, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    program = [
        (ld, 0, 0, 4), (jeq, 0, 7, 0xC000003E),  # seccomp_data.arch: x86_64, else allow
        (ld, 0, 0, 0), (jeq, 6, 0, 272), (jeq, 6, 0, 435), (jeq, 0, 3, 56),  # nr: unshare, clone3, clone
        (ld, 0, 0, 16), (and_, 0, 0, 0x10000000), (jeq, 1, 0, 0x10000000),  # clone's flags & CLONE_NEWUSER
        (ret, 0, 0, allow), (ret, 0, 0, eperm), (ret, 0, 0, enosys)]
    with open(path, "wb") as f:
        for code, jt, jf, k in program:
            f.write(struct.pack("<HBBI", code, jt, jf, k))


def nested(who):
    """cordon inside bubblewrap that takes user namespaces away, and under a
    seccomp filter refusing unshare: the cause named is nesting."""
    ws = workspace(who)
    binds = ["--ro-bind", "/", "/", "--bind", ws, ws, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    closed_userns(who, "nested", ["bwrap", "--unshare-user", "--disable-userns"] + binds + ["--"], "bwrap_disable_userns")
    bpf = "/tmp/deny-unshare.bpf"
    deny_unshare_filter(bpf)
    os.chmod(bpf, 0o644)
    closed_userns(who, "nested", ["sh", "-c", 'exec "$@" 3<"$0"', bpf, "bwrap", "--seccomp", "3"] + binds + ["--"],
                  "seccomp_deny_unshare")


if config == "shipped":
    for who in ("root", "unprivileged"):
        shipped(who)
        nested(who)
elif config == "nolandlock":
    for who in ("root", "unprivileged"):
        nolandlock(who)
elif config == "nouserns":
    nouserns()

for who, cases in results.items():
    if not cases:
        continue
    doc = {"tests": len(cases), "failures": sum(1 for c in cases if not c[1]), "testsuites": [{
        "name": f"KernelMatrix_{config}", "tests": len(cases),
        "testsuite": [{"name": n, "status": "RUN", "result": "COMPLETED",
                       **({"failures": [{"failure": d}]} if not ok else {})} for n, ok, d in cases]}]}
    with open(os.path.join(out, f"guest_checks.{who}.{config}.kernels.json"), "w") as f:
        json.dump(doc, f, indent=1)
