"""The example of docs/python.md runs as written, from an installed package."""

import os
import re
import subprocess
import sys
from pathlib import Path

import cordon


def run_block(pattern, workspace):
    """Runs the block of docs/python.md that `pattern` finds (group 1) in a fresh interpreter."""
    page = Path(__file__).resolve().parents[3] / "docs" / "python.md"
    code = re.search(pattern, page.read_text(), re.S).group(1)
    package = os.environ.get("CORDON_PYTHON_PATH") or str(Path(cordon.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=package))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_docs_example_runs(workspace):
    lines = run_block(r"```python\n(.*?)```", workspace)
    assert lines[0] == "exit 1 hello from the sandbox"
    assert "touch: cannot touch '/etc/x'" in lines[1]
    assert lines[2] == "filesystem_write: enforced"


def test_the_governance_and_fs_example_runs(workspace):
    assert run_block(r"<!-- governance example[^\n]*-->\n```python\n(.*?)```", workspace) == ["deny", "completed 0 True", "True", "confined", "path_escape"]


def test_installed_package_is_the_one_under_test():
    if os.environ.get("CORDON_PYTHON_PATH"):
        assert Path(cordon.__file__).resolve().is_relative_to(Path(os.environ["CORDON_PYTHON_PATH"]).resolve())
