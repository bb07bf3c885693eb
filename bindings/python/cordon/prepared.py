"""Prepared sandboxes (docs/prepared.md, docs/python.md): a pool keeps
sandboxes for one policy set up ahead of time, so that a short command
(`ls`, `cat`, `git status`) costs little more than its own exec.

    with cordon.Pool("workspace-write", workspace=project, size=2) as pool:
        for argv in commands:
            result = pool.run(argv, cwd=project)

Each sandbox serves one command only; the pool prepares its replacement.
A run is confined and reported exactly as cordon.run()'s, and its report
says "prepared": true and "prepared_at".
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import threading
import time
from typing import Any, Mapping, Optional, Sequence, Union

from . import _lib
from ._core import (Handle, PolicyLike, RunResult, Shortcuts, UsageError, _check, check_argv, collect, plan_for,
                    stdin_bytes)


def _milliseconds(name: str, seconds: Any) -> int:
    """Seconds as whole milliseconds; UsageError for what is not a finite number."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise UsageError("usage_error", f"{name} is a finite number of seconds", f"/{name}")
    return int(round(seconds * 1000))


class Pool:
    """Sandboxes prepared ahead of time for one policy (cordon_pool_new).

    policy: a built-in profile name, policy JSON text, a policy dict, or a
      Plan (compiled with its workspace).
    workspace: the directory {workspace} names (default: the current
      directory); ignored for a Plan.
    size: sandboxes kept ready (1 to 64).
    max_age: seconds a sandbox may wait ready before it is replaced, so that
      what the plan does not record (a file that appeared) is never older.
    wait: seconds run() waits for a sandbox when none is ready.
    refill_after: seconds after a start at the latest before its replacement
      is prepared (sooner when the run ended).
    supervisor: the cordon-supervisor helper (default: $CORDON_SUPERVISOR,
      else the installed one, else the build tree's).
    shortcuts: the CLI's shortcut flags, same meaning as run()'s
      (cordon._core.Shortcuts: ro, rw, deny, allow_hosts, env, setenv,
      allow_local_binding, caches, git_identity), applied before the pool's
      compile; a bad one raises UsageError at "/shortcuts/KEY", and with a
      Plan they raise TypeError (give them to cordon.compile()).

    Raises PolicyError, RefusedError, UsageError (bad options), and OSError
    when the loaded libcordon_c has no pools (ABI minor below 2). Thread-safe:
    any thread may call run(). Close it (or use `with`) to give up the
    sandboxes still waiting."""

    def __init__(self, policy: PolicyLike = "workspace-write", *, workspace: Optional[str] = None, size: int = 2,
                 max_age: Optional[float] = None, wait: Optional[float] = None,
                 refill_after: Optional[float] = None, supervisor: Optional[str] = None,
                 shortcuts: Optional[Shortcuts] = None):
        library = _lib.require_minor(_lib.ABI_MINOR_POOL, "cordon.Pool")
        # close() waits for the calls in progress (_using): the C API's pool may not be freed under them.
        self._lock = threading.Condition()
        self._active = 0
        self._closing = False
        self._handle = ctypes.c_void_p()
        self.plan = plan_for(policy, workspace=workspace, cwd=None, timeout=None, shortcuts=shortcuts)
        options: dict = {"size": size}
        for key, seconds in (("max_age", max_age), ("wait", wait), ("refill_after", refill_after)):
            if seconds is not None:
                options[key + "_ms"] = _milliseconds(key, seconds)
        if supervisor is not None:
            options["supervisor_path"] = os.fsdecode(supervisor)
        error = ctypes.c_void_p()
        _check(library.cordon_pool_new(self.plan._handle, json.dumps(options).encode(), ctypes.byref(self._handle),
                                       ctypes.byref(error)), error)

    @property
    def ready(self) -> int:
        """How many sandboxes are ready now."""
        with self._using() as handle:
            return int(_lib.lib().cordon_pool_ready_count(handle))

    def wait_ready(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Waits until `count` sandboxes are ready or `timeout` seconds pass;
        True when they are."""
        deadline = time.monotonic() + timeout
        while self.ready < count:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def refresh(self) -> bool:
        """Compiles the policy again on fresh host facts; when the plan
        changed (a repository appeared under a writable root), every
        sandbox prepared for the old one is given up. Returns whether it
        changed. Raises RefusedError when the policy cannot run here any
        more (the pool is emptied)."""
        changed, error = ctypes.c_int(0), ctypes.c_void_p()
        with self._using() as handle:
            _check(_lib.lib().cordon_pool_refresh(handle, ctypes.byref(changed), ctypes.byref(error)), error)
        return bool(changed.value)

    def run(self, argv: Sequence[Union[str, bytes]], *, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None, stdin: Any = None, timeout: Optional[float] = None) -> RunResult:
        """Runs argv in a prepared sandbox and waits for it, as cordon.run()
        does (same arguments and result). timeout: seconds, after which the
        run is cancelled (timed_out and cancelled); the policy's own
        timeout still applies. Raises as cordon.run(), and CordonError
        (launch_failed) when no sandbox became ready within `wait`,
        (plan_stale) when the host changed: call refresh()."""
        check_argv(argv)
        with self._using():
            handle = Handle(self.plan, argv, cwd=cwd, env=env, stdin=stdin, pool=self)
        try:
            return collect(handle, stdin_bytes(stdin), time.monotonic() + timeout if timeout is not None else None)
        finally:
            handle.close()

    def close(self) -> None:
        """Gives up the sandboxes still waiting; runs already started go on.
        Waits for the pool's calls in progress in other threads (a run() that
        is taking a sandbox); idempotent."""
        with self._lock:
            self._closing = True  # no new call begins
            while self._active:
                self._lock.wait()
            if self._handle.value and _lib._lib is not None:
                _lib._lib.cordon_pool_free(self._handle)
            self._handle.value = None

    class _Use:
        def __init__(self, pool: "Pool"):
            self.pool = pool

        def __enter__(self) -> ctypes.c_void_p:
            with self.pool._lock:
                if self.pool._closing or not self.pool._handle.value:
                    raise ValueError("the pool is closed")
                self.pool._active += 1
            return self.pool._handle

        def __exit__(self, *exc: Any) -> None:
            with self.pool._lock:
                self.pool._active -= 1
                self.pool._lock.notify_all()

    def _using(self) -> "Pool._Use":
        """A pool call in progress: the handle, which close() does not free meanwhile."""
        return Pool._Use(self)

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_lock", None) is not None:
            self.close()

