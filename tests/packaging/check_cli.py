#!/usr/bin/env python3
"""CLI conventions (docs/packaging.md, "CLI conventions"): -v, -q, --color and
NO_COLOR, profiles by name from $XDG_CONFIG_HOME/cordon/profiles/, `profile
list` with each one's origin, `policy explain` with mounts and environment.

Usage: check_cli.py CORDON. Each check runs the real CLI; confined runs use
the built-in workspace-write profile on a temporary workspace.
"""
import json
import os
import subprocess
import sys
import tempfile

cordon = sys.argv[1]
failures = []
total = 0


def run(*args, env_extra=None, cwd=None, input_text=None):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "XDG_CONFIG_HOME")}
    env.update(env_extra or {})
    return subprocess.run([cordon, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60,
                          input=input_text)


def check(name, ok, detail=""):
    global total
    total += 1
    if not ok:
        failures.append(f"{name}: {detail}")


with tempfile.TemporaryDirectory() as tmp:
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    config = os.path.join(tmp, "config")
    profiles = os.path.join(config, "cordon", "profiles")
    os.makedirs(profiles)
    xdg = {"XDG_CONFIG_HOME": config}
    builtin = json.loads(run("profile", "show", "workspace-write").stdout)

    # A user profile by name: the built-in one, renamed, with one variable set.
    mine = dict(builtin, name="mine")
    mine["environment"] = dict(builtin.get("environment", {}), set={"CORDON_CHECK": "from-user-profile"})
    with open(os.path.join(profiles, "mine.json"), "w") as f:
        json.dump(mine, f)
    # A file with a built-in name: never used instead of the built-in.
    with open(os.path.join(profiles, "read-only.json"), "w") as f:
        json.dump(dict(builtin, name="impostor"), f)

    r = run("run", "--no-summary", "--profile", "mine", "--workspace", work, "--", "/bin/sh", "-c",
            "echo $CORDON_CHECK", env_extra=xdg, cwd=work)
    check("a user profile runs by name", r.returncode == 0 and r.stdout.strip() == "from-user-profile",
          f"exit {r.returncode}, out {r.stdout!r}, err {r.stderr!r}")
    r = run("profile", "list", env_extra=xdg)
    lines = r.stdout.splitlines()
    check("profile list shows the user profile and its file",
          any(l.split()[:2] == ["mine", "user"] and os.path.join(profiles, "mine.json") in l for l in lines), r.stdout)
    check("profile list shows built-in ones as built-in",
          any(l.split()[:2] == ["workspace-write", "built-in"] for l in lines), r.stdout)
    check("profile list says a built-in name in the user directory is ignored",
          "ignored: a built-in name" in r.stdout, r.stdout)
    r = run("-q", "profile", "list", env_extra=xdg)
    check("-q profile list prints the usable names only",
          r.stdout.split() == sorted(["offline", "read-only", "workspace-write"]) + ["mine"], r.stdout)
    r = run("policy", "explain", "--profile", "read-only", "--workspace", work, env_extra=xdg)
    check("a built-in name means the built-in profile", "policy:     read-only (built-in profile read-only)" in r.stdout,
          r.stdout[:300])
    r = run("run", "--profile", "../etc/passwd", "--", "true", env_extra=xdg, cwd=work)
    check("a profile name that is a path is refused", r.returncode == 125 and "unknown_profile" in r.stderr, r.stderr)
    r = run("run", "--profile", "absent", "--", "true", env_extra=xdg, cwd=work)
    check("an unknown profile is refused, naming both directories",
          r.returncode == 125 and profiles in r.stderr and "/cordon/profiles" in r.stderr, r.stderr)
    r = run("fs", "--profile", "mine", "--workspace", work, env_extra=xdg, cwd=work, input_text="")
    check("cordon fs takes a user profile by name, as run does",
          r.returncode == 0 and r.stdout.startswith('{"report":'), f"exit {r.returncode}, out {r.stdout!r}, err {r.stderr!r}")
    r = run("profile", "show", "mine", env_extra=xdg)
    check("profile show prints a user profile", r.returncode == 0 and json.loads(r.stdout)["name"] == "mine", r.stdout)

    # -v: the decisions, before the run.
    r = run("-v", "run", "--no-summary", "--workspace", work, "--", "true", cwd=work)
    err = r.stderr
    check("-v run exits with the command's status", r.returncode == 0, err)
    check("-v names the policy's source", "cordon: verbose: policy workspace-write from built-in profile workspace-write" in err, err[:400])
    check("-v names the workspace and why", f"cordon: verbose: workspace {work} (--workspace)" in err, err[:400])
    check("-v lists the controls", "cordon: verbose: control filesystem_read: " in err, err[:400])
    check("-v lists the mounts", "cordon: verbose: mount " in err, err[:400])
    check("-v lists the environment", "cordon: verbose: environment HOME  (set by the policy)" in err, err[:600])
    r = run("run", "-v", "--no-summary", "--workspace", work, "--", "true", cwd=work)
    check("-v after the subcommand too", "cordon: verbose: mount " in r.stderr, r.stderr[:300])
    r = run("run", "--workspace", work, "--", "true", cwd=work)
    check("without -v nothing verbose", "verbose" not in r.stderr, r.stderr)
    r = run("-q", "run", "--summary", "--workspace", work, "--", "true", cwd=work)
    check("-q with an explicit --summary still summarizes", "cordon: summary:" in r.stderr, r.stderr)
    r = run("-v", "-q", "probe")
    check("-v and -q together are a usage error", r.returncode == 125, r.stderr)

    # Colour: never on a pipe unless asked; NO_COLOR only wins over auto.
    r = run("--color=always", "run", "--profile", "absent", "--", "true", cwd=work)
    check("--color=always paints the error code", "\033[31munknown_profile\033[0m" in r.stderr, repr(r.stderr))
    r = run("--color", "always", "run", "--profile", "absent", "--", "true", env_extra={"NO_COLOR": "1"}, cwd=work)
    check("--color always (two words) beats NO_COLOR", "\033[31m" in r.stderr, repr(r.stderr))
    r = run("run", "--profile", "absent", "--", "true", cwd=work)
    check("auto on a pipe: no colour", "\033[" not in r.stderr, repr(r.stderr))
    r = run("--color=never", "run", "--profile", "absent", "--", "true", cwd=work)
    check("--color=never: no colour", "\033[" not in r.stderr, repr(r.stderr))
    r = run("--color=sometimes", "probe")
    check("--color takes auto, always or never only", r.returncode == 125, r.stderr)
    r = run("--color", "always", "run", "--workspace", work, "sh", "-c", "echo two words", cwd=work)
    check("--color WHEN before run keeps the command's own options", r.stdout.strip() == "two words", r.stderr)

    # policy explain: mounts and environment.
    r = run("policy", "explain", "--workspace", work, "--setenv", "GREETING=hi")
    check("policy explain lists the mounts", "\nmounts (in the order they are made):\n  " in r.stdout, r.stdout[-800:])
    check("policy explain lists the environment", "GREETING  (set by the policy)" in r.stdout, r.stdout[-800:])
    check("policy explain prints no values of the environment", "=hi" not in r.stdout, r.stdout[-800:])

for f in failures:
    print(f"check_cli: FAILED: {f}")
print(f"check_cli: {total - len(failures)} of {total} checks passed")
sys.exit(1 if failures else 0)
