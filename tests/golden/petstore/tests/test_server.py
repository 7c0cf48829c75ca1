"""Tests of the generated petstore server, in-process: every tool listed and called, arguments
checked, the settings documented.

The official MCP client talks to `build_server()` directly; httpx.MockTransport stands in for the API,
so every tool's request can be checked without a network. The other test modules cover credentials
(test_security.py), the OAuth resource server (test_oauth.py), timeouts, retries and limits
(test_limits.py), responses (test_responses.py), hostile answers (test_hostile.py) and arguments
(test_hostile_input.py), path and header arguments kept in their place (test_injection.py), JSON results
(test_results.py).

The tests are generic over the API: each check picks its tool from tools.json and routes.json in a
fixed order (the first tool, in tools.json order, that suits the check). When no tool of this API suits
a check, the test asserts that property of the tool list instead and checks the behaviour that applies.
Waits are tens of milliseconds: the intervals are settings.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import mcp.types as types
import pytest
from mcp import Client, MCPError

from petstore.cli import environment_help
from petstore.settings import (
    CREDENTIAL_VARIABLES,
    ENV_PREFIX,
    OPTIONAL_VARIABLES,
    Settings,
)
from petstore.web import guard
from samples import Sampler, built
from support import (
    CALLABLE,
    ROUTES,
    TOOLS,
    Recorder,
    arguments_for,
    buildable,
    method,
    path_pattern,
    server,
    target,
    text_of,
    wrong_arguments,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


async def test_lists_every_tool() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [t["name"] for t in TOOLS]
    assert len({t.name for t in listed}) == len(listed)
    for tool, expected in zip(listed, TOOLS):
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", tool.name)
        assert tool.input_schema["type"] == "object"
        # annotations as generated: every tool has its title there; a hint left out has its MCP default
        # (an x-mcp-annotations or config override may set openWorldHint = false)
        assert (
            tool.annotations is not None
            and tool.annotations.title == expected["annotations"]["title"]
        )
        open_world = tool.annotations.open_world_hint
        assert (True if open_world is None else open_world) is expected[
            "annotations"
        ].get("openWorldHint", True)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_tool_sends_its_operation(mode: str) -> None:
    """Each tool, called with its required arguments, sends one request for its method and path; a tool
    whose security this server cannot send answers with an error saying so, and sends nothing.
    """
    recorder = Recorder(status=204)
    failures = []
    async with Client(server(recorder), mode=mode) as client:
        for tool in filter(buildable, TOOLS):  # the others: see test_sample_arguments
            route = ROUTES[tool["name"]]
            recorder.requests.clear()
            result = await client.call_tool(tool["name"], arguments_for(tool))
            if tool not in CALLABLE:
                if (
                    not result.is_error
                    or recorder.requests
                    or "cannot be called" not in text_of(result)
                ):
                    failures.append(
                        f"{tool['name']} (security not sendable): {result.content}"
                    )
                continue
            if result.is_error or len(recorder.requests) != 1:
                failures.append(f"{tool['name']}: {result.content}")
                continue
            request = recorder.requests[0]
            if method(tool) != request.method or not path_pattern(route["path"]).match(
                request.url.raw_path.decode().split("?")[0]
            ):
                failures.append(
                    f"{tool['name']}: sent {request.method} {request.url}, expected {route['method']} {route['path']}"
                )
    assert not failures, "\n".join(failures)


def test_sample_arguments() -> None:
    """Every tool has sample arguments that its inputSchema accepts; a tool whose schema the builder cannot
    satisfy (a pattern Python cannot read, a required property the schema forbids, ...) is named with the
    reason and the test is skipped: the checks above leave it out."""
    missing = {
        tool["name"]: reason for tool in TOOLS if isinstance(reason := built(tool), str)
    }
    for tool in filter(
        buildable, TOOLS
    ):  # checked with jsonschema when built: checked again here
        assert (
            Sampler(tool["inputSchema"].get("$defs", {})).problem(
                tool["inputSchema"], built(tool)
            )
            is None
        )
    if missing:
        listed = "; ".join(
            f"{name}: {reason}" for name, reason in list(missing.items())[:10]
        )
        pytest.skip(
            f"no valid arguments could be built for {len(missing)} of {len(TOOLS)} tools: {listed}"
        )


async def test_api_error_is_a_tool_error_with_status_reason_and_truncated_body() -> (
    None
):
    tool = target()
    recorder = Recorder(status=500, body=b"boom " * 2000, content_type="text/plain")
    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    text = text_of(result)
    assert result.is_error and text.startswith(
        "HTTP 500 Internal Server Error from the API:"
    )
    assert "boom boom" in text and "[truncated" in text and len(text) < 4500
    assert len(recorder.requests) == 1  # a 500 is not retried


async def test_unreachable_api_is_a_tool_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    tool = target()
    async with Client(server(Recorder(answer=refuse)), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "Could not connect" in text_of(result)


async def test_unknown_tool_is_a_protocol_error() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == types.INVALID_PARAMS


async def test_missing_required_argument_is_named() -> None:
    tool = next((t for t in TOOLS if t["inputSchema"].get("required")), None)
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        if (
            tool is None
        ):  # no tool of this API has a required argument: an empty call is valid for all
            assert all(not t["inputSchema"].get("required") for t in TOOLS)
            return
        result = await client.call_tool(tool["name"], {})
    assert result.is_error and not recorder.requests
    assert "Invalid arguments" in text_of(result)
    for name in tool["inputSchema"]["required"]:
        assert repr(name) in text_of(result), name


async def test_arguments_of_the_wrong_type_are_listed_field_by_field() -> None:
    tool = next((t for t in TOOLS if wrong_arguments(t)), None)
    if tool is None:  # no argument of any tool has a type or enum to break
        assert not any(wrong_arguments(t) for t in TOOLS)
        return
    arguments = wrong_arguments(tool)
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments)
    assert result.is_error and not recorder.requests
    for key in arguments:
        assert f"- {key}" in text_of(result) or repr(key) in text_of(result), key


async def test_one_audit_line_per_call(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    tool = target()
    route = ROUTES[tool["name"]]
    async with Client(server(Recorder(status=204)), mode="legacy") as client:
        await client.call_tool(tool["name"], arguments_for(tool))
    lines = [r.getMessage() for r in caplog.records if r.name.endswith(".audit")]
    assert len(lines) == 1
    assert (
        f"tool={tool['name']} method={route['method']} path={route['path']} status=204"
        in lines[0]
    )
    assert "retries=0" in lines[0] and "ms=" in lines[0]


async def test_health_endpoint_and_mcp_token() -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"inner"})

    app = guard(inner, "the-mcp-token", len(TOOLS))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as http:
        health = await http.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert (await http.post("/mcp")).status_code == 401
        assert (
            await http.post("/mcp", headers={"Authorization": "Bearer wrong"})
        ).status_code == 401
        allowed = await http.post(
            "/mcp", headers={"Authorization": "Bearer the-mcp-token"}
        )
        assert allowed.status_code == 200 and allowed.text == "inner"


# -- documentation ------------------------------------------------------------------------------------
class Reading(Mapping[str, str]):
    """An empty environment that records which variables are read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.read.append(key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def test_help_and_readme_document_every_setting() -> None:
    environ = Reading()
    Settings.from_env(environ)
    assert environ.read and all(
        name.startswith(ENV_PREFIX + "_") for name in environ.read
    )
    assert set(CREDENTIAL_VARIABLES + OPTIONAL_VARIABLES) <= set(environ.read)
    help_text = environment_help()
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    example = (Path(__file__).parent.parent / ".env.example").read_text(
        encoding="utf-8"
    )
    assert all(
        f"# {name}=" in example for name in environ.read
    )  # .env.example lists every variable
    for text in (help_text, readme):
        for name in environ.read:
            assert (
                name in text
                or name in OPTIONAL_VARIABLES
                and f"{ENV_PREFIX}_<SCHEME>_TOKEN_URL" in text
            ), name
    assert (
        Settings.from_env({f"{ENV_PREFIX}_PROGRESS_INTERVAL": "0.25"}).progress_interval
        == 0.25
    )
