"""The asyncio variant (docs/python.md): start a confined run, stream its
output, cancel it, await its result. No threads: the streams are asyncio
pipes, and the end of the run is the C API's wait descriptor
(cordon_run_wait_fd) watched by the event loop.

    run = await cordon.start("workspace-write", ["make", "test"], cwd=project)
    async for line in run.stdout:
        print(line)
    result = await run.wait()          # or run.cancel()
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

from ._core import Handle, Plan, PolicyLike, RunResult, check_argv, plan_for, stdin_bytes

OutputCallback = Callable[[int, bytes], Any]
"""on_output(stream, chunk): stream 1 (stdout) or 2 (stderr)."""


async def _reader_for(loop: asyncio.AbstractEventLoop, fd: int) -> Tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    reader = asyncio.StreamReader(limit=1 << 20)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0))
    return reader, transport


class AsyncRun:
    """A started run. stdout and stderr are asyncio.StreamReaders (when
    piped); cancel() kills the tree; await wait() for the RunResult (its
    stdout/stderr hold what nobody read from the readers)."""

    def __init__(self, handle: Handle, stdout: asyncio.StreamReader, stderr: asyncio.StreamReader,
                 stdin: Optional[asyncio.StreamWriter], transports: List[asyncio.BaseTransport]):
        self._handle = handle
        self._transports = transports
        self.stdout = stdout
        self.stderr = stderr
        self.stdin = stdin
        self.pid = handle.pid
        self.argv = handle.argv
        self._loop = asyncio.get_running_loop()
        self._ended: asyncio.Future = self._loop.create_future()
        self._loop.add_reader(handle.wait_fd, self._on_wait_fd)
        self._result: Optional[RunResult] = None
        self._abandoned = False  # cancelled because its awaiting task was: free the handle at the end

    def _on_wait_fd(self) -> None:
        # Readable: the report arrived (maybe only part of it) or the helper ended.
        if self._handle.poll(0) and not self._ended.done():
            self._loop.remove_reader(self._handle.wait_fd)
            self._ended.set_result(None)
            if self._abandoned:
                self._handle.close()

    def _abandon(self) -> None:
        """Cancels a run nobody will wait for; its handle goes when it ended."""
        self._abandoned = True
        self.cancel()
        for transport in self._transports:
            transport.close()
        if self.stdin is not None:
            self.stdin.close()
        if self._ended.done():
            self._handle.close()

    def cancel(self) -> None:
        """Kills the whole sandboxed tree; wait() then returns cancelled=True."""
        self._handle.cancel()

    async def wait(self) -> RunResult:
        """Waits for the end of the run and of its output streams. If the
        awaiting task is cancelled, the run is cancelled too."""
        if self._result is not None:
            return self._result
        try:
            await asyncio.shield(self._ended)
            out, err = await asyncio.gather(self.stdout.read(), self.stderr.read())
        except asyncio.CancelledError:
            self._abandon()
            raise
        self._result = self._handle.result(out, err)
        self._handle.close()
        return self._result


async def start(policy: PolicyLike, argv: Sequence[Union[str, bytes]], *, cwd: Optional[str] = None,
                env: Optional[Mapping[str, str]] = None, stdin: Any = None, timeout: Optional[float] = None,
                workspace: Optional[str] = None, publish: Optional[Sequence[Any]] = None) -> AsyncRun:
    """Starts argv confined by `policy` (arguments as cordon.run(); stdin
    may also be cordon.aio.PIPE for a StreamWriter in run.stdin). Raises
    PolicyError, RefusedError, UsageError when nothing could start."""
    loop = asyncio.get_running_loop()
    check_argv(argv)
    if isinstance(policy, Plan) and timeout is not None:
        raise ValueError("timeout= with a Plan: use run_async(), or put process.timeout_seconds in the policy")
    plan = plan_for(policy, workspace=workspace, cwd=cwd, timeout=timeout, publish=publish)
    piped = stdin is PIPE
    handle = Handle(plan, argv, cwd=cwd, env=env, stdin=b"" if piped else stdin)
    stdout, out_transport = await _reader_for(loop, handle.take_fd(1))
    stderr, err_transport = await _reader_for(loop, handle.take_fd(2))
    writer = None
    data = stdin_bytes(stdin) if not piped else None
    in_fd = handle.take_fd(0)
    if in_fd >= 0:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(in_fd, "wb", 0))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        if not piped:
            if data:
                writer.write(data)
            writer.close()
            writer = None
    return AsyncRun(handle, stdout, stderr, writer, [out_transport, err_transport])


PIPE = object()
"""stdin=PIPE for start(): run.stdin is an asyncio.StreamWriter."""


async def run_async(policy: PolicyLike, argv: Sequence[Union[str, bytes]], *, cwd: Optional[str] = None,
                    env: Optional[Mapping[str, str]] = None, stdin: Any = None, timeout: Optional[float] = None,
                    workspace: Optional[str] = None, on_output: Optional[OutputCallback] = None,
                    publish: Optional[Sequence[Any]] = None) -> RunResult:
    """cordon.run() for asyncio: streams each chunk of output to
    on_output(stream, chunk) as it comes, and returns the RunResult (with
    the whole output). Cancelling the awaiting task cancels the run. With a
    Plan, timeout cancels the run at the deadline (timed_out and cancelled)."""
    host_deadline = timeout if isinstance(policy, Plan) else None
    run = await start(policy, argv, cwd=cwd, env=env, stdin=stdin, timeout=None if host_deadline else timeout,
                      workspace=workspace, publish=publish)
    chunks = {1: bytearray(), 2: bytearray()}

    async def pump(stream: int, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(65536):
            chunks[stream] += chunk
            if on_output is not None:
                on_output(stream, chunk)

    pumps = asyncio.gather(pump(1, run.stdout), pump(2, run.stderr))
    timed_out = False
    try:
        if host_deadline is None:
            await pumps
        else:
            try:
                await asyncio.wait_for(asyncio.shield(pumps), host_deadline)
            except asyncio.TimeoutError:
                timed_out = True
                run.cancel()
                await pumps
        result = await run.wait()
    except asyncio.CancelledError:
        run._abandon()
        raise
    result.stdout, result.stderr = bytes(chunks[1]), bytes(chunks[2])
    result.timed_out = result.timed_out or timed_out
    return result
