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

    # The tool-use call: output captured and capped, stdin, a timeout, a pool.
    r = governance.tool_call(rules, {"action": "shell", "command": "npm test"},
                             workspace=ws, timeout=120, max_output=256 * 1024)
    r.exit_code, r.stdout.data, r.stdout.dropped

Needs libcordon_c ABI 1.1 (cordon_rules_*, cordon_governance_execute,
cordon_audit_*: include/cordon/cordon_c.h); tool_call and Ledger need 1.3.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from . import _lib
from ._core import CordonError, UsageError, _check, env_entries, policy_text
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
    context = _context(workspace, policy, pre_approved, audit, session_id, backend, env)
    failure: List[BaseException] = []
    callback = _approver_callback(approver, failure)
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib.cordon_governance_execute(rules._handle, _text(request), json.dumps(context).encode(), callback,
                                         None, ctypes.byref(out), ctypes.byref(error))
    _check(code, error)
    d = json.loads(take_string(out.value) or "{}")
    if failure and isinstance(failure[0], (KeyboardInterrupt, SystemExit)):
        raise failure[0]
    return ExecutionResult(*_result_fields(d))


def _context(workspace: Optional[str], policy: Union[str, Mapping[str, Any], None], pre_approved: Optional[str],
             audit: Optional[Union[str, "os.PathLike[str]"]], session_id: Optional[str], backend: Optional[str],
             env: Optional[Mapping[str, str]], shortcuts: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The context_json of cordon_governance_execute / _tool_call."""
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
    if shortcuts is not None:
        context["shortcuts"] = dict(shortcuts)
    if env is not None:
        env_entries(env, "/env")  # a NUL is refused here, with the variable's name
        context["environment"] = [f"{k}={v}" for k, v in env.items()]
    return context


def _approver_callback(approver: Optional[Approver], failure: List[BaseException]) -> Any:
    """The C approver for a Python one; an exception it raises is kept in
    `failure` (and is a denial)."""

    def call(_user: Any, shown: bytes, out: int, capacity: int) -> int:
        try:
            answer = approver(json.loads(shown.decode("utf-8", "replace"))) if approver else None
            data = json.dumps(dict(answer or {})).encode()
            if len(data) >= capacity:
                return -2
            ctypes.memmove(out, data + b"\0", len(data) + 1)
            return 0
        except BaseException as e:  # noqa: B902 - an approver that raises denies; re-raised by the caller
            failure.append(e)
            return -1

    return _lib.APPROVER_FN(call) if approver is not None else _lib.APPROVER_FN()


def _result_fields(d: Mapping[str, Any]) -> List[Any]:
    return [d["status"], d["reason"], d["exit_code"], d["run_id"], Decision.from_dict(
        {**d["decision"], "request_digest": d["request_digest"], "rules_digest": d["rules_digest"]}),
        d["approval"], d["request_digest"], d["sandbox_policy_digest"], d["report"], d.get("events")]


class Ledger:
    """The grants approvers gave with scope "session" or "workspace"
    (cordon_ledger_*): pass one ledger to every tool_call() of a session and
    an approval covers the same request again. One thread at a time."""

    def __init__(self) -> None:
        self._handle = ctypes.c_void_p(_lib.require_minor(_lib.ABI_MINOR_TOOL_CALL, "cordon.governance.Ledger")
                                       .cordon_ledger_new())
        if not self._handle.value:
            raise MemoryError("cordon_ledger_new")

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and handle.value and _lib._lib is not None:
            _lib._lib.cordon_ledger_free(handle)
            handle.value = None


@dataclass
class Captured:
    """One stream as the host kept it: the head and the tail within
    max_output; `dropped` bytes fell between them, at offset `dropped_at`."""

    data: bytes
    total: int  # bytes the command wrote
    dropped: int
    dropped_at: int

    @property
    def truncated(self) -> bool:
        return self.dropped > 0


@dataclass
class ToolResult(ExecutionResult):
    """How one tool call ended (cordon_governance_tool_call): an
    ExecutionResult with the captured output."""

    stdout: Captured = field(default_factory=lambda: Captured(b"", 0, 0, 0))
    stderr: Captured = field(default_factory=lambda: Captured(b"", 0, 0, 0))
    pooled: bool = False  # it started in a sandbox of the pool
    warnings: List[str] = field(default_factory=list)
    # What the sandbox refused or hid that the output may not explain, one
    # "[cordon] ..." line each (violations, view diagnoses): show them to the model.
    sandbox_notes: List[str] = field(default_factory=list)


def _captured(d: Mapping[str, Any]) -> Captured:
    return Captured(base64.b64decode(d["base64"]), d["bytes"], d["dropped"], d["dropped_at"])


def tool_call(rules: Rules, request: RequestLike, *, workspace: Optional[str] = None,
              policy: Union[str, Mapping[str, Any], None] = None, approver: Optional[Approver] = None,
              pre_approved: Optional[str] = None, audit: Optional[Union[str, "os.PathLike[str]"]] = None,
              session_id: Optional[str] = None, backend: Optional[str] = None,
              env: Optional[Mapping[str, str]] = None, stdin: Union[bytes, str, None] = None,
              timeout: Optional[float] = None, max_output: Optional[int] = None,
              on_output: Optional[Callable[[int, bytes], None]] = None, pool: Optional[Any] = None,
              ledger: Optional[Ledger] = None, extra_env: Optional[Mapping[str, str]] = None,
              shortcuts: Optional[Mapping[str, Any]] = None) -> ToolResult:
    """The tool-use call: execute()'s steps (rules, an approver shown the
    compiled plan, every step audited) with the command's output captured.

    stdin: bytes (or str, UTF-8) the command reads, then end of file.
    timeout: seconds; the tree is killed, .status "timed_out", .exit_code 124.
    max_output: bytes kept per stream (the first and the last half; default
      1 MiB); .stdout.dropped says how much fell between them.
    on_output: called with (stream, bytes), stream 1 stdout or 2 stderr, for
      every chunk as it is read (before the cap), on this thread.
    pool: a cordon.Pool; used when its plan is the one compiled for this
      request (same policy and workspace), else the command starts cold and
      .warnings says why.
    ledger: a Ledger that keeps session and workspace grants across calls.
    extra_env: variables for this call only, added to the environment the
      policy chooses from; one the policy drops is named in .warnings. Values
      may be bytes (passed unchanged); a NUL in a name or value raises
      UsageError (location "/extra_env/NAME"), as in env ("/env/NAME").
    shortcuts: the CLI's shortcut flags applied to the policy, same meaning
      (cordon._core.Shortcuts: ro, rw, deny, allow_hosts, env, setenv,
      allow_local_binding, caches, git_identity).
    The other arguments are execute()'s. The command always runs confined: a
    request backend selection would run on the host is "rejected". Raises
    what execute() raises; OSError when libcordon_c is older than ABI 1.3."""
    lib = _lib.require_minor(_lib.ABI_MINOR_TOOL_CALL, "cordon.governance.tool_call")
    context = _context(workspace, policy, pre_approved, audit, session_id, backend, env, shortcuts)
    failure: List[BaseException] = []
    callback = _approver_callback(approver, failure)
    data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
    io = _lib.ToolIo()
    io.stdin_data = data
    io.stdin_size = len(data)
    if timeout is not None:
        io.timeout_ms = max(1, int(round(timeout * 1000)))
    if max_output is not None:
        if max_output <= 0:
            raise UsageError("usage_error", "max_output is a positive number of bytes", "/max_output")
        io.max_output = max_output

    def output(_user: Any, stream: int, chunk: Any, size: int) -> None:
        try:
            on_output(stream, ctypes.string_at(chunk, size))  # type: ignore[misc]
        except BaseException as e:  # noqa: B902 - kept, re-raised after the call
            failure.append(e)

    io.on_output = _lib.OUTPUT_FN(output) if on_output is not None else _lib.OUTPUT_FN()
    if ledger is not None:
        io.ledger = ledger._handle.value
    entries = env_entries(extra_env or {}, "/extra_env")
    environment = (ctypes.c_char_p * (len(entries) + 1))(*entries, None)
    io.environment = ctypes.cast(environment, ctypes.POINTER(ctypes.c_char_p))
    out, error = ctypes.c_void_p(), ctypes.c_void_p()

    def call(pool_handle: Optional[int]) -> int:
        io.pool = pool_handle
        return lib.cordon_governance_tool_call(rules._handle, _text(request), json.dumps(context).encode(),
                                               ctypes.byref(io), callback, None, ctypes.byref(out),
                                               ctypes.byref(error))

    if pool is not None:
        with pool._using() as handle:
            code = call(handle.value)
    else:
        code = call(None)
    _check(code, error)
    d = json.loads(take_string(out.value) or "{}")
    if failure and isinstance(failure[0], (KeyboardInterrupt, SystemExit)):
        raise failure[0]
    return ToolResult(*_result_fields(d), stdout=_captured(d["stdout"]), stderr=_captured(d["stderr"]),
                      pooled=d["pooled"], warnings=list(d["warnings"]),
                      sandbox_notes=list(d.get("sandbox_notes", [])))


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
    the first bad line (1-based, 0 when ok) and its problem; whether the head
    file exists, whether its MAC verified under the key given, and the
    record it names."""

    ok: bool
    events: int
    bad_line: int
    problem: str
    last_hash: str
    interrupted_runs: List[str]
    records: List[Dict[str, Any]]
    head_present: bool = False
    head_keyed: bool = False
    head_seq: int = 0


def verify_audit(path: Union[str, "os.PathLike[str]"], *, no_head: bool = False,
                 head_key_file: Optional[Union[str, "os.PathLike[str]"]] = None) -> AuditVerification:
    """Checks a log's hash chain and head (`cordon audit verify`): edited,
    removed, inserted, reordered and truncated records are found. A log with
    records and no head file does not verify (ok False: its last records
    could have been cut with nothing to show it) unless `no_head` says that
    no head is kept (the chain alone is verified). `head_key_file`: the head
    must carry a MAC under the key this file holds (`--head-key-file`). A
    bad log is a result (ok False); raises CordonError (io_error when the
    log or the key cannot be read, usage_error for no_head with a key)."""
    lib = require_minor(_lib.ABI_MINOR_AUDIT_OPTIONS, "cordon.governance.verify_audit")
    options: Dict[str, Any] = {"no_head": bool(no_head)}
    if head_key_file is not None:
        options["head_key_file"] = os.fspath(head_key_file)
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    _check(lib.cordon_audit_verify_with(os.fspath(path).encode(), json.dumps(options).encode(), ctypes.byref(out),
                                        ctypes.byref(error)), error)
    d = json.loads(take_string(out.value) or "{}")
    return AuditVerification(d["ok"], d["events"], d["bad_line"], d["problem"], d["last_hash"],
                             d["interrupted_runs"], d["records"], d.get("head_present", False),
                             d.get("head_keyed", False), d.get("head_seq", 0))


__all__ = ["Rules", "Decision", "ExecutionResult", "ToolResult", "Captured", "Ledger", "AuditVerification", "execute",
           "tool_call", "approve", "deny",
           "append_audit", "verify_audit", "CordonError", "DECISIONS", "STATUSES"]
