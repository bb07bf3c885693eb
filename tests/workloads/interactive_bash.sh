# An interactive bash through a pty: a terminal of its own, job control (a
# foreground job stopped with Ctrl-Z, listed, killed), bash's exit status.
. "$(dirname "$0")/lib.sh"
need script bash
# script(1) gives cordon a terminal on stdin, and cordon is its foreground job
# (exec: a shell's child would share the shell's process group, and cordon
# then relays pipes, docs/cli.md); bash -i inside gets the private pty.
{
  echo 'tty | sed "s/^/tty=/"'
  echo 'sleep 20'
  sleep 1.5
  printf '\032'  # Ctrl-Z: the line discipline of the private pty stops the foreground job
  sleep 0.5
  echo 'jobs'
  # bash learns of the job's end from SIGCHLD and reports it at the next
  # prompt. The pause is bash's own (a sleep after the kill, on the same
  # line): with only the pipe's pause, on a busy machine `jobs` sometimes
  # ran before bash knew of the end (2 of 10 runs beside three CPU hogs).
  echo 'kill -KILL %1; sleep 1'
  sleep 1.5
  echo 'jobs'
  echo 'exit 7'
  sleep 0.5
} | (cd "$WS" && script -qec "exec $CORDON run --no-summary -- bash --norc -i" /dev/null) >"$WL_DIR/out" 2>&1
RC=$?
OUT="$(tr -d '\r' <"$WL_DIR/out")"
expect_eq "$RC" 7 "bash's exit status through the pty: $OUT"
expect_contains "$OUT" "tty=/dev/pts/" "ttyname inside"
expect_contains "$OUT" "Stopped" "Ctrl-Z stopped the foreground job"
expect_contains "$OUT" "Killed                  sleep 20" "kill %1 of the stopped job"
expect_not_contains "$OUT" "no job control" "bash's job control"
