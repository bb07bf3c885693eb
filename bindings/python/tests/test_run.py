"""cordon.run(), compile, explain, probe and the errors: real confined runs."""

import json
from pathlib import Path

import pytest

import cordon
from conftest import PYTHON

# Tries to create each path; prints "OK" or the errno name, one line each.
WRITER = ("import os, sys, errno\n"
          "for p in sys.argv[1:]:\n"
          "    try:\n"
          "        os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)); print('OK')\n"
          "    except OSError as e:\n"
          "        print(errno.errorcode[e.errno])\n")


def test_probe_and_version(available):
    assert available["backend"] == "linux-namespaces"
    assert "filesystem_write" in available["best"]
    assert cordon.library_version().count(".") == 2


def test_allowed_write_works_forbidden_fail_with_errno(workspace, outside):
    inside, elsewhere = f"{workspace}/made-inside", f"{outside}/made-outside"
    r = cordon.run("workspace-write", [PYTHON, "-c", WRITER, inside, elsewhere, "/etc/cordon-py-probe"], cwd=workspace)
    assert r.exit_code == 0, r.stderr
    # Creating a file in /etc meets the read-only mount (EROFS) before any permission check, for every user.
    assert r.stdout.decode().split() == ["OK", "ENOENT", "EROFS"]
    assert Path(inside).exists()
    assert not Path(elsewhere).exists()
    assert r.report["outcome"] == "completed"
    assert r.report["controls"]["filesystem_write"]["level"] == "enforced"
    assert r.ran and r.error is None and not r.cancelled


def test_denied_read_is_eacces(workspace):
    r = cordon.run("workspace-write", ["/bin/cat", "/etc/shadow"], cwd=workspace)
    assert r.exit_code == 1
    assert b"Permission denied" in r.stderr


def test_stdin_env_and_cwd(workspace):
    sub = Path(workspace, "sub")
    sub.mkdir()
    r = cordon.run("workspace-write", ["/bin/sh", "-c", "pwd; tr a-z A-Z"], cwd=str(sub), workspace=workspace,
                   stdin="hello\n")
    assert r.stdout == f"{sub}\nHELLO\n".encode()
    given = Path(workspace, "given.txt")
    given.write_text("from a file\n")
    with open(given) as f:
        assert cordon.run("workspace-write", ["/bin/cat"], cwd=workspace, stdin=f).stdout == b"from a file\n"
    # The policy decides what reaches the command: workspace-write passes no secrets.
    r = cordon.run("workspace-write", ["/bin/sh", "-c", "echo ${CORDON_PY_SECRET:-unset}"], cwd=workspace,
                   env={"PATH": "/usr/bin:/bin", "CORDON_PY_SECRET": "s3cret"}, stdin=cordon.DEVNULL)
    assert r.stdout == b"unset\n"
    assert "CORDON_PY_SECRET" not in r.report["environment"]["names"]


def test_timeout_is_the_policy_timeout(workspace):
    r = cordon.run("workspace-write", ["/bin/sleep", "30"], cwd=workspace, timeout=0.3)
    assert r.exit_code == 124 and r.timed_out
    assert r.report["timeout_fired"] is True
    assert r.report["controls"]["timeout"]["level"] == "enforced"


def test_plan_reuse_and_host_deadline(workspace):
    plan = cordon.compile("workspace-write", workspace=workspace)
    assert plan.explain()["compiles"] is True
    assert cordon.run(plan, ["/bin/true"]).exit_code == 0
    r = cordon.run(plan, ["/bin/sleep", "30"], timeout=0.3)
    assert r.timed_out and r.cancelled and r.exit_code == 137


def test_command_not_found_is_a_result(workspace):
    r = cordon.run("workspace-write", ["no-such-command-cordon"], cwd=workspace)
    assert r.exit_code == 127 and not r.ran
    assert r.error is not None and r.error.code == "command_not_found"
    assert r.report["outcome"] == "launch_failed"


def test_refusal_raises_with_typed_blockers(workspace):
    # Gate 3: the profile asks for an OS sandbox; host execution gives none.
    with pytest.raises(cordon.RefusedError) as caught:
        cordon.compile("workspace-write", workspace=workspace, sandbox="forbid")
    e = caught.value
    assert e.code == "isolation_insufficient"
    assert e.blockers == [cordon.Blocker("isolation", "isolation", "os_sandbox", "none", e.blockers[0].reason)]
    # Gate 4: with isolation "none" accepted, each required control is a blocker.
    policy = json.loads(cordon.profile_json("workspace-write"))
    policy["isolation"] = "none"
    with pytest.raises(cordon.RefusedError) as caught:
        cordon.compile(policy, workspace=workspace, sandbox="forbid")
    e = caught.value
    assert e.code == "enforcement_unavailable"
    write = [b for b in e.blockers if b.control == "filesystem_write"]
    assert write == [cordon.Blocker("control", "filesystem_write", "enforced", "not_enforced", write[0].reason)]
    explained = cordon.explain(policy, workspace=workspace, sandbox="forbid")
    assert explained["compiles"] is False and explained["error"]["code"] == "enforcement_unavailable"


def test_policy_errors_carry_locations():
    with pytest.raises(cordon.PolicyError) as caught:
        cordon.compile({"schema_version": 1, "filesystem": {"raed": "all"}})
    assert caught.value.code == "invalid_policy"
    assert caught.value.location == "/filesystem/raed"
    assert caught.value.errors[0]["location"] == "/filesystem/raed"
    with pytest.raises(cordon.PolicyError) as caught:
        cordon.compile("{not json")
    assert caught.value.code == "parse_error" and caught.value.location == "line 1, column 3"
    with pytest.raises(cordon.PolicyError) as caught:
        cordon.compile("no-such-profile")
    assert caught.value.code == "unknown_profile"
    with pytest.raises(cordon.UsageError):
        cordon.compile("workspace-write", sandbox="sometimes")
    with pytest.raises(TypeError):
        cordon.run("workspace-write", "echo hi", cwd="/var/tmp")


def test_explain_matches_the_run(workspace):
    explained = cordon.explain("read-only", workspace=workspace)
    assert explained["compiles"] is True
    r = cordon.run("read-only", ["/bin/true"], cwd=workspace)
    for control, status in explained["controls"].items():
        assert r.report["controls"][control]["level"] == status["level"], control
    assert json.loads(cordon.profile_json("read-only"))["name"] == "read-only"


def test_the_message_alone_names_the_first_error_and_the_first_blocker(workspace):
    # A model that reads only str(e) learns what to change (docs/python.md, "Errors").
    with pytest.raises(cordon.PolicyError) as caught:
        cordon.compile({"schema_version": 1, "filesystem": {"raed": "all", "wirte": 1}, "bogus": 2})
    assert len(caught.value.errors) == 3
    assert str(caught.value) == 'invalid_policy: unknown field "raed" (at /filesystem/raed) (and 2 more in .errors)'
    with pytest.raises(cordon.PolicyError) as caught:
        cordon.compile({"schema_version": 1, "filesystem": {"raed": "all"}})
    assert str(caught.value) == 'invalid_policy: unknown field "raed" (at /filesystem/raed)'
    policy = json.loads(cordon.profile_json("workspace-write"))
    policy["isolation"] = "none"
    with pytest.raises(cordon.RefusedError) as caught:
        cordon.compile(policy, workspace=workspace, sandbox="forbid")
    e = caught.value
    first = e.blockers[0]
    assert f"; first blocker: {first.control}: {first.reason} (requires {first.required}, this host gives " \
           f"{first.available})" in str(e)
    assert str(e).endswith(f"(and {len(e.blockers) - 1} more in .blockers)")
    # A CordonError built by hand with an error that differs from its message names it.
    made = cordon.CordonError("invalid_policy", "the policy is invalid", "", 0,
                              [{"location": "/network/mode", "reason": "unknown mode"}])
    assert str(made) == "invalid_policy: the policy is invalid; first error: invalid_policy at /network/mode: unknown mode"
