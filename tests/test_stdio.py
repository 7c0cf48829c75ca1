"""The generated server's stdio: pipes are served on the event loop (src/<pkg>/stdio.py), anything else by the
SDK's default stdio; either way only JSON-RPC reaches stdout, even when code in the process prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

# Starts the server with a thread that, once the server has taken over fd 1, prints and writes to fd 1 directly,
# then says so on stderr.
STRAY = """
import os, sys, threading, time
from petstore.cli import main

def stray() -> None:
    wire = os.fstat(1)
    deadline = time.monotonic() + 20
    while os.fstat(1) == wire and time.monotonic() < deadline:
        time.sleep(0.01)
    print("stray print", flush=True)
    os.write(1, b"stray write\\n")
    os.write(2, b"STRAYED\\n")

threading.Thread(target=stray, daemon=True).start()
main([])
"""


def _env(package: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(package / "src"), "PETSTORE_BASE_URL": "http://127.0.0.1:9"}


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _wait_for(stream: Any, marker: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        seen += line
    return seen


def test_over_pipes_only_protocol_reaches_stdout(petstore_package: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", STRAY],
        env=_env(petstore_package),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        _send(process, INITIALIZE)
        assert json.loads(process.stdout.readline())["id"] == 1
        _send(process, INITIALIZED)
        diverted = _wait_for(process.stderr, b"STRAYED", 20)
        assert b"STRAYED" in diverted
        assert b"stray print" in diverted and b"stray write" in diverted  # fd 1 led to stderr meanwhile
        _send(process, LIST)
        answer = json.loads(process.stdout.readline())  # the stray lines would come first
        assert answer["id"] == 2 and len(answer["result"]["tools"]) == 20
        process.stdin.close()  # type: ignore[union-attr]
        assert process.wait(timeout=30) == 0
        assert process.stdout.read() == b""
    finally:
        process.kill()
        process.wait(timeout=10)


def test_stdout_to_a_file_is_served_by_the_sdk_stdio(petstore_package: Path, tmp_path: Path) -> None:
    """When stdout is not a pipe (a regular file here), the SDK's own stdio serves the session."""
    answers = tmp_path / "answers.jsonl"
    with answers.open("wb") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "petstore"],
            env=_env(petstore_package),
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=subprocess.PIPE,
        )
        try:
            for message in (INITIALIZE, INITIALIZED, LIST):
                _send(process, message)
            deadline = time.monotonic() + 30
            while answers.read_bytes().count(b"\n") < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            process.stdin.close()  # type: ignore[union-attr]
            assert process.wait(timeout=30) == 0
        finally:
            process.kill()
            process.wait(timeout=10)
    lines = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == [1, 2]
    assert len(lines[1]["result"]["tools"]) == 20
