#!/usr/bin/env python3
"""The repository's documented invariants, checked (CTest label `lint`).

1. Descriptors: no raw `::close(` in library code outside the files of
   tests/lint/close_allowed.txt (the child side of the launch, which must not
   run destructors; `unique_fd` itself; classes that own a descriptor in the
   same way), each with the number of calls it may hold
   (docs/architecture.md, "Descriptors").
2. Layers: an `#include "FOLDER/..."` in src/ must name a layer the including
   folder may call, as the table of docs/architecture.md, "Layers" says.
3. Citations: a repository path cited in src/, include/, tests/, docs/,
   scripts/ or the README must exist; `docs/X.md, "Section"` must name a
   heading of that page; no citation of a design page outside the repository
   (`DESIGN.md`, "the design page").
4. Enums: every enumerator of a public `enum class` in include/cordon/ is
   named somewhere in src/ outside the enum's own spelling table (a value no
   code produces is dead or a control not implemented), unless
   tests/lint/enum_allowed.txt names it with the reason.
5. Macro names: no public header in include/ uses `linux`, `unix` or `i386`
   as a word outside comments and strings: in GNU mode (`-std=gnu++20`, CMake's
   default for a consumer) the compiler predefines them as 1, so a parameter so
   named breaks every consumer (the packaging stage found one).

Usage: tests/lint/lint.py [SOURCE_DIR]. Prints one line per finding,
"FILE:LINE: kind: what", and exits 1 when there is any.
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
here = os.path.join(root, "tests", "lint")
findings = []


def finding(path, line, kind, what):
    findings.append(f"{os.path.relpath(path, root)}:{line}: {kind}: {what}")


def files(top, suffixes):
    for folder, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        for name in sorted(names):
            if name.endswith(suffixes):
                yield os.path.join(folder, name)


def lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def allow_list(name):
    """{key: (count or None, reason)} from a list of "KEY [COUNT] # reason" lines."""
    out = {}
    for i, line in enumerate(lines(os.path.join(here, name)), 1):
        body, _, reason = line.partition("#")
        words = body.split()
        if not words:
            continue
        if not reason.strip():
            finding(os.path.join(here, name), i, "allow-list", f"{words[0]} has no reason")
        out[words[0]] = (int(words[1]) if len(words) > 1 else None, reason.strip())
    return out


CODE = (".cpp", ".h", ".c", ".mm")


# --- 1. raw ::close( -------------------------------------------------------
def check_close():
    allowed = allow_list("close_allowed.txt")
    seen = {}
    for path in files("src", CODE):
        rel = os.path.relpath(path, root)
        for n, text in enumerate(lines(path), 1):
            if re.search(r"(?<![\w.>])::close\(", text.split("//")[0]):
                seen.setdefault(rel, []).append(n)
    for rel, at in seen.items():
        count, _ = allowed.get(rel, (0, ""))
        if count is not None and len(at) > count:
            finding(os.path.join(root, rel), at[count] if count < len(at) else at[0], "raw-close",
                    f"{len(at)} raw ::close( calls, {count} allowed (tests/lint/close_allowed.txt): "
                    "own the descriptor with cordon::unique_fd (src/posix/unique_fd.h)")
    for rel, (count, _) in allowed.items():
        if count is not None and len(seen.get(rel, [])) < count:
            finding(os.path.join(here, "close_allowed.txt"), 1, "allow-list",
                    f"{rel} is allowed {count} raw ::close( calls but has {len(seen.get(rel, []))}: lower the count")


# --- 2. layers -------------------------------------------------------------
def layer_table():
    """{folder: set of folders it may include}, from docs/architecture.md, "Layers"."""
    text = lines(os.path.join(root, "docs", "architecture.md"))
    start = text.index("## Layers")
    rows = []
    for line in text[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not line.startswith("| ---") and not line.startswith("| layer"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(cells)
    names = {}  # layer name -> its folders
    for name, where, _target, _calls in rows:
        names[name] = re.findall(r"`(?:src|include)/([\w]+)/`", where)
    names["the library"] = names["public API"] + names["core"]
    allowed = {}
    for name, _where, _target, calls in rows:
        may = set(names["public API"]) | set(names[name])
        for callee in re.split(r",\s*", calls):
            callee = callee.strip()
            if callee in ("", "nothing below"):
                continue
            if callee not in names:
                finding(os.path.join(root, "docs", "architecture.md"), start + 1, "layers",
                        f"row {name!r} may call {callee!r}, which is no layer of the table")
                continue
            may |= set(names[callee])
        for folder in names[name]:
            allowed[folder] = may
    return allowed


def check_layers():
    allowed = layer_table()
    exceptions = allow_list("layers_allowed.txt")
    folders = {d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d))}
    for folder in sorted(folders):
        if folder not in allowed:
            finding(os.path.join(root, "src", folder), 0, "layers",
                    f"src/{folder}/ is in no row of docs/architecture.md, \"Layers\"")
            continue
        for path in files(os.path.join("src", folder), CODE):
            for n, text in enumerate(lines(path), 1):
                m = re.match(r'\s*#\s*include\s+"([\w]+)/', text)
                if not m or m.group(1) == folder or m.group(1) == "cordon":
                    continue
                key = f"{os.path.relpath(path, root)}:{m.group(1)}"
                if m.group(1) in folders and m.group(1) not in allowed[folder] and key not in exceptions:
                    finding(path, n, "layers", f"src/{folder}/ includes \"{m.group(1)}/...\", which its row of "
                            "docs/architecture.md, \"Layers\" may not call")


# --- 3. citations ----------------------------------------------------------
TOP = "src|tests|docs|scripts|include|schemas|profiles|fuzz|bench|bindings|examples|cmake|debian|\\.ci"
PATH = re.compile(r"(?<![\w./$@{-])((?:" + TOP + r")/[\w.+/-]*[\w/])")
SECTION = re.compile(r"(docs/[\w-]+\.md),\s+\"([^\"]+)\"")
OUTSIDE = re.compile(r"\bDESIGN\.md\b|\bthe design page\b")


def headings(doc, cache={}):
    if doc not in cache:
        path = os.path.join(root, doc)
        cache[doc] = None
        if os.path.isfile(path):
            found = set()
            for line in lines(path):
                # A heading, or the bold lead of a paragraph ("**Leases.** Held under ...").
                m = re.match(r"#+\s+(.*?)\s*$", line) or re.match(r"(?:[-*]\s+)?\*\*([^*]+?)\.?\*\*", line)
                if m:
                    found.add(m.group(1).replace("`", "").lower())
            cache[doc] = found
    return cache[doc]


def prose(path, text, state):
    """The part of a line that is prose (comments of code, text of Markdown outside code blocks)."""
    if path.endswith(".md"):
        if text.lstrip().startswith("```"):
            state["fenced"] = not state.get("fenced", False)
            return ""
        return "" if state.get("fenced") else text
    if path.endswith((".py", ".sh", ".txt", ".cmake", ".ps1")) or os.path.basename(path) == "CMakeLists.txt":
        return text.partition("#")[2] if "#" in text else ""
    stripped = text.lstrip()
    if stripped.startswith(("*", "/*")):
        return text
    return text.partition("//")[2]


def exists(cited, citing):
    path = os.path.join(root, cited)
    if os.path.exists(path):
        return True
    # A package's own files, from inside it (bindings/node: scripts/generate-report-types.js).
    folder = os.path.dirname(citing)
    while folder.startswith(os.path.join(root, "bindings") + os.sep):
        if os.path.exists(os.path.join(folder, cited)):
            return True
        folder = os.path.dirname(folder)
    # A stem names its .h and .cpp (src/linux/run_tls).
    folder, stem = os.path.split(path)
    return os.path.isdir(folder) and any(n.startswith(stem + ".") for n in os.listdir(folder))


def check_citations():
    sources = [p for top in ("src", "include", "tests", "scripts", "docs", "bindings", "fuzz", "bench", "examples",
                             ".ci", "cmake", "debian")
               for p in files(top, CODE + (".md", ".sh", ".py", ".txt", ".cmake", ".ts", ".js", ".scm", ".ps1"))
               if "/node_modules/" not in p]
    sources += [os.path.join(root, "README.md"), os.path.join(root, "CMakeLists.txt")]
    allowed = allow_list("citations_allowed.txt")
    for path in sources:
        rel = os.path.relpath(path, root)
        if rel.startswith("tests/lint/"):
            continue  # the lint's own lists
        state = {}
        for n, text in enumerate(lines(path), 1):
            text = prose(path, text, state)
            for m in PATH.finditer(text):
                cited = m.group(1).rstrip(".")
                if any(c in cited for c in "*<>{}") or "/.cache" in cited or text[m.end():m.end() + 1] in list("*<{$"):
                    continue  # a pattern (src/posix/vcs_scan.*, src/<platform>/) or a generated place
                if f"{rel}:{cited}" in allowed:
                    continue
                if not exists(cited, path):
                    finding(path, n, "citation", f"{cited} does not exist")
            for m in SECTION.finditer(text):
                doc, section = m.group(1), m.group(2)
                found = headings(doc)
                # A heading "Limits: how late the kill comes" answers to "Limits".
                wanted = section.replace("`", "").lower()
                if found is not None and not any(h == wanted or h.startswith(wanted + ":") for h in found):
                    finding(path, n, "citation", f"{doc} has no heading \"{section}\"")
            if OUTSIDE.search(text):
                finding(path, n, "citation", "cites a design page that is not in the repository")


# --- 4. enumerators no code produces ---------------------------------------
def check_enums():
    allowed = allow_list("enum_allowed.txt")
    texts = {p: "\n".join(lines(p)) for top in ("src", "include") for p in files(top, CODE)}
    for path in files("include/cordon", (".h",)):
        text = texts[path]
        for m in re.finditer(r"enum class (\w+)[^{;]*\{([^}]*)\}", text):
            enum, body = m.group(1), re.sub(r"//[^\n]*", "", m.group(2))
            for value in re.findall(r"(?:^|,)\s*(\w+)\s*(?:=[^,]*)?(?=,|$)", body.strip()):
                key = f"{enum}::{value}"
                if key in allowed or f"{enum}::*" in allowed:
                    continue
                produced = False
                for t in texts.values():
                    for u in re.finditer(r"\b" + enum + r"::" + value + r"\b", t):
                        # A case label or a comparison reads the value; anything else (a return, an
                        # argument, an initializer, a row of a parsing table) can produce it.
                        before = t[max(0, u.start() - 8):u.start()]
                        if re.search(r"case\s+$|[=!]=\s*$", before) or re.match(r"\s*[=!]=", t[u.end():u.end() + 4]):
                            continue
                        produced = True
                        break
                    if produced:
                        break
                if not produced:
                    line = text[:m.start()].count("\n") + 1
                    finding(path, line, "enum", f"{key}: no code in src/ or include/ produces it "
                            "(tests/lint/enum_allowed.txt names the ones that stay, with why)")


# --- 5. GNU predefined macro names in public headers ------------------------
def check_macro_names():
    for path in files("include", (".h",)):
        for n, text in enumerate(lines(path), 1):
            code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text.split("//")[0])
            m = re.search(r"(?<![\w/.<])(linux|unix|i386)(?![\w/.])", code)
            if m:
                finding(path, n, "macro-name", f"'{m.group(1)}' is predefined as 1 in GNU mode: name it otherwise")


check_close()
check_layers()
check_citations()
check_enums()
check_macro_names()
for f in findings:
    print(f)
print(f"lint: {len(findings)} finding(s)")
sys.exit(1 if findings else 0)
