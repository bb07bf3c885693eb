"""cordon: run commands confined by a cordon policy (docs/python.md).

    import cordon
    result = cordon.run("workspace-write", ["sh", "-c", "echo hi"], cwd="/path/to/project")
    result.exit_code, result.stdout, result.report["controls"]

A ctypes layer over libcordon's C API (include/cordon/cordon_c.h). The
asyncio variant is cordon.start() / cordon.run_async() (cordon.aio);
cordon.Pool keeps sandboxes prepared ahead of time for many short commands.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Sequence, Union

from ._core import (DEVNULL, Blocker, CordonError, Handle, Plan, PolicyError, PolicyLike, RefusedError, RunResult,
                    UsageError, check_argv, collect, compile, explain, plan_for, probe, profile_json, stdin_bytes)
from ._lib import lib
from .aio import AsyncRun, run_async, start
from .prepared import Pool
from . import fs, governance  # noqa: E402 - the ABI 1.1 layers (load the library on first use)

__all__ = ["run", "run_async", "start", "compile", "explain", "probe", "profile_json", "library_version", "Plan",
           "RunResult", "AsyncRun", "CordonError", "PolicyError", "RefusedError", "UsageError", "Blocker", "DEVNULL",
           "governance", "fs", "Pool"]


def library_version() -> str:
    """The version of the loaded libcordon ("MAJOR.MINOR.PATCH")."""
    return lib().cordon_library_version().decode()


def run(policy: PolicyLike, argv: Sequence[Union[str, bytes]], *, cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None, stdin: Any = None, timeout: Optional[float] = None,
        workspace: Optional[str] = None, shortcuts: Optional[Mapping[str, Any]] = None,
        publish: Optional[Sequence[Union[int, str, Mapping[str, int]]]] = None) -> RunResult:
    """Runs argv confined by `policy` and waits for it; returns its exit
    status, stdout and stderr (bytes) and the run report (a dict).

    policy: a built-in profile name, policy JSON text, a policy dict, or a
      Plan from cordon.compile() (reuse one for many runs).
    cwd: the working directory inside the sandbox (default: the workspace).
    env: the host environment the policy chooses variables from (default
      os.environ); the policy decides what reaches the command.
    stdin: None (inherit), bytes/str (written, then EOF), DEVNULL, a
      descriptor or a file object.
    timeout: seconds; lowers the policy's process.timeout_seconds (the
      sandbox kills the tree: exit 124, result.timed_out). With a Plan, the
      run is cancelled at the deadline instead (timed_out and cancelled).
    workspace: the directory {workspace} names (default: cwd, else the
      current directory); ignored for a Plan.
    shortcuts: the CLI's shortcut flags, same meaning (cordon._core.Shortcuts:
      ro, rw, deny, allow_hosts, env, setenv, allow_local_binding, caches,
      git_identity); TypeError with a Plan (give them to compile()).
    publish: ports to publish, as cordon run --publish: each an int PORT,
      a str "PORT" or "HOSTPORT:PORT", or {"port", "host_port"}; appended
      to network.publish (with a filtered network allow_local_binding is
      set too). The host's 127.0.0.1:HOSTPORT is relayed to 127.0.0.1:PORT
      inside the sandbox (docs/network.md, "Published ports"); a host port
      in use refuses the run. ValueError with a Plan.

    Raises PolicyError, RefusedError (with .blockers), UsageError when
    nothing ran. A command that could not start (command_not_found) is a
    result with ran False, exit_code 127 and .error set."""
    check_argv(argv)
    plan = plan_for(policy, workspace=workspace, cwd=cwd, timeout=timeout, shortcuts=shortcuts, publish=publish)
    handle = Handle(plan, argv, cwd=cwd, env=env, stdin=stdin)
    try:
        return collect(handle, stdin_bytes(stdin), time.monotonic() + timeout if (
            timeout is not None and isinstance(policy, Plan)) else None)
    finally:
        handle.close()
