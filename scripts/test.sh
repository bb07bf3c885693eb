#!/usr/bin/env bash
# The whole test suite: builds with g++ (and checks that clang 14 builds it
# warning-free), runs every test with CTest as the calling user, then runs the
# confinement tests again as an unprivileged user (created if missing) when
# started as root. The last line sums both runs: "N passed, N failed".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
test_user="${CORDON_TEST_USER:-cordon-test}"

"$root/scripts/build.sh"
if command -v clang++ >/dev/null; then
  echo "== clang 14 build (warnings are errors)"
  [ -f build-clang/build.ninja ] || cmake --preset clang >/dev/null
  cmake --build --preset clang
fi

results="$(mktemp -d /tmp/cordon-results-XXXXXX)"
chmod 1777 "$results"  # the unprivileged run writes its results here too
trap 'rm -rf "$results"' EXIT

echo "== tests as $(id -un) (uid $(id -u))"
set +e
ctest --preset default --output-junit "$results/root.xml" -j 2
root_status=$?
set -e

unpriv_status=0
if [ "$(id -u)" -eq 0 ]; then
  id "$test_user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$test_user"
  # The build tree may sit below a directory the user cannot enter (/root):
  # run copies of the binaries, pointed at a copy of the CLI.
  cp build/cordon build/tests/cordon_integration_tests build/tests/cordon_unit_tests "$results/"
  mkdir -p "$results/source" && cp -r schemas "$results/source/"
  chmod -R a+rX "$results"/cordon* "$results/source"
  echo "== confinement tests as $test_user (uid $(id -u "$test_user"))"
  # Unit tests that read the source tree stay with the first run; the
  # mechanism tests (seccomp, Landlock) run here too.
  for binary in cordon_integration_tests cordon_unit_tests; do
    filter='*'
    [ "$binary" = cordon_unit_tests ] && filter='Seccomp*:Landlock*'
    set +e
    runuser -u "$test_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$(getent passwd "$test_user" | cut -d: -f6)" \
      TERM="${TERM:-dumb}" CORDON_CLI="$results/cordon" CORDON_SOURCE_DIR="$results/source" \
      "$results/$binary" --gtest_brief=1 --gtest_filter="$filter" \
      --gtest_output="json:$results/$binary.unprivileged.json"
    s=$?
    set -e
    [ $s -eq 0 ] || unpriv_status=$s
  done
fi

python3 - "$results" <<'PY'
import glob, json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
passed = failed = skipped = 0
for x in glob.glob(d + "/root.xml"):
    t = ET.parse(x).getroot()
    total, f, s = int(t.get("tests", 0)), int(t.get("failures", 0)), int(t.get("skipped", 0))
    passed += total - f - s; failed += f; skipped += s
for j in glob.glob(d + "/*.unprivileged.json"):
    data = json.load(open(j))
    for suite in data.get("testsuites", []):
        for case in suite.get("testsuite", []):
            if case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                skipped += 1
            elif case.get("failures"):
                failed += 1
            else:
                passed += 1
print(f"cordon: {passed} passed, {failed} failed, {skipped} skipped")
PY
[ $root_status -eq 0 ] && [ $unpriv_status -eq 0 ]
