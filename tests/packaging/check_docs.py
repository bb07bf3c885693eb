#!/usr/bin/env python3
"""The man pages and completions list every subcommand and option --help shows.

Usage: check_docs.py CORDON DOCS_DIR [JUNIT_XML]
DOCS_DIR holds man/*.1, cordon.bash, _cordon and cordon.fish as the build
generated them (cmake/install.cmake). Walks `CORDON [PATH] --help` from the
top, reads the subcommands and options it prints, and checks each one is in
the page of that command and in each completion script. Exit 1 on any miss.
"""
import os
import re
import subprocess
import sys
from xml.sax.saxutils import quoteattr

cordon, docs = sys.argv[1], sys.argv[2]
junit = sys.argv[3] if len(sys.argv) > 3 else None
cases = []  # (name, failure message or None)


def check(name, ok, why=""):
    cases.append((name, None if ok else why or "missing"))


def help_of(path):
    out = subprocess.run([cordon, *path, "--help"], capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    if out.returncode != 0:
        raise SystemExit(f"check_docs: {' '.join(['cordon', *path])} --help exited {out.returncode}: {out.stderr}")
    return out.stdout


def sections(text):
    """{section title: [lines]} for the 'Title:' blocks of CLI11's help."""
    result, title = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\S.*):$", line)
        if m:
            title = m.group(1)
            result[title] = []
        elif title and line.startswith("  "):
            result[title].append(line)
        elif not line.strip():
            continue
        else:
            title = None
    return result


def walk(path):
    text = help_of(path)
    s = sections(text)
    subs = [l.split()[0] for l in s.get("Subcommands", []) if re.match(r"^  \S", l)]
    options = set()
    for title, lines in s.items():
        if title in ("Subcommands", "Positionals"):
            continue
        for l in lines:
            m = re.match(r"^  (-[^\s]+)", l)
            if m:
                for name in m.group(1).split(","):
                    if name.startswith("-"):
                        options.add(name)
    yield path, subs, sorted(options)
    for sub in subs:
        yield from walk([*path, sub])


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


bash, zsh, fish = (read(os.path.join(docs, n)) for n in ("cordon.bash", "_cordon", "cordon.fish"))
commands = list(walk([]))
check("the tree has the commands cordon has today", len(commands) > 10, f"only {len(commands)} commands")
for path, subs, options in commands:
    page_name = "-".join(["cordon", *path])
    spelled = " ".join(["cordon", *path])
    page_file = os.path.join(docs, "man", page_name + ".1")
    check(f"{spelled}: man page {page_name}.1 exists", os.path.exists(page_file))
    page = read(page_file) if os.path.exists(page_file) else ""
    line = re.search(rf"^    '{re.escape(' '.join(path))}'\) subs='([^']*)' opts='([^']*)' ;;$", bash, re.M)
    bash_subs, bash_opts = (line.group(1).split(), line.group(2).split()) if line else ([], [])
    check(f"{spelled}: bash has a case for it", line is not None)
    for sub in subs:
        check(f"{spelled}: man page lists subcommand {sub}", f"\\fB{sub.replace('-', chr(92) + '-')}\\fR" in page)
        check(f"{spelled}: bash completes subcommand {sub}", sub in bash_subs)
        check(f"{spelled}: zsh completes subcommand {sub}", f"'{sub}:" in zsh)
        check(f"{spelled}: fish completes subcommand {sub}", f"-a '{sub}'" in fish)
    for opt in options:
        roff = opt.replace("-", "\\-")
        check(f"{spelled}: man page documents {opt}", f"\\fB{roff}\\fR" in page)
        check(f"{spelled}: bash completes {opt}", opt in bash_opts)
        check(f"{spelled}: zsh completes {opt}", f"'{opt}:" in zsh)
        fish_flag = f"-l {opt[2:]}" if opt.startswith("--") else f"-s {opt[1:]}"
        check(f"{spelled}: fish completes {opt}", re.search(rf"{re.escape(fish_flag)}(?!\S)", fish) is not None)

failed = [c for c in cases if c[1]]
for name, why in failed:
    print(f"check_docs: FAILED: {name}: {why}")
print(f"check_docs: {len(cases) - len(failed)} of {len(cases)} checks passed over {len(commands)} commands")
if junit:
    with open(junit, "w", encoding="utf-8") as f:
        f.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="docs" tests="{len(cases)}" failures="{len(failed)}" skipped="0">\n')
        for name, why in cases:
            f.write(f"  <testcase classname=\"packaging.docs\" name={quoteattr(name)}")
            f.write(f"><failure message={quoteattr(why)}/></testcase>\n" if why else "/>\n")
        f.write("</testsuite>\n")
sys.exit(1 if failed else 0)
