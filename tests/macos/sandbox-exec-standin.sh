#!/bin/sh
# A stand-in for /usr/bin/sandbox-exec on hosts without Seatbelt
# (tests/macos/launcher_test.cpp): checks the argument shape the macOS launcher
# builds (sandbox-exec -p PROFILE [-DKEY=VALUE]... -- COMMAND...) and execs the
# command in its own process, as sandbox-exec does after applying the profile.
# A malformed call exits 90 (no -p), 91 (no --) or 92 (no command).
[ "$1" = "-p" ] && [ $# -ge 2 ] || exit 90
shift 2
while [ $# -gt 0 ]; do
  case "$1" in
    -D?*=*) shift ;;
    --) shift; break ;;
    *) exit 91 ;;
  esac
done
[ $# -gt 0 ] || exit 92
exec "$@"
