"""Tests of the generated petstore server, in-process.

The official MCP client talks to `build_server()` directly; httpx.MockTransport stands in for the API,
so every tool's request can be checked without a network: credentials, argument checks, retries,
timeouts, cancellation, rate and connection limits, progress, every kind of response, redirects,
secrets kept out of results and logs.

The tests are generic over the API: each check picks its tool from tools.json and routes.json in a
fixed order (the first tool, in tools.json order, that suits the check). When no tool of this API suits
a check, the test asserts that property of the tool list instead and checks the behaviour that applies.
Waits are tens of milliseconds: the intervals are settings.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp.types as types
import pytest
from mcp import Client, MCPError

from petstore.auth import (
    SCHEMES,
    Auth,
    AuthError,
    authorization_family,
    usable,
    uses_authorization,
)
from petstore.requests import ArgumentError, Request, Route, build_request
from petstore.server import build_server, environment_help, guard
from petstore.settings import (
    CREDENTIAL_VARIABLES,
    ENV_PREFIX,
    OPTIONAL_VARIABLES,
    Settings,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]

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
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

Answer = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


class Recorder:
    """A fake API: records each request (and when it came) and answers with a fixed response or `answer`."""

    def __init__(
        self,
        status: int = 204,
        body: bytes = b"",
        content_type: str = "application/json",
        answer: Answer | None = None,
    ) -> None:
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []
        self.status, self.body, self.content_type = status, body, content_type
        self.answer = answer

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        if self.answer is not None:
            reply = self.answer(request)
            return reply if isinstance(reply, httpx.Response) else await reply
        return httpx.Response(
            self.status, content=self.body, headers={"content-type": self.content_type}
        )


def server(recorder: Recorder, base_url: str = BASE_URL, **options: Any) -> Any:
    """The server with every credential set, no retries (unless asked) and `recorder` as the API."""
    settings = replace(
        Settings(base_url=base_url, retries=0, backoff=0.01, credentials=SECRETS),
        **options,
    )
    return build_server(settings, httpx.MockTransport(recorder))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def script(*answers: httpx.Response) -> Answer:
    """Answer with `answers` in turn, then with the last one again."""
    replies = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    return answer


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
            "discriminator",
        }
        own = {
            k: v for k, v in schema.items() if k != "allOf"
        }  # members beside allOf apply too
        parts = [
            p
            for p in [*schema["allOf"], own]
            if not isinstance(p, dict) or set(p) - notes
        ] or [{}]
        values = [sample(part, defs, depth + 1) for part in parts]
        if not all(
            isinstance(value, dict) for value in values
        ):  # a scalar: one value meeting every part
            combined: dict[str, Any] = {}
            for part in parts:
                for _ in range(
                    8
                ):  # follow a chain of $refs (bounded: a cycle ends here)
                    if not isinstance(part, dict) or "$ref" not in part:
                        break
                    combined.update({k: v for k, v in part.items() if k != "$ref"})
                    part = defs.get(part["$ref"].rsplit("/", 1)[-1], {})
                if isinstance(part, dict):
                    combined.update(part)
            combined.pop("allOf", None)
            return sample(combined, defs, depth + 1)
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
    """False for a tool whose every security alternative is one this server cannot send."""
    alternatives = ROUTES[tool["name"]].get("security") or [{}]
    return any(usable(alternative) for alternative in alternatives)


def method(tool: dict[str, Any]) -> str:
    return str(ROUTES[tool["name"]]["method"])


def first(*conditions: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first callable tool (tools.json order) meeting every condition; None when there is none."""
    return next(
        (t for t in CALLABLE if all(condition(t) for condition in conditions)), None
    )


def idempotent(tool: dict[str, Any]) -> bool:
    return method(tool) in IDEMPOTENT


CALLABLE = [tool for tool in TOOLS if callable_here(tool)]
# the tool most checks call: the first callable one, an idempotent one if there is one (retries apply)
TARGET = first(idempotent) or first()


def target() -> dict[str, Any]:
    if (
        TARGET is None
    ):  # every tool needs security this server cannot send (test_every_tool... checks them)
        pytest.skip("no tool of this API can be called by this server")
    return TARGET


def path_pattern(template: str) -> re.Pattern[str]:
    path = template.split("#", 1)[0].split("?", 1)[
        0
    ]  # a fragment is never sent; a query in the key is the query's
    parts = re.split(r"{[^}]+}", path)
    return re.compile("^" + "[^/?#]+".join(re.escape(p) for p in parts) + "$")


def args_in(tool: dict[str, Any], *places: str) -> list[str]:
    """The tool's arguments that the route sends in `places` (path, query, header, cookie)."""
    return [
        arg["arg"]
        for arg in ROUTES[tool["name"]].get("args", [])
        if arg.get("in") in places
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
        for tool in TOOLS:
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


def wrong_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    return {k: v for k, p in props.items() if (v := wrong_value(p, defs)) is not None}


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


# -- security -----------------------------------------------------------------------------------------
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


def secrets_for(alternative: list[str]) -> dict[str, str]:
    """Only the credentials of the schemes in `alternative` (a client-credentials scheme: its token)."""
    names = [
        v
        for k in alternative
        for kind, v in SCHEMES[k]["env"].items()
        if kind in ("token", "username", "password")
    ]
    return {name: SECRETS[name] for name in names}


def alternative_with(key: str) -> tuple[dict[str, Any], list[str]] | None:
    """The first tool and alternative using `key` that this server sends and no earlier alternative pre-empts."""
    for tool in TOOLS:
        earlier: list[set[str]] = []
        for alt in ROUTES[tool["name"]].get("security", []):
            if key in alt and usable(alt) and not any(e <= set(alt) for e in earlier):
                return tool, list(alt)
            earlier.append(set(alt))
    return None


async def test_each_security_scheme_is_applied_as_declared() -> None:
    """Each scheme some tool can use is sent where the spec says, alone or with its AND partners."""
    checked, not_sendable = [], []
    for key in SCHEMES:
        found = alternative_with(key)
        if (
            found is None
        ):  # every requirement naming it is unsupported, clashing or pre-empted: see below
            not_sendable.append(key)
            continue
        tool, alternative = found
        # bearer-token schemes of one requirement share the Authorization header: configure one of them (`key`)
        bearers = [k for k in alternative if authorization_family(k) == "bearer"]
        alternative = [
            k
            for k in alternative
            if k not in bearers or k == (key if key in bearers else bearers[0])
        ]
        secrets = secrets_for(alternative)
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
    for (
        key
    ) in (
        not_sendable
    ):  # a scheme no tool can send with: each requirement naming it has a reason
        for tool in TOOLS:
            security = ROUTES[tool["name"]].get("security", [])
            for index, alt in enumerate(security):
                if key in alt:
                    assert not usable(alt) or any(
                        set(e) <= set(alt) for e in security[:index]
                    ), (key, alt)
    assert sorted(checked + not_sendable) == sorted(SCHEMES)


async def test_client_credentials_token_is_fetched_once_and_reused() -> None:
    """A client-credentials scheme fetches its token once (client_secret_basic) and reuses it."""
    schemes = [
        k for k, s in SCHEMES.items() if "client_id" in s["env"] and alternative_with(k)
    ]
    if not schemes:
        assert not any(
            "client_id" in s["env"] and alternative_with(k) for k, s in SCHEMES.items()
        )
    for key in schemes:
        found = alternative_with(key)
        assert found is not None
        tool, alternative = found
        env = SCHEMES[key]["env"]
        others = [
            k for k in alternative if k != key and authorization_family(k) != "bearer"
        ]  # one token is sent
        secrets = secrets_for(others)
        secrets |= {
            env["client_id"]: "app-id",
            env["client_secret"]: "app-secret-value",
        }

        def answer(request: httpx.Request) -> httpx.Response:
            if b"grant_type=client_credentials" in request.content:
                return httpx.Response(
                    200, json={"access_token": "tok-from-server", "expires_in": 3600}
                )
            return httpx.Response(204)

        recorder = Recorder(answer=answer)
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


def needs_credentials(tool: dict[str, Any]) -> bool:
    security = ROUTES[tool["name"]].get("security") or []
    return bool(security) and all(
        security
    )  # secured, and no `{}` alternative making it optional


async def test_missing_credentials_name_the_variable_and_send_nothing() -> None:
    tool = first(needs_credentials)
    recorder = Recorder()
    async with Client(server(recorder, credentials={}), mode="legacy") as client:
        if (
            tool is None
        ):  # no callable tool of this API needs credentials: all of them work without any
            assert not any(needs_credentials(t) for t in CALLABLE)
            for other in CALLABLE[:1]:
                assert not (
                    await client.call_tool(other["name"], arguments_for(other))
                ).is_error
            return
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and not recorder.requests
    assert "not configured: set " in text_of(result)
    alternatives = [alt for alt in ROUTES[tool["name"]]["security"] if usable(alt)]
    for alternative in alternatives:  # each alternative's variables are named
        assert all(
            name in text_of(result) for name in secrets_for(alternative)
        ), alternative


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
        # a successful answer echoing the secrets: masked in the text and in the structured content
        tool = first(lambda t: bool(ROUTES[t["name"]].get("security"))) or target()
        recorder.status, recorder.body = (
            200,
            json.dumps({"echo": list(SECRETS.values())}).encode(),
        )
        result = await client.call_tool(tool["name"], arguments_for(tool))
    shown = text_of(result) + json.dumps(result.structured_content)
    assert not result.is_error and not any(
        secret in shown for secret in SECRETS.values()
    )
    assert "***" in text_of(result) or not SECRETS
    assert not any(secret in caplog.text for secret in SECRETS.values())


async def test_schemes_sharing_the_authorization_header_are_not_combined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An AND requirement of two schemes that both use the Authorization header (basic + bearer) cannot be
    sent: another alternative is used instead, or the call is an error saying why."""
    env = {"username": "ZZ_USER", "password": "ZZ_PASSWORD"}
    monkeypatch.setitem(
        SCHEMES,
        "zz_basic",
        {"kind": "basic", "type": "http", "scheme": "basic", "env": env},
    )
    monkeypatch.setitem(
        SCHEMES,
        "zz_bearer",
        {
            "kind": "http",
            "type": "http",
            "scheme": "bearer",
            "env": {"token": "ZZ_TOKEN"},
        },
    )
    monkeypatch.setitem(
        SCHEMES,
        "zz_key",
        {
            "kind": "apiKey",
            "type": "apiKey",
            "in": "header",
            "name": "X-Key",
            "env": {"token": "ZZ_KEY"},
        },
    )
    monkeypatch.setitem(
        SCHEMES,
        "zz_oauth",
        {
            "kind": "oauth2",
            "type": "oauth2",
            "scheme": "",
            "env": {"token": "ZZ_OAUTH"},
        },
    )
    credentials = {
        "ZZ_USER": "u",
        "ZZ_PASSWORD": "p",
        "ZZ_TOKEN": "bearer-value",
        "ZZ_KEY": "key-value",
    }

    async def no_token(
        url: str, form: dict[str, str], user: str, password: str
    ) -> tuple[int, Any]:
        raise AssertionError("no token is fetched")

    auth = Auth(credentials, no_token, BASE_URL)
    request = Request("GET", "/x", {}, None)
    clash: dict[str, list[str]] = {"zz_basic": [], "zz_bearer": []}
    assert (
        uses_authorization("zz_basic")
        and uses_authorization("zz_bearer")
        and not uses_authorization("zz_key")
    )
    assert not usable(clash) and usable({"zz_bearer": [], "zz_key": []})
    with pytest.raises(AuthError) as caught:
        await auth.apply([clash], request)
    assert "cannot be called" in str(caught.value) and "Authorization header" in str(
        caught.value
    )
    sent = await auth.apply(
        [clash, {"zz_key": [], "zz_bearer": []}], request
    )  # OR: falls through
    assert sent.headers == {
        "X-Key": "key-value",
        "Authorization": "Bearer bearer-value",
    }
    with pytest.raises(AuthError) as missing:
        await Auth({}, no_token, BASE_URL).apply([clash, {"zz_key": []}], request)
    assert "set ZZ_KEY" in str(missing.value) and "Authorization header" in str(
        missing.value
    )
    # bearer tokens (http bearer, OAuth2, OpenID Connect) required together share one header: any one will do
    tokens: dict[str, list[str]] = {"zz_bearer": [], "zz_oauth": []}
    assert (
        usable(tokens)
        and authorization_family("zz_oauth")
        == authorization_family("zz_bearer")
        == "bearer"
    )
    assert (await auth.apply([tokens], request)).headers == {
        "Authorization": "Bearer bearer-value"
    }
    only_oauth = await Auth({"ZZ_OAUTH": "oauth-value"}, no_token, BASE_URL).apply(
        [tokens], request
    )
    assert only_oauth.headers == {"Authorization": "Bearer oauth-value"}
    with pytest.raises(AuthError) as neither:
        await Auth({}, no_token, BASE_URL).apply([tokens], request)
    assert "set ZZ_TOKEN or ZZ_OAUTH in" in str(neither.value)
    # the same through the server, for this API's own clashing requirements
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        for tool in TOOLS:
            security = ROUTES[tool["name"]].get("security") or []
            if any(not usable(alt) for alt in security):
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert result.is_error is (tool not in CALLABLE), text_of(result)
    for (
        request_sent
    ) in (
        recorder.requests
    ):  # one Authorization header at most, never two credentials in one
        assert len(request_sent.headers.get_list("authorization")) <= 1


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


# -- arguments and safety -----------------------------------------------------------------------------
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


# -- timeouts, retries, limits, cancellation, progress ------------------------------------------------
async def test_timeouts_are_tool_errors() -> None:
    def read_timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    cancelled: list[bool] = []

    async def hang(request: httpx.Request) -> httpx.Response:
        try:
            await anyio.sleep(30)
        finally:
            cancelled.append(True)
        raise AssertionError("the total timeout did not stop the request")

    tool = target()
    async with Client(
        server(Recorder(answer=read_timeout), timeout=0.5), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "no data for 0.5 s (read timeout)" in text_of(result)
    async with Client(
        server(Recorder(answer=hang), total_timeout=0.05), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        result.is_error
        and "within the total timeout of 0.05 s" in text_of(result)
        and cancelled
    )


def answers_then_ok(*first_answers: httpx.Response) -> Answer:
    return script(*first_answers, httpx.Response(204))


async def test_429_is_retried_honouring_retry_after_with_progress_and_log() -> None:
    """An idempotent call waits as Retry-After says; a client that sent a progressToken hears of the retry
    and, while waiting, of the wait; the client's log level gets the retry notice."""
    messages: list[str] = []
    logs: list[Any] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    tool = target()
    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(429, headers={"Retry-After": "0.1"}))
    )
    busy_api = server(recorder, retries=2, progress_interval=0.02)
    async with Client(busy_api, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
    if not idempotent(
        tool
    ):  # no tool of this API is idempotent: a 429 to a POST is not retried
        assert not any(idempotent(t) for t in CALLABLE)
        assert (
            result.is_error
            and "HTTP 429" in text_of(result)
            and len(recorder.requests) == 1
        )
        return
    assert not result.is_error and len(recorder.requests) == 2
    assert recorder.times[1] - recorder.times[0] >= 0.09  # waited as the API asked
    retry = messages.index("HTTP 429; retry 1 of 2 in 0.1 s")
    assert any(
        m.startswith("waiting for the API") for m in messages[retry + 1 :]
    )  # heartbeat during the wait
    assert any(isinstance(d, dict) and d.get("retry") == 1 for d in logs)


async def test_log_notifications_honour_the_client_level() -> None:
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    tool = target()
    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(503, headers={"Retry-After": "0"}))
    )
    async with Client(
        server(recorder, retries=1), mode="legacy", logging_callback=on_log
    ) as client:
        await client.set_logging_level("error")
        await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        logs == []
    )  # a retry notice is "info" and a non-idempotent 503 a "warning": below "error"


async def test_retries_are_bounded() -> None:
    tool = first(idempotent)
    recorder = Recorder(
        answer=lambda request: httpx.Response(
            503, headers={"Retry-After": "0"}, text="busy"
        )
    )
    if tool is None:  # nothing idempotent to retry
        assert not any(idempotent(t) for t in CALLABLE)
        return
    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 3


async def test_non_idempotent_call_is_not_retried() -> None:
    tool = first(lambda t: not idempotent(t))
    recorder = Recorder(status=503, body=b"busy")
    if tool is None:  # every callable tool is idempotent (retried: see above)
        assert all(idempotent(t) for t in CALLABLE)
        return
    async with Client(server(recorder, retries=3), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 1


async def test_refused_connection_is_retried_for_any_method() -> None:
    def refuse_once(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(204)

    tool = first(lambda t: not idempotent(t)) or target()
    recorder = Recorder(answer=refuse_once)
    async with Client(server(recorder, retries=1), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        not result.is_error and len(recorder.requests) == 2
    )  # it never reached the API: safe to resend


async def test_connection_reset() -> None:
    def reset(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 1:
            raise httpx.ReadError("connection reset by peer", request=request)
        return httpx.Response(204)

    tool = target()
    recorder = Recorder(answer=reset)
    async with Client(server(recorder, retries=0), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "(connection reset)" in text_of(result)
    recorder = Recorder(answer=reset)
    async with Client(server(recorder, retries=1), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    if idempotent(tool):  # resent once, then answered
        assert not result.is_error and len(recorder.requests) == 2
    else:  # it may have reached the API: not resent (no tool of this API is idempotent)
        assert (
            result.is_error
            and len(recorder.requests) == 1
            and not any(idempotent(t) for t in CALLABLE)
        )


async def test_cancelling_a_call_cancels_the_upstream_request() -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    async def hang(request: httpx.Request) -> httpx.Response:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return httpx.Response(204)

    tool = target()
    async with Client(server(Recorder(answer=hang)), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, tool["name"], arguments_for(tool))
            with anyio.fail_after(5):
                await started.wait()
            group.cancel_scope.cancel()  # the client gives up: it sends notifications/cancelled
        with anyio.fail_after(5):
            await cancelled.wait()


async def test_rate_limit_spaces_requests() -> None:
    tool = target()
    recorder = Recorder(status=204)
    async with Client(
        server(recorder, rate_limit=20.0), mode="legacy"
    ) as client:  # one per 50 ms
        started = time.monotonic()
        for _ in range(4):
            assert not (
                await client.call_tool(tool["name"], arguments_for(tool))
            ).is_error
        elapsed = time.monotonic() - started
    # the 4th request may start 3 intervals after the 1st at the earliest (a busy machine only adds time)
    assert len(recorder.requests) == 4 and elapsed >= 0.15, elapsed


async def test_connection_limit_caps_requests_in_flight() -> None:
    in_flight, most, released = 0, 0, False
    pair, overflow = anyio.Event(), anyio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most, released
        in_flight += 1
        most = max(most, in_flight)
        if in_flight == 2:
            pair.set()
        if in_flight > 2:
            overflow.set()
        if (
            not released
        ):  # the first two requests (the cap lets 2 through) meet, then wait for a third
            with anyio.move_on_after(5):
                await pair.wait()
            with anyio.move_on_after(
                0.2
            ):  # without the cap, the other 3 would arrive meanwhile
                await overflow.wait()
            released = True
        in_flight -= 1
        return httpx.Response(204)

    tool = target()
    recorder = Recorder(answer=slow)
    async with Client(server(recorder, max_connections=2), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(client.call_tool, tool["name"], arguments_for(tool))
    assert len(recorder.requests) == 5 and most == 2


async def test_long_call_reports_progress_when_asked() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(0.1)
        return httpx.Response(204)

    messages: list[str] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")

    tool = target()
    async with Client(
        server(Recorder(answer=slow), progress_interval=0.02), mode="legacy"
    ) as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
        assert (
            not result.is_error and messages
        )  # every 20 ms during a 100 ms wait (one at least when busy)
        assert all(m.startswith("waiting for the API (") for m in messages), messages
        messages.clear()
        await client.call_tool(
            tool["name"], arguments_for(tool)
        )  # no progressToken: no progress
    async with Client(
        server(Recorder(answer=slow), progress_interval=0), mode="legacy"
    ) as client:
        await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
    assert messages == []  # an interval of 0 turns the heartbeat off


# -- responses ----------------------------------------------------------------------------------------
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
