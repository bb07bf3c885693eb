#!/usr/bin/env python3
"""Validates run reports against schemas/report.v1.schema.json (draft 2020-12).

Usage: scripts/validate-reports.py REPORT.json...  Prints one line per report
("valid: PATH" or "invalid: PATH: reason; ..."); exits 0 when every report is
valid, 1 otherwise, 2 when none was given. Used by tests/windows/report_test.cpp
and scripts/test-windows.sh (the reports cordon.exe wrote under wine).

Beyond the schema, the one rule for `unverified` (docs/policy.md;
platform_proven() in src/core/compile.cpp): a report of a platform no proof
run has passed on (every platform but linux) states no control `enforced` or
`partial`.
"""
import json
import os
import sys

import jsonschema

# The platforms a proof run has passed on (platform_proven(), src/core/compile.cpp).
PROVEN_PLATFORMS = {"linux"}


def unproven_claims(report):
    """The controls a report of an unproven platform states above `unverified`."""
    backend = report.get("backend") if isinstance(report, dict) else None
    platform = backend.get("platform") if isinstance(backend, dict) else None
    controls = report.get("controls") if isinstance(report, dict) else None
    if not isinstance(platform, str) or platform in PROVEN_PLATFORMS or not isinstance(controls, dict):
        return []
    return [f"controls/{name}: {status.get('level')} on {platform}, where no proof run has passed (at most unverified)"
            for name, status in controls.items()
            if isinstance(status, dict) and status.get("level") in ("enforced", "partial")]


def main(paths):
    if not paths:
        print("validate-reports: no report given", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "schemas", "report.v1.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        errors = [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
                  for e in validator.iter_errors(report)]
        errors += unproven_claims(report)
        if errors:
            bad += 1
            print(f"invalid: {path}: " + "; ".join(errors))
        else:
            print(f"valid: {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
