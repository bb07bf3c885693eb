# 20 concurrent runs on one workspace: each writes its own file, all succeed.
. "$(dirname "$0")/lib.sh"
git -C "$WS" init -q
pids=()
for i in $(seq 1 20); do
  (cd "$WS" && "$CORDON" run --no-summary --report "$WL_DIR/r$i.json" -- sh -c "echo run-$i > out-$i.txt; git status --short >/dev/null") \
    >"$WL_DIR/o$i" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
expect_eq "$failed" 0 "runs that failed: $(cat "$WL_DIR"/o* | head -5)"
for i in $(seq 1 20); do
  expect_eq "$(cat "$WS/out-$i.txt")" "run-$i" "the file of run $i"
  expect_eq "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["outcome"])' "$WL_DIR/r$i.json")" "completed" "report $i"
done
