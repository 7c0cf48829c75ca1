"""Responses of the API as the generated petstore server returns them: redirects, each kind of
content, no content, the size cap, JSON off the spec."""

from __future__ import annotations

import base64
import json

import httpx
import mcp.types as types
import pytest
from mcp import Client

from support import (
    ROUTES,
    TOOLS,
    Recorder,
    arguments_for,
    first,
    method,
    server,
    target,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


async def test_redirects_stay_on_the_api_host() -> None:
    tool = target()
    path = ROUTES[tool["name"]]["path"]
    away = Recorder(
        answer=lambda request: httpx.Response(
            302, headers={"Location": "http://elsewhere.test/steal"}
        )
    )
    async with Client(server(away), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "redirected to another host (elsewhere.test)" in text_of(
        result
    )
    assert [r.url.host for r in away.requests] == ["api.test"]

    def moved(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/moved-here":
            return httpx.Response(204)
        return httpx.Response(307, headers={"Location": "/moved-here"})

    within = Recorder(answer=moved)
    async with Client(server(within), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error, text_of(result)
    assert [r.url.host for r in within.requests] == [
        "api.test"
    ] * 2 and within.requests[1].url.path == "/moved-here"
    assert within.requests[0].method == within.requests[1].method == method(tool), path


@pytest.mark.parametrize(
    ("content_type", "body", "kind"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00", types.ImageContent),
        ("application/octet-stream", bytes(range(256)), types.EmbeddedResource),
        ("text/plain", b"plain words", types.TextContent),
    ],
)
async def test_response_kinds(content_type: str, body: bytes, kind: type) -> None:
    tool = target()
    recorder = Recorder(status=200, body=body, content_type=content_type)
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and isinstance(result.content[0], kind)
    block = result.content[0]
    if isinstance(block, types.ImageContent):
        assert base64.b64decode(block.data) == body and block.mime_type == content_type
    elif isinstance(block, types.EmbeddedResource):
        assert isinstance(block.resource, types.BlobResourceContents)
        assert (
            base64.b64decode(block.resource.blob) == body
            and block.resource.mime_type == content_type
        )
    else:
        assert text_of(result) == body.decode()


async def test_no_content_and_size_cap() -> None:
    tool = target()
    async with Client(server(Recorder(status=204)), mode="legacy") as client:
        assert (
            text_of(await client.call_tool(tool["name"], arguments_for(tool)))
            == "HTTP 204 No Content: success, no content."
        )
    big = Recorder(status=200, body=b"a" * 5000, content_type="text/plain")
    async with Client(server(big, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and text_of(result).startswith("a" * 1000)
    assert (
        "[truncated: the response has 5,000 bytes; only the first 1,000 are shown]"
        in text_of(result)
    )


async def test_off_spec_json_still_reaches_the_client() -> None:
    """The official client raises when structured content breaks the output schema: it never does here."""
    tool = first(lambda t: bool(t.get("outputSchema")))
    if (
        tool is None
    ):  # no tool of this API declares an output schema: JSON comes back as text only
        assert not any(t.get("outputSchema") for t in TOOLS)
        tool = target()
        async with Client(
            server(Recorder(status=200, body=b'{"a": [1, "two"]}')), mode="legacy"
        ) as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        assert (
            not result.is_error
            and result.structured_content is None
            and '"two"' in text_of(result)
        )
        return
    props = tool["outputSchema"].get("properties", {})
    odd = {key: {"unexpected": [1, "two"]} for key in props} | {
        "extra": {"unexpected": "kept"}
    }
    recorder = Recorder(status=200, body=json.dumps(odd).encode())
    for mode in ("legacy", "auto"):
        async with Client(server(recorder), mode=mode) as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        assert not result.is_error and isinstance(result.structured_content, dict)
        assert "unexpected" in text_of(result)
