"""The confined filesystem worker (docs/fs-worker.md, docs/python.md): an
agent's file tools served by a long-lived worker process under the same
sandbox plan as its commands, so that no path trick (`..`, a symbolic link,
another mount) reaches further than the sandbox allows.

    from cordon import fs
    with fs.Worker("/path/to/workspace") as w:
        w.write("notes.txt", "hello\\n")
        w.read("notes.txt")               # "hello\\n"
        w.read("../etc/passwd")           # raises FsError, .code == "path_escape"

Needs libcordon_c ABI 1.1 (cordon_fs_*: include/cordon/cordon_c.h).
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _lib
from ._core import CordonError, _check, policy_text
from ._lib import require_minor, take_string

PathLike = Union[str, "os.PathLike[str]"]


class FsError(CordonError):
    """The worker refused a request: .code is its stable code
    (docs/fs-worker.md, "Error codes": path_escape, symlink, denied,
    outside_roots, not_found, read_only, ...), .rule the policy rule that
    decided, when one did; .response the whole response."""

    def __init__(self, code: str, message: str, rule: str = "", response: Optional[Dict[str, Any]] = None):
        super().__init__(code, message, rule)
        self.rule = rule
        self.response = response or {}


class Worker:
    """One confined worker for a workspace (the root of its writes). Not
    thread-safe: one thread per worker. Use it as a context manager, or call
    close()."""

    def __init__(self, workspace: PathLike, policy: Union[str, Mapping[str, Any]] = "workspace-write", *,
                 deadline_ms: Optional[int] = None, worker: Optional[str] = None,
                 shortcuts: Optional[Mapping[str, Any]] = None):
        """Compiles `policy` (a profile name, JSON text or dict) for
        `workspace` and starts the worker. shortcuts: the CLI's shortcut
        flags, same meaning as cordon.run()'s (cordon._core.Shortcuts: ro,
        rw, deny, ...), applied before the compile. Raises PolicyError,
        RefusedError, UsageError (no cordon-fs-worker executable; a bad
        shortcut at "/shortcuts/KEY"), CordonError."""
        lib = require_minor(_lib.ABI_MINOR_GOVERNANCE, "cordon.fs")
        options: Dict[str, Any] = {"workspace": os.fspath(workspace)}
        if deadline_ms is not None:
            options["deadline_ms"] = deadline_ms
        if worker is not None:
            options["worker"] = worker
        if shortcuts is not None:
            options["shortcuts"] = dict(shortcuts)
        self.workspace = os.fspath(workspace)
        self._handle = ctypes.c_void_p()
        self.report: Optional[Dict[str, Any]] = None
        error = ctypes.c_void_p()
        _check(lib.cordon_fs_start(policy_text(policy).encode(), json.dumps(options).encode(),
                                   ctypes.byref(self._handle), ctypes.byref(error)), error)

    @property
    def pid(self) -> int:
        """The worker's supervisor PID (-1 once closed)."""
        return _lib.lib().cordon_fs_pid(self._handle) if self._handle.value else -1

    def call(self, op: str, **fields: Any) -> Dict[str, Any]:
        """Sends {"op": op, **fields} and returns the whole response
        ({"ok", "result", "touched"}). Raises FsError for a refusal,
        CordonError (io_error: the worker is gone; usage_error)."""
        if not self._handle.value:
            raise CordonError("usage_error", "the worker is closed")
        out, error = ctypes.c_void_p(), ctypes.c_void_p()
        request = json.dumps({"op": op, **fields}).encode()
        _check(_lib.lib().cordon_fs_call(self._handle, request, ctypes.byref(out), ctypes.byref(error)), error)
        response = json.loads(take_string(out.value) or "{}")
        if not response.get("ok"):
            e = response.get("error", {})
            raise FsError(e.get("code", "invalid_request"), e.get("message", ""), e.get("rule", ""), response)
        return response

    def read(self, path: str, *, offset: int = 0, length: Optional[int] = None) -> str:
        """A text file's content (or the range asked for)."""
        fields: Dict[str, Any] = {"path": path, "offset": offset}
        if length is not None:
            fields["length"] = length
        return self.call("read", **fields)["result"]["content"]

    def write(self, path: str, content: str, *, create_parents: bool = False) -> None:
        """Writes a whole text file atomically."""
        self.call("write", path=path, content=content, create_parents=create_parents)

    def edit(self, path: str, old: str, new: str, *, expected_occurrences: int = 1) -> int:
        """Replaces `old` by `new`; returns how many replacements were made."""
        return self.call("edit", path=path, old_string=old, new_string=new,
                         expected_occurrences=expected_occurrences)["result"]["replacements"]

    def list(self, path: str = ".") -> List[Dict[str, Any]]:
        """A directory's entries: [{"name", "type", "size", ...}]."""
        return self.call("list", path=path)["result"]["entries"]

    def glob(self, pattern: str, path: str = ".") -> List[str]:
        """Absolute paths matching a glob (`**` across directories)."""
        return self.call("glob", pattern=pattern, path=path)["result"]["matches"]

    def grep(self, pattern: str, path: str = ".", **fields: Any) -> List[Dict[str, Any]]:
        """Lines matching an RE2 pattern: [{"path", "line", "text"}]."""
        return self.call("grep", pattern=pattern, path=path, **fields)["result"]["matches"]

    def apply_patch(self, patch: str, *, dry_run: bool = False) -> Dict[str, Any]:
        """Applies a patch (docs/fs-worker.md, "Patches"); the result's "files"."""
        return self.call("apply_patch", patch=patch, dry_run=dry_run)["result"]

    def stat(self, path: str) -> Dict[str, Any]:
        """{"type", "size", "mode", "nlink", "mtime_ns"}."""
        return self.call("stat", path=path)["result"]

    def close(self) -> Dict[str, Any]:
        """Ends the worker; returns {"worker": its report (every write), "run":
        the run report}. Idempotent."""
        if self._handle.value:
            out, error = ctypes.c_void_p(), ctypes.c_void_p()
            try:
                _check(_lib.lib().cordon_fs_finish(self._handle, ctypes.byref(out), ctypes.byref(error)), error)
                self.report = json.loads(take_string(out.value) or "{}")
            finally:
                _lib.lib().cordon_fs_free(self._handle)
                self._handle.value = None
        return self.report or {}

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value and _lib._lib is not None:
            _lib._lib.cordon_fs_free(handle)
            handle.value = None


__all__ = ["Worker", "FsError"]
