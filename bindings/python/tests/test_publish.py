"""publish= (cordon run --publish; docs/network.md, "Published ports"): the
host reaches a server the command starts through 127.0.0.1:HOSTPORT, and the
report counts what the relay carried."""

import asyncio
import socket

import pytest

import cordon
from conftest import PYTHON

# Listens on 127.0.0.1:8000 inside, says "ready", answers one connection
# with "pong " and what it read, then exits.
SERVER = ("import socket\n"
          "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
          "s.bind(('127.0.0.1', 8000)); s.listen(4)\n"
          "print('ready', flush=True)\n"
          "c, _ = s.accept(); data = b''\n"
          "while True:\n"
          "    chunk = c.recv(4096)\n"
          "    if not chunk: break\n"
          "    data += chunk\n"
          "c.sendall(b'pong ' + data); c.close()\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ask(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as c:
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := c.recv(4096):
            answer += chunk
        return answer


def test_publish_reaches_the_server_inside(workspace):
    host_port = free_port()

    async def main():
        run = await cordon.start("workspace-write", [PYTHON, "-c", SERVER], cwd=workspace, timeout=60,
                                 publish=[f"{host_port}:8000"])
        line = await asyncio.wait_for(run.stdout.readline(), 30)
        answer = await asyncio.get_running_loop().run_in_executor(None, ask, host_port, b"ping") \
            if line == b"ready\n" else line
        return answer, await asyncio.wait_for(run.wait(), 30)

    answer, r = asyncio.run(main())
    assert answer == b"pong ping", r.stderr
    assert r.exit_code == 0, r.stderr
    (relay,) = r.report["published_ports"]
    assert (relay["port"], relay["host_port"], relay["host_address"]) == (8000, host_port, "127.0.0.1")
    assert (relay["accepted"], relay["failed"], relay["bytes_in"], relay["bytes_out"]) == (1, 0, 4, 9)


def test_publish_spellings_and_refusals(workspace):
    plan = cordon.compile("workspace-write", workspace=workspace)
    with pytest.raises(ValueError, match="Plan"):
        cordon.run(plan, ["/bin/true"], publish=[8000])
    with pytest.raises(ValueError, match="HOSTPORT:PORT"):
        cordon.run("workspace-write", ["/bin/true"], cwd=workspace, publish=[":8000"])
    # A host port another program holds refuses the run: nothing ran.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        r = cordon.run("workspace-write", ["/bin/echo", "ran"], cwd=workspace,
                       publish=[{"port": 8000, "host_port": port}])
    assert not r.ran and r.exit_code == 125 and r.stdout == b"", r
    assert "Address already in use" in str(r.error), r.error
    # Validation: a host port twice is a policy error.
    with pytest.raises(cordon.PolicyError):
        cordon.run("workspace-write", ["/bin/true"], cwd=workspace, publish=[8000, "8000:9"])
