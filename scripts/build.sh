#!/usr/bin/env bash
# Configures and builds cordon with the default preset (g++, build/).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake --preset default >/dev/null
fi
cmake --build --preset default
