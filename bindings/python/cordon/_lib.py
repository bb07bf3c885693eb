"""ctypes declarations of libcordon's C API (include/cordon/cordon_c.h).

Where the library is found, first match wins (docs/python.md):
  1. $CORDON_LIBRARY: the path of libcordon_c.so.1 itself;
  2. $CORDON_BUILD_DIR/src/capi/libcordon_c.so.1 (a cordon build tree);
  3. the build tree of the source checkout this package sits in
     (bindings/python/cordon -> ../../../build), for a run from the tree;
  4. "libcordon_c.so.1" through the dynamic loader (an installed cordon:
     the Debian package libcordon-c1 puts it in /usr/lib/<multiarch>/);
  5. <prefix>/lib/ (and lib/<multiarch>/) of the installation whose `cordon`
     is on PATH (a `cmake --install --prefix DIR`);
  6. /usr/lib/<multiarch>/ and /usr/local/lib/<multiarch>/, then
     /usr/local/lib/ by path (a `cmake --install` whose directory is not in
     the loader's cache).
The library finds cordon-supervisor in <prefix>/libexec/cordon/ of its own
installation: an installed cordon needs no variable.
"""

from __future__ import annotations

import ctypes
import os
import sysconfig
from pathlib import Path
from typing import Optional

ABI_VERSION = 1
ABI_MINOR_GOVERNANCE = 1  # cordon_rules_*, cordon_governance_execute, cordon_audit_*, cordon_fs_*
ABI_MINOR_POOL = 2  # cordon_pool_*
ABI_MINOR_TOOL_CALL = 3  # cordon_governance_tool_call, cordon_ledger_*
ABI_MINOR_AUDIT_OPTIONS = 4  # cordon_audit_verify_with (the head rules of a verify)
_SONAME = "libcordon_c.so.1"

STDIO_INHERIT, STDIO_FD, STDIO_PIPE = 0, 1, 2
RUN_GOING, RUN_ENDED = 0, 1


class Stdio(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("fd", ctypes.c_int)]


class RunRequest(ctypes.Structure):
    _fields_ = [
        ("argv", ctypes.POINTER(ctypes.c_char_p)),
        ("cwd", ctypes.c_char_p),
        ("env", ctypes.POINTER(ctypes.c_char_p)),
        ("stdin_io", Stdio),
        ("stdout_io", Stdio),
        ("stderr_io", Stdio),
        ("supervisor_path", ctypes.c_char_p),
    ]


class RunStatus(ctypes.Structure):
    _fields_ = [
        ("exit_code", ctypes.c_int),
        ("ran", ctypes.c_int),
        ("exited", ctypes.c_int),
        ("signal", ctypes.c_int),
        ("timed_out", ctypes.c_int),
        ("cancelled", ctypes.c_int),
        ("error_code", ctypes.c_int),
        ("wall_ms", ctypes.c_int64),
    ]


def _candidates() -> list[str]:
    out = []
    if os.environ.get("CORDON_LIBRARY"):
        out.append(os.environ["CORDON_LIBRARY"])
    if os.environ.get("CORDON_BUILD_DIR"):
        out.append(str(Path(os.environ["CORDON_BUILD_DIR"]) / "src" / "capi" / _SONAME))
    tree = Path(__file__).resolve().parents[3] / "build" / "src" / "capi" / _SONAME
    if tree.exists():
        out.append(str(tree))
    out.append(_SONAME)
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        cli = Path(directory or ".") / "cordon"
        if directory and os.access(cli, os.X_OK):
            prefix = cli.resolve().parent.parent
            out.append(str(prefix / "lib" / _SONAME))
            if multiarch:
                out.append(str(prefix / "lib" / multiarch / _SONAME))
    for directory in ("/usr/lib/" + multiarch, "/usr/local/lib/" + multiarch, "/usr/local/lib"):
        if multiarch or directory == "/usr/local/lib":
            out.append(str(Path(directory) / _SONAME))
    return out


# The approver callback of cordon_governance_execute (cordon_approver_fn).
APPROVER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)


def _declare_minor_1(lib: ctypes.CDLL) -> None:
    c_char_pp = ctypes.POINTER(ctypes.c_void_p)
    v = ctypes.c_void_p
    s = ctypes.c_char_p
    table = {
        "cordon_abi_minor": (ctypes.c_uint32, []),
        "cordon_rules_load": (ctypes.c_int, [s, ctypes.POINTER(v), c_char_pp]),
        "cordon_rules_free": (None, [v]),
        "cordon_rules_decide": (ctypes.c_int, [v, s, c_char_pp, c_char_pp]),
        "cordon_governance_execute": (ctypes.c_int, [v, s, s, APPROVER_FN, v, c_char_pp, c_char_pp]),
        "cordon_audit_append": (ctypes.c_int, [s, s, c_char_pp]),
        "cordon_audit_verify": (ctypes.c_int, [s, c_char_pp, c_char_pp]),
        "cordon_fs_start": (ctypes.c_int, [s, s, ctypes.POINTER(v), c_char_pp]),
        "cordon_fs_call": (ctypes.c_int, [v, s, c_char_pp, c_char_pp]),
        "cordon_fs_pid": (ctypes.c_int, [v]),
        "cordon_fs_finish": (ctypes.c_int, [v, c_char_pp, c_char_pp]),
        "cordon_fs_free": (None, [v]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def _declare_minor_2(lib: ctypes.CDLL) -> None:
    c_char_pp = ctypes.POINTER(ctypes.c_void_p)
    v = ctypes.c_void_p
    table = {
        "cordon_pool_new": (ctypes.c_int, [v, ctypes.c_char_p, ctypes.POINTER(v), c_char_pp]),
        "cordon_pool_start": (ctypes.c_int, [v, ctypes.POINTER(RunRequest), ctypes.POINTER(v), c_char_pp]),
        "cordon_pool_ready_count": (ctypes.c_int, [v]),
        "cordon_pool_refresh": (ctypes.c_int, [v, ctypes.POINTER(ctypes.c_int), c_char_pp]),
        "cordon_pool_free": (None, [v]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


# cordon_output_fn: (user, stream, bytes, size).
OUTPUT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)


class ToolIo(ctypes.Structure):
    """cordon_tool_io (include/cordon/cordon_c.h)."""

    _fields_ = [("stdin_data", ctypes.c_char_p), ("stdin_size", ctypes.c_size_t), ("timeout_ms", ctypes.c_int64),
                ("max_output", ctypes.c_uint64), ("on_output", OUTPUT_FN), ("output_user", ctypes.c_void_p),
                ("pool", ctypes.c_void_p), ("ledger", ctypes.c_void_p),
                ("environment", ctypes.POINTER(ctypes.c_char_p))]


def _declare_minor_3(lib: ctypes.CDLL) -> None:
    c_char_pp = ctypes.POINTER(ctypes.c_void_p)
    v = ctypes.c_void_p
    s = ctypes.c_char_p
    table = {
        "cordon_ledger_new": (v, []),
        "cordon_ledger_free": (None, [v]),
        "cordon_governance_tool_call": (ctypes.c_int, [v, s, s, ctypes.POINTER(ToolIo), APPROVER_FN, v, c_char_pp,
                                                       c_char_pp]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def _declare_minor_4(lib: ctypes.CDLL) -> None:
    c_char_pp = ctypes.POINTER(ctypes.c_void_p)
    fn = lib.cordon_audit_verify_with
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, c_char_pp, c_char_pp]


def abi_minor() -> int:
    """The loaded library's ABI minor (0 for a library from before minor 1)."""
    loaded = lib()
    return int(loaded.cordon_abi_minor()) if hasattr(loaded, "cordon_abi_minor") else 0


def require_minor(minor: int, what: str) -> ctypes.CDLL:
    """The library, when it has ABI minor `minor` or later; else OSError
    naming what needs it (an older libcordon_c.so.1 is installed)."""
    have = abi_minor()
    if have < minor:
        raise OSError(f"{what} needs libcordon_c ABI 1.{minor}; the loaded library is 1.{have}")
    return lib()


def _declare(lib: ctypes.CDLL) -> None:
    c_char_pp = ctypes.POINTER(ctypes.c_void_p)  # char** out-parameters: freed with cordon_string_free
    v = ctypes.c_void_p
    table = {
        "cordon_abi_version": (ctypes.c_uint32, []),
        "cordon_library_version": (ctypes.c_char_p, []),
        "cordon_error_code_name": (ctypes.c_char_p, [ctypes.c_int]),
        "cordon_string_free": (None, [v]),
        "cordon_profile_json": (ctypes.c_int, [ctypes.c_char_p, c_char_pp, c_char_pp]),
        "cordon_compile": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(v), c_char_pp]),
        "cordon_plan_free": (None, [v]),
        "cordon_plan_json": (v, [v]),
        "cordon_explain": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, c_char_pp, c_char_pp]),
        "cordon_probe": (ctypes.c_int, [c_char_pp, c_char_pp]),
        "cordon_run_start": (ctypes.c_int, [v, ctypes.POINTER(RunRequest), ctypes.POINTER(v), c_char_pp]),
        "cordon_run_pid": (ctypes.c_int, [v]),
        "cordon_run_fd": (ctypes.c_int, [v, ctypes.c_int]),
        "cordon_run_take_fd": (ctypes.c_int, [v, ctypes.c_int]),
        "cordon_run_wait_fd": (ctypes.c_int, [v]),
        "cordon_run_wait": (ctypes.c_int, [v, ctypes.c_int64]),
        "cordon_run_cancel": (None, [v]),
        "cordon_run_status_get": (ctypes.c_int, [v, ctypes.POINTER(RunStatus)]),
        "cordon_run_report_json": (v, [v]),
        "cordon_run_error_json": (v, [v]),
        "cordon_run_free": (None, [v]),
    }
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


_lib: Optional[ctypes.CDLL] = None


def lib() -> ctypes.CDLL:
    """The loaded library (loaded on first use). Raises OSError naming every
    place it looked, or when its ABI is not this package's."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for candidate in _candidates():
        try:
            loaded = ctypes.CDLL(candidate)
        except OSError as e:
            tried.append(f"{candidate}: {e}")
            continue
        _declare(loaded)
        if hasattr(loaded, "cordon_abi_minor"):
            _declare_minor_1(loaded)
        if hasattr(loaded, "cordon_pool_new"):
            _declare_minor_2(loaded)
        if hasattr(loaded, "cordon_governance_tool_call"):
            _declare_minor_3(loaded)
        if hasattr(loaded, "cordon_audit_verify_with"):
            _declare_minor_4(loaded)
        abi = loaded.cordon_abi_version()
        if abi != ABI_VERSION:
            raise OSError(f"{candidate} has C API version {abi}; this package needs {ABI_VERSION}")
        _lib = loaded
        return loaded
    raise OSError("libcordon_c not found (set CORDON_LIBRARY or CORDON_BUILD_DIR): " + "; ".join(tried))


def take_string(pointer: Optional[int]) -> Optional[str]:
    """The text of a char* the library returned, freed; None for NULL."""
    if not pointer:
        return None
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib().cordon_string_free(pointer)
