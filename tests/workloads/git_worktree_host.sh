# A worktree created on the host works under the default profile, with its
# repository's hooks and config as protected as the repository's own.
. "$(dirname "$0")/lib.sh"
need git
main="$WL_DIR/main"
git init -q "$main" && echo one >"$main/a.txt" && git -C "$main" add a.txt && git -C "$main" commit -q -m one
rmdir "$WS" && git -C "$main" worktree add -q "$WS" -b feature
run_in -- sh -c 'git status --short --branch && echo two > a.txt && git -c user.name=T -c user.email=t@x commit -qam two && git log --format=%s -1'
expect_eq "$RC" 0 "git in the worktree: $ERR"
expect_contains "$OUT" "## feature" "git status"
expect_contains "$OUT" "two" "the commit made inside"
expect_eq "$(git -C "$main" log --format=%s -1 feature)" "two" "the commit is in the repository afterwards"
warnings="$(report_get '"\n".join(r["warnings"])')"
expect_contains "$warnings" "belongs to the repository $main/.git" "the report says the repository was added"
# Hooks and config of the main repository stay read-only.
run_in -- sh -c "(echo 'exit 0' > $main/.git/hooks/pre-commit) && echo hook=0 || echo hook=1; git config core.pager evil && echo config=0 || echo config=1"
expect_contains "$OUT" "hook=1" "writing a hook of the main repository"
expect_contains "$OUT" "config=" "config write attempted"
expect_not_contains "$OUT" "config=0" "writing the main repository's config"
[ ! -e "$main/.git/hooks/pre-commit" ] || fail "a hook appeared on the host"
expect_eq "$(git -C "$main" config core.pager || true)" "" "the config is unchanged"
