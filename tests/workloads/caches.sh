# --cache pip: a persistent cache, writable, kept after the run, with the
# risk in the report.
. "$(dirname "$0")/lib.sh"
marker="cordon-wl-$$-$RANDOM"
run_in --cache pip -- sh -c 'echo "$PIP_CACHE_DIR"; echo kept > "$PIP_CACHE_DIR/'"$marker"'"'
expect_eq "$RC" 0 "the run: $ERR"
expect_eq "$OUT" "$HOME/.cache/pip" "PIP_CACHE_DIR"
[ "$(cat "$HOME/.cache/pip/$marker" 2>/dev/null)" = kept ] || fail "the cache file was not kept"
rm -f "$HOME/.cache/pip/$marker"
warnings="$(report_get '"\n".join(r["warnings"])')"
expect_contains "$warnings" "persistent cache pip at $HOME/.cache/pip is writable" "the risk in the report"
run_in --cache nonsense -- true
expect_eq "$RC" 125 "an unknown cache"
