# A repository without .git/hooks (cloned with an empty template) is not
# refused: the directory is created, reported, and protected like any other.
. "$(dirname "$0")/lib.sh"
need git
git init -q --template= "$WS"
[ ! -e "$WS/.git/hooks" ] || fail "git init --template= made hooks/ after all"
run_in -- sh -c '(echo "exit 0" > .git/hooks/post-checkout) && echo hook=0 || echo hook=1; echo ok'
expect_eq "$RC" 0 "the run: $ERR"
expect_contains "$OUT" "hook=1" "adding a hook inside"
expect_contains "$OUT" "ok" "the command ran"
[ -d "$WS/.git/hooks" ] || fail ".git/hooks was not created"
[ -z "$(ls -A "$WS/.git/hooks")" ] || fail "a hook appeared on the host"
warnings="$(report_get '"\n".join(r["warnings"])')"
expect_contains "$warnings" "created the missing $WS/.git/hooks" "the report says it was created"
