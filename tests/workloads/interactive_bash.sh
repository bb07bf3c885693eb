# An interactive bash through a pty: a terminal of its own, job control (a
# foreground job stopped with Ctrl-Z, listed, killed), bash's exit status.
. "$(dirname "$0")/lib.sh"
need script bash pgrep
# script(1) gives cordon a terminal on stdin, and cordon is its foreground job
# (exec: a shell's child would share the shell's process group, and cordon
# then relays pipes, docs/cli.md); bash -i inside gets the private pty.
# Each line is typed once what it acts on is there (polled within 10 s, no
# fixed pauses): the output so far, the job among the host's processes.
job="sleep 20.$$"
seen() { # seen TEXT: the output so far holds TEXT
  local i
  for i in $(seq 200); do tr -d '\r' 2>/dev/null <"$WL_DIR/out" | grep -qF -- "$1" && return 0; sleep 0.05; done
  return 1
}
job_pid() { # the job's host PID, once it runs (bash gives it the terminal before the exec)
  local i
  for i in $(seq 200); do pgrep -fx "$job" && return 0; sleep 0.05; done
  return 1
}
dead() { # dead PID: a zombie or reaped. bash 5.2 may leave a killed stopped job a
  # zombie until it next waits for a child (measured: 7 of 25 runs without
  # cordon), so the next line runs an external command, whose wait reaps it.
  local i state
  for i in $(seq 200); do
    state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)"
    [ -z "$state" ] || [ "$state" = Z ] && return 0
    sleep 0.05
  done
  return 1
}
{
  echo 'tty | sed "s/^/tty=/"'
  seen "tty=/dev/pts/"
  echo "$job"
  pid="$(job_pid)"
  printf '\032'  # Ctrl-Z: the line discipline of the private pty stops the foreground job
  seen "Stopped"
  echo 'jobs'
  echo 'kill -KILL %1'
  dead "$pid"
  echo '/bin/true'
  echo 'jobs'
  echo 'echo bye-$((6*7)); exit 7'
  seen "bye-42"  # bash has read its last line; the end of input may come now
} | (cd "$WS" && script -qec "exec $CORDON run --no-summary -- bash --norc -i" /dev/null) >"$WL_DIR/out" 2>&1
RC=$?
OUT="$(tr -d '\r' <"$WL_DIR/out")"
expect_eq "$RC" 7 "bash's exit status through the pty: $OUT"
expect_contains "$OUT" "tty=/dev/pts/" "ttyname inside"
expect_contains "$OUT" "Stopped" "Ctrl-Z stopped the foreground job"
expect_contains "$OUT" "Killed                  $job" "kill %1 of the stopped job"
expect_not_contains "$OUT" "no job control" "bash's job control"
