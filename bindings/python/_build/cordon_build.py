"""The cordon package's build backend (PEP 517, PEP 660): the standard library only.

The package is pure Python (ctypes over libcordon_c), so building a wheel is
zipping cordon/ with its metadata. No setuptools, no wheel package, nothing to
download: `pip install` works offline in a plain venv, with or without build
isolation, and nothing is written into the source tree (only into the
directory pip names). docs/python.md, "Install".
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAG = "py3-none-any"


def _project() -> dict:
    """name, version, description, requires-python from pyproject.toml's [project]."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project]", 1)[1].split("\n[", 1)[0]
    fields = dict(re.findall(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"', section, re.M))
    return {k: fields[k] for k in ("name", "version", "description", "requires-python")}


def _metadata() -> str:
    p = _project()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return (f"Metadata-Version: 2.1\nName: {p['name']}\nVersion: {p['version']}\n"
            f"Summary: {p['description']}\nRequires-Python: {p['requires-python']}\n"
            "Classifier: Operating System :: POSIX :: Linux\nClassifier: Typing :: Typed\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def _dist_info() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}.dist-info"


def _wheel_name() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}-{TAG}.whl"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: dict[str, bytes]) -> str:
    info = _dist_info()
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: cordon_build\nRoot-Is-Purelib: true\n"
                              f"Tag: {TAG}\n").encode()
    files[f"{info}/top_level.txt"] = b"cordon\n"
    record = [_record_line(n, d) for n, d in sorted(files.items())] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = os.path.join(directory, _wheel_name())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return os.path.basename(path)


def _package_files() -> dict[str, bytes]:
    out = {}
    for f in sorted((ROOT / "cordon").rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix in (".py", ".typed"):
            out[f.relative_to(ROOT).as_posix()] = f.read_bytes()
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = Path(metadata_directory) / _dist_info()
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(), encoding="utf-8")
    return info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file naming the source directory: the tree is imported in place.
    return _write_wheel(wheel_directory, {"cordon_editable.pth": (str(ROOT) + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = f"{p['name']}-{p['version']}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "_build/cordon_build.py", *_package_files()]:
            tar.add(str(ROOT / rel), arcname=f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return os.path.basename(path)
