"""End to end: the generated petstore package installed in a fresh venv, served over stdio and HTTP, driven
by the official MCP client and by the MCP Inspector CLI, forwarding to a Prism mock of the same spec."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters

from support.inspector import run_inspector
from support.package_checks import assert_package_is_clean, install_into_new_venv
from support.servers import free_port, wait_until_listening

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server_bin(petstore_package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install ./petstore` into a new virtual environment; returns its console script."""
    return install_into_new_venv(tmp_path_factory.mktemp("venv"), str(petstore_package)) / "petstore"


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_generated_code_is_formatted_typed_and_its_tests_pass(petstore_package: Path) -> None:
    assert_package_is_clean(petstore_package)


@pytest.mark.anyio
async def test_stdio_against_prism(server_bin: Path, prism_url: str) -> None:
    params = StdioServerParameters(command=str(server_bin), env={"PETSTORE_BASE_URL": prism_url})
    async with Client(params, mode="legacy") as client:
        tools = (await client.list_tools()).tools
        assert len(tools) == 20
        by_name = {t.name: t for t in tools}
        assert by_name["get_order_by_id"].annotations is not None
        assert by_name["get_order_by_id"].annotations.read_only_hint is True

        order = await client.call_tool("get_order_by_id", {"orderId": 1})  # GET
        assert not order.is_error, text_of(order)
        assert order.structured_content is not None and order.structured_content["status"] == "placed"
        assert json.loads(text_of(order)) == order.structured_content

        placed = await client.call_tool(
            "place_order", {"petId": 7, "quantity": 2, "status": "placed"}
        )  # POST, JSON body
        assert not placed.is_error, text_of(placed)
        assert placed.structured_content is not None and set(placed.structured_content) >= {"id", "petId", "quantity"}

        deleted = await client.call_tool("delete_order", {"orderId": 1})  # DELETE: the spec declares only 400/404
        assert deleted.is_error and text_of(deleted).startswith("HTTP 400")

        missing = await client.call_tool("get_order_by_id", {})
        assert missing.is_error and "orderId" in text_of(missing)

        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
        assert caught.value.error.code == -32602


@pytest.mark.anyio
async def test_streamable_http_against_prism(server_bin: Path, prism_url: str) -> None:
    port = free_port()
    env = {**os.environ, "PETSTORE_BASE_URL": prism_url}
    proc = subprocess.Popen(
        [str(server_bin), "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_listening(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert len((await client.list_tools()).tools) == 20
            order = await client.call_tool("get_order_by_id", {"orderId": 3})
            assert not order.is_error and order.structured_content is not None
            assert order.structured_content["status"] == "placed"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_inspector_cli_lists_and_calls(server_bin: Path, prism_url: str) -> None:
    env_arg = ["-e", f"PETSTORE_BASE_URL={prism_url}"]
    listed = run_inspector([*env_arg, str(server_bin), "--method", "tools/list"])
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["tools"]) == 20
    called = run_inspector(
        [
            *env_arg,
            str(server_bin),
            "--method",
            "tools/call",
            "--tool-name",
            "get_order_by_id",
            "--tool-arg",
            "orderId=2",
        ]
    )
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert not result.get("isError") and result["structuredContent"]["status"] == "placed"
