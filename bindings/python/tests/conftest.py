"""Fixtures of the cordon Python tests: a workspace per test, and a skip
(with its reason) when this host cannot run the sandbox at all."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# The package from this tree, unless the test run installed one (CORDON_PYTHON_PATH).
sys.path.insert(0, os.environ.get("CORDON_PYTHON_PATH") or str(Path(__file__).resolve().parents[1]))

import cordon  # noqa: E402

PYTHON = "/usr/bin/python3"  # the system's: readable inside the sandbox (pyenv shims under $HOME are not)


@pytest.fixture(scope="session")
def available():
    caps = cordon.probe()
    if not caps["available"]:
        pytest.skip("the Linux backend is not available on this host: " + "; ".join(caps["facts"]))
    return caps


@pytest.fixture
def workspace(available):
    path = tempfile.mkdtemp(prefix="cordon-py-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def outside():
    path = tempfile.mkdtemp(prefix="cordon-py-outside-", dir="/var/tmp")
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)
