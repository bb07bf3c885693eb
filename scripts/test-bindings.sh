#!/usr/bin/env bash
# The C API and its bindings (docs/library.md, docs/python.md, docs/node.md):
# the C tests (tests/capi/) as the unprivileged test user (ctest runs them as
# the calling user), the Python package's pytest suite against the package
# installed with pip, and the Node package's `node --test` suite, as the
# calling user and, when started as root, as the unprivileged user. Results
# are JUnit files $RESULTS/bindings-*.xml, which scripts/test.sh's summary
# counts.
#
# Usage: scripts/test-bindings.sh RESULTS [BUILD_DIR]   (BUILD_DIR: build/)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:?usage: test-bindings.sh RESULTS [BUILD_DIR]}"
build="${2:-$root/build}"
test_user="${CORDON_TEST_USER:-cordon-test}"
python=/usr/bin/python3  # Debian's, with python3-pytest (scripts/setup.sh)
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"

echo "== C API and bindings"
cmake --build "$build" --target cordon_c cordon_node cordon_capi_tests cordon_capi_probe cordon_supervisor \
  cordon_fs_worker cordon_cli || exit 1

# Node's JUnit reporter and pytest put no counts on <testsuites>; the summary
# reads them there. This adds them (from the <testcase> elements).
count_junit() {
  "$python" - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
path = sys.argv[1]
tree = ET.parse(path)
top = tree.getroot()
cases = list(top.iter("testcase"))
failed = sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None)
skipped = sum(1 for c in cases if c.find("skipped") is not None)
top.set("tests", str(len(cases)))
top.set("failures", str(failed))
top.set("skipped", str(skipped))
tree.write(path, encoding="utf-8", xml_declaration=True)
PY
}

# A private copy of what the suites need, readable by the unprivileged user:
# the library, the addon, the helper, the C tests, the package installed with
# pip, and the parts of the tree the tests read (docs, schemas, the bindings).
stage="$results/bindings-stage"
rm -rf "$stage" && mkdir -p "$stage/lib" "$stage/tree/docs"
cp -L "$build/src/capi/libcordon_c.so.1" "$build/bindings/node/cordon.node" "$build/src/supervisor/cordon-supervisor" \
  "$build/cordon" \
  "$build/src/fsworker/cordon-fs-worker" "$build/tests/capi/capi_test" "$build/tests/capi/capi-probe" "$stage/lib/"
cp -r "$root/schemas" "$stage/tree/"
cp "$root"/docs/{python,node,library}.md "$stage/tree/docs/"
mkdir -p "$stage/tree/bindings" "$stage/tree/tests"
cp -r "$root/bindings/python" "$root/bindings/node" "$stage/tree/bindings/"
# The scripted agent session every driver reads (tests/agent_session/scenario.json).
cp -r "$root/tests/agent_session" "$stage/tree/tests/"
rm -rf "$stage/tree/bindings/python/build" "$stage/tree/bindings/python"/*.egg-info
"$python" -m pip install --quiet --no-build-isolation --no-deps --target "$stage/site" "$stage/tree/bindings/python" \
  2>&1 | grep -v "Running pip as the 'root' user" || true
rm -rf "$stage/tree/bindings/python/build" "$stage/tree/bindings/python"/*.egg-info
status=0
# `cordon mcp` with the official MCP client library (tests/mcp): installed from
# npm into the stage, never into the tree.
mkdir -p "$stage/mcp" && cp "$root/tests/mcp/package.json" "$root/tests/mcp/client.test.mjs" \
  "$root/tests/mcp/agent_session.test.mjs" "$root/tests/mcp/run.sh" "$stage/mcp/"
(cd "$stage/mcp" && npm install --no-audit --no-fund --loglevel=error) || status=1
chmod -R a+rX "$stage"
# Runs one suite: $1 = the user, $2 = the result file's suffix.
run_suites() {
  local user="$1" suffix="$2" home
  local -a as=()
  if [ "$user" != "$(id -un)" ]; then
    home="$(getent passwd "$user" | cut -d: -f6)"
    as=(runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" TERM="${TERM:-dumb}")
  else
    as=(env)
  fi
  local -a common=(CORDON_SUPERVISOR="$stage/lib/cordon-supervisor" CORDON_FS_WORKER="$stage/lib/cordon-fs-worker"
    LD_LIBRARY_PATH="$stage/lib" CORDON_AGENT_SESSION="$stage/tree/tests/agent_session")
  if [ "$user" != "$(id -un)" ]; then
    echo "== C API tests as $user"
    # 77: cases were skipped (each named with its reason in the JUnit file), none failed.
    "${as[@]}" "${common[@]}" "$stage/lib/capi_test" --probe "$stage/lib/capi-probe" \
      --junit "$results/bindings-capi.$suffix.xml"
    local s=$?
    [ $s -eq 0 ] || [ $s -eq 77 ] || status=1
  fi
  echo "== Python package (pytest) as $user"
  (cd "$stage/tree/bindings/python" && "${as[@]}" "${common[@]}" CORDON_LIBRARY="$stage/lib/libcordon_c.so.1" \
    CORDON_PYTHON_PATH="$stage/site" PYTHONDONTWRITEBYTECODE=1 "$python" -m pytest -q -p no:cacheprovider \
    --junitxml="$results/bindings-python.$suffix.xml" tests) || status=1
  count_junit "$results/bindings-python.$suffix.xml"
  echo "== Node package (node --test) as $user"
  (cd "$stage/tree/bindings/node" && "${as[@]}" "${common[@]}" CORDON_NODE_ADDON="$stage/lib/cordon.node" \
    node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit \
    --test-reporter-destination="$results/bindings-node.$suffix.xml" test/) || status=1
  count_junit "$results/bindings-node.$suffix.xml"
  echo "== cordon mcp with the MCP client library (node --test) as $user"
  (cd "$stage/mcp" && "${as[@]}" "${common[@]}" CORDON="$stage/lib/cordon" \
    node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit \
    --test-reporter-destination="$results/bindings-mcp.$suffix.xml" client.test.mjs agent_session.test.mjs) || status=1
  count_junit "$results/bindings-mcp.$suffix.xml"
}

run_suites "$(id -un)" "$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
  id "$test_user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$test_user"
  run_suites "$test_user" unprivileged
fi
# The install steps of docs/python.md and docs/node.md, extracted from the
# pages and run on a clean copy (as the test user when started as root).
"$root/scripts/test-install-docs.sh" "$results" "$build" || status=1
rm -rf "$stage"
exit $status
