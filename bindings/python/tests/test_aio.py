"""The asyncio variant: streaming, cancel, many runs at once, and the
100-command example."""

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cordon
import cordon.aio


def test_output_streams_before_the_end(workspace):
    seen = []

    def on_output(stream, chunk):
        seen.append((stream, chunk, time.monotonic()))

    async def main():
        return await cordon.run_async("workspace-write",
                                      ["/bin/sh", "-c", "echo first; echo oops >&2; sleep 0.5; echo second"],
                                      cwd=workspace, on_output=on_output)

    r = asyncio.run(main())
    finished = time.monotonic()
    assert r.exit_code == 0
    assert r.stdout == b"first\nsecond\n" and r.stderr == b"oops\n"
    first = next(t for s, c, t in seen if s == 1 and c.startswith(b"first"))
    assert finished - first >= 0.4, "the first line came only at the end"
    assert r.report["outcome"] == "completed"


def test_start_read_lines_and_cancel(workspace):
    async def main():
        run = await cordon.start("workspace-write", ["/bin/sh", "-c", "echo ready; exec sleep 60"], cwd=workspace)
        assert run.pid > 0
        line = await asyncio.wait_for(run.stdout.readline(), 20)
        run.cancel()
        started = time.monotonic()
        result = await asyncio.wait_for(run.wait(), 20)
        return line, result, time.monotonic() - started

    line, r, seconds = asyncio.run(main())
    assert line == b"ready\n"
    assert r.cancelled and not r.timed_out and r.signal == 9 and r.exit_code == 137
    assert seconds < 10


def test_stdin_pipe_writer(workspace):
    async def main():
        run = await cordon.start("workspace-write", ["/usr/bin/tr", "a-z", "A-Z"], cwd=workspace,
                                 stdin=cordon.aio.PIPE)
        run.stdin.write(b"streamed in\n")
        await run.stdin.drain()
        run.stdin.close()
        return await run.wait()

    r = asyncio.run(main())
    assert r.stdout == b"STREAMED IN\n" and r.exit_code == 0


def test_cancelling_the_task_cancels_the_run(workspace):
    async def main():
        task = asyncio.ensure_future(cordon.run_async("workspace-write", ["/bin/sleep", "60"], cwd=workspace))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started < 20


def test_eight_at_a_time_share_one_plan(workspace):
    plan = cordon.compile("workspace-write", workspace=workspace)

    async def main():
        gate = asyncio.Semaphore(8)

        async def one(i):
            async with gate:
                return await cordon.run_async(plan, ["/bin/sh", "-c", f"echo {i} > f{i}; cat f{i}"])

        return await asyncio.gather(*(one(i) for i in range(16)))

    results = asyncio.run(main())
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(16)]
    assert all(Path(workspace, f"f{i}").exists() for i in range(16))


def test_the_hundred_command_example(available, tmp_path):
    example = Path(__file__).resolve().parents[1] / "examples" / "agent_commands.py"
    reports = tmp_path / "reports.json"
    env = dict(os.environ, PYTHONPATH=os.environ.get("CORDON_PYTHON_PATH", ""))
    done = subprocess.run([sys.executable, str(example), "--reports", str(reports)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(reports.read_text())
    assert len(results) == 100 and all(r["report"]["schema"] == 1 for r in results)
    by_command = {r["command"]: r for r in results}
    assert by_command["cat README.md"]["stdout"] == "# demo project\n"
    assert by_command["cat /etc/shadow"]["exit_code"] != 0 and "Permission denied" in by_command["cat /etc/shadow"]["stderr"]
    secret = next(r for c, r in by_command.items() if c.endswith("/.ssh/id_rsa"))
    assert secret["exit_code"] != 0 and "id_rsa" in secret["stderr"]
    assert by_command["touch /etc/cordon-agent-1"]["exit_code"] != 0
    assert not Path("/etc/cordon-agent-1").exists()
    assert "100 commands in" in done.stdout
