#!/usr/bin/env python3
"""The host's declaration of what it offers, read from the kernel without
cordon's code, for tests to hold cordon's answers against (CORDON_EXPECT).

Prints one line, comma-separated KEY=VALUE:
  landlock=N    the Landlock ABI that landlock_create_ruleset(NULL, 0,
                LANDLOCK_CREATE_RULESET_VERSION) returns here (0: none), and
                whether /sys/kernel/security/lsm lists landlock (lsm_landlock=0|1)
  cgroup=V      2 (unified: /sys/fs/cgroup is cgroup2), hybrid (cgroup v1 with
                v2 at /sys/fs/cgroup/unified) or 1
  userns=0|1    an unprivileged user may create a user namespace: the sysctls
                user.max_user_namespaces > 0, kernel.unprivileged_userns_clone
                and kernel.apparmor_restrict_unprivileged_userns where present
  kvm=0|1       /dev/kvm opens read-write

Tests read it with tests/support/host_expect.h; scripts/test.sh exports it
and tests/kernels/guest-init.sh computes it again inside each guest.
Usage: scripts/host-expect.py
"""
import ctypes
import os

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on x86_64 and the generic table (aarch64)
LANDLOCK_CREATE_RULESET_VERSION = 1


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def landlock_abi():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(abi), 0)


def cgroup_version():
    mounts = [line.split() for line in read("/proc/self/mounts").splitlines()]
    types = {m[1]: m[2] for m in mounts if len(m) > 2}
    if types.get("/sys/fs/cgroup") == "cgroup2":
        return "2"
    if types.get("/sys/fs/cgroup/unified") == "cgroup2":
        return "hybrid"
    return "1"


def user_namespaces():
    if int(read("/proc/sys/user/max_user_namespaces", "0") or 0) <= 0:
        return 0
    if read("/proc/sys/kernel/unprivileged_userns_clone", "1") == "0":
        return 0
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0") == "1":
        return 0
    return 1


def kvm():
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC))
        return 1
    except OSError:
        return 0


lsm = read("/sys/kernel/security/lsm", "unknown").split(",")
facts = {
    "landlock": landlock_abi(),
    "lsm_landlock": "unknown" if lsm == ["unknown"] else int("landlock" in lsm),
    "cgroup": cgroup_version(),
    "userns": user_namespaces(),
    "kvm": kvm(),
}
print(",".join(f"{k}={v}" for k, v in facts.items()))
