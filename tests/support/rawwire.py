"""A generated server driven with raw JSON-RPC lines over real pipes, recording every byte it sends back.

    lines = converse(package_dir, [INIT, INITIALIZED, LIST], fast=True)   # the server's output lines

One message at a time: after a request, the reply with its id is awaited (bounded) before the next
message goes out, so the output does not depend on scheduling and two runs compare byte for byte.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CLIENT = {"name": "rawwire", "version": "1.0"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": CLIENT,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def initialize(request_id: int, version: str = "2025-11-25", **extra: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def request(request_id: int | str, method: str, params: Any = None, modern: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if modern:
        params = {**(params or {}), "_meta": META}
    if params is not None:
        message["params"] = params
    return message


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def converse(
    out: Path, messages: list[dict[str, Any] | bytes], fast: bool, env: dict[str, str] | None = None, wait: float = 60
) -> list[bytes]:
    """Run the generated package under `out` (python -m), send `messages`, return its stdout lines."""
    (package,) = [p.name for p in (out / "src").iterdir() if (p / "handshake.py").exists()]
    prefix = package.upper()
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(out / "src"),
        f"{prefix}_FAST_START": "1" if fast else "0",
        f"{prefix}_LOG_LEVEL": "WARNING",
        **(env or {}),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", package],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ,
    )
    assert process.stdin is not None and process.stdout is not None
    received: list[bytes] = []
    buffer = b""
    deadline = time.monotonic() + wait
    try:
        for message in messages:
            line = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
            process.stdin.write(line)
            process.stdin.flush()
            want = None if isinstance(message, bytes) else message.get("id")
            if want is None:
                continue
            while True:
                while b"\n" in buffer:
                    one, buffer = buffer.split(b"\n", 1)
                    received.append(one + b"\n")
                if any(json.loads(r).get("id") == want for r in received):
                    break
                left = deadline - time.monotonic()
                assert left > 0, f"no answer to {message} within {wait} s; got {received}"
                ready, _, _ = select.select([process.stdout], [], [], left)
                if ready:
                    chunk = os.read(process.stdout.fileno(), 1 << 20)
                    assert chunk, f"the server closed stdout; stderr: {process.stderr.read() if process.stderr else ''}"
                    buffer += chunk
        process.stdin.close()
        process.stdin = None  # communicate() must not flush it again
        rest, errors = process.communicate(timeout=max(deadline - time.monotonic(), 1))
        assert b"differently" not in errors, errors.decode(errors="replace")
        buffer += rest
        received += [one + b"\n" for one in buffer.split(b"\n") if one]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return received
