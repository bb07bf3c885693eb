"""The scripted agent session of tests/agent_session/scenario.json (issue 34,
acceptance 1) through governance.tool_call: explore, a failing test suite,
an edit, the suite passing, an install through the filtered network to a
loopback stand-in registry after approval, a commit; a push the approver
declines and a delete the rules deny. Every step's decision, exit and output,
and the audit log (it verifies, one decision per step), are checked."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import cordon
from cordon import governance

FIXTURE = Path(os.environ.get("CORDON_AGENT_SESSION") or Path(__file__).resolve().parents[3] / "tests" / "agent_session")


@pytest.fixture
def registry():
    scenario = json.loads((FIXTURE / "scenario.json").read_text())
    argv = [a.replace("{fixture}", str(FIXTURE)) for a in scenario["server"]["argv"]]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (...)"
        yield int(line.split(scenario["server"]["port_after"])[1].split()[0])
    finally:
        server.kill()
        server.wait()


def test_scripted_agent_session(workspace, registry, tmp_path):
    scenario = json.loads((FIXTURE / "scenario.json").read_text())
    port = registry
    for name, text in scenario["files"].items():
        Path(workspace, name).write_text(text)
    for argv in scenario["setup"]:
        subprocess.run(argv, cwd=workspace, check=True)
    policy = json.loads(cordon.profile_json("workspace-write"))
    policy["network"] = json.loads(json.dumps(scenario["network"]).replace('"{port}"', str(port)))
    rules = governance.Rules(scenario["rules"])
    audit = tmp_path / "audit.jsonl"
    for step in scenario["steps"]:
        command = step["command"].replace("{port}", str(port))
        shown = []

        def approver(request, step=step):
            shown.append(request)
            return step["approver"]

        r = governance.tool_call(rules, {"schema_version": 1, "action": "shell", "risk": "low", "command": command,
                                         "tool": "bash", "trace_id": step["name"]},
                                 workspace=workspace, policy=policy, approver=approver, audit=audit,
                                 session_id="agent-session", timeout=60)
        expect = step["expect"]
        where = f"{step['name']}: {r.status} {r.reason} {r.stderr.data!r}"
        assert r.decision.decision == expect["decision"], where
        assert r.status == expect["status"], where
        assert r.exit_code == expect["exit_code"], where
        for text in expect.get("stdout_contains", []):
            assert text.encode() in r.stdout.data, where + f" stdout {r.stdout.data!r}"
        if "approval" in expect:
            assert len(shown) == 1, where
            assert shown[0]["request"]["command"] == command  # the approver saw this request...
            assert shown[0]["sandbox"]["controls"]  # ...and the compiled plan
            assert r.approval["decision"] == expect["approval"], where
        else:
            assert not shown, where
    check_audit(scenario, governance.verify_audit(audit))
    for name, text in scenario["after"]["file_contains"].items():
        assert text in Path(workspace, name).read_text()
    log = scenario["after"]["host_git_log"]
    assert subprocess.run(log["argv"], cwd=workspace, check=True, capture_output=True, text=True).stdout == log["stdout"]


def check_audit(scenario, verified):
    """The log verifies; one policy.decision per step, in order, with its
    decision; one approval per approver answer; one run.completed per step
    that ran."""
    assert verified.ok, verified.problem
    events = [r["event"] for r in verified.records]
    steps = scenario["steps"]
    assert [e["outcome"] for e in events if e["event"] == "policy.decision"] == [s["expect"]["decision"] for s in steps]
    assert [e["outcome"] for e in events if e["event"] == "approval"] == \
        [s["expect"]["approval"] for s in steps if "approval" in s["expect"]]
    ran = [s for s in steps if s["expect"]["status"] == "completed"]
    assert len([e for e in events if e["event"] == "run.completed"]) == len(ran)
