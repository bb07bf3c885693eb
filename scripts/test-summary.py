#!/usr/bin/env python3
"""The summary of scripts/test.sh: counts every result file in RESULTS, names
each skip with its reason and each failure, then each stage's exit status and
seconds (from RESULTS/stages.tsv, written by test.sh), and writes the stages as
JUnit (one test case per stage, its time in seconds) to JUNIT.

With EXPECTED (a list of this CI host's expected skips, tests/expected-skips/),
a skip no line of it matches is an unexpected skip: named, and the run fails
(a regression in what cordon detects must not turn tests into skips quietly).
Each line of EXPECTED is an fnmatch pattern for "NAME (RESULT FILE)", then
"# why".

Usage: scripts/test-summary.py RESULTS JUNIT [EXPECTED]
Exit status: 0 when every stage passed and no skip was unexpected, else 1."""
import fnmatch, glob, json, sys, xml.etree.ElementTree as ET
d, junit = sys.argv[1], sys.argv[2]
expected = None
if len(sys.argv) > 3:
    expected = []
    for line in open(sys.argv[3]):
        pattern = line.split("#", 1)[0].strip()
        if pattern:
            expected.append(pattern)
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
            reasons.append((f"{case.get('name')} ({x.rsplit('/', 1)[-1]})", why or 'no reason given'))
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
                reasons.append((f"{name} ({j.rsplit('/', 1)[-1]})", why))
            elif case.get("failures"):
                failed += 1
                failures.append(f"{suite.get('name')}.{case.get('name')} ({j.rsplit('/', 1)[-1]})")
            else:
                passed += 1
unexpected = []
for name, why in reasons:
    print(f"cordon: skipped {name}: {why}")
    if expected is not None and not any(fnmatch.fnmatchcase(name, p) for p in expected):
        unexpected.append((name, why))
for f in failures:
    print(f"cordon: FAILED {f}")
print(f"cordon: {passed} passed, {failed} failed, {skipped} skipped")

for name, why in unexpected:
    print(f"cordon: UNEXPECTED SKIP {name}: {why} (not in {sys.argv[3]}: the host declares more, "
          "or the line belongs there with its reason)")

# The stages, in the order they ran: NAME STATUS SECONDS per line.
stages = []
for line in open(d + "/stages.tsv"):
    name, status, seconds = line.split()
    stages.append((name, int(status), int(seconds)))
suite = ET.Element("testsuite", name="stages", tests=str(len(stages)),
                   failures=str(sum(1 for s in stages if s[1] != 0)), time=str(sum(s[2] for s in stages)))
for name, status, seconds in stages:
    case = ET.SubElement(suite, "testcase", classname="stages", name=name, time=str(seconds))
    if status != 0:
        ET.SubElement(case, "failure", message=f"exit status {status}")
ET.ElementTree(suite).write(junit, encoding="utf-8", xml_declaration=True)
# One line naming each stage's exit status and seconds, last, so a clipped log still says which stage failed.
print("cordon: stages: " + " ".join(f"{n}={s} ({t} s)" for n, s, t in stages) +
      f"; total {sum(t for _, _, t in stages)} s; unexpected skips {len(unexpected)} (JUnit: {junit})")
sys.exit(0 if all(s == 0 for _, s, _ in stages) and not unexpected else 1)
