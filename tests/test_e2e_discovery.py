"""End to end, the discovery surface: a petstore package generated with `--surface discovery`, served over
stdio and streamable HTTP, driven by the official MCP client in both protocol eras, forwarding to a Prism
mock of the same spec (which validates every request): search, describe, call, and call_read_only_tool
refusing a write. Also: the package is black- and mypy-clean and its own tests pass, and on GitHub's
1,223 operations the listing and a search answer stay within their token budgets."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from codegen.surface.tokens import count_tokens, wire
from conftest import PETSTORE, generate_into
from named_specs import named_specs
from support.generated import on_path
from support.package_checks import assert_package_is_clean
from support.servers import free_port, wait_until_listening

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
NAME = "petdisc"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated") / NAME
    result = generate_into(PETSTORE, out, surface="discovery", pin=("place_order",))
    assert result.surface.name == "discovery" and result.surface.pinned == ("place_order",)
    return out


def environment(package: Path, prism_url: str, **extra: str) -> dict[str, str]:
    return {"PYTHONPATH": str(package / "src"), "PETDISC_BASE_URL": prism_url, **extra}


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def exercise(client: Client) -> None:
    """The discovery flow a model follows, against Prism."""
    listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == ["search_tools", "describe_tool", "call_tool", "call_read_only_tool", "place_order"]

    found = await client.call_tool("search_tools", {"query": "look up an order by its id", "limit": 3})
    assert not found.is_error and found.structured_content is not None
    names = [t["name"] for t in found.structured_content["tools"]]
    assert "get_order_by_id" in names and len(names) <= 3
    assert found.structured_content["total"] >= len(names)

    described = await client.call_tool("describe_tool", {"name": "get_order_by_id"})
    assert not described.is_error and described.structured_content is not None
    assert described.structured_content["operation"] == "GET /store/order/{orderId}"
    assert "orderId" in described.structured_content["inputSchema"]["properties"]

    order = await client.call_tool("call_tool", {"name": "get_order_by_id", "arguments": {"orderId": 1}})
    assert not order.is_error, text_of(order)
    assert order.structured_content is not None and order.structured_content["status"] == "placed"

    read = await client.call_tool("call_read_only_tool", {"name": "get_order_by_id", "arguments": {"orderId": 2}})
    assert not read.is_error, text_of(read)

    refused = await client.call_tool("call_read_only_tool", {"name": "delete_order", "arguments": {"orderId": 1}})
    assert refused.is_error and "call_tool" in text_of(refused)

    deleted = await client.call_tool("call_tool", {"name": "delete_order", "arguments": {"orderId": 1}})
    assert deleted.is_error and text_of(deleted).startswith("HTTP 400")  # Prism: the spec declares only 400/404

    placed = await client.call_tool("place_order", {"petId": 7, "quantity": 2, "status": "placed"})  # pinned
    assert not placed.is_error, text_of(placed)

    unknown = await client.call_tool("describe_tool", {"name": "get_order_by_idd"})
    assert unknown.is_error and "get_order_by_id" in text_of(unknown)


def test_generated_code_is_formatted_typed_and_its_tests_pass(package: Path) -> None:
    assert_package_is_clean(package)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_against_prism(package: Path, prism_url: str, mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", NAME], env=environment(package, prism_url), cwd=str(package)
    )
    async with Client(params, mode=mode) as client:
        await exercise(client)


async def test_surface_is_chosen_when_the_server_starts(package: Path, prism_url: str) -> None:
    for args, extra in ((["--surface", "tools"], {}), ([], {"PETDISC_SURFACE": "tools"})):
        params = StdioServerParameters(
            command=sys.executable, args=["-m", NAME, *args], env=environment(package, prism_url, **extra)
        )
        async with Client(params, mode="legacy") as client:
            assert len((await client.list_tools()).tools) == 20


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_streamable_http_against_prism(package: Path, prism_url: str, mode: str) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", NAME, "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, **environment(package, prism_url)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_listening(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            await exercise(client)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def github_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """GitHub's description generated with the default surface (auto: discovery), imported in-process."""
    spec = named_specs()["github"]
    out = tmp_path_factory.mktemp("generated") / "ghdisc"
    result = generate_into(spec, out, validate=False)
    assert result.surface.name == "discovery" and result.surface.tokens <= 2000
    with on_path(out) as name:
        yield importlib.import_module(f"{name}.server")


async def test_github_listing_and_search_answers_fit_their_token_budgets(github_server: Any) -> None:
    async with Client(github_server.build_server(), mode="legacy") as client:
        listing = await client.list_tools()
        assert [t.name for t in listing.tools] == ["search_tools", "describe_tool", "call_tool", "call_read_only_tool"]
        assert count_tokens(wire(listing.model_dump(by_alias=True, mode="json", exclude_none=True))) <= 2000
        for query in ("close an issue", "list the stargazers of a repository", "create a pull request review"):
            found = await client.call_tool("search_tools", {"query": query})
            assert found.structured_content is not None and len(found.structured_content["tools"]) == 8
            answer = found.model_dump(by_alias=True, mode="json", exclude_none=True)
            assert count_tokens(wire(answer)) <= 800, json.dumps(answer)[:2000]
        merged = await client.call_tool("search_tools", {"query": "merge a pull request", "limit": 5})
        assert merged.structured_content is not None
        assert "pulls_merge" in [t["name"] for t in merged.structured_content["tools"]]
        # GitHub's whole listing is too large to carry output schemas; describe_tool still shows them
        described = await client.call_tool("describe_tool", {"name": "pulls_get"})
        assert described.structured_content is not None
        listed = json.loads((Path(github_server.__file__).parent / "tools.json").read_text(encoding="utf-8"))
        assert "outputSchema" not in next(t for t in listed if t["name"] == "pulls_get")
        output = described.structured_content["outputSchema"]
        assert output["type"] == "object" and "merged" in json.dumps(output)


@pytest.fixture(scope="module")
def github_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GitHub's description generated with the default surface, to be served with every tool (--surface tools)."""
    out = tmp_path_factory.mktemp("generated") / "ghhttp"
    generate_into(named_specs()["github"], out, validate=False)
    return out


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_listing_over_a_mebibyte_reaches_the_official_client_over_http(github_package: Path, mode: str) -> None:
    """GitHub's every-tool listing (1.6 MB) is answered as plain JSON: as a server-sent event it would exceed the
    official client's 1 MiB event limit and the client would fail to list the tools."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ghhttp", "--transport", "http", "--port", str(port), "--surface", "tools"],
        env={**os.environ, "PYTHONPATH": str(github_package / "src"), "GHHTTP_BASE_URL": "http://127.0.0.1:9"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_listening(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            tools = (await client.list_tools()).tools
        assert len(tools) == 1223
    finally:
        proc.terminate()
        proc.wait(timeout=10)
