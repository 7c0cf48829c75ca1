"""The floor without the SDK: a minimal MCP server over stdio in plain Python, with the same tools as ours.

It answers `initialize` (echoing a handshake version), `tools/list` (the given tools.json, read once and
sent as read) and `tools/call` (one GET to the upstream over a pool of keep-alive HTTP/1.1 connections,
the body returned as text), and `ping`; anything else is "method not found". No validation, no SDK, no
httpx: the least a Python process can pay per start and per call on the same transport.

    python peers/nosdk_server.py --base-url URL --tools path/to/tools.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any
from urllib.parse import urlsplit

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MAX_BODY = 16 << 20


class Pool:
    """Keep-alive connections to one host; a connection is used by one request at a time."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def get(self, path: str) -> tuple[int, bytes]:
        conn = self.idle.pop() if self.idle else await asyncio.open_connection(self.host, self.port)
        reader, writer = conn
        target = self.prefix + (path if path.startswith("/") else "/" + path)
        writer.write(
            f"GET {target} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\naccept: application/json\r\n\r\n".encode()
        )
        status_line = await reader.readline()
        status = int(status_line.split()[1])
        length, chunked = 0, False
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
            elif name.strip().lower() == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
        if chunked:
            parts = []
            while size := int((await reader.readline()).split(b";")[0], 16):
                parts.append(await reader.readexactly(min(size, MAX_BODY)))
                await reader.readline()
            await reader.readline()
            body = b"".join(parts)
        else:
            body = await reader.readexactly(min(length, MAX_BODY))
        self.idle.append(conn)
        return status, body


async def serve(base_url: str, tools_bytes: bytes) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 30)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0))
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(1, "wb", buffering=0))
    pool = Pool(base_url)
    tasks: set[asyncio.Task[None]] = set()

    def send(request_id: Any, result: bytes) -> None:
        transport.write(b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":' + result + b"}\n")

    async def call(request_id: Any, params: dict[str, Any]) -> None:
        try:
            status, body = await pool.get(str((params.get("arguments") or {}).get("path", "/")))
            text, error = body.decode("utf-8", "replace"), status >= 400
        except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
            text, error = repr(exc), True
        result = {"content": [{"type": "text", "text": text}], "isError": error}
        send(request_id, json.dumps(result).encode())

    while line := await reader.readline():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            asked = (message.get("params") or {}).get("protocolVersion")
            answer = {
                "protocolVersion": asked if asked in VERSIONS else VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "nosdk-floor", "version": "0"},
            }
            send(request_id, json.dumps(answer).encode())
        elif method == "tools/list":
            send(request_id, b'{"tools":' + tools_bytes + b"}")
        elif method == "tools/call":
            task = asyncio.ensure_future(call(request_id, message.get("params") or {}))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        elif method == "ping":
            send(request_id, b"{}")
        else:
            error = {"code": -32601, "message": "Method not found"}
            transport.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--tools", required=True, help="a generated package's tools.json (the same tools as ours)")
    args = ap.parse_args()
    with open(args.tools, "rb") as handle:
        tools_bytes = handle.read().strip()
    try:
        asyncio.run(serve(args.base_url, tools_bytes))
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
