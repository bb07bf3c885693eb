#!/usr/bin/env bash
# The whole test suite, in stages: build (g++);
# root (every test with CTest as the calling user: unit, integration, the
# adversarial suite in tests/escape/); as root also unprivileged (the
# confinement tests again as the user cordon-test, created if missing, in two
# parallel lanes) and kernels (scripts/kernel-matrix.sh); newcomer (the
# README's first command on a clean clone, scripts/test-newcomer.sh);
# workloads; sanitizers (the one clang 14 tree, build-clang/: every target,
# the libFuzzer ones too, with warnings as errors and AddressSanitizer +
# UndefinedBehaviorSanitizer, and every test label run from it: any sanitizer
# report fails the run); windows; bindings; packaging; fuzz (the libFuzzer
# targets of build-clang/). Each skipped test is named with its reason, then
# "cordon: N passed, N failed, N skipped" sums every run, and the last line
# names each stage's exit status and seconds (also written as JUnit to
# build/cordon-stages.xml).
#
# Usage: scripts/test.sh [STAGE...]: only the stages named (the build always
# runs), e.g. `scripts/test.sh root unprivileged`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# ccache (when installed) may reuse objects built from the same sources in another
# checkout of this repository: paths are made relative to it.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cd "$root"
test_user="${CORDON_TEST_USER:-cordon-test}"
wanted=("$@")

results="$(mktemp -d /tmp/cordon-results-XXXXXX)"
chmod 1777 "$results"  # the unprivileged run writes its results here too
trap 'rm -rf "$results"' EXIT

# The host's own declaration of what it offers, read from the kernel by a
# script that is not cordon's code (scripts/host-expect.py): a test that would
# skip or take a weaker branch against it fails (tests/host_expect.h).
cp "$root/scripts/host-expect.py" "$results/host-expect.py"
export CORDON_EXPECT="${CORDON_EXPECT:-$(python3 "$results/host-expect.py")}"
echo "== host declaration: CORDON_EXPECT=$CORDON_EXPECT"
# On a CI host (CI set, or CORDON_CI_HOST naming one), the skips it expects:
# any other skip fails the run (scripts/test-summary.py).
expected_skips=()
if [ -n "${CI:-}" ] || [ -n "${CORDON_CI_HOST:-}" ]; then
  expected_skips=("$root/tests/expected-skips/${CORDON_CI_HOST:-linux-ci}.txt")
  [ -f "${expected_skips[0]}" ] || { echo "cordon: no list of expected skips ${expected_skips[0]}"; exit 1; }
fi

# Each stage runs in a subshell with errexit on; its exit status and seconds go
# to $results/stages.tsv, which the summary prints last and writes as JUnit.
stage() {  # stage NAME FUNCTION [ARGS...]
  local name=$1 started=$SECONDS status=0
  shift
  if [ ${#wanted[@]} -gt 0 ] && [ "$name" != build ] && ! printf '%s\n' "${wanted[@]}" | grep -qxF "$name"; then
    return 0
  fi
  set +e
  (set -e; "$@")
  status=$?
  set -e
  echo "$name $status $((SECONDS - started))" >>"$results/stages.tsv"
  echo "== stage $name: exit $status after $((SECONDS - started)) s"
}

build_stage() {
  "$root/scripts/build.sh"
}

root_stage() {
  echo "== tests as $(id -un) (uid $(id -u))"
  ctest --preset default --output-junit "$results/root.xml" -j 2  # the summary at the end lists each skip's reason
}

unprivileged_binary() {  # unprivileged_binary BINARY: one test binary as $test_user, its results beside the others
  local binary=$1 filter='*' declared forced=''
  # The escape suite's probes again against linux-os-sandbox, forced (tests/CMakeLists.txt, escape_os_sandbox).
  if [ "$binary" = escape_os_sandbox ]; then
    binary=cordon_escape_tests filter='EscapeFilesystem.*:EscapeKernel.*:EscapeNetwork.*:OsSandbox.*'
    forced=os-sandbox
  fi
  # The user's own declaration (user namespaces and /dev/kvm may differ from root's).
  declared="$(runuser -u "$test_user" -- python3 "$results/host-expect.py")"
  # Unit tests that read the source tree stay with the first run; the
  # mechanism tests (seccomp, Landlock) run here too.
  [ "$binary" = cordon_unit_tests ] && filter='Seccomp*:*/SeccompDocTable.*:Landlock*:CgroupDiscovery*:BrokerProcess*:VcsScan*:ListingStore*:HomeWatch*:DirectoryWatch*:WatchedScan*:ScanServer*:OsSandbox*'
  runuser -u "$test_user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$(getent passwd "$test_user" | cut -d: -f6)" \
    TERM="${TERM:-dumb}" CORDON_CLI="$results/cordon" CORDON_SOURCE_DIR="$results/source" \
    CORDON_ESCAPE_PROBE="$results/escape-probe" CORDON_ESCAPE_HELPER="$results/escape-setuid-helper" \
    CORDON_ESCAPE_SETUID_HELPER="$results/setuid/escape-setuid-helper" CORDON_SUPERVISOR="$results/cordon-supervisor" \
    CORDON_FS_WORKER="$results/cordon-fs-worker" CORDON_AGENT_SESSION="$results/source/tests/agent_session" \
    CORDON_EXPECT="$declared" ${forced:+CORDON_LINUX_BACKEND=$forced} \
    "$results/$binary" --gtest_brief=1 --gtest_filter="$filter" \
    --gtest_output="json:$results/$1.unprivileged.json" >"$results/$1.unprivileged.log" 2>&1
}

unprivileged_lane() {  # unprivileged_lane BINARY...: one after the other; the lane fails when one of them does
  local binary status=0 s
  for binary in "$@"; do
    s=0
    unprivileged_binary "$binary" || s=$?
    echo "   $binary as $test_user: exit $s"
    [ $s -eq 0 ] || status=$s
  done
  return $status
}

unprivileged_stage() {
  id "$test_user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$test_user"
  # The build tree may sit below a directory the user cannot enter (/root):
  # run copies of the binaries, pointed at a copy of the CLI.
  cp build/cordon build/tests/cordon_integration_tests build/tests/cordon_unit_tests \
    build/tests/cordon_escape_tests build/tests/escape-probe build/tests/escape-setuid-helper \
    build/tests/governance/cordon_governance_tests build/tests/run/cordon_run_api_tests \
    build/src/supervisor/cordon-supervisor "$results/"
  mkdir -p "$results/source/docs" && cp -r schemas "$results/source/" && cp docs/governance.md docs/seccomp.md "$results/source/docs/"
  # The exit-code table the CLI is built with and its page (tests/integration/cli_exit_codes_test.cpp).
  mkdir -p "$results/source/src/cli" && cp docs/errors.md "$results/source/docs/" && cp src/cli/exit_codes.h "$results/source/src/cli/"
  cp build/tests/gates/cordon_gates_tests "$results/"  # `cordon gate run` (tests/gates/)
  cp build/tests/sidecars/cordon_sidecars_tests "$results/"  # `cordon sidecar` (tests/sidecars/)
  cp build/tests/fsworker/cordon_fsworker_tests build/src/fsworker/cordon-fs-worker "$results/"  # docs/fs-worker.md
  cp build/tests/prepared/cordon_prepared_tests "$results/"  # prepared sandboxes (tests/prepared/)
  # The scripted agent session (tests/agent_session/) and the scenario it reads.
  cp build/tests/agent_session/cordon_agent_session_tests "$results/"
  mkdir -p "$results/source/tests" && cp -r tests/agent_session "$results/source/tests/"
  chmod -R a+rX "$results"/cordon* "$results"/escape-* "$results/source"
  # The escape suite needs a setuid-root program to show that running one
  # gains nothing; only root can make it. It prints its ids and nothing else,
  # and goes away with $results.
  mkdir -p "$results/setuid" && chmod 755 "$results/setuid"
  install -o root -g root -m 4755 build/tests/escape-setuid-helper "$results/setuid/escape-setuid-helper"
  echo "== confinement tests as $test_user (uid $(id -u "$test_user")), two lanes"
  # Two lanes, as `ctest -j 2` runs the first pass: the escape suite's tests
  # run one at a time in their lane (its resource lock, tests/CMakeLists.txt),
  # beside the other lane's binaries.
  local lane1=0 lane2=0 pid1 pid2
  unprivileged_lane cordon_escape_tests escape_os_sandbox cordon_unit_tests cordon_governance_tests cordon_gates_tests \
    cordon_sidecars_tests &
  pid1=$!
  unprivileged_lane cordon_integration_tests cordon_run_api_tests cordon_fsworker_tests cordon_prepared_tests \
    cordon_agent_session_tests &
  pid2=$!
  wait $pid1 || lane1=$?
  wait $pid2 || lane2=$?
  # The logs one after the other (the lanes ran side by side).
  local log
  for log in "$results"/*.unprivileged.log; do echo "-- ${log##*/}"; cat "$log"; done
  [ $lane1 -eq 0 ] && [ $lane2 -eq 0 ]
}

# Sanitizers: the one clang tree (CMakePresets.json, "clang": clang 14,
# -Werror, ASan + UBSan, build-clang/) builds every target, the fuzzers too
# (the fuzz stage runs them), and every test label runs from it. The CLI under
# test is the instrumented one; it forks and clones, and the runtime comes
# along into the child until exec. The escape suite's probe and setuid helper
# stay uninstrumented (tests/CMakeLists.txt): they must run inside the sandbox
# as they are. Reports go to files as well as failing the process, so that a
# report from a process whose exit status a test does not look at still fails
# the run.
clang_tree() {
  [ -f build-clang/build.ninja ] || cmake --preset clang >/dev/null
  cmake --build --preset clang
}

sanitizers_stage() {
  echo "== clang 14 tree (warnings are errors, ASan + UBSan): every target"
  clang_tree
  echo "== every test label under AddressSanitizer + UndefinedBehaviorSanitizer"
  mkdir -p "$results/sanitizer"
  local status=0
  ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$results/sanitizer/asan" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$results/sanitizer/ubsan" \
    ctest --test-dir build-clang --output-on-failure --output-junit "$results/asan.xml" -j 2 ||
    status=$?
  if compgen -G "$results/sanitizer/*" >/dev/null; then
    echo "cordon: sanitizer reports:"
    cat "$results"/sanitizer/*
    status=1
  fi
  return $status
}

# A short slice of fuzzing (scripts/fuzz.sh runs longer on request).
fuzz_stage() {
  echo "== fuzzing: ${CORDON_FUZZ_SECONDS:-10} s per target"
  CORDON_FUZZ_BUILD="$root/build-clang" "$root/scripts/fuzz.sh" "${CORDON_FUZZ_SECONDS:-10}"
}

stage build build_stage
# Nothing else can run without the build.
[ "$(cut -d' ' -f2 "$results/stages.tsv")" = 0 ] || { echo "cordon: the build failed"; exit 1; }
stage root root_stage
[ "$(id -u)" -ne 0 ] || stage unprivileged unprivileged_stage
# The kernel matrix (docs/kernels.md): Debian 12's kernel 6.1 in QEMU, three configurations, root only.
[ "$(id -u)" -ne 0 ] || stage kernels "$root/scripts/kernel-matrix.sh" --no-docs --results "$results"
# The newcomer path: the README's first command on a clean clone (scripts/test-newcomer.sh).
stage newcomer "$root/scripts/test-newcomer.sh" "$results"
# The workload suite (docs/workloads.md): real builds, venvs, npm, git, a dev server, a pty, concurrent runs.
stage workloads "$root/scripts/test-workloads.sh" "$results"
stage sanitizers sanitizers_stage
# The Windows backend, cross-compiled and run under wine (scripts/test-windows.sh).
stage windows "$root/scripts/test-windows.sh" "$results"
# The C API as the test user, the Python and Node packages (scripts/test-bindings.sh).
stage bindings "$root/scripts/test-bindings.sh" "$results"
# One Release build (Debian flags and layout): its install, consumers, the .deb made from it (scripts/test-packaging.sh).
stage packaging "$root/scripts/test-packaging.sh" "$results"
stage fuzz fuzz_stage

# Every test counted, each skip with its reason, each failure by name, then
# each stage's status and seconds (also as JUnit, kept in build/).
python3 "$root/scripts/test-summary.py" "$results" "$root/build/cordon-stages.xml" ${expected_skips[@]+"${expected_skips[@]}"}
