# Threads and forks (glibc's clone3 fallback) are no violations; a real
# attempt to leave the policy still is. No warning is printed twice.
. "$(dirname "$0")/lib.sh"
run_in -- "$PY" -c 'import threading, os, subprocess
ts = [threading.Thread(target=lambda: None) for _ in range(20)]
[t.start() for t in ts]; [t.join() for t in ts]
subprocess.run(["true"], check=True)
print("threads ok")'
expect_eq "$RC" 0 "threads: $ERR"
expect_eq "$OUT" "threads ok" "output"
expect_eq "$(report_get 'r["violations"]')" "[]" "violations of an ordinary threaded program"
expect_eq "$(report_get 'len(r["warnings"]) == len(set(r["warnings"]))')" "true" "no warning repeated"
run_in -- unshare -U true
[ "$RC" -ne 0 ] || fail "unshare -U succeeded"
expect_contains "$(report_get '[v["target"] for v in r["violations"]]')" "unshare" "a real attempt is still listed"
