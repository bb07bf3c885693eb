"""ctypes declarations of libcordon's C API (include/cordon/cordon_c.h).

Where the library is found, first match wins (docs/python.md):
  1. $CORDON_LIBRARY: the path of libcordon_c.so.1 itself;
  2. $CORDON_BUILD_DIR/src/capi/libcordon_c.so.1 (a cordon build tree);
  3. the build tree of the source checkout this package sits in
     (bindings/python/cordon -> ../../../build), for a run from the tree;
  4. "libcordon_c.so.1" through the dynamic loader (an installed cordon).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Optional

ABI_VERSION = 1
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
    return out


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
