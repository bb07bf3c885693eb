# A workspace under /tmp: writes beside it fail visibly instead of vanishing
# into the run's private /tmp (issue 12, "A workspace under /tmp").
. "$(dirname "$0")/lib.sh"
echo keep >"$WS/file.txt"
run_in -- sh -c 'echo inside > new.txt; (echo notes > ../notes.txt) && echo notes=0 || echo notes=1; mkdir ../build && echo build=0 || echo build=1'
expect_eq "$RC" 0 "the shell itself"
expect_contains "$OUT" "notes=1" "writing ../notes.txt must fail"
expect_contains "$OUT" "build=1" "mkdir ../build must fail"
expect_contains "$ERR" "Read-only file system" "the error the command sees"
expect_eq "$(cat "$WS/new.txt")" "inside" "a write inside the workspace"
[ ! -e "$WL_DIR/notes.txt" ] || fail "../notes.txt must not appear on the host either"
# git worktree add ../x fails with the same error instead of succeeding into nothing.
git -C "$WS" init -q && git -C "$WS" commit -q --allow-empty -m init
run_in -- git worktree add ../x
[ "$RC" -ne 0 ] || fail "git worktree add ../x must fail, it exited 0: $ERR"
# A workspace directly in /tmp has the private /tmp as its parent: the report says what happens there.
direct="$(mktemp -d /tmp/cordon-wl-direct-XXXXXX)"
trap 'rm -rf "$WL_DIR" "$direct"' EXIT
(cd "$direct" && "$CORDON" run --no-summary --report "$WL_DIR/direct.json" -- true) || fail "a run in $direct"
warnings="$("$PY" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["warnings"]))' "$WL_DIR/direct.json")"
expect_contains "$warnings" "lies directly in /tmp" "the warning for a workspace directly in /tmp"
