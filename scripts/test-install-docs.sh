#!/usr/bin/env bash
# The install steps of docs/python.md and docs/node.md, run as written
# (issue 34, acceptance 4): every ```sh block that follows a
# `<!-- install-steps: NAME ... -->` line is extracted from the page (not
# copied here) and run with bash -e in a clean copy of the checkout, as the
# unprivileged test user when started as root, with a fresh HOME and no
# cordon variable. Lines starting with `sudo ` are the account's
# prerequisites: cordon installed (here: `cmake --install BUILD --prefix
# STAGE`, whose bin/ is put on PATH, as the pages say for a prefix) and
# Debian packages (checked with dpkg, a block whose package is missing is
# skipped with the reason). A block passes when it exits 0, its last line
# is "0" (the smoke run's exit code) and the copy of the checkout is
# unchanged byte for byte. JUnit: RESULTS/bindings-install-docs.xml.
#
# Usage: scripts/test-install-docs.sh RESULTS [BUILD_DIR]   (BUILD_DIR: build/)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
results="${1:?usage: test-install-docs.sh RESULTS [BUILD_DIR]}"
build="${2:-$root/build}"
test_user="${CORDON_TEST_USER:-cordon-test}"
stage="$results/install-docs"
rm -rf "$stage" && mkdir -p "$stage"
junit="$results/bindings-install-docs.xml"

echo "== install steps of docs/python.md and docs/node.md"
cmake --install "$build" --prefix "$stage/prefix" >"$stage/install.log" 2>&1 || {
  echo "cmake --install failed: $stage/install.log"; tail -5 "$stage/install.log"; exit 1; }

# The blocks: NAME<TAB>PAGE, then the block's lines, then an END line.
extract() {
  python3 - "$@" <<'PY'
import re, sys
for page in sys.argv[1:]:
    lines = open(page, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"<!-- install-steps: ([\w-]+)", line)
        if not m:
            continue
        j = i + 1
        assert lines[j].startswith("```sh"), f"{page}:{j + 1}: no ```sh block after the marker"
        body = []
        j += 1
        while not lines[j].startswith("```"):
            body.append(lines[j])
            j += 1
        print(f"BLOCK\t{m.group(1)}\t{page}")
        print("\n".join(body))
        print("END")
PY
}

as_user=()
user="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
  user="$test_user"
fi
cases=""
failed=0
skipped=0
total=0
xml_escape() { python3 -c 'import sys, html; print(html.escape(sys.stdin.read()), end="")'; }

run_block() {
  local name="$1" page="$2" block="$3"
  total=$((total + 1))
  local work="$stage/$name" copy home out status reason=""
  copy="$work/checkout" home="$work/home"
  mkdir -p "$copy" "$home"
  # A clean copy: the checkout's tracked files, as they are in the working tree.
  (cd "$root" && git ls-files -z | tar --null -T - -cf -) | tar -x -C "$copy"
  local commands=""
  while IFS= read -r line; do
    if [[ "$line" == sudo\ * ]]; then
      if [[ "$line" =~ apt-get\ install\ (-y\ )?(.*)$ ]]; then
        for package in ${BASH_REMATCH[2]}; do
          dpkg -s "$package" >/dev/null 2>&1 || reason="Debian package $package is not installed (scripts/setup.sh)"
        done
      fi
      continue
    fi
    commands+="$line"$'\n'
  done <<<"$block"
  if [ -n "$reason" ]; then
    echo "SKIP $name ($page): $reason"
    skipped=$((skipped + 1))
    cases+="<testcase classname=\"install_docs\" name=\"$name\"><skipped message=\"$(printf '%s' "$reason" | xml_escape)\"/></testcase>"
    return
  fi
  chmod -R a+rX "$stage/prefix"
  [ "$user" != "$(id -un)" ] && chown -R "$user" "$work"
  (cd "$copy" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/before.txt"
  local -a env_cmd=(env -i PATH="$stage/prefix/bin:/usr/local/bin:/usr/bin:/bin" HOME="$home" LANG=C.UTF-8)
  if [ "$user" != "$(id -un)" ]; then
    out="$(cd "$copy" && runuser -u "$user" -- "${env_cmd[@]}" bash -euo pipefail -c "$commands" 2>&1)"
  else
    out="$(cd "$copy" && "${env_cmd[@]}" bash -euo pipefail -c "$commands" 2>&1)"
  fi
  status=$?
  (cd "$copy" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/after.txt"
  local problem=""
  [ "$status" -eq 0 ] || problem="exit status $status"
  [ -z "$problem" ] && [ "$(printf '%s\n' "$out" | tail -1)" != "0" ] && problem="the last line is not 0"
  if [ -z "$problem" ] && ! diff -q "$work/before.txt" "$work/after.txt" >/dev/null; then
    problem="the checkout changed: $(diff "$work/before.txt" "$work/after.txt" | head -5 | tr '\n' ' ')"
  fi
  if [ -z "$problem" ]; then
    echo "PASS $name ($page) as $user"
    cases+="<testcase classname=\"install_docs\" name=\"$name\"/>"
  else
    echo "FAIL $name ($page) as $user: $problem"
    printf '%s\n' "$out" | tail -20
    failed=$((failed + 1))
    cases+="<testcase classname=\"install_docs\" name=\"$name\"><failure message=\"$(printf '%s' "$problem" | xml_escape)\">$(printf '%s' "$out" | tail -20 | xml_escape)</failure></testcase>"
  fi
}

name="" page="" block=""
while IFS= read -r line; do
  if [[ "$line" == BLOCK$'\t'* ]]; then
    IFS=$'\t' read -r _ name page <<<"$line"
    block=""
  elif [ "$line" = "END" ]; then
    run_block "$name" "$page" "$block"
  else
    block+="$line"$'\n'
  fi
done < <(extract "$root/docs/python.md" "$root/docs/node.md")

printf '<?xml version="1.0" encoding="utf-8"?><testsuites tests="%d" failures="%d" skipped="%d"><testsuite name="install_docs" tests="%d" failures="%d" skipped="%d">%s</testsuite></testsuites>\n' \
  "$total" "$failed" "$skipped" "$total" "$failed" "$skipped" "$cases" >"$junit"
echo "install steps: $total blocks, $failed failed, $skipped skipped"
[ "$total" -gt 0 ] && [ "$failed" -eq 0 ]
