"""The fast start for every listing the generator can make: the pre-serialized answers (handshake.jsonl) are
the bytes the SDK itself sends for the surface the server runs with.

- the discovery surface (four tools + pinned ones, discovery.json's key order), --compact, client profiles:
  each pre-serialized answer (initialize per version, server/discover, tools/list in both eras) equals the
  SDK path's answer to the same request over real pipes;
- a surface chosen at start (`<PREFIX>_SURFACE`, `--surface`) that differs from the pre-serialized one
  turns the fast start off, and both ways then give the same bytes;
- the official client sees the same listing both ways on a discovery package, in both eras.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from codegen.emit.wire import HANDSHAKE_VERSIONS, MODERN_VERSION
from conftest import PETSTORE, generate_into
from support.faststart import same_both_ways
from support.generated import import_from
from support.rawwire import INITIALIZED, converse, initialize, request

PIN = ("place_order",)


@pytest.fixture(scope="module")
def discovery_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated") / "petfast"
    result = generate_into(PETSTORE, out, surface="discovery", pin=PIN)
    assert result.surface.name == "discovery" and result.surface.pinned == PIN
    return out


def answers_of(out: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    (package,) = [p for p in (out / "src").iterdir() if (p / "handshake.jsonl").exists()]
    lines = (package / "handshake.jsonl").read_bytes().split(b"\n")
    header = json.loads(lines[0])
    return header, dict(zip(header["answers"], lines[1:]))


def result_of(line: bytes) -> bytes:
    """The result's bytes inside one answer line as the server wrote it."""
    head, _, rest = line.partition(b',"result":')
    assert head.startswith(b'{"jsonrpc":"2.0","id":') and rest.endswith(b"}\n"), line
    return rest[:-2]


def assert_answers_are_the_sdk_bytes(out: Path, surface: str) -> None:
    """Every pre-serialized answer against the SDK path's own answer (the fast start off)."""
    header, answers = answers_of(out)
    assert header["surface"] == surface and answers, "the fast start applies to this package"
    for version in (HANDSHAKE_VERSIONS[0], HANDSHAKE_VERSIONS[-1]):
        lines = converse(out, [initialize(1, version), INITIALIZED, request(2, "tools/list")], fast=False)
        assert result_of(lines[0]) == answers[f"initialize {version}"]
        assert result_of(lines[1]) == answers["tools/list handshake"]
    lines = converse(
        out, [request(1, "server/discover", modern=True), request(2, "tools/list", modern=True)], fast=False
    )
    assert result_of(lines[0]) == answers[f"server/discover {MODERN_VERSION}"]
    assert result_of(lines[1]) == answers[f"tools/list {MODERN_VERSION}"]


def test_discovery_answers_are_the_sdk_bytes(discovery_package: Path) -> None:
    assert_answers_are_the_sdk_bytes(discovery_package, "discovery")
    _, answers = answers_of(discovery_package)
    listed = [tool["name"] for tool in json.loads(answers["tools/list handshake"])["tools"]]
    assert listed == ["search_tools", "describe_tool", "call_tool", "call_read_only_tool", *PIN]
    capabilities = json.loads(answers[f"initialize {HANDSHAKE_VERSIONS[-1]}"])["capabilities"]
    assert {"tools", "resources", "logging"} <= set(capabilities)


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [{"compact": True}, {"clients": ("openai",)}, {"clients": ("gemini", "cursor")}],
    ids=["compact", "openai", "gemini-cursor"],
)
def test_listing_options_answers_are_the_sdk_bytes(tmp_path: Path, options: dict[str, Any]) -> None:
    out = tmp_path / "petopts"
    result = generate_into(PETSTORE, out, surface="tools", **options)
    assert result.surface.name == "tools"
    assert_answers_are_the_sdk_bytes(out, "tools")


def test_surface_chosen_at_start_decides_the_fast_start(discovery_package: Path) -> None:
    handshake = import_from(discovery_package, "petfast.handshake")
    for same in ({}, {"PETFAST_SURFACE": "auto"}, {"PETFAST_SURFACE": " Discovery "}):
        assert handshake._answers([], same, pipes=True) is not None, same
    for other in ({"PETFAST_SURFACE": "tools"}, {"PETFAST_SURFACE": "bogus"}, {"PETFAST_SURFACE": " "}):
        assert handshake._answers([], other, pipes=True) is None, other  # the SDK path (or the server's error)
    assert handshake._answers(["--surface", "discovery"], {}, pipes=True) is None  # arguments: the server's main


def test_other_surface_at_start_gets_the_sdk_answers(discovery_package: Path) -> None:
    messages = [initialize(1), INITIALIZED, request(2, "tools/list")]
    env = {"PETFAST_SURFACE": "tools"}
    fast = converse(discovery_package, messages, fast=True, env=env)
    assert fast == converse(discovery_package, messages, fast=False, env=env)
    assert len(json.loads(fast[1])["result"]["tools"]) == 20  # every operation, not the pre-serialized four + pin


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_official_client_sees_the_same_discovery_listing_both_ways(discovery_package: Path, mode: str) -> None:
    async def session(client: Client) -> tuple[Any, ...]:
        listed = await client.list_tools()
        described = await client.call_tool("describe_tool", {"name": "get_pet_by_id"})
        again = await client.list_tools()
        dumped = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
        return dumped, described.structured_content, again == listed

    dumped, _, same_again = await same_both_ways(discovery_package, mode, session)
    assert [tool["name"] for tool in dumped][-1] == PIN[0] and same_again
