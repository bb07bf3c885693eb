#!/usr/bin/env python3
"""Counts the kernel matrix's results and regenerates docs/kernels.md.

Reads what each guest wrote (scripts/kernel-matrix.sh's runs directory: one
subdirectory per configuration with gtest JSON, `cordon probe --human` and
`cordon policy explain` texts), prints the counts, copies the JSON into
--results for scripts/test.sh's summary, and writes --docs. Exit status 1 when
a test failed or a configuration left no results.
"""
import argparse
import glob
import json
import os
import shutil

CONFIGS = {
    "shipped": "Debian 12's kernel as it ships: its CONFIG_LSM already starts with landlock, so nothing is "
               "added to the command line (Landlock ABI 2); cgroup v2 unified, with a subtree delegated to the "
               "unprivileged user as systemd delegates user@UID.service",
    "nolandlock": "The same kernel booted with `lsm=lockdown,yama,loadpin,safesetid,integrity,apparmor,selinux,"
                  "smack,tomoyo,bpf` (Debian's list without landlock)",
    "nouserns": "The same kernel with user namespaces disabled by sysctl from the guest's init: Debian's "
                "`kernel.unprivileged_userns_clone=0`, then `user.max_user_namespaces=0`",
}
# What guest_checks.py checks in each configuration (besides probe_available).
EXPECTATIONS = {
    "shipped": [
        "`cordon probe` says `landlock abi 2`, and a run's report names `landlock abi 2` in the filesystem "
        "mechanisms; no control claims Landlock TCP rules (ABI 4) or scopes (ABI 6): network_deny rests on the "
        "network namespace and seccomp, and in filtered mode seccomp's connect(2) check refuses what Landlock's "
        "TCP bind rule would have (the escape suite shows `tcp-local connect EACCES` instead of `bind EACCES`)",
        "with the host's network (`network.mode: unrestricted`) nothing separates the host's abstract sockets "
        "before ABI 6: the escape suite connects to one, and `unix_sockets` (partial) says so",
        "memory, process_count and cpu `enforced` by cgroup v2 with no flags, as root (below the hierarchy's "
        "root) and as the user (beside its scope in `app.slice`, and in a scope of its own through a leaf); a "
        "512 MiB memory bomb is killed at 64 MiB (`limits_hit: memory`), 64 sleepers meet a 16-process "
        "ceiling (`limits_hit: processes`), a CPU spin is killed after 2 s of CPU (`limits_hit: cpu`); no "
        "`cordon-*` cgroup is left afterwards and the own scope's `cgroup.subtree_control` is empty again",
        "nested: inside `bwrap --unshare-user --disable-userns`, and under a seccomp filter refusing unshare(2) "
        "and clone(2) with CLONE_NEWUSER (EPERM) and clone3(2) (ENOSYS) as container runtimes' default "
        "profiles do, `cordon probe` says `nested: ...` in its facts and its blocker, and `cordon run` is "
        "refused with `backend_unavailable` naming the missing facility",
    ],
    "nolandlock": [
        "`cordon probe` says Landlock is not available; filesystem_read, filesystem_write and filesystem_deny "
        "stay `enforced` with the mount namespace as their only mechanism and say so (`Landlock not "
        "available: the mount namespace is the only layer`); every run repeats the warning. No control of the "
        "policy language rests on Landlock alone (the mount namespace carries every filesystem rule), so no "
        "policy is refused for lack of Landlock; the filesystem escapes are refused without it",
    ],
    "nouserns": [
        "Debian's own switch first, `kernel.unprivileged_userns_clone=0`: for the user linux-namespaces is "
        "unavailable (blocker naming the sysctl) and linux-os-sandbox is chosen; root is unaffected",
        "then `user.max_user_namespaces=0`: root and the user both get linux-os-sandbox, the namespace "
        "backend's blocker naming `user.max_user_namespaces=0`; below Landlock ABI 3 the default profile is "
        "refused, typed (`filesystem_write` partial); no raw errno reaches the user",
        "the escape suite's filesystem, process and network classes against linux-os-sandbox, as root and as "
        "the user (per backend, above)",
    ],
}
PROFILES = ["read-only", "workspace-write", "offline"]
WHO = ["root", "unprivileged"]


def counts(path):
    data = json.load(open(path))
    p = f = s = 0
    failed = []
    for suite in data.get("testsuites", []):
        for case in suite.get("testsuite", []):
            if case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                s += 1
            elif case.get("failures"):
                f += 1
                # The first lines of each failure's message: the guest's log is gone with CI's results.
                why = " | ".join(" ".join(str(x.get("failure", "")).split())[:300] for x in case["failures"][:3])
                failed.append(f"{suite.get('name')}.{case.get('name')}: {why}")
            else:
                p += 1
    return p, f, s, failed


def levels(text):
    """{control: level} from `cordon policy explain` output."""
    rows = {}
    in_table = False
    for line in text.splitlines():
        if line.startswith("CONTROL "):
            in_table = True
            continue
        if in_table:
            if not line.strip():
                break
            words = line.split()
            if words and not line.startswith(" "):
                rows[words[0]] = words[1]
    return rows


def read(path):
    try:
        return open(path).read()
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--accel", required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--results")
    ap.add_argument("--docs")
    ap.add_argument("configs", nargs="+")
    args = ap.parse_args()

    status = 0
    total = [0, 0, 0]
    sections = []
    for config in args.configs:
        d = os.path.join(args.runs, config)
        files = sorted(glob.glob(os.path.join(d, "*.kernels.json")))
        if not os.path.exists(os.path.join(d, "done")) or not files:
            print(f"kernel-matrix: {config}: no results")
            status = 1
        rows = []
        for path in files:
            p, f, s, failed = counts(path)
            total[0] += p
            total[1] += f
            total[2] += s
            name = os.path.basename(path)[: -len(".kernels.json")]
            rows.append((name, p, f, s, failed))
            print(f"kernel-matrix: {config}: {name}: {p} passed, {f} failed, {s} skipped"
                  + ("".join("\n    FAILED " + x for x in failed)))
            if f:
                status = 1
            if args.results:
                shutil.copy(path, os.path.join(args.results, os.path.basename(path)))
                # The guest's log beside each JSON: gtest's JSON has no skip
                # message, and scripts/test.sh reads the reasons from the log.
                log = os.path.join(d, "guest.log")
                if os.path.exists(log):
                    shutil.copy(log, os.path.join(args.results, os.path.basename(path)[: -len(".json")] + ".log"))
        sections.append((config, d, rows))
    print(f"kernel-matrix: {total[0]} passed, {total[1]} failed, {total[2]} skipped in {args.seconds} s")

    if args.docs:
        write_docs(args, sections, total)
    return status


def write_docs(args, sections, total):
    out = ["# The kernel matrix", "",
           "Regenerated by `scripts/kernel-matrix.sh` (do not edit): each configuration boots Debian 12's own",
           f"kernel ({args.kernel}, package `linux-image-amd64`) in QEMU (`-accel {args.accel}`) with this host's",
           "`/` shared read-only over virtio-9p; a busybox initramfs loads the virtio-9p modules and",
           "`tests/kernels/guest-init.sh` (PID 1) mounts proc, sysfs, devtmpfs, cgroup2 and tmpfs, adds the",
           "unprivileged user (`cordon-test`), delegates it a cgroup v2 subtree as systemd does",
           "(`user.slice/user-UID.slice/user@UID.service` owned by the user with its `cgroup.procs`,",
           "`cgroup.subtree_control` and `cgroup.threads`; memory, pids and cpu enabled from the root down; the",
           "user's programs in `app.slice/*.scope`), then runs `tests/kernels/guest_checks.py` (the",
           "expectations of the configuration, as root and as the user), then once, as the user, the escape",
           "classes that depend on the kernel and the integration tests of `tests/kernels/integration-filter`.",
           "",
           "How cordon finds a delegated cgroup v2 subtree without `--cgroup-parent` (src/linux/cgroups.h):",
           "beside its own cgroup when the parent is delegated to the caller with the controllers enabled",
           "(systemd's `app.slice`); below its own cgroup when that is delegated and holds only cordon (a scope",
           "made for it: cordon moves itself into `cordon-PID-leaf` first, because of the no-internal-processes",
           "rule, and moves back afterwards); below the hierarchy's root for root there. Root elsewhere passes",
           "`--cgroup-parent` (ownership cannot show a delegation to root).",
           "",
           "What runs where: `shipped` runs the checks, the escape classes that depend on the kernel",
           "(filesystem, network, filtered network, Unix sockets, kernel interfaces, resources, cgroup",
           "namespace, killed-tree CPU, devices, core dumps, bind race; the classes decided in cordon's own",
           "code run on the host only) except two tests that bound",
           "a run's wall time under a 1 s or 3 s timeout, which TCG misses",
           "(`EscapeResources.ForkBombIsKilledWithItsTreeAtTheTimeout`, and from the next run on",
           "`EscapeResources.CpuSpinIsKilledAtTheTimeout`, which missed its 3 s bound by 0.6 s as root in the",
           "run below), and the integration tests of the controls but",
           "two with wall-clock bounds TCG misses: `Limits.CpuTimeOfTheTreeIsCapped` (2.5 s for 1 s of CPU",
           "shared by two spinners, missed by 0.03 s; the checks' CPU spin shows the limit holding) and",
           "`ProcessTree.TimeoutKillsTheWholeTreePromptlyAndIsReported` (a shell must print within a 1 s",
           "timeout), and two soaks that alone took 11 minutes in the",
           "guest: `Limits.NothingIsLeftBehindAfter200RunsEndingEveryWay` (the checks look for leftover",
           "cgroups after every limit) and `Violations.AHostileLoopCannotGrowTheReportWithoutBound`",
           f"(`{read(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'integration-filter')).strip()}`);",
           "`nolandlock` the checks and the filesystem escapes (`EscapeFilesystem*`), the only layer that",
           "changes; `nouserns` the checks, then the escape suite against `linux-os-sandbox` (below).",
           "",
           "Per backend:",
           "",
           "| backend | where | escape classes | as |",
           "| --- | --- | --- | --- |",
           "| `linux-namespaces` | `shipped` guest (6.1, Landlock ABI 2); `nolandlock` guest (filesystem only); "
           "the host (ABI 7): CTest `escape` | the list above | the user in the guest (root too with "
           "`CORDON_MATRIX_WHO`); root and `cordon-test` on the host |",
           "| `linux-os-sandbox` | `nouserns` guest (6.1, ABI 2, `user.max_user_namespaces=0`), forced with "
           "`CORDON_LINUX_BACKEND=os-sandbox` and accepting `filesystem_write=partial` (`CORDON_TEST_ACCEPT`: "
           "ABI 2 has no truncate right, so the default profile is refused otherwise); the host (ABI 7): "
           "CTest `escape_os_sandbox` | filesystem, process (`EscapeKernel*`, `OsSandbox*`) and network "
           "(`EscapeNetwork*`, `OsSandbox.Filtered*`): `EscapeFilesystem*:EscapeKernel*:EscapeNetwork*:OsSandbox*` | "
           "root and the user in the guest; root and `cordon-test` on the host (scripts/test.sh) |",
           "",
           "Each `linux-os-sandbox` probe expects the level its run's report claims at that ABI "
           "(docs/linux-backend.md, \"Without namespaces\"): at ABI 2 `filesystem_write` is `partial` "
           "(accepted), there are no Landlock TCP rules (denied: seccomp refuses IP sockets, `socket "
           "EAFNOSUPPORT` as at ABI 7; filtered: refused, `enforcement_unavailable` with a `network_filter` "
           "blocker), and no signal or abstract-socket scope (the `privilege` detail and `unix_sockets` say "
           "so, and the process probes expect the caller's processes to be signalable).",
           "",
           "`/dev/kvm` exists on this machine type and opens, but a guest under `-accel kvm` never gets past",
           "the BIOS: the matrix uses TCG (software emulation, `CORDON_MATRIX_ACCEL=kvm` to try again).",
           "What was measured (a Firecracker guest, kernel 6.18, AMD EPYC; /proc/cpuinfo lists neither vmx",
           "nor svm): QEMU under KVM warns that the host lacks CPUID.01H:ECX.pni (SSE3), so this KVM offers a",
           "reduced CPU; `-machine microvm` with the bzImage prints \"Probing EDD ... ok\" and nothing more in",
           "25 s (with `edd=off`: nothing); the PVH entry (the uncompressed vmlinux, started in 32-bit",
           "protected mode, no real mode at all) prints nothing in 25-40 s under microvm and q35 alike; q35",
           "shows SeaBIOS and iPXE, then stops; `kernel-irqchip=off` aborts. So the stall is not in real mode:",
           "it comes at or after the switch to paging and long mode, in the nested virtualization itself.",
           "TCG on a loaded host needs `no_timer_check` on the kernel command line (else: \"IO-APIC + timer",
           "doesn't work\" panic).",
           "",
           f"Last run: {total[0]} passed, {total[1]} failed, {total[2]} skipped; the guests took {args.seconds} s.",
           ""]
    for config, d, rows in sections:
        seconds = read(os.path.join(d, "seconds")).strip() or "?"
        out += [f"## {config}", "", CONFIGS[config] + ".", "", "Checked:", ""]
        out += [f"- {e}." for e in EXPECTATIONS[config]]
        out += ["", f"Guest time: {seconds} s.", "",
                "| results | passed | failed | skipped |", "| --- | --- | --- | --- |"]
        for name, p, f, s, failed in rows:
            out.append(f"| {name} | {p} | {f} | {s} |")
        for name, p, f, s, failed in rows:
            for x in failed:
                out.append(f"\nFailed in {name}: `{x}`")
        out.append("")
        for who in WHO:
            probe = read(os.path.join(d, f"probe.{who}.txt")).rstrip()
            if not probe:
                continue
            out += [f"### `cordon probe --human` as {who}", "", "```", probe, "```", ""]
        for who in WHO:
            tables = {p: levels(read(os.path.join(d, f"explain.{p}.{who}.txt"))) for p in PROFILES}
            controls = list(next((t for t in tables.values() if t), {}).keys())
            if not controls:
                refusal = read(os.path.join(d, f"explain.workspace-write.{who}.txt")).strip()
                if refusal:
                    out += [f"### Built-in profiles as {who}", "", "Every profile is refused:", "", "```",
                            refusal, "```", ""]
                continue
            out += [f"### Levels under the built-in profiles as {who}", "",
                    "| control | " + " | ".join(PROFILES) + " |", "| --- |" + " --- |" * len(PROFILES)]
            for c in controls:
                out.append(f"| {c} | " + " | ".join(tables[p].get(c, "refused") for p in PROFILES) + " |")
            out.append("")
    with open(args.docs, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
