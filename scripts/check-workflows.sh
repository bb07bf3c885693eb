#!/usr/bin/env bash
# scripts/check-workflows.sh — validates .github/workflows/*.yml against the
# GitHub Actions schema with action-validator (npm @action-validator/cli),
# offline: scripts/setup.sh installs it under /opt/cordon-tools once. A host
# where setup could not install it records that in
# /opt/cordon-tools/action-validator.unavailable; only there is the check
# skipped (exit 77, CTest's SKIP_RETURN_CODE). Anywhere else a missing
# validator fails the check.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${CORDON_TOOLS_DIR:-/opt/cordon-tools}"
validator="${CORDON_ACTION_VALIDATOR:-$tools/node_modules/.bin/action-validator}"
if [ ! -x "$validator" ]; then
  if [ -f "$tools/action-validator.unavailable" ]; then
    echo "check-workflows: skipped: $(cat "$tools/action-validator.unavailable")"
    exit 77
  fi
  echo "check-workflows: $validator is missing (run scripts/setup.sh)" >&2
  exit 1
fi
status=0
for f in "$root"/.github/workflows/*.yml; do
  if "$validator" "$f"; then
    echo "check-workflows: ok ${f#"$root"/}"
  else
    echo "check-workflows: INVALID ${f#"$root"/}" >&2
    status=1
  fi
done
exit $status
