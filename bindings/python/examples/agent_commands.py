#!/usr/bin/env python3
"""An agent host's loop (docs/python.md): 100 shell commands of the kind a
model proposes, each run under the default profile (workspace-write) with a
10 s timeout, 8 at a time with asyncio, every run report collected.

    python3 agent_commands.py [--workspace DIR] [--count N] [--reports FILE]

Prints one line per command and a summary; exits 0 when every command got a
report, 1 otherwise. Without --workspace it makes a scratch project in /tmp.
"""

import argparse
import asyncio
import collections
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the package from this tree, when not installed
import cordon  # noqa: E402

# What a coding model asks to run: reading, searching, building, and some
# things the profile forbids (secrets, system files, the network).
TEMPLATES = [
    "ls -la", "ls src", "cat README.md", "head -n 5 src/app.py", "wc -l src/*.py", "grep -rn TODO .",
    "find . -name '*.py'", "python3 -c 'print(sum(range({n})))'", "python3 src/app.py {n}",
    "echo 'note {n}' >> notes.txt", "mkdir -p build/{n} && touch build/{n}/out.o", "sort data.txt | uniq -c",
    "sed -n '{n}p' data.txt", "uname -sr", "id -u", "env | sort | head -n 3", "date +%Y", "sleep 0.{n}",
    "cat " + os.path.expanduser("~").replace("{", "{{").replace("}", "}}") + "/.ssh/id_rsa", "cat /etc/shadow", "touch /etc/cordon-agent-{n}", "rm -rf /usr/share/doc",
    "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9))'", "false", "exit {n}",
]


def make_project() -> str:
    root = tempfile.mkdtemp(prefix="cordon-agent-")
    Path(root, "src").mkdir()
    Path(root, "README.md").write_text("# demo project\n")
    Path(root, "src", "app.py").write_text("import sys\n# TODO: more\nprint(int(sys.argv[1]) * 2)\n")
    Path(root, "data.txt").write_text("".join(f"line {i % 7}\n" for i in range(40)))
    return root


def commands(count: int) -> list:
    return [TEMPLATES[i % len(TEMPLATES)].format(n=i % 9 + 1) for i in range(count)]


async def run_all(workspace: str, count: int, parallel: int = 8) -> list:
    policy = json.loads(cordon.profile_json("workspace-write"))
    policy.setdefault("process", {})["timeout_seconds"] = 10
    plan = cordon.compile(policy, workspace=workspace)  # compiled once, shared by every run
    gate = asyncio.Semaphore(parallel)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}

    async def one(index: int, command: str) -> dict:
        async with gate:
            result = await cordon.run_async(plan, ["/bin/sh", "-c", command], env=env, stdin=cordon.DEVNULL)
        print(f"{index:3} exit {result.exit_code:3} {command}", flush=True)
        return {"command": command, "exit_code": result.exit_code, "stdout": result.stdout.decode(errors="replace"),
                "stderr": result.stderr.decode(errors="replace"), "report": result.report}

    return await asyncio.gather(*(one(i, c) for i, c in enumerate(commands(count))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--reports", help="write every command's result and report here (JSON)")
    args = parser.parse_args()
    workspace = args.workspace or make_project()
    started = time.monotonic()
    try:
        results = asyncio.run(run_all(workspace, args.count))
    finally:
        if not args.workspace:
            shutil.rmtree(workspace, ignore_errors=True)
    seconds = time.monotonic() - started
    outcomes = collections.Counter(r["report"].get("outcome", "none") for r in results)
    failed = sum(1 for r in results if r["exit_code"] != 0)
    print(f"{len(results)} commands in {seconds:.1f} s, 8 at a time: outcomes {dict(outcomes)}, "
          f"{failed} exited non-zero")
    if args.reports:
        Path(args.reports).write_text(json.dumps(results, indent=1))
    complete = all(r["report"].get("schema") == 1 for r in results) and len(results) == args.count
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
