# --env PATH / --env HOME pass the host's values (they replace the profile's),
# and /var/tmp exists, writable and private.
. "$(dirname "$0")/lib.sh"
export PATH="/usr/local/bin:/usr/bin:/bin:/opt/cordon-wl-nothing"
run_in --env PATH --env HOME -- sh -c 'echo "$PATH"; echo "$HOME"'
expect_eq "$RC" 0 "the run: $ERR"
expect_eq "$OUT" "$PATH
$HOME" "PATH and HOME inside"
run_in -- sh -c 'echo "$HOME"'
expect_eq "$OUT" "/tmp" "HOME without --env (the profile's)"
marker="cordon-wl-$$-$RANDOM"
run_in -- sh -c "test -d /var/tmp && echo x > /var/tmp/$marker && cat /var/tmp/$marker"
expect_eq "$RC" 0 "/var/tmp inside: $ERR"
expect_eq "$OUT" "x" "a file in /var/tmp"
[ ! -e "/var/tmp/$marker" ] || { rm -f "/var/tmp/$marker"; fail "/var/tmp is the host's, not private"; }
