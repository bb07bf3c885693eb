"""cordon.governance over the C API (ABI 1.1): the rules decide, the approver
decides what they leave open, an approved command runs confined, and the
audit log verifies and detects tampering."""

import json
import os
from pathlib import Path

import pytest

import cordon
from cordon import governance

RULES = {
    "schema_version": 1,
    "name": "python tests",
    "rules": [
        {"id": "inspect", "reason": "inspecting is harmless", "decision": "allow",
         "actions": ["shell", "process"], "commands": ["ls", "echo", "true"]},
        {"id": "publish", "reason": "writing needs a person", "decision": "require_approval",
         "commands": ["sh", "touch"]},
        {"id": "no-delete", "reason": "deleting is not the agent's job", "decision": "deny", "commands": ["rm"]},
    ],
}


def shell(command):
    return {"schema_version": 1, "action": "shell", "risk": "low", "command": command, "tool": "bash"}


@pytest.fixture
def rules():
    return governance.Rules(RULES)


def test_rules_decide_without_running_anything(rules):
    assert rules.decide(shell("ls -l")).decision == "allow"
    denied = rules.decide(shell("ls && rm -rf ."))
    assert denied.decision == "deny"
    assert denied.rule_id == "no-delete"
    assert denied.reason == "deleting is not the agent's job"
    assert rules.decide(shell("touch x")).decision == "require_approval"
    assert denied.request_digest.startswith("sha256:") and denied.rules_digest.startswith("sha256:")


def test_bad_rules_and_requests_carry_codes_and_locations():
    with pytest.raises(cordon.PolicyError) as bad:
        governance.Rules({"schema_version": 1, "name": "x", "rules": [{"id": "a", "decison": "allow"}]})
    assert bad.value.code == "invalid_policy"
    assert bad.value.location.startswith("/rules/0")
    with pytest.raises(cordon.PolicyError) as syntax:
        governance.Rules("{not json")
    assert syntax.value.code == "parse_error"
    with pytest.raises(cordon.PolicyError) as request:
        governance.Rules(RULES).decide({"schema_version": 1, "action": "shell", "risk": "low", "comand": "ls"})
    assert request.value.code == "invalid_policy"


def test_a_denied_request_is_denied_and_nothing_runs(rules, workspace):
    r = governance.execute(rules, shell("rm -rf ./keep"), workspace=workspace)
    assert r.status == "denied"
    assert r.exit_code == 200
    assert r.report is None
    assert [e["event"] for e in r.events][:1] == ["policy.decision"]


def test_approval_needed_without_an_approver_is_denied(rules, workspace):
    r = governance.execute(rules, shell(f"touch {workspace}/made"), workspace=workspace)
    assert r.status == "denied"
    assert r.approval["decision"] == "denied"
    assert not os.path.exists(os.path.join(workspace, "made"))


def test_an_approved_request_runs_confined(rules, workspace):
    shown = []

    def approver(request):
        shown.append(request)
        return governance.approve("a person looked")

    request = {"schema_version": 1, "action": "process", "risk": "low",
               "argv": ["touch", f"{workspace}/made", "/usr/cordon-gov-test"]}
    r = governance.execute(rules, request, workspace=workspace, approver=approver)
    assert r.status == "completed", r.reason
    assert r.exit_code == 1  # touch could not make the file under /usr
    assert r.approval == {"decision": "approved", "scope": "once", "reason": "a person looked", "approver": "host"}
    assert os.path.exists(os.path.join(workspace, "made"))  # the allowed write happened
    assert not os.path.exists("/usr/cordon-gov-test")  # the write to /usr was refused
    assert r.report["controls"]["filesystem_write"]["level"] == "enforced"
    # The approver saw the compiled plan it was approving.
    levels = {c["control"]: c["level"] for c in shown[0]["sandbox"]["controls"]}
    assert levels["filesystem_write"] == "enforced"
    assert shown[0]["request_digest"] == r.request_digest


def test_an_approver_that_refuses_or_raises_denies(rules, workspace):
    r = governance.execute(rules, shell(f"touch {workspace}/made"), workspace=workspace,
                           approver=lambda _: governance.deny("not today"))
    assert (r.status, r.approval["reason"]) == ("denied", "not today")

    def broken(_):
        raise RuntimeError("approver crashed")

    r = governance.execute(rules, shell(f"touch {workspace}/made"), workspace=workspace, approver=broken)
    assert r.status == "denied"
    assert not os.path.exists(os.path.join(workspace, "made"))


def test_a_pre_approval_covers_exactly_its_digest(rules, workspace):
    # The digest is of the request as the runtime sees it: its working
    # directory filled in (the workspace when it is empty).
    request = {**shell(f"touch {workspace}/pre"), "working_directory": workspace}
    digest = rules.decide(request).request_digest
    other = governance.execute(rules, shell(f"touch {workspace}/other"), workspace=workspace, pre_approved=digest)
    assert other.status == "denied"
    r = governance.execute(rules, request, workspace=workspace, pre_approved=digest)
    assert r.status == "completed", r.reason
    assert os.path.exists(os.path.join(workspace, "pre"))


def test_the_audit_log_verifies_and_detects_tampering(rules, workspace, tmp_path):
    log = tmp_path / "audit.jsonl"
    assert governance.execute(rules, shell("true"), workspace=workspace, audit=log).status == "completed"
    governance.execute(rules, shell("rm x"), workspace=workspace, audit=log)
    governance.append_audit(log, "host", "tool.called", "ok", ids={"trace_id": "t1"}, attributes={"tool": "bash"})
    good = governance.verify_audit(log)
    assert good.ok and good.bad_line == 0
    assert good.events == len(log.read_text().splitlines())
    assert good.records[-1]["event"]["event"] == "tool.called"
    assert oct(log.stat().st_mode & 0o777) == "0o600"

    lines = log.read_text().splitlines()
    record = json.loads(lines[1])
    record["event"]["outcome"] = "allow" if record["event"]["outcome"] != "allow" else "deny"
    lines[1] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    log.write_text("\n".join(lines) + "\n")
    bad = governance.verify_audit(log)
    assert not bad.ok
    assert bad.bad_line == 2
    assert bad.events == 1
    # A sink never appends to a log it cannot vouch for, and nothing runs.
    with pytest.raises(cordon.CordonError) as refused:
        governance.append_audit(log, "host", "x", "ok")
    assert refused.value.code == "invalid_policy"
    with pytest.raises(cordon.CordonError):
        governance.execute(rules, shell(f"touch {workspace}/ran"), workspace=workspace, audit=log,
                           approver=lambda _: governance.approve("yes"))
    assert not os.path.exists(os.path.join(workspace, "ran"))


def test_a_truncated_log_is_detected(rules, workspace, tmp_path):
    log = tmp_path / "audit.jsonl"
    for _ in range(2):
        governance.append_audit(log, "host", "tick", "ok")
    text = log.read_text().splitlines()
    log.write_text(text[0] + "\n")
    v = governance.verify_audit(log)
    assert not v.ok and v.events == 1


def test_a_log_without_its_head_fails_unless_no_head_is_kept(tmp_path):
    log = tmp_path / "audit.jsonl"
    for _ in range(2):
        governance.append_audit(log, "host", "tick", "ok")
    kept = governance.verify_audit(log)
    assert kept.ok and kept.head_present and kept.head_seq == 2
    head = tmp_path / "audit.jsonl.head"
    head.rename(tmp_path / "head.kept")
    headless = governance.verify_audit(log)
    assert not headless.ok and "no head file" in headless.problem and not headless.head_present
    chain_only = governance.verify_audit(log, no_head=True)
    assert chain_only.ok and chain_only.events == 2
    key = tmp_path / "key"
    key.write_bytes(b"k" * 32)
    with pytest.raises(cordon.CordonError) as both:
        governance.verify_audit(log, no_head=True, head_key_file=key)
    assert both.value.code == "usage_error"


def test_verify_of_a_missing_log_is_an_io_error(tmp_path):
    with pytest.raises(cordon.CordonError) as missing:
        governance.verify_audit(tmp_path / "none.jsonl")
    assert missing.value.code == "io_error"
