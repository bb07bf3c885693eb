# A venv made inside the sandbox, and pip install --no-index of a local wheel
# (no index, no network).
. "$(dirname "$0")/lib.sh"
# A minimal pure-Python wheel, written by hand (PEP 427): no setuptools needed.
"$PY" - "$WS/wheels" <<'PYW'
import base64, hashlib, os, sys, zipfile
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
files = {"wlgreet/__init__.py": "def greet(name):\n    return 'hello ' + name\n",
         "wlgreet-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: wlgreet\nVersion: 1.0\n",
         "wlgreet-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = []
with zipfile.ZipFile(os.path.join(out, "wlgreet-1.0-py3-none-any.whl"), "w") as z:
    for name, text in files.items():
        data = text.encode(); z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("wlgreet-1.0.dist-info/RECORD,,")
    z.writestr("wlgreet-1.0.dist-info/RECORD", "\n".join(record) + "\n")
PYW
run_in --timeout 120 -- sh -c '/usr/bin/python3 -m venv venv && venv/bin/pip install -q --no-index --find-links wheels wlgreet && venv/bin/python -c "import wlgreet, sys; print(wlgreet.greet(\"venv\"), sys.prefix)"'
expect_eq "$RC" 0 "venv + pip: $ERR"
expect_eq "$OUT" "hello venv $WS/venv" "the installed package, from the venv"
[ -f "$WS/venv/lib/python3"*/site-packages/wlgreet/__init__.py ] || fail "the package is not in the venv on the host"
