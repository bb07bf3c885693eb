# A dev server with --allow-local-binding (and, below, under the default
# profile): reached from inside the sandbox, not from the host (the sandbox
# has its own loopback).
. "$(dirname "$0")/lib.sh"
need curl
echo "hello from the dev server" >"$WS/index.html"
port=$((20000 + RANDOM % 20000))
(cd "$WS" && "$CORDON" run --no-summary --allow-local-binding --timeout 60 -- sh -c "
  $PY -m http.server $port --bind 127.0.0.1 >/dev/null 2>&1 & server=\$!
  for i in \$(seq 100); do curl -s http://127.0.0.1:$port/index.html && break; sleep 0.1; done
  touch started
  for i in \$(seq 600); do [ -e looked ] && break; sleep 0.05; done; kill \$server") >"$WL_DIR/out" 2>"$WL_DIR/err" &
runner=$!
for i in $(seq 150); do [ -e "$WS/started" ] && break; sleep 0.1; done
[ -e "$WS/started" ] || fail "the dev server never came up: $(cat "$WL_DIR/err")"
# The server inside runs until the host has looked (the file "looked"), not
# for a fixed time: a miss is not a server that had already stopped.
host_code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/index.html")"
touch "$WS/looked"
wait $runner
RC=$?
expect_eq "$RC" 0 "the run: $(cat "$WL_DIR/err")"
expect_contains "$(cat "$WL_DIR/out")" "hello from the dev server" "the page fetched inside"
expect_eq "$host_code" "000" "the host reaching the server inside"
# Without the flag (the default profile, network denied) the loopback is the
# sandbox's own as well: binding works, the host's server is not there.
run_in -- "$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', $port)); print('bound')"
expect_eq "$RC" 0 "binding under the default profile: $ERR"
expect_eq "$OUT" "bound" "binding under the default profile"
