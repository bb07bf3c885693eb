"""The governance runtime (docs/governance.md, docs/python.md): capability
rules decide a request (allow / deny / require_approval), an approver decides
what the rules leave to one, an allowed command runs confined, and every step
is audited to a tamper-evident log.

    from cordon import governance
    rules = governance.Rules.load("rules.json")
    rules.decide({"action": "shell", "command": "git status"}).decision   # "allow"
    result = governance.execute(rules, request, workspace="/path/to/ws",
                                approver=lambda shown: governance.approve("checked"),
                                audit="audit.jsonl")
    governance.verify_audit("audit.jsonl").ok

Needs libcordon_c ABI 1.1 (cordon_rules_*, cordon_governance_execute,
cordon_audit_*: include/cordon/cordon_c.h).
"""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from . import _lib
from ._core import CordonError, _check, policy_text
from ._lib import require_minor, take_string

RequestLike = Union[str, Mapping[str, Any]]
"""A capability request: JSON text or a dict ("$defs/request" of
schemas/capability_rules.v1.schema.json)."""

Approver = Callable[[Dict[str, Any]], Mapping[str, Any]]
"""Called with the approval request (a dict: "request", "request_digest",
"policy", "plan_levels", ...); returns a decision dict: "decision"
("approved", "denied", "manual_review"), "scope" ("once", "session",
"workspace"), "reason". An exception is a denial."""

DECISIONS = ("allow", "deny", "require_approval")
STATUSES = ("completed", "authorized", "denied", "rejected", "refused", "failed", "cancelled", "timed_out")


def _lib_1() -> ctypes.CDLL:
    return require_minor(_lib.ABI_MINOR_GOVERNANCE, "cordon.governance")


def _text(value: Union[str, Mapping[str, Any]]) -> bytes:
    return (value if isinstance(value, str) else json.dumps(value)).encode()


@dataclass(frozen=True)
class Decision:
    """What the rules say about a request (cordon_rules_decide)."""

    decision: str  # "allow", "deny" or "require_approval"
    reason: str
    rule_id: str
    request_digest: str  # "sha256:...": what a pre-approval names
    rules_digest: str
    parts: List[Dict[str, str]] = field(default_factory=list)
    uncertain: List[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Decision":
        return cls(d["decision"], d["reason"], d["rule_id"], d.get("request_digest", ""), d.get("rules_digest", ""),
                   list(d.get("parts", [])), list(d.get("uncertain", [])))


class Rules:
    """Capability rules (a rules file's JSON, checked strictly and with its
    examples run). Immutable; share it between threads."""

    def __init__(self, rules: Union[str, Mapping[str, Any]]):
        """rules: JSON text or a dict. Raises PolicyError (parse_error,
        invalid_policy with .location)."""
        lib = _lib_1()
        self._handle = ctypes.c_void_p()
        error = ctypes.c_void_p()
        _check(lib.cordon_rules_load(_text(rules), ctypes.byref(self._handle), ctypes.byref(error)), error)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Rules":
        """Reads a rules file. Raises OSError, PolicyError."""
        with open(path, encoding="utf-8") as f:
            return cls(f.read())

    def decide(self, request: RequestLike) -> Decision:
        """Judges a request without running anything. Raises PolicyError for
        a malformed request (.location is its JSON pointer)."""
        out, error = ctypes.c_void_p(), ctypes.c_void_p()
        _check(_lib_1().cordon_rules_decide(self._handle, _text(request), ctypes.byref(out), ctypes.byref(error)),
               error)
        return Decision.from_dict(json.loads(take_string(out.value) or "{}"))

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and handle.value and _lib._lib is not None:
            _lib._lib.cordon_rules_free(handle)
            handle.value = None


def approve(reason: str, scope: str = "once") -> Dict[str, str]:
    """An approver's "approved" answer."""
    return {"decision": "approved", "scope": scope, "reason": reason}


def deny(reason: str) -> Dict[str, str]:
    """An approver's "denied" answer."""
    return {"decision": "denied", "scope": "once", "reason": reason}


@dataclass
class ExecutionResult:
    """How one request ended (cordon_governance_execute)."""

    status: str  # one of STATUSES
    reason: str
    exit_code: int  # `cordon exec`'s: the command's, 128+N, 124-127, 200 denied, 201 rejected
    run_id: str
    decision: Decision
    approval: Optional[Dict[str, str]]  # {"decision", "scope", "reason", "approver"} when one was asked
    request_digest: str
    sandbox_policy_digest: str
    report: Optional[Dict[str, Any]]  # the sandbox's run report, when there is one
    events: Optional[List[Dict[str, Any]]]  # the audit events, when no audit file was given


def execute(rules: Rules, request: RequestLike, *, workspace: Optional[str] = None,
            policy: Union[str, Mapping[str, Any], None] = None, approver: Optional[Approver] = None,
            pre_approved: Optional[str] = None, audit: Optional[Union[str, "os.PathLike[str]"]] = None,
            session_id: Optional[str] = None, backend: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None) -> ExecutionResult:
    """Runs one request through the governance runtime; blocks until it is
    decided and, when allowed, has run (the command inherits this process's
    stdin, stdout and stderr).

    workspace: the directory {workspace} names (default: the current one).
    policy: the sandbox policy: a profile name, JSON text or a dict (default
      workspace-write).
    approver: called for a require_approval request (see Approver); None:
      such a request is denied unless pre-approved.
    pre_approved: a request digest (Decision.request_digest) approved
      beforehand: that request, and only that one, is approved once. Decide
      the request with its "working_directory" set (an empty one becomes the
      workspace before the runtime takes the digest).
    audit: a tamper-evident log (JSON Lines) the events are appended to;
      without it they are returned in .events.
    backend: "auto", "require" or "forbid" (backend selection).
    env: the host environment the policy may pass through (default os.environ).

    A denial, a rejection or a failed command is a result (see .status).
    Raises PolicyError (a malformed request or policy), CordonError
    (io_error, invalid_policy: an audit log that cannot be opened or does not
    verify, and then nothing runs), UsageError."""
    lib = _lib_1()
    context: Dict[str, Any] = {}
    if workspace is not None:
        context["workspace"] = os.fspath(workspace)
    if policy is not None:
        context["policy"] = json.loads(policy_text(policy))
    if pre_approved is not None:
        context["pre_approved"] = pre_approved
    if audit is not None:
        context["audit"] = os.fspath(audit)
    if session_id is not None:
        context["session_id"] = session_id
    if backend is not None:
        context["backend"] = backend
    if env is not None:
        context["environment"] = [f"{k}={v}" for k, v in env.items()]
    failure: List[BaseException] = []

    def call(_user: Any, shown: bytes, out: int, capacity: int) -> int:
        try:
            answer = approver(json.loads(shown.decode("utf-8", "replace"))) if approver else None
            data = json.dumps(dict(answer or {})).encode()
            if len(data) >= capacity:
                return -2
            ctypes.memmove(out, data + b"\0", len(data) + 1)
            return 0
        except BaseException as e:  # noqa: B902 - an approver that raises denies; re-raised below
            failure.append(e)
            return -1

    callback = _lib.APPROVER_FN(call) if approver is not None else _lib.APPROVER_FN()
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.cordon_governance_execute(rules._handle, _text(request), json.dumps(context).encode(), callback,
                                         None, ctypes.byref(out), ctypes.byref(error))
    _check(code, error)
    d = json.loads(take_string(out.value) or "{}")
    if failure and isinstance(failure[0], (KeyboardInterrupt, SystemExit)):
        raise failure[0]
    return ExecutionResult(d["status"], d["reason"], d["exit_code"], d["run_id"], Decision.from_dict(
        {**d["decision"], "request_digest": d["request_digest"], "rules_digest": d["rules_digest"]}),
        d["approval"], d["request_digest"], d["sandbox_policy_digest"], d["report"], d.get("events"))


def append_audit(path: Union[str, "os.PathLike[str]"], module: str, event: str, outcome: str, *,
                 ids: Optional[Mapping[str, str]] = None, attributes: Optional[Mapping[str, str]] = None,
                 elapsed_ms: int = 0) -> None:
    """Appends one event to a tamper-evident audit log (created 0600) and
    makes it durable. Raises CordonError: io_error, invalid_policy (the log
    does not verify: nothing is appended), usage_error."""
    event_json = {"module": module, "event": event, "outcome": outcome, "ids": dict(ids or {}),
                  "attributes": dict(attributes or {}), "elapsed_ms": elapsed_ms}
    error = ctypes.c_void_p()
    _check(_lib_1().cordon_audit_append(os.fspath(path).encode(), json.dumps(event_json).encode(),
                                        ctypes.byref(error)), error)


@dataclass(frozen=True)
class AuditVerification:
    """What verify_audit found: ok, how many records verified from the start,
    the first bad line (1-based, 0 when ok) and its problem."""

    ok: bool
    events: int
    bad_line: int
    problem: str
    last_hash: str
    interrupted_runs: List[str]
    records: List[Dict[str, Any]]


def verify_audit(path: Union[str, "os.PathLike[str]"]) -> AuditVerification:
    """Checks a log's hash chain and head (`cordon audit verify`): edited,
    removed, inserted, reordered and truncated records are found. A bad log
    is a result (ok False); raises CordonError (io_error) when it cannot be
    read."""
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    _check(_lib_1().cordon_audit_verify(os.fspath(path).encode(), ctypes.byref(out), ctypes.byref(error)), error)
    d = json.loads(take_string(out.value) or "{}")
    return AuditVerification(d["ok"], d["events"], d["bad_line"], d["problem"], d["last_hash"],
                             d["interrupted_runs"], d["records"])


__all__ = ["Rules", "Decision", "ExecutionResult", "AuditVerification", "execute", "approve", "deny",
           "append_audit", "verify_audit", "CordonError", "DECISIONS", "STATUSES"]
