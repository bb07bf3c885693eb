# pytest: one passing and one failing test, counted by pytest itself.
. "$(dirname "$0")/lib.sh"
"$PY" -c 'import pytest' 2>/dev/null || fail "python3-pytest is not installed: scripts/setup.sh installs it"
cat >"$WS/test_wl.py" <<'PYT'
import os, tempfile

def test_tmp_is_writable():
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"x")

def test_workspace_file(tmp_path):
    (tmp_path / "a").write_text("a")
    assert os.path.exists("test_wl.py")

def test_fails_on_purpose():
    assert 1 + 1 == 3
PYT
run_in --timeout 120 -- "$PY" -m pytest -q -p no:cacheprovider test_wl.py
expect_eq "$RC" 1 "pytest's exit status with one failure"
expect_contains "$OUT" "1 failed, 2 passed" "pytest's counts"
