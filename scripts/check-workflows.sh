#!/usr/bin/env bash
# scripts/check-workflows.sh — checks that ci.yml calls what the README and the
# runner scripts say (below), and validates .github/workflows/*.yml against the
# GitHub Actions schema with action-validator (npm @action-validator/cli),
# offline: scripts/setup.sh installs it under /opt/cordon-tools once. A host
# where setup could not install it records that in
# /opt/cordon-tools/action-validator.unavailable; only there is the check
# skipped (exit 77, CTest's SKIP_RETURN_CODE). Anywhere else a missing
# validator fails the check.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"

# Each job calls what the README and the runner scripts say: the Linux job
# the README's test command, the macOS jobs their native build through
# CORDON and scripts/macos-runner.sh, the Windows jobs the cross build and
# scripts/windows-ci.ps1 (.github/workflows/ci.yml).
calls_status=0
ci="$root/.github/workflows/ci.yml"
readme_test="$(grep -o '^\./scripts/test\.sh' "$root/README.md" | head -1)"
for call in "${readme_test:-README has no ./scripts/test.sh line}" "./scripts/test-windows.sh" \
            "cmake --build build -j3 --target cordon_cli" 'CORDON="$PWD/build/cordon" ./scripts/macos-runner.sh' \
            "scripts\windows-ci.ps1"; do
  if ! grep -qF -- "$call" "$ci"; then
    echo "check-workflows: ${ci#"$root"/} does not call: $call" >&2
    calls_status=1
  fi
done
tools="${CORDON_TOOLS_DIR:-/opt/cordon-tools}"
validator="${CORDON_ACTION_VALIDATOR:-$tools/node_modules/.bin/action-validator}"
if [ ! -x "$validator" ]; then
  if [ -f "$tools/action-validator.unavailable" ]; then
    echo "check-workflows: skipped: $(cat "$tools/action-validator.unavailable")"
    [ $calls_status -eq 0 ] && exit 77
    exit 1
  fi
  echo "check-workflows: $validator is missing (run scripts/setup.sh)" >&2
  exit 1
fi
status=$calls_status
for f in "$root"/.github/workflows/*.yml; do
  if "$validator" "$f"; then
    echo "check-workflows: ok ${f#"$root"/}"
  else
    echo "check-workflows: INVALID ${f#"$root"/}" >&2
    status=1
  fi
done
exit $status
