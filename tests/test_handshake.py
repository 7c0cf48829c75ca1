"""The fast start (templates/handshake.py.jinja, codegen/emit/wire.py): the handshake answered before the SDK loads.

- the pre-serialized answers are the SDK's own bytes: every message of a conversation gets the same bytes
  with and without the fast start (raw JSON-RPC over real pipes, both protocol eras, version negotiation,
  malformed and unusual messages that must be handed to the SDK);
- the tools/list answers equal the SDK serializer's output for richer schemas (every fixture spec);
- the official client (both eras) and the Inspector CLI see the same results both ways;
- the fast start is off where it cannot be the SDK's answer: arguments, a surface chosen at start, another
  SDK version, invalid settings (the server's own error), a terminal or file instead of pipes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from codegen.config import Config
from codegen.emit.wire import MODERN_VERSION, SDK, handshake_lines
from codegen.pipeline import generate
from conftest import FIXTURES
from named_specs import named_specs
from support.faststart import same_both_ways
from support.generated import import_from
from support.rawwire import INITIALIZED, META, converse, initialize, request

NOPE = {"name": "no_such_tool", "arguments": {}}


def both(out: Path, messages: list[Any], **options: Any) -> list[bytes]:
    fast = converse(out, messages, fast=True, **options)
    slow = converse(out, messages, fast=False, **options)
    assert fast == slow
    return fast


def test_sdk_version_is_the_one_the_answers_follow() -> None:
    from importlib.metadata import version

    assert {
        "mcp": version("mcp"),
        "mcp-types": version("mcp-types"),
    } == SDK, "the SDK changed: check codegen/emit/wire.py against its serializer, then update SDK there"


def test_handshake_era_conversation_is_byte_identical(petstore_package: Path) -> None:
    lines = both(
        petstore_package,
        [
            initialize(1),
            INITIALIZED,
            request(2, "tools/list"),
            request(3, "tools/list", {}),
            request(4, "tools/call", NOPE),
            request("five", "tools/list"),
            request(6, "ping"),
        ],
    )
    assert len(lines) == 6
    answer = json.loads(lines[0])["result"]
    assert answer["protocolVersion"] == "2025-11-25" and answer["serverInfo"]["name"] == "petstore"
    assert len(json.loads(lines[1])["result"]["tools"]) == 20
    assert json.loads(lines[3])["error"]["code"] == -32602


def test_modern_era_conversation_is_byte_identical(petstore_package: Path) -> None:
    lines = both(
        petstore_package,
        [
            request(1, "server/discover", modern=True),
            request(2, "tools/list", modern=True),
            request(3, "tools/call", NOPE, modern=True),
            request(4, "tools/list", modern=True),
        ],
    )
    assert json.loads(lines[0])["result"]["supportedVersions"] == [MODERN_VERSION]
    assert json.loads(lines[1])["result"]["resultType"] == "complete"
    assert lines[1] == lines[3].replace(b'"id":4', b'"id":2')


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "1999-01-01", "2026-07-28"])
def test_protocol_version_negotiation(petstore_package: Path, version: str) -> None:
    """A known handshake version is echoed, anything else answered with the latest, both ways alike."""
    lines = both(petstore_package, [initialize(1, version), INITIALIZED, request(2, "tools/list")])
    expected = version if version.startswith("202") and version < "2026" else "2025-11-25"
    assert json.loads(lines[0])["result"]["protocolVersion"] == expected


@pytest.mark.slow
@pytest.mark.parametrize(
    "messages",
    [
        [request(1, "tools/list")],  # before initialize
        [initialize(1, clientInfo={"name": "x"})],  # invalid: no version
        [initialize(1, capabilities={"roots": {"listChanged": "yes"}})],
        [b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":NaN}}\n', request(2, "ping")],
        [b"not json\n", initialize(1), request(2, "tools/list", {"cursor": "abc"})],
        [initialize(1), request(2, "tools/list", modern=True)],  # the other era's envelope
        [request(1, "server/discover", modern=True), initialize(2)],
        [request(1, "tools/list", {"_meta": {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}})],
        [
            initialize(1, capabilities={"experimental": {"x": {"y": 1}}, "elicitation": {"form": {}}}),
            request(2, "tools/list"),
        ],
    ],
    ids=[
        "list-first",
        "bad-info",
        "bad-roots",
        "nan",
        "not-json-cursor",
        "era-mix",
        "era-mix-modern",
        "future",
        "caps",
    ],
)
def test_unusual_messages_get_the_sdk_answer(petstore_package: Path, messages: list[Any]) -> None:
    both(petstore_package, messages)


def _serialized(spec: Path) -> tuple[list[dict[str, Any]], list[bytes]]:
    result = generate(Config(spec=str(spec), name="fixture"))
    assert result.files, result.problems
    tools = json.loads(result.files["src/fixture/tools.json"])
    lines = result.files["src/fixture/handshake.jsonl"].encode().split(b"\n")
    return tools, lines


@pytest.mark.parametrize("spec", sorted(p.name for p in FIXTURES.glob("*.yaml")))
def test_tools_list_answers_equal_the_sdk_serializer(spec: str) -> None:
    """Each fixture's tools through the SDK's own per-version serializer give the pre-serialized bytes."""
    from mcp_types import methods

    tools, lines = _serialized(FIXTURES / spec)
    header = json.loads(lines[0])
    assert header["answers"], "every fixture can be answered before the SDK loads"
    answers = dict(zip(header["answers"], lines[1:]))
    for version in ("2024-11-05", "2025-11-25"):
        dumped = methods.serialize_server_result("tools/list", version, {"tools": tools})
        assert json.dumps(dumped, ensure_ascii=False, separators=(",", ":")).encode() == answers["tools/list handshake"]
    modern = methods.serialize_server_result(
        "tools/list", MODERN_VERSION, {"ttlMs": 0, "cacheScope": "private", "resultType": "complete", "tools": tools}
    )
    modern["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "fixture", "version": header_version(spec)}}
    assert (
        json.dumps(modern, ensure_ascii=False, separators=(",", ":")).encode()
        == answers[f"tools/list {MODERN_VERSION}"]
    )


def header_version(spec: str) -> str:
    import yaml

    return str(yaml.safe_load((FIXTURES / spec).read_text(encoding="utf-8"))["info"]["version"])


def test_what_the_serializer_might_write_differently_turns_the_fast_start_off() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "maximum": 1e21}}}}
    assert json.loads(handshake_lines([tool], "x", "1").splitlines()[0])["answers"] == []
    icons = {"name": "t", "inputSchema": {"type": "object"}, "icons": [{"src": "x"}]}
    assert json.loads(handshake_lines([icons], "x", "1").splitlines()[0])["answers"] == []
    plain = {"name": "t", "inputSchema": {"type": "object"}}
    assert len(handshake_lines([plain], "x", "1").splitlines()) == 8


def test_fast_start_is_off_where_it_cannot_be_the_sdk_answer(petstore_package: Path) -> None:
    handshake = import_from(petstore_package, "petstore.handshake")
    answers = handshake._answers([], {}, pipes=True)
    assert answers is not None and answers["tools/list handshake"].startswith(b'{"tools":[')
    assert handshake._answers(["--timeout", "5"], {}, pipes=True) is None  # arguments: the server's own main
    # a tools-only package has no surface to choose: its server ignores PETSTORE_SURFACE (test_handshake_surfaces.py)
    assert handshake._answers([], {"PETSTORE_SURFACE": "discovery"}, pipes=True) is not None
    assert handshake._answers([], {"PETSTORE_FAST_START": "0"}, pipes=True) is None
    assert handshake._answers([], {}, pipes=False) is None  # a terminal or a file
    assert handshake._sdk_version("mcp", "mcp", SDK["mcp"])
    assert not handshake._sdk_version("mcp", "mcp", "0.0.1")  # another SDK: its bytes may differ
    bad = subprocess.run(  # settings the server refuses: its own error, not a handshake answer first
        [sys.executable, "-m", "petstore"],
        input=json.dumps(initialize(1)) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(petstore_package / "src"), "PETSTORE_TIMEOUT": "soon"},
    )
    assert bad.returncode != 0 and "PETSTORE_TIMEOUT must be a number" in bad.stderr and bad.stdout == ""


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_official_client_sees_the_same_both_ways(petstore_package: Path, mode: str) -> None:
    async def session(client: Client) -> tuple[Any, ...]:
        listed = await client.list_tools()
        failed = await client.call_tool("get_pet_by_id", {"petId": 1})
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        again = await client.list_tools()
        dumped = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
        return dumped, failed.is_error, unknown.value.error.code, again == listed

    _, failed, code, same_again = await same_both_ways(petstore_package, mode, session)
    assert failed and code == -32602 and same_again


@pytest.mark.slow
def test_inspector_sees_the_same_both_ways(petstore_package: Path) -> None:
    from support.inspector import run_inspector

    outputs = []
    for fast in ("1", "0"):
        env = {"PYTHONPATH": str(petstore_package / "src"), "PETSTORE_FAST_START": fast}
        result = run_inspector([sys.executable, "-m", "petstore", "--method", "tools/list"], env=env)
        assert result.returncode == 0, result.stderr
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1] and len(outputs[0]["tools"]) == 20


# Prints to stdout and writes to fd 1 continuously from the moment the server has taken fd 1 over, through
# the fast start, the hand-over and the SDK's serving: none of it may reach the client.
# The writer stops (and is waited for) at exit: a daemon thread still inside print() when the interpreter
# finalizes makes CPython abort the process (it cannot take stdout's lock), which is not the server's doing.
STRAY = """
import atexit, os, sys, threading, time
from petstore.handshake import main

stop = threading.Event()

def stray() -> None:
    wire = os.fstat(1)
    deadline = time.monotonic() + 20
    while os.fstat(1) == wire and time.monotonic() < deadline and not stop.is_set():
        time.sleep(0.001)
    while time.monotonic() < deadline and not stop.is_set():
        print("stray print", flush=True)
        os.write(1, b"stray write\\n")
        time.sleep(0.002)

writer = threading.Thread(target=stray, daemon=True)
writer.start()
atexit.register(lambda: (stop.set(), writer.join(5)))
main([])
"""


def test_stray_output_never_reaches_the_wire(petstore_package: Path) -> None:
    messages = [
        initialize(1),
        INITIALIZED,
        request(2, "tools/list"),
        request(3, "tools/call", NOPE),
        request(4, "tools/list"),
    ]
    process = subprocess.Popen(
        [sys.executable, "-c", STRAY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(petstore_package / "src")},
    )
    assert process.stdin is not None and process.stdout is not None
    watchdog = threading.Timer(120, process.kill)  # a server that hangs fails the test instead of blocking it
    watchdog.start()
    try:
        lines = []
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                lines.append(process.stdout.readline())  # the stray lines would come first
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        assert process.stdout.read() == b""
    finally:
        watchdog.cancel()
        process.kill()
        process.wait(timeout=10)
    assert [json.loads(line)["id"] for line in lines] == [1, 2, 3, 4]
    assert process.stderr is not None and b"stray" in process.stderr.read()


@pytest.mark.slow
def test_github_answers_are_the_sdk_bytes(tmp_path: Path) -> None:
    """GitHub's 1,200 tools (3 MB of tools/list, `--surface tools`): the same bytes with and without the fast start,
    both eras."""
    named = named_specs()
    if "github" not in named:
        pytest.skip("the corpus is not installed (tools/fetch-corpus)")
    out = tmp_path / "github"
    result = generate(Config(spec=named["github"], output=out, name="github", surface="tools"))  # every tool listed
    from codegen.emit.write import write

    assert write(out, result.files, force=False) == []
    assert json.loads(result.files["src/github/handshake.jsonl"].split("\n", 1)[0])["answers"]
    legacy = both(out, [initialize(1), INITIALIZED, request(2, "tools/list"), request(3, "tools/call", NOPE)], wait=180)
    assert len(json.loads(legacy[1])["result"]["tools"]) > 1000
    both(out, [request(1, "server/discover", modern=True), request(2, "tools/list", modern=True)], wait=180)
