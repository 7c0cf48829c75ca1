"""Hostile arguments and bodies from the client: unknown arguments, multipart files given as plain base64
strings, request bodies over HTTP that no parser should take. (Hostile answers from the API: test_hostile.py.)
"""

from __future__ import annotations

import base64
import re
from typing import Any

import httpx
import pytest
from mcp import Client

from petstore.plans import ArgumentError, Route
from petstore.requests import build_request
from petstore.settings import Settings
from petstore.web import http_app
from support import (
    BASE_URL,
    CALLABLE,
    ROUTES,
    Recorder,
    arguments_for,
    file_args,
    first,
    lifespan,
    server,
    target,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


async def test_unknown_argument_names_the_closest_and_sends_nothing() -> None:
    tool = (
        first(
            lambda t: any(len(k) >= 3 for k in t["inputSchema"].get("properties", {}))
        )
        or target()
    )
    known = list(tool["inputSchema"].get("properties", {}))
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool) | {"zz_not_an_argument": 1}
        )
        assert result.is_error and "'zz_not_an_argument': unknown argument" in text_of(
            result
        ), text_of(result)
        long_names = [k for k in known if len(k) >= 3 and k + "x" not in known]
        if (
            long_names
        ):  # a misspelling (one letter more) is answered with the name meant
            name = long_names[0]
            arguments = {k: v for k, v in arguments_for(tool).items() if k != name}
            result = await client.call_tool(tool["name"], arguments | {name + "x": 1})
            assert result.is_error and f"did you mean {name!r}?" in text_of(
                result
            ), text_of(result)
    assert not recorder.requests
    assert (
        tool["inputSchema"].get("additionalProperties", False) is False
    )  # names outside the schema are checked


def multipart_parts(request: httpx.Request) -> dict[str, tuple[str, bytes]]:
    """name -> (Content-Type or "", content) of a multipart/form-data request."""
    boundary = request.headers["content-type"].split("boundary=")[1]
    parts: dict[str, tuple[str, bytes]] = {}
    for chunk in request.content.split(b"--" + boundary.encode())[1:-1]:
        head, _, data = chunk.strip(b"\r\n").partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]*)"', head)
        media = re.search(rb"Content-Type: ([^\r\n]*)", head)
        assert name is not None
        parts[name.group(1).decode()] = (media.group(1).decode() if media else "", data)
    return parts


async def test_multipart_file_as_a_plain_base64_string() -> None:
    tool = first(lambda t: bool(file_args(t)))
    if (
        tool is None
    ):  # no tool of this API uploads a file: the part types are checked below
        assert not any(file_args(t) for t in CALLABLE)
        return
    name = file_args(tool)[0]
    schema = tool["inputSchema"]["properties"][name]
    value: Any = base64.b64encode(b"file bytes").decode()
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"],
            arguments_for(tool)
            | {name: [value] if schema.get("type") == "array" else value},
        )
    assert not result.is_error, text_of(result)
    (request,) = recorder.requests
    wire = next(a["name"] for a in ROUTES[tool["name"]]["args"] if a["arg"] == name)
    assert multipart_parts(request)[wire][1] == b"file bytes"


def test_multipart_part_types() -> None:
    def route(content_type: str | None) -> Route:
        arg = {
            "arg": "f",
            "name": "f",
            "in": "body",
            "style": "form",
            "explode": True,
            "file": True,
        }
        if content_type is not None:
            arg["contentType"] = content_type
        return Route.from_json(
            {
                "method": "POST",
                "path": "/up",
                "args": [arg],
                "body": {
                    "mediaType": "multipart/form-data",
                    "arg": None,
                    "required": True,
                },
            }
        )

    def part_type(content_type: str | None, value: Any) -> str:
        request = build_request(route(content_type), {"f": value})
        wire = httpx.Request(
            "POST",
            "http://api.test/up",
            headers=request.headers,
            content=request.content,
        )
        return multipart_parts(wire)["f"][0]

    data = base64.b64encode(b"\x89PNG").decode()
    assert (
        part_type("image/png, image/jpeg", {"content": data}) == "image/png"
    )  # the first of a list
    assert (
        part_type("image/*, image/webp", {"content": data}) == "image/webp"
    )  # the first concrete one
    assert part_type("image/*", {"content": data}) == "application/octet-stream"
    assert part_type(None, data) == "application/octet-stream"  # a plain base64 string
    assert (
        part_type(
            "image/png, image/jpeg", {"content": data, "contentType": "image/jpeg"}
        )
        == "image/jpeg"
    )
    with pytest.raises(ArgumentError):
        build_request(route(None), {"f": "not base64!"})


async def test_hostile_bodies_over_http_are_parse_errors() -> None:
    """The HTTP app reads a POST body to route it by method: a body nested deeper than any parser goes, one
    longer than it reads, and one that is not JSON are each a JSON-RPC parse error, never a crash.
    """
    settings = Settings(base_url=BASE_URL)
    app = http_app(server(Recorder()), settings)
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    bodies = [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "x": "'
        + b"x" * (2 << 20),
        b"not json",
    ]
    async with lifespan(app):
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
        ) as http:
            for body in bodies:
                answer = await http.post("/mcp", content=body, headers=headers)
                assert answer.status_code == 400, answer.text[:200]
                assert answer.json()["error"]["code"] == -32700
