# A toolchain under the home directory (pyenv, nvm, ~/.local): the message
# names the host path the sandbox cannot see and the flag that adds it.
. "$(dirname "$0")/lib.sh"
tool="$HOME/.cordon-wl-toolchain-$$"
trap 'rm -rf "$WL_DIR" "$tool"' EXIT
mkdir -p "$tool/versions/1.0/bin" "$WS/venv/bin"
printf '#!/bin/sh\necho interpreter ran\n' >"$tool/versions/1.0/bin/interp"
chmod +x "$tool/versions/1.0/bin/interp"
ln -s "$tool/versions/1.0/bin/interp" "$WS/venv/bin/python"
printf 'home = %s/versions/1.0/bin\n' "$tool" >"$WS/venv/pyvenv.cfg"
# 1. A symlink chain (a venv's bin/python into the toolchain).
run_in -- venv/bin/python
expect_eq "$RC" 127 "exit status"
expect_contains "$ERR" "$tool/versions/1.0/bin/interp" "the missing path"
expect_contains "$ERR" "--ro $tool/versions/1.0" "the flag that adds it"
# 2. The #! line of a script in the workspace.
printf '#!%s/versions/1.0/bin/interp\n' "$tool" >"$WS/run.sh" && chmod +x "$WS/run.sh"
run_in -- ./run.sh
expect_eq "$RC" 127 "exit status of the script"
expect_contains "$ERR" "the interpreter on the #! line of $WS/run.sh" "why the script cannot start"
# 3. A PATH entry outside the view.
run_in --setenv "PATH=$tool/versions/1.0/bin:/usr/bin:/bin" -- interp
expect_eq "$RC" 127 "exit status of a PATH lookup"
expect_contains "$ERR" "PATH entry $tool/versions/1.0/bin" "the PATH entry"
# With the flag it names, it works.
run_in --ro "$tool/versions/1.0" -- venv/bin/python
expect_eq "$RC" 0 "with --ro: $ERR"
expect_eq "$OUT" "interpreter ran" "the interpreter's output"
# 4. A path on the command line outside the view is named in the report.
run_in -- ls "$tool"
[ "$RC" -ne 0 ] || fail "ls of a hidden directory succeeded"
warnings="$(report_get '"\n".join(r["warnings"])')"
expect_contains "$warnings" "argument $tool exists on the host but is not visible" "the report names the argument"
