"""Errors, plans and run handles over the C API (docs/python.md)."""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _lib
from ._lib import lib, take_string

PolicyLike = Union[str, Mapping[str, Any], "Plan"]
"""A built-in profile name ("workspace-write"), policy JSON text, a policy
dict (schemas/policy.v1.schema.json), or a compiled Plan."""


@dataclass(frozen=True)
class Blocker:
    """Why a compile was refused (docs/errors.md): subject is "control",
    "backend" or "isolation"; control the control's name (or the subject);
    required and available are levels."""

    subject: str
    control: str
    required: str
    available: str
    reason: str


class CordonError(Exception):
    """An error with a stable code (docs/errors.md): code ("invalid_policy",
    "enforcement_unavailable", ...), message, location (JSON pointer or
    "line L, column C"), errno, errors (every policy problem:
    [{"location", "reason"}]) and blockers (why a compile was refused)."""

    def __init__(self, code: str, message: str, location: str = "", errno: int = 0,
                 errors: Optional[List[Dict[str, str]]] = None, blockers: Optional[List[Blocker]] = None):
        super().__init__(_summary(code, message, location, errors or [], blockers or []))
        self.code = code
        self.message = message
        self.location = location
        self.errno = errno
        self.errors = errors or []
        self.blockers = blockers or []

    @classmethod
    def from_json(cls, text: Optional[str], fallback_code: int = 0) -> "CordonError":
        if not text:
            name = lib().cordon_error_code_name(fallback_code)
            return _error_class(name.decode() if name else "launch_failed")(
                name.decode() if name else "launch_failed", "the library gave no details")
        j = json.loads(text)
        blockers = [Blocker(b["subject"], b["control"], b["required"], b["available"], b["reason"])
                    for b in j.get("blockers", [])]
        return _error_class(j["code"])(j["code"], j.get("message", ""), j.get("location", ""),
                                       j.get("errno", 0), j.get("errors", []), blockers)


def _summary(code: str, message: str, location: str, errors: List[Dict[str, str]], blockers: List[Blocker]) -> str:
    """str(e): the code, message and location, then the first policy error
    (its code, location and reason) and the first blocker (its control,
    reason and levels), each with how many more there are, so that a reader
    of the message alone knows what to change (docs/python.md, "Errors")."""
    # The message of several policy errors lists them all, one a line: the
    # first line is the first, the rest are counted (e.errors has them).
    head = message.split("\n", 1)[0]
    text = f"{code}: {head}" + (f" (at {location})" if location else "")
    if errors:
        first = errors[0]
        where, reason = first.get("location", ""), first.get("reason", "")
        if reason and (reason != head or where != location):
            text += f"; first error: {code}" + (f" at {where}" if where else "") + f": {reason}"
        if len(errors) > 1:
            text += f" (and {len(errors) - 1} more in .errors)"
    if blockers:
        b = blockers[0]
        text += f"; first blocker: {b.control}: {b.reason} (requires {b.required}, this host gives {b.available})"
        if len(blockers) > 1:
            text += f" (and {len(blockers) - 1} more in .blockers)"
    return text


class PolicyError(CordonError):
    """The policy could not be read or is invalid (parse_error,
    invalid_policy, unknown_profile)."""


class RefusedError(CordonError):
    """Compile refused the policy on this host (backend_unavailable,
    unsupported_platform, isolation_insufficient, enforcement_unavailable);
    blockers say why."""


class UsageError(CordonError):
    """The call was wrong (usage_error): bad options, an empty argv."""


def _error_class(code: str) -> type:
    if code in ("parse_error", "invalid_policy", "unknown_profile"):
        return PolicyError
    if code in ("backend_unavailable", "unsupported_platform", "isolation_insufficient", "enforcement_unavailable"):
        return RefusedError
    if code == "usage_error":
        return UsageError
    return CordonError


def _check(code: int, error: ctypes.c_void_p) -> None:
    text = take_string(error.value)
    if code != 0:
        raise CordonError.from_json(text, code)


def profile_json(name: str = "workspace-write") -> str:
    """The JSON text of a built-in profile. Raises PolicyError (unknown_profile)."""
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    _check(lib().cordon_profile_json(name.encode(), ctypes.byref(out), ctypes.byref(error)), error)
    return take_string(out.value) or ""


def policy_text(policy: Union[str, Mapping[str, Any]]) -> str:
    """Policy JSON text from a profile name, JSON text or a dict."""
    if isinstance(policy, Mapping):
        return json.dumps(policy)
    if policy.lstrip().startswith("{"):
        return policy
    return profile_json(policy)


Shortcuts = Mapping[str, Any]
"""The CLI's shortcut flags (docs/cli.md), same meaning, applied to the policy
before its compile by the library's own code (core/shortcuts.h): {"ro":
[PATH...], "rw": [...], "deny": [...], "allow_hosts": ["HOST[:PORT]"...],
"env": [NAME...], "setenv": {NAME: VALUE}, "allow_local_binding": bool,
"caches": ["pip"|"npm"|"cargo"|"ccache"...], "git_identity": bool}."""


def _options(workspace: Optional[str], home: Optional[str], cgroup_parent: Optional[str],
             sandbox: Optional[str], shortcuts: Optional[Shortcuts] = None) -> bytes:
    opts: Dict[str, Any] = {k: os.fspath(v) for k, v in (("workspace", workspace), ("home", home),
                                                          ("cgroup_parent", cgroup_parent), ("sandbox", sandbox))
                            if v is not None}
    if shortcuts is not None:
        opts["shortcuts"] = dict(shortcuts)
    return json.dumps(opts).encode()


class Plan:
    """A compiled policy for this host (cordon_compile). Reuse one plan for
    many runs; it may be shared by threads. explain() says what a run gets."""

    def __init__(self, policy: Union[str, Mapping[str, Any]], *, workspace: Optional[str] = None,
                 home: Optional[str] = None, cgroup_parent: Optional[str] = None, sandbox: Optional[str] = None,
                 shortcuts: Optional[Shortcuts] = None):
        """shortcuts: the CLI's shortcut flags (see Shortcuts); a bad one
        raises UsageError with location "/shortcuts/KEY"."""
        self._handle = ctypes.c_void_p()
        error = ctypes.c_void_p()
        code = lib().cordon_compile(policy_text(policy).encode(),
                                    _options(workspace, home, cgroup_parent, sandbox, shortcuts),
                                    ctypes.byref(self._handle), ctypes.byref(error))
        _check(code, error)
        self.workspace = workspace

    def explain(self) -> Dict[str, Any]:
        """{"compiles": true, "controls": {...}, "warnings": [...], ...} (cordon_plan_json)."""
        return json.loads(take_string(lib().cordon_plan_json(self._handle)) or "{}")

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and handle.value and _lib._lib is not None:
            _lib._lib.cordon_plan_free(handle)
            handle.value = None


def compile(policy: Union[str, Mapping[str, Any]] = "workspace-write", *, workspace: Optional[str] = None,
            home: Optional[str] = None, cgroup_parent: Optional[str] = None, sandbox: Optional[str] = None,
            shortcuts: Optional[Shortcuts] = None) -> Plan:
    """Compiles a policy for this host. workspace is the directory
    {workspace} names (required when the policy uses it). sandbox: "auto",
    "require" or "forbid" (host execution). shortcuts: the CLI's shortcut
    flags, same meaning (see Shortcuts). Raises PolicyError, RefusedError
    (with blockers), UsageError."""
    return Plan(policy, workspace=workspace, home=home, cgroup_parent=cgroup_parent, sandbox=sandbox,
                shortcuts=shortcuts)


def explain(policy: Union[str, Mapping[str, Any]] = "workspace-write", *, workspace: Optional[str] = None,
            home: Optional[str] = None, cgroup_parent: Optional[str] = None,
            sandbox: Optional[str] = None) -> Dict[str, Any]:
    """What a run of `policy` would get here, without running anything:
    {"compiles": True, "controls": {control: {"level", "mechanism",
    "detail"}}, ...} or {"compiles": False, "error": {code, blockers, ...}}."""
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    code = lib().cordon_explain(policy_text(policy).encode(), _options(workspace, home, cgroup_parent, sandbox),
                                ctypes.byref(out), ctypes.byref(error))
    _check(code, error)
    return json.loads(take_string(out.value) or "{}")


def probe() -> Dict[str, Any]:
    """This host's capabilities: {"available", "isolation", "best": {control:
    {"level", ...}}, "blockers", "facts"} (cordon probe)."""
    out, error = ctypes.c_void_p(), ctypes.c_void_p()
    _check(lib().cordon_probe(ctypes.byref(out), ctypes.byref(error)), error)
    return json.loads(take_string(out.value) or "{}")


@dataclass
class RunResult:
    """The end of a run. exit_code follows the CLI (docs/cli.md): the
    command's code, 128+signal, 124 timeout, 125 refused/failed, 126 not
    executable, 127 not found. report is the run report (schema 1)."""

    argv: List[str]
    exit_code: int
    stdout: bytes
    stderr: bytes
    report: Dict[str, Any]
    ran: bool = True
    signal: int = 0
    timed_out: bool = False
    cancelled: bool = False
    wall_ms: int = 0
    error: Optional[CordonError] = None  # why the command did not run (command_not_found, ...)

    @property
    def returncode(self) -> int:
        """exit_code, under subprocess's name."""
        return self.exit_code


def check_argv(argv: Sequence[Union[str, bytes]]) -> None:
    """Raises TypeError for one string (a shell line is ["sh", "-c", line]) or an empty argv."""
    if isinstance(argv, (str, bytes)):
        raise TypeError("argv is a sequence of arguments, not one string")
    if len(argv) == 0:
        raise TypeError("argv is empty")


def c_bytes(item: Union[str, bytes], where: str) -> bytes:
    """An argument or variable as the bytes the C API gets (str through
    os.fsencode, so a name read with surrogateescape comes back as it was;
    bytes unchanged). Raises UsageError for a NUL, which would end a C string
    and silently cut what was asked for."""
    data = os.fsencode(item)
    if b"\0" in data:
        raise UsageError("usage_error", "holds a NUL byte, which no argument or variable can carry: refused", where)
    return data


def env_entries(env: Mapping[Union[str, bytes], Union[str, bytes]], where: str) -> List[bytes]:
    """{name: value} -> [b"NAME=VALUE"...], values as bytes unchanged; a NUL
    or a name with "=" raises UsageError (location where/NAME)."""
    out = []
    for k, v in env.items():
        at = f"{where}/{os.fsdecode(k)}"
        name = c_bytes(k, at)
        if not name or b"=" in name:
            raise UsageError("usage_error", "not a variable name", at)
        out.append(name + b"=" + c_bytes(v, at))
    return out


def _c_strings(items: Sequence[bytes]) -> ctypes.Array:
    encoded = list(items) + [None]
    return (ctypes.c_char_p * len(encoded))(*encoded)


class Handle:
    """One started run (cordon_run_start, or cordon_pool_start when `pool`
    is a cordon.Pool): owns the C handle. Used by run(), Pool.run() and the
    asyncio variant; cancel() may be called from any thread."""

    def __init__(self, plan: Optional[Plan], argv: Sequence[Union[str, bytes]], *, cwd: Optional[str],
                 env: Optional[Mapping[str, str]], stdin: Any, stdout_pipe: bool = True, stderr_pipe: bool = True,
                 pool: Any = None):
        check_argv(argv)
        self.argv = [os.fsdecode(a) for a in argv]
        self._argv = _c_strings([c_bytes(a, f"/argv/{i}") for i, a in enumerate(argv)])
        environment = os.environb if env is None else env
        self._env = _c_strings(env_entries(environment, "/env"))
        request = _lib.RunRequest()
        request.argv = ctypes.cast(self._argv, ctypes.POINTER(ctypes.c_char_p))
        request.cwd = os.fsencode(cwd) if cwd is not None else None
        request.env = ctypes.cast(self._env, ctypes.POINTER(ctypes.c_char_p))
        request.stdin_io = _stdio(stdin)
        request.stdout_io = _lib.Stdio(_lib.STDIO_PIPE if stdout_pipe else _lib.STDIO_INHERIT, -1)
        request.stderr_io = _lib.Stdio(_lib.STDIO_PIPE if stderr_pipe else _lib.STDIO_INHERIT, -1)
        self._handle = ctypes.c_void_p()
        error = ctypes.c_void_p()
        self._plan = plan  # the plan (or the pool) outlives the start
        self._pool = pool
        if pool is not None:
            code = lib().cordon_pool_start(pool._handle, ctypes.byref(request), ctypes.byref(self._handle),
                                           ctypes.byref(error))
        else:
            code = lib().cordon_run_start(plan._handle, ctypes.byref(request), ctypes.byref(self._handle),
                                          ctypes.byref(error))
        _check(code, error)
        self._lock = threading.Lock()
        self.pid: int = lib().cordon_run_pid(self._handle)
        self.wait_fd: int = lib().cordon_run_wait_fd(self._handle)
        self._ended = False

    def take_fd(self, stream: int) -> int:
        """The caller's end of a piped stream (0, 1, 2), now owned by the caller; -1 if none."""
        return lib().cordon_run_take_fd(self._handle, stream)

    def poll(self, timeout_ms: int = 0) -> bool:
        """Waits up to timeout_ms (< 0: no deadline); True once the run ended."""
        if not self._ended:
            self._ended = lib().cordon_run_wait(self._handle, timeout_ms) == _lib.RUN_ENDED
        return self._ended

    def cancel(self) -> None:
        """Kills the whole sandboxed tree; idempotent; no effect once ended."""
        if self._handle.value:
            lib().cordon_run_cancel(self._handle)

    def result(self, stdout: bytes, stderr: bytes, timed_out: bool = False) -> RunResult:
        """The RunResult of an ended run."""
        status = _lib.RunStatus()
        if lib().cordon_run_status_get(self._handle, ctypes.byref(status)) != 0:
            raise UsageError("usage_error", "the run has not ended")
        report = json.loads(take_string(lib().cordon_run_report_json(self._handle)) or "{}")
        error_text = take_string(lib().cordon_run_error_json(self._handle))
        return RunResult(argv=self.argv, exit_code=status.exit_code, stdout=stdout, stderr=stderr, report=report,
                         ran=bool(status.ran), signal=status.signal, timed_out=bool(status.timed_out) or timed_out,
                         cancelled=bool(status.cancelled), wall_ms=status.wall_ms,
                         error=CordonError.from_json(error_text) if error_text else None)

    def close(self) -> None:
        """Frees the handle (cancelling and waiting for a run still going)."""
        if self._handle.value and _lib._lib is not None:
            _lib._lib.cordon_run_free(self._handle)
            self._handle.value = None

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self.close()


DEVNULL = -3
"""stdin=DEVNULL: the command reads end-of-file (as subprocess.DEVNULL)."""


def _stdio(stdin: Any) -> _lib.Stdio:
    if stdin is None:
        return _lib.Stdio(_lib.STDIO_INHERIT, -1)
    if isinstance(stdin, (bytes, bytearray, str)):
        return _lib.Stdio(_lib.STDIO_PIPE, -1)
    if stdin == DEVNULL:
        return _lib.Stdio(_lib.STDIO_PIPE, -1)  # closed at once: EOF
    if isinstance(stdin, int):
        return _lib.Stdio(_lib.STDIO_FD, stdin)
    if hasattr(stdin, "fileno"):
        return _lib.Stdio(_lib.STDIO_FD, stdin.fileno())
    raise TypeError("stdin is None, bytes, str, DEVNULL, a descriptor or a file object")


def stdin_bytes(stdin: Any) -> Optional[bytes]:
    """What run() writes to a piped stdin (b"" for DEVNULL), or None when not piped."""
    if isinstance(stdin, str):
        return stdin.encode()
    if isinstance(stdin, (bytes, bytearray)):
        return bytes(stdin)
    if isinstance(stdin, int) and stdin == DEVNULL:
        return b""
    return None


def published_port(item: Any) -> dict:
    """One publish= entry as network.publish's {"port", "host_port"}: an
    int PORT (the same port on the host), a str "PORT" or "HOSTPORT:PORT"
    (cordon run --publish), or a dict with "port" and optional "host_port".
    The policy's validation checks the numbers (1..65535, a host port once)."""
    if isinstance(item, dict):
        return dict(item)
    if isinstance(item, int) and not isinstance(item, bool):
        return {"port": item, "host_port": item}
    if isinstance(item, str):
        host, _, port = item.rpartition(":")
        if port.isdigit() and (host == "" or host.isdigit()) and (":" not in item or host):
            return {"port": int(port), "host_port": int(host or port)}
    raise ValueError(f"publish: {item!r} is not PORT, \"HOSTPORT:PORT\" or {{\"port\", \"host_port\"}}")


def plan_for(policy: PolicyLike, *, workspace: Optional[str], cwd: Optional[str],
             timeout: Optional[float], shortcuts: Optional[Shortcuts] = None,
             publish: Optional[Sequence[Any]] = None) -> Plan:
    """A plan for run(): a Plan as is; else the policy compiled with the
    workspace (default: cwd, else the current directory) and, with timeout,
    its process.timeout_seconds lowered to it (the sandbox enforces it: exit
    124, timeout_fired in the report). Shortcuts with a Plan raise TypeError:
    a compiled plan cannot take them (give them to compile()), and they are
    never ignored. publish appends to network.publish (docs/network.md,
    "Published ports") and, with a filtered network, sets
    allow_local_binding, as cordon run --publish does; with a Plan it raises
    ValueError (the plan is compiled already)."""
    if isinstance(policy, Plan):
        if shortcuts is not None:
            raise TypeError("shortcuts cannot apply to a compiled Plan: give them to cordon.compile(..., shortcuts=)")
        if publish:
            raise ValueError("publish= with a Plan: put network.publish in the policy before compiling it")
        return policy
    text = policy_text(policy)
    if timeout is not None or publish:
        document = json.loads(text)
        if timeout is not None:
            process = document.setdefault("process", {})
            current = process.get("timeout_seconds")
            process["timeout_seconds"] = timeout if current is None else min(current, timeout)
        if publish:
            network = document.setdefault("network", {})
            network.setdefault("publish", []).extend(published_port(item) for item in publish)
            if network.get("mode") == "filtered":
                network["allow_local_binding"] = True
        text = json.dumps(document)
    return Plan(text, workspace=workspace or cwd or os.getcwd(), shortcuts=shortcuts)


def collect(handle: Handle, data: Optional[bytes], deadline: Optional[float]) -> RunResult:
    """Writes stdin, reads stdout and stderr and waits, in this thread."""
    out = {1: bytearray(), 2: bytearray()}
    fds = {stream: handle.take_fd(stream) for stream in (0, 1, 2)}
    timed_out = False
    with selectors.DefaultSelector() as sel:
        for stream in (1, 2):
            sel.register(fds[stream], selectors.EVENT_READ, stream)
        if fds[0] >= 0 and data:
            os.set_blocking(fds[0], False)
            sel.register(fds[0], selectors.EVENT_WRITE, 0)
        elif fds[0] >= 0:
            os.close(fds[0])
            fds[0] = -1
        sel.register(handle.wait_fd, selectors.EVENT_READ, "end")
        pending = memoryview(data or b"")
        ended = False
        while sel.get_map() and len(sel.get_map()) > 0:
            wait = None if deadline is None or timed_out else max(0.0, deadline - time.monotonic())
            events = sel.select(wait)
            if not events and deadline is not None and not timed_out:
                timed_out = True
                handle.cancel()
            for key, _ in events:
                if key.data == "end":
                    if handle.poll(0):
                        sel.unregister(key.fd)
                        ended = True
                elif key.data == 0:
                    try:
                        pending = pending[os.write(key.fd, pending):]
                    except BrokenPipeError:
                        pending = pending[len(pending):]
                    if not pending:
                        sel.unregister(key.fd)
                        os.close(key.fd)
                        fds[0] = -1
                else:
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        out[key.data] += chunk
                    else:
                        sel.unregister(key.fd)
                        os.close(key.fd)
                        fds[key.data] = -1
            if ended and len(sel.get_map()) == 0:
                break
        for fd in fds.values():
            if fd >= 0:
                os.close(fd)
    return handle.result(bytes(out[1]), bytes(out[2]), timed_out=timed_out)
