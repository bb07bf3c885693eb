#!/usr/bin/env bash
# Builds the libFuzzer targets in the one clang tree (CMakePresets.json,
# "clang": clang 14, ASan + UBSan, build-clang/) and runs each for
# SECONDS (default 30). Fails when a target crashes, trips a sanitizer or
# violates one of the properties it checks; the input that did it is kept in
# the build directory (artifacts/) and must become a regression input in
# fuzz/regressions/<target>/ and a unit test.
#
#   scripts/fuzz.sh [SECONDS]        CORDON_FUZZ_BUILD=dir overrides build-clang/
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-30}"
build="${CORDON_FUZZ_BUILD:-$root/build-clang}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS]" >&2; exit 2; }

if [ ! -f "$build/build.ninja" ]; then
  if [ "$build" = "$root/build-clang" ]; then
    (cd "$root" && cmake --preset clang >/dev/null)
  else
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCORDON_FUZZ=ON -DCORDON_BUILD_TESTS=OFF -DCORDON_WERROR=ON >/dev/null
  fi
fi
cmake --build "$build" --target cordon_fuzz_policy cordon_fuzz_host_rules cordon_fuzz_proxy_request \
  cordon_fuzz_terminal_filter

# Seeds: the policy corpus and the profiles; the matcher table, one case per input.
seeds="$build/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds/policy" "$seeds/host_rules" "$seeds/proxy_request" "$seeds/terminal_filter"
# A command's terminal output (first byte: UTF-8 or not, and the cut): colours, a title, a clipboard write.
printf '\x01ok \033[1;31mred\033[0m \033]0;title\007 \033]52;c;eA==\007 caf\xc3\xa9\n' >"$seeds/terminal_filter/mixed"
printf '\x02\033Ptmux;\033\033]52;c;eA==\007\033\\\033[21t\x9d52;\x9c' >"$seeds/terminal_filter/eight-bit"
# The broker's requests: HTTP CONNECT, a forward GET, SOCKS5 greeting + CONNECT (name, IPv4, IPv6).
printf 'CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n' >"$seeds/proxy_request/connect"
printf 'CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n' >"$seeds/proxy_request/connect-v6"
printf 'GET http://example.com:8080/a?b=c HTTP/1.1\r\nHost: x\r\nProxy-Connection: keep-alive\r\nConnection: Upgrade, X\r\nX: y\r\n\r\nbody' >"$seeds/proxy_request/forward"
printf '\x05\x01\x00\x05\x01\x00\x03\x0bexample.com\x01\xbb' >"$seeds/proxy_request/socks5-name"
printf '\x05\x02\x00\x02\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50' >"$seeds/proxy_request/socks5-v4"
printf '\x05\x01\x00\x05\x01\x00\x04\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\xbb' >"$seeds/proxy_request/socks5-v6"
cp "$root"/tests/corpus/valid/*.json "$root"/tests/corpus/invalid/*.json "$root"/profiles/*.json "$seeds/policy/"
python3 - "$root/tests/corpus/host_rules.json" "$seeds/host_rules" <<'PY'
import json, sys
table = json.load(open(sys.argv[1]))
n = 0
for scenario in table["scenarios"]:
    net = scenario["network"]
    rules = []
    for r in net.get("rules", []):
        rules.append(("A" if r["action"] == "allow" else "D") + (":%d" % r["port"] if "port" in r else "") + " " + r["host"])
    default = "+" if net.get("default_action") == "allow" else ""
    for case in scenario["cases"]:
        text = "\n".join([case["host"], default + str(case["port"])] + rules)
        with open("%s/case-%03d" % (sys.argv[2], n), "wb") as f:
            f.write(text.encode("utf-8"))
        n += 1
PY

status=0
summary=()
for target in policy host_rules proxy_request terminal_filter; do
  binary="$build/fuzz/cordon_fuzz_$target"
  corpus="$build/fuzz-corpus/$target"
  artifacts="$build/artifacts/$target"
  log="$build/fuzz-$target.log"
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  # Regression inputs first: each must pass on its own.
  regressions=("$root/fuzz/regressions/$target"/*)
  if [ -e "${regressions[0]}" ]; then
    "$binary" "${regressions[@]}" >"$build/fuzz-$target-regressions.log" 2>&1 ||
      { echo "fuzz: $target: a regression input fails (see $build/fuzz-$target-regressions.log)"; status=1; }
  fi
  echo "== fuzzing $target for ${seconds}s"
  set +e
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$root/fuzz/$target.dict" -artifact_prefix="$artifacts/" "$corpus" "$seeds/$target" >"$log" 2>&1
  rc=$?
  set -e
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  crashes="$(find "$artifacts" -type f | wc -l)"
  if [ $rc -ne 0 ]; then
    status=1
    tail -n 40 "$log"
    summary+=("fuzz: $target: FAILED (exit $rc) after $runs executions in ${seconds}s; $crashes input(s) kept in $artifacts")
  else
    summary+=("fuzz: $target: $runs executions in ${seconds}s, 0 crashes, corpus $(find "$corpus" -type f | wc -l) inputs")
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
