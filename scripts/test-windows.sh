#!/usr/bin/env bash
# The Windows backend on this Linux host (docs/windows-backend.md, "Tests"):
# cross-compiles src/windows (plan compiler + launcher), cordon.exe and the
# wine test suite with mingw-w64, then runs the suite under wine64 in a fresh
# prefix. Usage: scripts/test-windows.sh [RESULTS_DIR]; with RESULTS_DIR the
# GoogleTest JSON goes to RESULTS_DIR/cordon_wine_tests.wine.json, where
# scripts/test.sh's summary counts it. Prints the time of each phase.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:-}"
build="${CORDON_WINDOWS_BUILD:-$root/build-windows}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

command -v x86_64-w64-mingw32-g++-posix >/dev/null || { echo "test-windows: mingw-w64 is missing (scripts/setup.sh)"; exit 1; }
wine64="$(command -v wine64 || true)"
[ -n "$wine64" ] || wine64=/usr/lib/wine/wine64
[ -x "$wine64" ] || { echo "test-windows: wine64 is missing (scripts/setup.sh)"; exit 1; }
wineserver="$(dirname "$wine64")/wineserver"
[ -x "$wineserver" ] || wineserver="$(command -v wineserver)"

t=$(now)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root/src/windows/cross" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64-x86_64.cmake" >/dev/null
fi
cmake --build "$build" -j2 --target cordon_exe cordon_wine_tests cordon_wine_child
echo "== windows: cross build $(since "$t") s"

# A private prefix, headless; its wineserver stays up for the run (started
# here with its output detached, so that no service process holds our pipes).
WINEPREFIX="$(mktemp -d /tmp/cordon-wine-XXXXXX)"
export WINEPREFIX WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY
cleanup() { "$wineserver" -k >/dev/null 2>&1 || true; rm -rf "$WINEPREFIX"; }
trap cleanup EXIT
t=$(now)
"$wineserver" -p </dev/null >/dev/null 2>&1
"$wine64" wineboot --init </dev/null >/dev/null 2>&1
"$wine64" cmd /c exit </dev/null >/dev/null 2>&1 || true
echo "== windows: wine prefix $(since "$t") s"

# The reports cordon.exe writes in the suite (tests/windows/wine/cli_test.cpp)
# go here, and are validated against schemas/report.v1.schema.json below.
reports="$(mktemp -d /tmp/cordon-wine-reports-XXXXXX)"
trap 'cleanup; rm -rf "$reports"' EXIT
export CORDON_WINE_REPORTS="Z:${reports//\//\\}"
t=$(now)
args=(--gtest_brief=1)
if [ -n "$results" ]; then args+=("--gtest_output=json:Z:$results/cordon_wine_tests.wine.json"); fi
set +e
if [ -n "$results" ]; then
  # The log beside the JSON: scripts/test.sh reads skip reasons from it.
  "$wine64" "$build/cordon_wine_tests.exe" "${args[@]}" </dev/null | tee "$results/cordon_wine_tests.wine.log"
  status=${PIPESTATUS[0]}
else
  "$wine64" "$build/cordon_wine_tests.exe" "${args[@]}" </dev/null
  status=$?
fi
set -e
echo "== windows: wine tests $(since "$t") s (exit $status)"
shopt -s nullglob
written=("$reports"/*.json)
# Each report the suite writes (a run and a refusal by `cordon.exe run`, a
# gate's run and a refused gate's report by `cordon.exe gate run`).
for expected in cli-run.json cli-refused.json gate-run.json gate-refused.json; do
  if [ ! -f "$reports/$expected" ]; then
    echo "== windows: $expected was not written"
    [ $status -ne 0 ] || status=1
  fi
done
if [ ${#written[@]} -eq 0 ]; then
  echo "== windows: no report was written"
  [ $status -ne 0 ] || status=1
elif ! python3 "$root/scripts/validate-reports.py" "${written[@]}"; then
  echo "== windows: a report does not follow schemas/report.v1.schema.json"
  [ $status -ne 0 ] || status=1
fi
exit $status
