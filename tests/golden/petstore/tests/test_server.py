"""Tests of the generated petstore server, in-process.

The official MCP client talks to `build_server()` directly; httpx.MockTransport stands in for the API,
so every tool's request can be checked without a network.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from typing import Any

import httpx
import mcp.types as types
import pytest
from mcp import Client, MCPError

from petstore.server import build_server
from petstore.settings import Settings

pytestmark = pytest.mark.anyio

PACKAGE = files("petstore")
TOOLS: list[dict[str, Any]] = json.loads(
    PACKAGE.joinpath("tools.json").read_text(encoding="utf-8")
)
ROUTES: dict[str, dict[str, Any]] = json.loads(
    PACKAGE.joinpath("routes.json").read_text(encoding="utf-8")
)
BASE_URL = "http://api.test"


class Recorder:
    """A fake API: records each request and answers with a fixed response."""

    def __init__(
        self,
        status: int = 204,
        body: bytes = b"",
        content_type: str = "application/json",
    ) -> None:
        self.requests: list[httpx.Request] = []
        self.status, self.body, self.content_type = status, body, content_type

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(
            self.status, content=self.body, headers={"content-type": self.content_type}
        )


def server(recorder: Recorder, base_url: str = BASE_URL) -> Any:
    return build_server(Settings(base_url=base_url), httpx.MockTransport(recorder))


def sample(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """A small value that satisfies `schema`, enough to build a request."""
    if not isinstance(schema, dict) or depth > 8:
        return "x"
    if "$ref" in schema:
        return sample(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    for key in ("oneOf", "anyOf"):
        if schema.get(key):
            return sample(schema[key][0], defs, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = sample(part, defs, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer" or kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + 1 if kind == "integer" else float(low) + 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(schema.get("items", {}), defs, depth + 1)] * max(
            1, schema.get("minItems", 1)
        )
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {
            k: sample(props.get(k, {}), defs, depth + 1)
            for k in schema.get("required", [])
        }
    if kind == "null":
        return None
    return "x" * max(1, schema.get("minLength", 1))


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    defs = schema.get("$defs", {})
    return {
        key: sample(schema["properties"][key], defs)
        for key in schema.get("required", [])
    }


def path_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"{[^}]+}", template)
    return re.compile("^" + "[^/?#]+".join(re.escape(p) for p in parts) + "$")


async def test_lists_every_tool() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [t["name"] for t in TOOLS]
    assert len({t.name for t in listed}) == len(listed)
    for tool in listed:
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", tool.name)
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.open_world_hint is True


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_tool_sends_its_operation(mode: str) -> None:
    """Each tool, called with its required arguments, sends one request for its method and path."""
    recorder = Recorder(status=204)
    failures = []
    async with Client(server(recorder), mode=mode) as client:
        for tool in TOOLS:
            route = ROUTES[tool["name"]]
            recorder.requests.clear()
            result = await client.call_tool(tool["name"], arguments_for(tool))
            if result.is_error or len(recorder.requests) != 1:
                failures.append(f"{tool['name']}: {result.content}")
                continue
            request = recorder.requests[0]
            if request.method != route["method"] or not path_pattern(
                route["path"]
            ).match(request.url.raw_path.decode().split("?")[0]):
                failures.append(
                    f"{tool['name']}: sent {request.method} {request.url}, expected {route['method']} {route['path']}"
                )
    assert not failures, "\n".join(failures)


async def test_upstream_failure_is_a_tool_error() -> None:
    tool = TOOLS[0]
    recorder = Recorder(status=503, body=b'{"message": "down for maintenance"}')
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert "503" in text.text and "down for maintenance" in text.text


async def test_unreachable_api_is_a_tool_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    tool = TOOLS[0]
    app = build_server(Settings(base_url=BASE_URL), httpx.MockTransport(refuse))
    async with Client(app, mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent) and "ConnectError" in text.text


async def test_unknown_tool_is_a_protocol_error() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == types.INVALID_PARAMS


async def test_missing_required_argument_is_named() -> None:
    tool = next(t for t in TOOLS if t["inputSchema"].get("required"))
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], {})
    assert result.is_error and not recorder.requests
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert tool["inputSchema"]["required"][0] in text.text
