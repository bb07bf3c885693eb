#!/bin/sh
# Prepared sandboxes against bare fork+exec and a cold start_run
# (docs/prepared.md): /bin/true start-to-exit, interleaved, ratios first.
#   bench/prepared.sh [RUNS] [PROFILE]   (defaults: 30, workspace-write; needs build/)
set -eu
cd "$(dirname "$0")/.."
bin=$(pwd)/build/examples/cordon_prepared_bench
[ -x "$bin" ] || { echo "build it first: cmake --build build --target cordon_prepared_bench" >&2; exit 2; }
ws=$(mktemp -d "${TMPDIR:-/var/tmp}/cordon-prepared.XXXXXX")
trap 'rm -rf "$ws"' EXIT
cd "$ws" && "$bin" "${1:-30}" "${2:-workspace-write}"
