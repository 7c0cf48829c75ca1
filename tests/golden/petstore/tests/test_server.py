"""Tests of the generated petstore server, in-process.

The official MCP client talks to `build_server()` directly; httpx.MockTransport stands in for the API,
so every tool's request can be checked without a network: credentials, argument checks, retries,
timeouts, every kind of response, redirects, secrets kept out of results and logs.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Callable
from dataclasses import replace
from importlib.resources import files
from typing import Any

import httpx
import mcp.types as types
import pytest
from mcp import Client, MCPError

from petstore.auth import SCHEMES
from petstore.requests import ArgumentError, Route, build_request
from petstore.server import build_server, guard
from petstore.settings import CREDENTIAL_VARIABLES, Settings

pytestmark = pytest.mark.anyio

PACKAGE = files("petstore")
TOOLS: list[dict[str, Any]] = json.loads(
    PACKAGE.joinpath("tools.json").read_text(encoding="utf-8")
)
ROUTES: dict[str, dict[str, Any]] = json.loads(
    PACKAGE.joinpath("routes.json").read_text(encoding="utf-8")
)
BASE_URL = "http://api.test"
# one made-up value per credential variable, recognisable in requests and never allowed in results
SECRETS = {
    name: f"s3cret{i}-{name.lower()}" for i, name in enumerate(CREDENTIAL_VARIABLES)
}


class Recorder:
    """A fake API: records each request and answers with a fixed response (or `answer(request)`)."""

    def __init__(
        self,
        status: int = 204,
        body: bytes = b"",
        content_type: str = "application/json",
        answer: Callable[[httpx.Request], httpx.Response] | None = None,
    ) -> None:
        self.requests: list[httpx.Request] = []
        self.status, self.body, self.content_type = status, body, content_type
        self.answer = answer

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.answer is not None:
            return self.answer(request)
        return httpx.Response(
            self.status, content=self.body, headers={"content-type": self.content_type}
        )


def server(recorder: Recorder, base_url: str = BASE_URL, **options: Any) -> Any:
    """The server with every credential set, no retries (unless asked) and `recorder` as the API."""
    settings = replace(
        Settings(base_url=base_url, retries=0, credentials=SECRETS), **options
    )
    return build_server(settings, httpx.MockTransport(recorder))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


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
        notes = {
            "description",
            "title",
            "default",
            "examples",
            "deprecated",
            "readOnly",
            "writeOnly",
        }
        parts = [
            p for p in schema["allOf"] if not isinstance(p, dict) or set(p) - notes
        ] or [{}]
        values = [sample(part, defs, depth + 1) for part in parts]
        if not all(isinstance(value, dict) for value in values):
            return next(value for value in values if not isinstance(value, dict))
        merged: dict[str, Any] = {}
        for value in values:
            merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer" or kind == "number":
        low: Any = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + 1 if kind == "integer" else float(low) + 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(schema.get("items", {}), defs, depth + 1)] * max(
            1, schema.get("minItems", 1)
        )
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        names = (
            schema.get("required")
            or list(props)[:1]
            or (
                ["key"] if schema.get("additionalProperties", True) is not False else []
            )
        )
        return {k: sample(props.get(k, {}), defs, depth + 1) for k in names}
    if kind == "null":
        return None
    if schema.get("contentEncoding") == "base64":
        return "eA=="  # b"x"
    if isinstance(schema.get("pattern"), str):
        matching = from_pattern(schema["pattern"])
        if matching is not None:
            return matching
    return "x" * max(1, schema.get("minLength", 1))


def from_pattern(pattern: str) -> str | None:
    """A string matching a simple regular expression (literals, classes, counts); None when too complex."""
    body = pattern[1:] if pattern.startswith("^") else pattern
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    out, i = [], 0
    try:
        while i < len(body):
            char = body[i]
            if char == "\\":
                atom, i = {"d": "0", "w": "a", "s": " "}.get(
                    body[i + 1], body[i + 1]
                ), i + 2
            elif char == "[":
                end = body.index("]", i + 2)
                inside = body[i + 1 : end]
                if inside.startswith("^"):
                    return None
                atom, i = ("0" if inside.startswith("\\d") else inside[0]), end + 1
            elif char == "(":
                end = body.index(")", i)
                group = body[i + 1 : end].removeprefix("?:").split("|")[0]
                if "(" in group:
                    return None
                inner = from_pattern(f"^{group}$")
                if inner is None:
                    return None
                atom, i = inner, end + 1
            elif char == ".":
                atom, i = "a", i + 1
            elif char in ").|*+?{}":
                return None
            else:
                atom, i = char, i + 1
            count = 1
            if i < len(body) and body[i] in "*+?":
                i += 1  # one occurrence satisfies *, + and ?
            elif i < len(body) and body[i] == "{":
                end = body.index("}", i)
                count, i = int(body[i + 1 : end].split(",")[0] or 0), end + 1
            out.append(atom * count)
    except (IndexError, ValueError):
        return None
    candidate = "".join(out)
    try:
        return candidate if re.search(pattern, candidate) else None
    except re.error:
        return None


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    defs = schema.get("$defs", {})
    return {
        key: sample(schema["properties"][key], defs)
        for key in schema.get("required", [])
    }


def callable_here(tool: dict[str, Any]) -> bool:
    """False for a tool whose every security alternative needs a scheme this server cannot apply."""
    alternatives = ROUTES[tool["name"]].get("security") or [{}]
    return any(
        all(SCHEMES.get(k, {}).get("kind") not in (None, "unsupported") for k in alt)
        for alt in alternatives
    )


def path_pattern(template: str) -> re.Pattern[str]:
    path = template.split("#", 1)[0].split("?", 1)[
        0
    ]  # a fragment is never sent; a query in the key is the query's
    parts = re.split(r"{[^}]+}", path)
    return re.compile("^" + "[^/?#]+".join(re.escape(p) for p in parts) + "$")


async def test_lists_every_tool() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [t["name"] for t in TOOLS]
    assert len({t.name for t in listed}) == len(listed)
    for tool, expected in zip(listed, TOOLS):
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", tool.name)
        assert tool.input_schema["type"] == "object"
        # annotations as generated (an x-mcp-annotations or config override may set openWorldHint = false)
        assert tool.annotations is not None
        assert tool.annotations.open_world_hint is expected["annotations"].get(
            "openWorldHint", True
        )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_tool_sends_its_operation(mode: str) -> None:
    """Each tool, called with its required arguments, sends one request for its method and path."""
    recorder = Recorder(status=204)
    failures = []
    async with Client(server(recorder), mode=mode) as client:
        for tool in filter(callable_here, TOOLS):
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
    async with Client(server(Recorder(answer=refuse)), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent) and "Could not connect" in text.text


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


def carries(request: httpx.Request, key: str, secrets: dict[str, str]) -> bool:
    """Whether `request` carries scheme `key`'s credential where the spec says."""
    scheme = SCHEMES[key]
    env = scheme["env"]
    sent: str | None
    if scheme["kind"] == "basic":
        pair = f"{secrets[env['username']]}:{secrets[env['password']]}"
        sent, expected = (
            request.headers.get("authorization"),
            "Basic " + base64.b64encode(pair.encode()).decode(),
        )
        return sent == expected
    value: str = secrets.get(env["token"], "")
    if scheme["kind"] == "apiKey":
        if scheme["in"] == "query":
            sent = request.url.params.get(scheme["name"])
        elif scheme["in"] == "cookie":
            return f"{scheme['name']}={value}" in request.headers.get("cookie", "")
        else:
            sent = request.headers.get(scheme["name"])
        return sent == value
    return str(request.headers.get("authorization", "")).endswith(" " + value)


def tool_for(key: str) -> dict[str, Any] | None:
    """A tool that accepts scheme `key` on its own."""
    for tool in TOOLS:
        if any(list(alt) == [key] for alt in ROUTES[tool["name"]].get("security", [])):
            return tool
    return None


def alternative_with(key: str) -> tuple[dict[str, Any], list[str]] | None:
    """A tool and one of its alternatives using `key` that an earlier alternative would not pre-empt."""
    for tool in TOOLS:
        earlier: list[set[str]] = []
        for alt in ROUTES[tool["name"]].get("security", []):
            kinds = [SCHEMES.get(k, {}).get("kind", "unsupported") for k in alt]
            # schemes that would all need the Authorization header cannot be combined on the wire
            usable = (
                "unsupported" not in kinds
                and sum(kind != "apiKey" for kind in kinds) <= 1
            )
            if key in alt and usable and not any(e <= set(alt) for e in earlier):
                return tool, list(alt)
            earlier.append(set(alt))
    return None


async def test_each_security_scheme_is_applied_as_declared() -> None:
    checked = []
    for key in SCHEMES:
        found = alternative_with(key)
        if found is None:
            continue
        tool, alternative = found
        envs = [SCHEMES[k]["env"] for k in alternative]
        secrets = {
            v: SECRETS[v]
            for env in envs
            for k, v in env.items()
            if k in ("token", "username", "password")
        }
        recorder = Recorder()
        async with Client(
            server(recorder, credentials=secrets), mode="legacy"
        ) as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        assert not result.is_error, text_of(result)
        assert len(recorder.requests) == 1 and all(
            carries(recorder.requests[0], k, secrets) for k in alternative
        ), key
        checked.append(key)
    usable = [k for k, s in SCHEMES.items() if s["kind"] != "unsupported"]
    assert checked or not usable


async def test_client_credentials_token_is_fetched_once_and_reused() -> None:
    schemes = [k for k, s in SCHEMES.items() if "client_id" in s["env"] and tool_for(k)]
    for key in schemes:
        env = SCHEMES[key]["env"]
        secrets = {env["client_id"]: "app-id", env["client_secret"]: "app-secret-value"}

        def answer(request: httpx.Request) -> httpx.Response:
            if b"grant_type=client_credentials" in request.content:
                return httpx.Response(
                    200, json={"access_token": "tok-from-server", "expires_in": 3600}
                )
            return httpx.Response(204)

        recorder = Recorder(answer=answer)
        tool = tool_for(key)
        assert tool is not None
        async with Client(
            server(recorder, credentials=secrets), mode="legacy"
        ) as client:
            for _ in range(2):
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert not result.is_error, text_of(result)
        token_requests = [r for r in recorder.requests if b"grant_type" in r.content]
        api_requests = [r for r in recorder.requests if b"grant_type" not in r.content]
        assert len(token_requests) == 1 and len(api_requests) == 2
        assert (
            token_requests[0].headers["authorization"]
            == "Basic " + base64.b64encode(b"app-id:app-secret-value").decode()
        )
        assert all(
            r.headers["authorization"] == "Bearer tok-from-server" for r in api_requests
        )


async def test_missing_credentials_name_the_variable_and_send_nothing() -> None:
    tool = next(
        t
        for t in TOOLS
        if ROUTES[t["name"]].get("security")
        and all(ROUTES[t["name"]]["security"])
        and callable_here(t)
    )
    recorder = Recorder()
    async with Client(server(recorder, credentials={}), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and not recorder.requests
    assert any(variable in text_of(result) for variable in CREDENTIAL_VARIABLES)


async def test_secrets_never_reach_results_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = " ".join(SECRETS.values()).encode()
    recorder = Recorder(status=400, body=b'{"error": "bad credentials: ' + echo + b'"}')
    async with Client(server(recorder), mode="legacy") as client:
        for tool in TOOLS:
            if ROUTES[tool["name"]].get("security"):
                sent = len(recorder.requests)
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert result.is_error and not any(
                    secret in text_of(result) for secret in SECRETS.values()
                )
                if (
                    len(recorder.requests) > sent
                ):  # the API's answer echoed every secret
                    assert "***" in text_of(result)
    assert not any(secret in caplog.text for secret in SECRETS.values())


async def test_one_audit_line_per_call(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    tool = TOOLS[0]
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


def wrong_value(schema: Any, defs: dict[str, Any]) -> Any:
    """A value `schema` rejects for its type or enum; None when it accepts anything."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return None
        if "$ref" in schema:
            schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            schema = schema["allOf"][0]
        else:
            break
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not kinds:
        return (
            "surely-not-an-allowed-value"
            if isinstance(schema, dict) and schema.get("enum")
            else None
        )
    for value, kind in (
        ("text", "string"),
        (1.5, "number"),
        (True, "boolean"),
        ([1], "array"),
        ({"a": 1}, "object"),
    ):
        if kind not in kinds:
            return value
    return None


async def test_arguments_of_the_wrong_type_are_listed_field_by_field() -> None:
    tool, arguments = None, {}
    for candidate in TOOLS:
        schema = candidate["inputSchema"]
        props, defs = schema.get("properties", {}), schema.get("$defs", {})
        arguments = {
            k: v for k, p in props.items() if (v := wrong_value(p, defs)) is not None
        }
        if arguments:
            tool = candidate
            break
    assert tool is not None
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments)
    assert result.is_error and not recorder.requests
    for key in arguments:
        assert key in text_of(result)


async def test_timeout_is_a_tool_error() -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    tool = TOOLS[0]
    async with Client(
        server(Recorder(answer=hang), timeout=0.5), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "read timeout" in text_of(result)


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


GET_TOOL = next(t for t in TOOLS if ROUTES[t["name"]]["method"] == "GET")


async def test_idempotent_call_is_retried_honouring_retry_after() -> None:
    answers = iter(
        [httpx.Response(429, headers={"Retry-After": "0"}), httpx.Response(204)]
    )
    recorder = Recorder(answer=lambda request: next(answers))
    messages: list[str] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")

    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(
            GET_TOOL["name"], arguments_for(GET_TOOL), progress_callback=on_progress
        )
    assert not result.is_error and len(recorder.requests) == 2
    assert any("retry 1" in message for message in messages)


async def test_retries_are_bounded() -> None:
    recorder = Recorder(
        answer=lambda request: httpx.Response(
            503, headers={"Retry-After": "0"}, text="busy"
        )
    )
    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(GET_TOOL["name"], arguments_for(GET_TOOL))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 3


async def test_redirect_to_another_host_is_not_followed() -> None:
    recorder = Recorder(
        answer=lambda request: httpx.Response(
            302, headers={"Location": "http://elsewhere.test/steal"}
        )
    )
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(GET_TOOL["name"], arguments_for(GET_TOOL))
    assert result.is_error and "another host" in text_of(result)
    assert [r.url.host for r in recorder.requests] == ["api.test"]


@pytest.mark.parametrize(
    ("content_type", "body", "kind"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00", types.ImageContent),
        ("application/octet-stream", bytes(range(256)), types.EmbeddedResource),
        ("text/plain", b"plain words", types.TextContent),
    ],
)
async def test_response_kinds(content_type: str, body: bytes, kind: type) -> None:
    recorder = Recorder(status=200, body=body, content_type=content_type)
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(GET_TOOL["name"], arguments_for(GET_TOOL))
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
    async with Client(server(Recorder(status=204)), mode="legacy") as client:
        assert "no content" in text_of(
            await client.call_tool(GET_TOOL["name"], arguments_for(GET_TOOL))
        )
    big = Recorder(status=200, body=b"a" * 5000, content_type="text/plain")
    async with Client(server(big, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(GET_TOOL["name"], arguments_for(GET_TOOL))
    assert (
        not result.is_error
        and "truncated" in text_of(result)
        and len(text_of(result)) < 1200
    )


async def test_off_spec_json_still_reaches_the_client() -> None:
    """The official client raises when structured content breaks the output schema: it never does here."""
    tool = next(t for t in TOOLS if t.get("outputSchema"))
    props = tool["outputSchema"].get("properties", {})
    odd = {key: {"unexpected": [1, "two"]} for key in props} | {
        "extra": {"unexpected": "kept"}
    }
    recorder = Recorder(status=200, body=json.dumps(odd).encode())
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and isinstance(result.structured_content, dict)
    assert "unexpected" in text_of(result)


async def test_non_idempotent_call_is_not_retried() -> None:
    tool = next(t for t in TOOLS if ROUTES[t["name"]]["method"] == "POST")
    recorder = Recorder(status=503, body=b"busy")
    async with Client(server(recorder, retries=3), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 1
