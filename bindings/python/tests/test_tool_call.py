"""cordon.governance.tool_call over the C API (ABI 1.3): output captured with
a cap, stdin, a timeout that is exit 124, a pool, session grants through a
Ledger, every step audited."""

import os
import resource

import pytest

import cordon
from cordon import governance

RULES = {
    "schema_version": 1,
    "name": "python tool-call tests",
    "rules": [
        {"id": "inspect", "reason": "harmless", "decision": "allow", "actions": ["shell", "process"],
         "commands": ["cat", "echo", "printf", "yes", "sleep", "exit"]},
        {"id": "ask-touch", "reason": "touch asks first", "decision": "require_approval", "commands": ["touch"]},
        {"id": "no-delete", "reason": "deleting is not the agent's job", "decision": "deny", "commands": ["rm"]},
    ],
}


def shell(command):
    return {"schema_version": 1, "action": "shell", "risk": "low", "command": command, "tool": "bash"}


@pytest.fixture
def rules():
    return governance.Rules(RULES)


def test_stdin_bytes_in_and_output_bytes_out(rules, workspace):
    data = b"one\n\xff\x00two\n"
    r = governance.tool_call(rules, shell("cat; echo err >&2; exit 4"), workspace=workspace, stdin=data)
    assert r.status == "completed", r.reason
    assert r.exit_code == 4
    assert r.stdout.data == data
    assert r.stderr.data == b"err\n"
    assert not r.stdout.truncated
    assert r.report["output"]["stdout"]["bytes"] == len(data)
    names = [e["event"] for e in r.events]
    assert names[-1] == "run.completed"
    assert r.events[-1]["attributes"]["stdout_bytes"] == str(len(data))


def test_a_per_call_variable_the_policy_drops_is_a_warning(rules, workspace):
    r = governance.tool_call(rules, shell('echo "$TZ/${CI-unset}"'), workspace=workspace,
                             extra_env={"TZ": "UTC0", "CI": "1"})
    assert r.status == "completed", r.reason
    assert r.stdout.data == b"UTC0/unset\n"
    assert len(r.warnings) == 1 and "variable CI was given" in r.warnings[0]


def test_endless_output_is_capped_and_times_out_with_124(rules, workspace):
    r = governance.tool_call(rules, shell("yes"), workspace=workspace, timeout=1.5, max_output=8192)
    assert r.status == "timed_out", r.reason
    assert r.exit_code == 124
    assert len(r.stdout.data) == 8192
    assert r.stdout.dropped > 0 and r.stdout.total == 8192 + r.stdout.dropped
    assert r.stdout.data.startswith(b"y\ny\n") and r.stdout.data.endswith(b"y\ny\n")
    assert r.report["outcome"] == "timed_out"
    assert r.report["output"]["stdout"]["dropped"] == r.stdout.dropped
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 100 * 1024  # KiB: under 100 MiB


def test_on_output_sees_every_chunk(rules, workspace):
    seen = []
    r = governance.tool_call(rules, shell("printf 0123456789"), workspace=workspace, max_output=4,
                             on_output=lambda stream, chunk: seen.append((stream, chunk)))
    assert r.status == "completed", r.reason
    assert b"".join(c for s, c in seen if s == 1) == b"0123456789"
    assert r.stdout.data == b"0189" and r.stdout.dropped == 6 and r.stdout.dropped_at == 2


def test_denied_and_a_session_grant_through_a_ledger(rules, workspace):
    denied = governance.tool_call(rules, shell("rm -rf " + workspace), workspace=workspace)
    assert denied.status == "denied" and denied.exit_code == 200
    assert os.path.isdir(workspace)
    calls = []

    def approver(shown):
        calls.append(shown)
        return governance.approve("fine for this session", scope="session")

    ledger = governance.Ledger()
    request = shell("touch " + workspace + "/made")
    for _ in range(2):
        r = governance.tool_call(rules, request, workspace=workspace, approver=approver, ledger=ledger,
                                 session_id="s1")
        assert r.status == "completed", r.reason
    assert len(calls) == 1  # the grant covered the second call
    assert calls[0]["sandbox"]["controls"]  # the approver saw the compiled plan
    assert os.path.exists(workspace + "/made")


def test_a_pool_is_used_and_its_timeout_is_124(rules, workspace):
    with cordon.Pool("workspace-write", workspace=workspace, size=1) as pool:
        r = governance.tool_call(rules, shell("echo pooled"), workspace=workspace, pool=pool)
        assert r.status == "completed", r.reason
        assert r.pooled, r.warnings
        assert r.stdout.data == b"pooled\n"
        slow = governance.tool_call(rules, shell("sleep 30"), workspace=workspace, pool=pool, timeout=0.3)
        assert slow.status == "timed_out" and slow.exit_code == 124 and slow.pooled


def test_bytes_pass_unchanged_and_a_nul_is_refused(rules, workspace):
    # The per-call environment and run()'s arguments carry bytes that are not UTF-8, unchanged (issue 34).
    r = governance.tool_call(rules, shell('printf %s "$TZ"'), workspace=workspace, extra_env={"TZ": b"U\xff0"})
    assert r.status == "completed", r.reason
    assert r.stdout.data == b"U\xff0"
    ran = cordon.run("workspace-write", ["printf", "%s", b"f\xff.txt"], workspace=workspace)
    assert ran.exit_code == 0, ran.stderr
    assert ran.stdout == b"f\xff.txt"
    # A NUL cannot be in a C string: refused with where it was, never cut short.
    with pytest.raises(cordon.PolicyError) as e:
        governance.tool_call(rules, shell("echo a\0b"), workspace=workspace)
    assert e.value.code == "invalid_policy" and e.value.location == "/command"
    with pytest.raises(cordon.UsageError) as e:
        governance.tool_call(rules, shell("echo x"), workspace=workspace, extra_env={"TZ": "a\0b"})
    assert e.value.location == "/extra_env/TZ" and "NUL" in str(e.value)
    with pytest.raises(cordon.UsageError) as e:
        governance.tool_call(rules, shell("echo x"), workspace=workspace, env={"PATH": "/bin\0/x"})
    assert e.value.location == "/env/PATH"
    with pytest.raises(cordon.UsageError) as e:
        cordon.run("workspace-write", ["echo", b"a\0b"], workspace=workspace)
    assert e.value.location == "/argv/1"


def test_shortcuts_mean_what_the_cli_flags_mean(rules, workspace, outside):
    # --rw PATH: a directory outside the workspace becomes writable; without it the write fails.
    target = os.path.join(outside, "made-by-rw")
    plain = cordon.run("workspace-write", ["sh", "-c", f"echo x > {target}"], workspace=workspace)
    assert plain.exit_code != 0 and not os.path.exists(target)
    r = cordon.run("workspace-write", ["sh", "-c", f'echo "$CORDON_SHORTCUT" > {target}'], workspace=workspace,
                   shortcuts={"rw": [outside], "setenv": {"CORDON_SHORTCUT": "set"}})
    assert r.exit_code == 0, r.stderr
    with open(target) as f:
        assert f.read() == "set\n"
    # The same through the tool-use call's context, and through compile().
    t = governance.tool_call(rules, shell('printf %s "$CORDON_SHORTCUT"'), workspace=workspace,
                             shortcuts={"setenv": {"CORDON_SHORTCUT": "tool"}})
    assert t.stdout.data == b"tool", t.reason
    explained = cordon.compile("workspace-write", workspace=workspace,
                               shortcuts={"allow_hosts": ["example.org:443"]}).explain()
    assert explained["compiles"]
    with pytest.raises(cordon.UsageError) as e:
        cordon.compile("workspace-write", workspace=workspace, shortcuts={"rw": ["/does/not/exist"]})
    assert "does not exist" in str(e.value)
    with pytest.raises(cordon.UsageError) as e:
        governance.tool_call(rules, shell("echo x"), workspace=workspace, shortcuts={"bogus": []})
    assert e.value.location == "/shortcuts/bogus"


def test_a_refused_connect_is_a_sandbox_note_and_a_clean_run_has_none(workspace):
    # The lines cordon mcp adds to a shell result (docs/governance.md, "The tool-use call").
    python_rules = governance.Rules({"schema_version": 1, "name": "notes", "rules": [
        {"id": "py", "reason": "tests", "decision": "allow", "actions": ["shell", "process"],
         "commands": ["python3", "echo"]}]})
    r = governance.tool_call(python_rules, shell(
        "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)\""), workspace=workspace)
    assert r.status == "completed", r.reason
    assert r.exit_code != 0
    assert r.sandbox_notes, r.report
    assert r.sandbox_notes[0].startswith("[cordon] blocked by the sandbox: network_connect 192.0.2.1:80 (x")
    assert r.sandbox_notes[0].endswith("the policy refuses it, retrying will not help")
    clean = governance.tool_call(python_rules, shell("echo fine"), workspace=workspace)
    assert clean.stdout.data == b"fine\n" and clean.sandbox_notes == []


def test_pool_and_worker_take_shortcuts_and_a_plan_refuses_them(workspace, outside):
    # --setenv through a pool's compile: the variable reaches a pooled command.
    with cordon.Pool("workspace-write", workspace=workspace, size=1,
                     shortcuts={"setenv": {"CORDON_SHORTCUT": "pooled"}}) as pool:
        r = pool.run(["sh", "-c", 'printf %s "$CORDON_SHORTCUT"'], cwd=workspace)
        assert r.exit_code == 0, r.stderr
        assert r.stdout == b"pooled"
    with cordon.Pool("workspace-write", workspace=workspace, size=1) as pool:
        r = pool.run(["sh", "-c", 'printf %s "${CORDON_SHORTCUT-unset}"'], cwd=workspace)
        assert r.stdout == b"unset"
    with pytest.raises(cordon.UsageError) as e:
        cordon.Pool("workspace-write", workspace=workspace, size=1, shortcuts={"bogus": []})
    assert e.value.location == "/shortcuts/bogus"
    plan = cordon.compile("workspace-write", workspace=workspace)
    with pytest.raises(TypeError, match="shortcuts"):
        cordon.Pool(plan, size=1, shortcuts={"setenv": {"X": "1"}})
    with pytest.raises(TypeError, match="shortcuts"):
        cordon.run(plan, ["true"], shortcuts={"setenv": {"X": "1"}})
    # --rw PATH through the file worker: a write outside the workspace is refused without it and done with it.
    target = os.path.join(outside, "by-worker")
    with cordon.fs.Worker(workspace) as plain:
        with pytest.raises(cordon.fs.FsError):
            plain.write(target, "x")
    assert not os.path.exists(target)
    with cordon.fs.Worker(workspace, shortcuts={"rw": [outside]}) as worker:
        worker.write(target, "written\n")
    with open(target) as f:
        assert f.read() == "written\n"
    with pytest.raises(cordon.UsageError) as e:
        cordon.fs.Worker(workspace, shortcuts={"bogus": []})
    assert e.value.location == "/shortcuts/bogus"


def test_git_config_in_a_protected_repository_says_read_only_and_is_a_sandbox_note(workspace):
    # .git/config is read-only (protect_vcs_metadata); git replaces it by a rename, which
    # the kernel refuses with EBUSY; the sandbox answers EROFS and reports the path.
    import subprocess
    subprocess.run(["git", "init", "-q", workspace], check=True)
    git_rules = governance.Rules({"schema_version": 1, "name": "git", "rules": [
        {"id": "git", "reason": "tests", "decision": "allow", "actions": ["shell", "process"], "commands": ["git"]}]})
    r = governance.tool_call(git_rules, shell("git config user.name someone"), workspace=workspace)
    assert r.status == "completed", r.reason
    assert r.exit_code != 0
    assert b"could not write config file .git/config: Read-only file system" in r.stderr.data, r.stderr.data
    assert b"busy" not in r.stderr.data
    config = os.path.join(workspace, ".git", "config")
    assert r.sandbox_notes == [f"[cordon] blocked by the sandbox: protected_write {config} (x1); the policy refuses "
                               "it, retrying will not help"], r.report["violations"]
    # The repository's own work goes on: a commit renames its lock files without a note.
    ok = governance.tool_call(git_rules, shell("git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x"),
                              workspace=workspace)
    assert ok.exit_code == 0, ok.stderr.data
    assert ok.sandbox_notes == []
