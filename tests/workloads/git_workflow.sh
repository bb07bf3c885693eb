# git clone, commit, branch, rebase, submodule and a worktree created inside,
# with the hooks of every repository still protected.
. "$(dirname "$0")/lib.sh"
need git
origin="$WS/origin"; lib="$WS/lib"
git init -q "$origin" && echo a >"$origin/a" && git -C "$origin" add a && git -C "$origin" commit -qm a
git init -q "$lib" && echo l >"$lib/l" && git -C "$lib" add l && git -C "$lib" commit -qm l
run_in --setenv GIT_AUTHOR_NAME=T --setenv GIT_AUTHOR_EMAIL=t@x --setenv GIT_COMMITTER_NAME=T --setenv GIT_COMMITTER_EMAIL=t@x \
  --timeout 120 -- sh -ec '
  git clone -q origin clone && cd clone
  git checkout -qb topic && echo b > b && git add b && git commit -qm b
  git checkout -q - && echo c > c && git add c && git commit -qm c
  git checkout -q topic && git rebase -q master 2>/dev/null || git rebase -q main
  git log --format=%s | tr "\n" " "; echo
  git -c protocol.file.allow=always submodule add -q ../lib lib >/dev/null 2>&1 && git commit -qm sub
  git submodule status | cut -c43- 
  git worktree add -q ../wt-inside -b other && git -C ../wt-inside status --short --branch
  echo "exit 0" > .git/hooks/pre-commit 2>/dev/null && echo hook-written || echo hook-refused'
expect_eq "$RC" 0 "git: $ERR"
expect_contains "$OUT" "b c a" "history after the rebase"
expect_contains "$OUT" "lib (heads/" "the submodule"
expect_contains "$OUT" "## other" "the worktree made inside"
# The clone is a new repository inside the run: its hooks are the command's, and the report says so.
expect_contains "$(report_get '[v["kind"] for v in r["violations"]]')" "repository_created" "the new repository is reported"
# A second run protects the clone's hooks like any repository's.
run_in -- sh -c '(echo "exit 0" > clone/.git/hooks/pre-commit) && echo hook=0 || echo hook=1; (echo "exit 0" > clone/.git/modules/lib/hooks/post-checkout) && echo subhook=0 || echo subhook=1'
expect_contains "$OUT" "hook=1" "a hook of the clone"
expect_contains "$OUT" "subhook=1" "a hook of the submodule"
