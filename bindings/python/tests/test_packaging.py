"""The package's own build backend (bindings/python/_build/cordon_build.py;
docs/python.md, "Install"): a wheel built with the standard library only,
holding every module and a RECORD that matches, and nothing written into the
source directory."""

import base64
import hashlib
import importlib.util
import os
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1]


def _backend():
    spec = importlib.util.spec_from_file_location("cordon_build", SOURCE / "_build" / "cordon_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _listing():
    return sorted(
        (str(p.relative_to(SOURCE)), p.stat().st_mtime_ns)
        for p in SOURCE.rglob("*")
        if "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    )


def test_the_wheel_holds_the_package_and_a_matching_record_and_the_tree_is_untouched():
    backend = _backend()
    assert backend.get_requires_for_build_wheel() == []
    before = _listing()
    with tempfile.TemporaryDirectory() as out:
        name = backend.build_wheel(out)
        assert name == "cordon-0.1.0-py3-none-any.whl"
        with zipfile.ZipFile(os.path.join(out, name)) as wheel:
            names = set(wheel.namelist())
            modules = {str(p.relative_to(SOURCE)) for p in (SOURCE / "cordon").glob("*.py")}
            assert modules <= names
            assert "cordon/py.typed" in names
            record = wheel.read("cordon-0.1.0.dist-info/RECORD").decode().splitlines()
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                if path.endswith("RECORD"):
                    continue
                data = wheel.read(path)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert digest == "sha256=" + expected and int(size) == len(data), path
            metadata = wheel.read("cordon-0.1.0.dist-info/METADATA").decode()
            assert "Name: cordon\nVersion: 0.1.0\n" in metadata
    assert _listing() == before
