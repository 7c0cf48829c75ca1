"""Path and header arguments kept in their place: a value cannot change the path it is put in (`..`, `/`,
`?`, `#`, percent-escapes), and a header or cookie value with a line break is refused before anything is sent.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from petstore.plans import ArgumentError, Route
from petstore.requests import build_request
from support import (
    CALLABLE,
    ROUTES,
    Recorder,
    args_in,
    arguments_for,
    first,
    path_pattern,
    server,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


def test_path_arguments_cannot_change_the_path() -> None:
    route = Route.from_json(
        {
            "method": "GET",
            "path": "/items/{id}/detail",
            "args": [{"arg": "id", "name": "id", "in": "path"}],
            "body": None,
        }
    )
    for trick in (
        "../admin",
        "a/../../b",
        "x?admin=1",
        "x#frag",
        "%2F..%2F",
        "..",
        "http://elsewhere.test/",
    ):
        target = build_request(route, {"id": trick}).target
        assert (
            target.startswith("/items/")
            and target.endswith("/detail")
            and target.count("/") == 3
        ), target
        assert "?" not in target and "#" not in target and "/../" not in target
    assert build_request(route, {"id": "."}).target == "/items/%2E/detail"
    assert build_request(route, {"id": ".."}).target == "/items/%2E%2E/detail"
    assert (
        build_request(route, {"id": "..."}).target == "/items/.../detail"
    )  # not a dot segment: as is
    # and httpx sends them as they are (no dot-segment removal of the encoded form)
    request = httpx.Request(
        "GET", "http://api.test" + build_request(route, {"id": ".."}).target
    )
    assert request.url.raw_path == b"/items/%2E%2E/detail"


def string_args(tool: dict[str, Any], *places: str) -> list[str]:
    """Arguments sent in `places` whose schema is a plain string (no enum, pattern or format to refuse a trick)."""
    props = tool["inputSchema"].get("properties", {})
    plain = {"type": "string"}
    return [
        a
        for a in args_in(tool, *places)
        if {
            k: v
            for k, v in props.get(a, {}).items()
            if k in ("type", "enum", "pattern", "format", "$ref")
        }
        == plain
    ]


async def test_path_tricks_in_a_tool_argument_stay_in_the_template() -> None:
    tool = first(lambda t: bool(string_args(t, "path"))) or first(
        lambda t: bool(args_in(t, "path"))
    )
    if (
        tool is None
    ):  # no tool of this API has a path argument: the test above covers the encoding
        assert not any(args_in(t, "path") for t in CALLABLE)
        return
    name = (string_args(tool, "path") or args_in(tool, "path"))[0]
    pattern = path_pattern(ROUTES[tool["name"]]["path"])
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        for trick in (
            "../../admin",
            "x?admin=1#f",
            "%2F..%2Fetc",
            "http://elsewhere.test/x",
            ".",
            "..",
        ):
            recorder.requests.clear()
            result = await client.call_tool(
                tool["name"], arguments_for(tool) | {name: trick}
            )
            if (
                result.is_error
            ):  # the argument's schema refused the value: nothing was sent
                assert not recorder.requests and "Invalid arguments" in text_of(result)
                continue
            (request,) = recorder.requests
            raw = request.url.raw_path.decode().split("?")[0]
            assert (
                request.url.host == "api.test"
                and pattern.match(raw)
                and "/../" not in raw
            ), raw
            segments = raw.split("/")
            assert (
                "." not in segments and ".." not in segments
            ), raw  # sent as %2E and %2E%2E


def test_header_values_with_line_breaks_are_refused() -> None:
    route = Route.from_json(
        {
            "method": "GET",
            "path": "/x",
            "args": [{"arg": "h", "name": "X-Thing", "in": "header"}],
            "body": None,
        }
    )
    for value in ("a\r\nX-Injected: 1", "a\nb", "a\rb"):
        with pytest.raises(ArgumentError):
            build_request(route, {"h": value})


async def test_line_breaks_in_a_header_or_cookie_argument_are_refused() -> None:
    tool = first(lambda t: bool(string_args(t, "header", "cookie"))) or first(
        lambda t: bool(args_in(t, "header", "cookie"))
    )
    if (
        tool is None
    ):  # no tool of this API takes a header or cookie argument: the test above covers it
        assert not any(args_in(t, "header", "cookie") for t in CALLABLE)
        return
    name = (string_args(tool, "header", "cookie") or args_in(tool, "header", "cookie"))[
        0
    ]
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool) | {name: "x\r\nX-Injected: yes"}
        )
    assert result.is_error and not recorder.requests, text_of(result)
    assert "line break" in text_of(result) or "Invalid arguments" in text_of(result)
