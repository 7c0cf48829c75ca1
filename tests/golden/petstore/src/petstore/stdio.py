"""Stdio for the SDK's `stdio_server()`, read and written on the event loop instead of in threads.

The SDK's default stdio reads each line and performs each write and flush in a worker thread: three
thread hand-offs per tool call, which cost more than everything else this server does per call. When
stdin and stdout are pipes or sockets (how MCP clients start a server), `event_loop_stdio()` hands
`stdio_server()` the same line-oriented files served by asyncio's pipe transports. The SDK still does
the rest: framing, JSON-RPC parsing and validation, and the protocol.

Like the SDK, it keeps stray output off the wire: while serving, fd 0 reads the null device and fd 1
writes to stderr; both are restored afterwards. Anything else (a terminal, a regular file, Windows, an
event loop other than asyncio) yields None, and the caller uses the SDK's default.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

LINE_LIMIT = (
    1 << 30
)  # bytes in one JSON-RPC line (the SDK's default reader has no limit either)


class _Output(asyncio.Protocol):
    """Flow control for the stdout pipe: `drain()` waits while the pipe is full."""

    def __init__(self) -> None:
        self._paused = False
        self._resumed: asyncio.Future[None] | None = None
        self.closed = False

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.resume_writing()

    async def drain(self) -> None:
        if self._paused and not self.closed:
            self._resumed = asyncio.get_running_loop().create_future()
            await self._resumed
        if self.closed:
            raise BrokenPipeError("the client closed stdout")


class LineReader:
    """`async for line in reader`: the lines of stdin, as text (undecodable bytes replaced)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._stream.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class LineWriter:
    """`await write(text)` then `await flush()`: text to stdout, UTF-8.

    `sent`: (request id, result) of answers the client already has: handshake.py answered them before the
    SDK was loaded and replays the requests to the SDK, so that it sees the conversation from its start.
    The SDK's own answers to those are not sent twice; one that differs is reported on stderr.
    """

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        output: _Output,
        sent: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        self._transport = transport
        self._output = output
        self._sent = {
            b'{"jsonrpc":"2.0","id":' + request_id + b",": result
            for request_id, result in sent
        }

    async def write(self, text: str) -> None:
        if self._output.closed:
            raise BrokenPipeError("the client closed stdout")
        data = text.encode("utf-8")
        if self._sent:
            for start, result in self._sent.items():
                if data.startswith(start):
                    del self._sent[start]
                    if data.rstrip(b"\n") != start + b'"result":' + result + b"}":
                        print(
                            "warning: the SDK answered a replayed request differently",
                            file=sys.stderr,
                        )
                    return
        self._transport.write(data)

    async def flush(self) -> None:
        await self._output.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@asynccontextmanager
async def event_loop_stdio(
    first: bytes = b"",
    sent: Sequence[tuple[bytes, bytes]] = (),
    wire: tuple[int, int] | None = None,
) -> AsyncIterator[tuple[Any, Any] | None]:
    """(stdin lines, stdout writer) for `stdio_server(stdin, stdout)`, or None: use the SDK default.

    From handshake.py, which served the start: `first`, bytes it read from stdin, read again first; `sent`,
    see LineWriter; `wire`, its duplicates of stdin and stdout (this takes them over; fd 0 and 1 are
    already diverted)."""
    if sys.platform == "win32" or not (
        _is_pipe(wire[0] if wire else 0) and _is_pipe(wire[1] if wire else 1)
    ):
        yield None
        return
    if not _on_asyncio():
        yield None
        return
    loop = asyncio.get_running_loop()
    try:
        wire_in, wire_out = wire or (os.dup(0), os.dup(1))
        saved_in, saved_out = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:  # out of descriptors, or similar: the SDK's default copes
        yield None
        return
    transports: list[asyncio.BaseTransport] = []
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: stray output is dropped
            os.dup2(null, 1)
        os.close(null)
        stream = asyncio.StreamReader(limit=LINE_LIMIT)
        if first:
            stream.feed_data(first)
        reader, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream),
            os.fdopen(wire_in, "rb", buffering=0),
        )
        transports.append(reader)
        writer, output = await loop.connect_write_pipe(
            _Output, os.fdopen(wire_out, "wb", buffering=0)
        )
        transports.append(writer)
        yield LineReader(stream), LineWriter(writer, output, sent)
    finally:
        for transport in transports:
            transport.close()
        for saved, fd in ((saved_in, 0), (saved_out, 1)):
            with suppress(OSError):
                os.set_blocking(saved, True)  # asyncio made the pipe non-blocking
                os.dup2(saved, fd)
                os.close(saved)
