# The user's git identity works inside a built-in profile (git commit needs
# it), and nothing else of ~/.gitconfig is shown.
. "$(dirname "$0")/lib.sh"
need git
home="$WL_DIR/home"
mkdir -p "$home"
cat >"$home/.gitconfig" <<'G'
[user]
	name = Ada Workload
	email = ada@example.invalid
[url "https://token-secret@example.invalid/"]
	insteadOf = https://example.invalid/
G
git init -q "$WS"
(cd "$WS" && HOME="$home" "$CORDON" run --no-summary -- sh -c 'echo x > f && git add f && git commit -qm first && git log --format="%an <%ae>|%cn" -1; git config --global --list 2>&1 | grep -c token-secret; true') \
  >"$WL_DIR/out" 2>"$WL_DIR/err"
expect_eq "$?" 0 "the commit: $(cat "$WL_DIR/err")"
expect_eq "$(cat "$WL_DIR/out")" "Ada Workload <ada@example.invalid>|Ada Workload
0" "the identity, and no other config"
