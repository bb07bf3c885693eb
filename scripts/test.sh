#!/usr/bin/env bash
# The whole test suite: builds with g++ (and checks that clang 14 builds it
# warning-free), runs every test with CTest as the calling user (unit,
# integration and the adversarial suite in tests/escape/), then runs the
# confinement tests again as an unprivileged user (created if missing) when
# started as root, and finally the unit and integration tests under
# AddressSanitizer + UndefinedBehaviorSanitizer (preset asan, build-asan/)
# and the adversarial suite against that instrumented CLI, where any sanitizer
# report fails the run; the newcomer path (scripts/test-newcomer.sh) runs
# the README's first command on a clean clone. Each skipped test is named
# with its reason. The last line sums every run:
# "cordon: N passed, N failed, N skipped".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# ccache (when installed) may reuse objects built from the same sources in another
# checkout of this repository: paths are made relative to it.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
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
ctest --preset default --output-junit "$results/root.xml" -j 2  # the summary at the end lists each skip's reason
root_status=$?
set -e

unpriv_status=0
if [ "$(id -u)" -eq 0 ]; then
  id "$test_user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$test_user"
  # The build tree may sit below a directory the user cannot enter (/root):
  # run copies of the binaries, pointed at a copy of the CLI.
  cp build/cordon build/tests/cordon_integration_tests build/tests/cordon_unit_tests \
    build/tests/cordon_escape_tests build/tests/escape-probe build/tests/escape-setuid-helper \
    build/tests/governance/cordon_governance_tests build/tests/run/cordon_run_api_tests \
    build/src/supervisor/cordon-supervisor "$results/"
  mkdir -p "$results/source/docs" && cp -r schemas "$results/source/" && cp docs/governance.md "$results/source/docs/"
  cp build/tests/gates/cordon_gates_tests "$results/"  # `cordon gate run` (tests/gates/)
  cp build/tests/sidecars/cordon_sidecars_tests "$results/"  # `cordon sidecar` (tests/sidecars/)
  cp build/tests/fsworker/cordon_fsworker_tests build/src/fsworker/cordon-fs-worker "$results/"  # docs/fs-worker.md
  cp build/tests/prepared/cordon_prepared_tests "$results/"  # prepared sandboxes (tests/prepared/)
  chmod -R a+rX "$results"/cordon* "$results"/escape-* "$results/source"
  # The escape suite needs a setuid-root program to show that running one
  # gains nothing; only root can make it. It prints its ids and nothing else,
  # and goes away with $results.
  mkdir -p "$results/setuid" && chmod 755 "$results/setuid"
  install -o root -g root -m 4755 build/tests/escape-setuid-helper "$results/setuid/escape-setuid-helper"
  echo "== confinement tests as $test_user (uid $(id -u "$test_user"))"
  # Unit tests that read the source tree stay with the first run; the
  # mechanism tests (seccomp, Landlock) run here too.
  for binary in cordon_integration_tests cordon_escape_tests cordon_unit_tests cordon_governance_tests \
    cordon_gates_tests cordon_run_api_tests cordon_sidecars_tests cordon_fsworker_tests \
    cordon_prepared_tests; do
    filter='*'
    [ "$binary" = cordon_unit_tests ] && filter='Seccomp*:Landlock*:CgroupDiscovery*:BrokerProcess*'
    set +e
    runuser -u "$test_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$(getent passwd "$test_user" | cut -d: -f6)" \
      TERM="${TERM:-dumb}" CORDON_CLI="$results/cordon" CORDON_SOURCE_DIR="$results/source" \
      CORDON_ESCAPE_PROBE="$results/escape-probe" CORDON_ESCAPE_HELPER="$results/escape-setuid-helper" \
      CORDON_ESCAPE_SETUID_HELPER="$results/setuid/escape-setuid-helper" CORDON_SUPERVISOR="$results/cordon-supervisor" \
      CORDON_FS_WORKER="$results/cordon-fs-worker" \
      "$results/$binary" --gtest_brief=1 --gtest_filter="$filter" \
      --gtest_output="json:$results/$binary.unprivileged.json" | tee "$results/$binary.unprivileged.log"
    s=${PIPESTATUS[0]}
    set -e
    [ $s -eq 0 ] || unpriv_status=$s
  done
fi

# The kernel matrix (docs/kernels.md): Debian 12's kernel 6.1 in QEMU, three configurations, root only.
kernel_status=0; [ "$(id -u)" -ne 0 ] || "$root/scripts/kernel-matrix.sh" --no-docs --results "$results" || kernel_status=$?
# The newcomer path: the README's first command on a clean clone (scripts/test-newcomer.sh).
set +e
"$root/scripts/test-newcomer.sh" "$results"
newcomer_status=$?
set -e

# The workload suite (docs/workloads.md): real builds, venvs, npm, git, a dev server, a pty, concurrent runs.
workloads_status=0; "$root/scripts/test-workloads.sh" "$results" || workloads_status=$?

# Sanitizers: the unit and integration tests again, built with ASan + UBSan.
# The cordon binary under test is the instrumented one; it forks and clones,
# and the runtime comes along into the child until exec. Reports go to files
# as well as failing the process, so that a report from a process whose exit
# status a test does not look at still fails the run.
echo "== unit and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer"
[ -f build-asan/build.ninja ] || cmake --preset asan >/dev/null
cmake --build --preset asan --target cordon_cli cordon_unit_tests cordon_integration_tests
mkdir -p "$results/sanitizer"
set +e
ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$results/sanitizer/asan" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$results/sanitizer/ubsan" \
  ctest --test-dir build-asan -L 'unit|integration' --output-on-failure --output-junit "$results/asan.xml" -j 2
asan_status=$?
# The adversarial suite (built without sanitizers: its probe must run inside
# the sandbox as is) against the instrumented CLI.
CORDON_CLI="$root/build-asan/cordon" \
ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:log_path=$results/sanitizer/asan" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$results/sanitizer/ubsan" \
  build/tests/cordon_escape_tests --gtest_brief=1 --gtest_output="json:$results/cordon_escape_tests.asan.json"
s=$?
[ $s -eq 0 ] || asan_status=$s
set -e
if compgen -G "$results/sanitizer/*" >/dev/null; then
  echo "cordon: sanitizer reports:"
  cat "$results"/sanitizer/*
  asan_status=1
fi

# The Windows backend, cross-compiled and run under wine (scripts/test-windows.sh).
windows_status=0; "$root/scripts/test-windows.sh" "$results" || windows_status=$?
# The C API as the test user, the Python and Node packages (scripts/test-bindings.sh).
bindings_status=0; "$root/scripts/test-bindings.sh" "$results" || bindings_status=$?

# Release and Debian-flags builds, install, consumers, the .deb (scripts/test-packaging.sh).
packaging_status=0; "$root/scripts/test-packaging.sh" "$results" || packaging_status=$?

# A short slice of fuzzing (scripts/fuzz.sh runs longer on request).
echo "== fuzzing: ${CORDON_FUZZ_SECONDS:-10} s per target"
set +e
"$root/scripts/fuzz.sh" "${CORDON_FUZZ_SECONDS:-10}"
fuzz_status=$?
set -e

python3 - "$results" <<'PY'
import glob, json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
passed = failed = skipped = 0
failures = []  # every failed test, by name and where it ran: printed last, so a clipped log still shows them
reasons = []  # every skip, with the reason the test gave (GTEST_SKIP() << "...")
def gtest_reason(text):
    # gtest prints "file:line: Skipped\nREASON\n" before "[  SKIPPED ]".
    if "Skipped" not in (text or ""):
        return ""
    rest = text.split("Skipped", 1)[1].split("[  SKIPPED", 1)[0]
    return " ".join(rest.split())
for x in glob.glob(d + "/root.xml") + glob.glob(d + "/asan.xml") + glob.glob(d + "/newcomer.xml") + glob.glob(d + "/bindings-*.xml") + glob.glob(d + "/packaging.xml"):
    t = ET.parse(x).getroot()
    total, f, s = int(t.get("tests", 0)), int(t.get("failures", 0)), int(t.get("skipped", 0))
    passed += total - f - s; failed += f; skipped += s
    for case in t.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failures.append(f"{case.get('name')} ({x.rsplit('/', 1)[-1]})")
        if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            why = gtest_reason(case.findtext("system-out")) or (case.find("skipped").get("message", "") if case.find("skipped") is not None else "")
            reasons.append(f"{case.get('name')}: {why or 'no reason given'}")
def skips_in_log(json_path, data):
    # gtest's JSON has no skip message; its brief log has "FILE:N: Skipped" and
    # the reason. The test it belongs to is the one of FILE whose TEST line is
    # the last before N.
    import os, re
    log = json_path[:-len(".json")] + ".log"
    if not os.path.exists(log):
        return {}
    starts = [(c.get("file"), c.get("line", 0), f"{s.get('name')}.{c.get('name')}")
              for s in data.get("testsuites", []) for c in s.get("testsuite", [])]
    out = {}
    lines = open(log, errors="replace").read().split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^(.*):(\d+): Skipped$", line)
        if not m:
            continue
        owners = [t for t in starts if t[0] == m.group(1) and t[1] <= int(m.group(2))]
        if owners:
            reason = []
            for follow in lines[i + 1:]:
                if not follow.strip() or follow.startswith("[") or re.match(r"^.*:\d+: (Skipped|Failure)$", follow):
                    break
                reason.append(follow.strip())
            out[max(owners, key=lambda t: t[1])[2]] = " ".join(reason)
    return out
for j in glob.glob(d + "/*.unprivileged.json") + glob.glob(d + "/*.asan.json") + glob.glob(d + "/*.kernels.json") + glob.glob(d + "/*.wine.json") + glob.glob(d + "/*.workloads.json"):
    data = json.load(open(j))
    logged = skips_in_log(j, data)
    for suite in data.get("testsuites", []):
        for case in suite.get("testsuite", []):
            if case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                skipped += 1
                why = " ".join(s.get("message", "") for s in case.get("skipped", []) if isinstance(s, dict))
                name = f"{suite.get('name')}.{case.get('name')}"
                why = gtest_reason(why) or why.strip() or logged.get(name, "") or "no reason given"
                reasons.append(f"{name} ({j.rsplit('/', 1)[-1]}): {why}")
            elif case.get("failures"):
                failed += 1
                failures.append(f"{suite.get('name')}.{case.get('name')} ({j.rsplit('/', 1)[-1]})")
            else:
                passed += 1
for r in reasons:
    print(f"cordon: skipped {r}")
for f in failures:
    print(f"cordon: FAILED {f}")
print(f"cordon: {passed} passed, {failed} failed, {skipped} skipped")
PY
# One line naming each stage's exit status, last, so a clipped log still says which stage failed.
echo "cordon: stages: root=$root_status unprivileged=$unpriv_status kernels=$kernel_status newcomer=$newcomer_status" \
  "workloads=$workloads_status sanitizers=$asan_status windows=$windows_status bindings=$bindings_status" \
  "packaging=$packaging_status fuzz=$fuzz_status"
[ $root_status -eq 0 ] && [ $newcomer_status -eq 0 ] && [ $unpriv_status -eq 0 ] && [ $asan_status -eq 0 ] && [ $fuzz_status -eq 0 ] && [ $kernel_status -eq 0 ] && [ $windows_status -eq 0 ] && [ $bindings_status -eq 0 ] && [ $workloads_status -eq 0 ] && [ $packaging_status -eq 0 ]
