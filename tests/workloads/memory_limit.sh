# --memory: node and a 300 MB allocation work under a ceiling that leaves room
# for them (RLIMIT_AS, the address space, did not), and a larger allocation fails.
. "$(dirname "$0")/lib.sh"
need node
run_in --memory 512M --accept memory=partial -- node -e 'console.log("node", 1)'
expect_eq "$RC" 0 "node -e 1 under 512M: $ERR"
expect_eq "$OUT" "node 1" "node's output"
run_in --memory 1G --accept memory=partial -- "$PY" -c 'b = bytearray(300 << 20); print("300 MB ok")'
expect_eq "$OUT" "300 MB ok" "300 MB under 1G: $ERR"
level="$(report_get 'r["controls"]["memory"]["level"]')"
if [ "$level" = partial ]; then
  expect_eq "$(report_get 'r["controls"]["memory"]["mechanism"]')" "rlimit (RLIMIT_DATA)" "the per-process proxy"
  run_in --memory 256M --accept memory=partial -- "$PY" -c 'b = bytearray(600 << 20)'
  expect_contains "$ERR" "MemoryError" "an allocation past the ceiling"
else
  expect_eq "$level" enforced "the memory level with a cgroup"
  run_in --memory 256M -- "$PY" -c 'b = bytearray(600 << 20); b[::4096] = b"x" * len(b[::4096])'
  expect_eq "$(report_get 'r["limits_hit"]["memory"]')" "true" "a hit is reported"
fi
