"""End to end: the generated server's production behaviour, driven by the official MCP client against a
real HTTP upstream on 127.0.0.1 (tests/support/upstream.py: records requests, scripts answers and faults).

One package is generated per module from RUNTIME_SPEC (every auth scheme, per-operation security, OR and
AND requirements, `security: []`, binary and JSON answers). Most tests run the generated server
in-process (`build_server(settings)`), talking real HTTP to the upstream; the stdio and HTTP transports
are started as subprocesses.
"""

from __future__ import annotations

import base64
import gzip
import importlib
import json
import logging
import os
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import mcp.types as types
import pytest
from mcp import Client

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.problems import Level
from conftest import generate_into, write_spec
from support.generated import on_path
from support.upstream import Answer, Upstream, upstream_server
from support.package_checks import assert_package_is_clean
from support.servers import free_port

pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
PKG = "rtapi"
PREFIX = "RTAPI"
JSON = {"Content-Type": "application/json"}


def op(op_id: str, security: Any = None, params: Any = None, response: Any = None) -> dict[str, Any]:
    content = response if response is not None else {"application/json": {"schema": {"type": "object"}}}
    operation: dict[str, Any] = {"operationId": op_id, "responses": {"200": {"description": "ok", "content": content}}}
    if security is not None:
        operation["security"] = security
    if params:
        operation["parameters"] = params
    return operation


ITEM = {
    "type": "object",
    "required": ["id", "name"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
ITEM_ID = {"name": "item_id", "in": "path", "required": True, "schema": {"type": "string"}}
RUNTIME_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Runtime test API", "version": "1.0"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "security": [{"hdrKey": []}],
    "components": {
        "securitySchemes": {
            "hdrKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
            "queryKey": {"type": "apiKey", "in": "query", "name": "api_key"},
            "cookieKey": {"type": "apiKey", "in": "cookie", "name": "session"},
            "bearer": {"type": "http", "scheme": "bearer"},
            "basic": {"type": "http", "scheme": "basic"},
            "cc": {
                "type": "oauth2",
                "flows": {"clientCredentials": {"tokenUrl": "/oauth/token", "scopes": {"read": "read"}}},
            },
            "mtls": {"type": "mutualTLS"},
            "oidc": {
                "type": "openIdConnect",
                "openIdConnectUrl": "http://127.0.0.1:9/.well-known/openid-configuration",
            },
        }
    },
    "paths": {
        "/items/{item_id}": {
            "get": op("getItem", [], [ITEM_ID], {"application/json": {"schema": ITEM}}),
            "put": op("putItem", [], [ITEM_ID]),
        },
        "/items": {
            "post": {
                **op("createItem", []),
                "requestBody": {"required": True, "content": {"application/json": {"schema": ITEM}}},
            }
        },
        "/files/{item_id}": {
            "get": op(
                "getFile",
                [],
                [ITEM_ID],
                {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
            )
        },
        "/note": {
            "get": op(
                "sendNote", [], [{"name": "X-Note", "in": "header", "required": True, "schema": {"type": "string"}}]
            )
        },
        "/search": {
            "get": op(
                "search",
                [],
                [
                    {"name": "limit", "in": "query", "required": True, "schema": {"type": "integer", "minimum": 1}},
                    {
                        "name": "kind",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "enum": ["cat", "dog"]},
                    },
                    {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
                ],
            )
        },
        "/auth/header": {"get": op("authHeader", [{"hdrKey": []}])},
        "/auth/query": {"get": op("authQuery", [{"queryKey": []}])},
        "/auth/cookie": {"get": op("authCookie", [{"cookieKey": []}])},
        "/auth/bearer": {"get": op("authBearer", [{"bearer": []}])},
        "/auth/basic": {"get": op("authBasic", [{"basic": []}])},
        "/auth/cc": {"get": op("authCc", [{"cc": ["read"]}])},
        "/auth/oidc": {"get": op("authOidc", [{"oidc": []}])},
        "/auth/either": {"get": op("authEither", [{"hdrKey": []}, {"bearer": []}])},
        "/auth/both": {"get": op("authBoth", [{"hdrKey": [], "bearer": []}])},
        "/auth/default": {"get": op("authDefault")},
        "/auth/mtls": {"get": op("authMtls", [{"mtls": []}])},
        # basic AND bearer both need the Authorization header: never sendable; the OR falls through
        "/auth/clash": {"get": op("authClash", [{"basic": [], "bearer": []}])},
        "/auth/clash-or": {"get": op("authClashOr", [{"basic": [], "bearer": []}, {"hdrKey": []}])},
        # bearer tokens required together (as Google's Oauth2 + Oauth2c flows): one header, either token
        "/auth/tokens": {"get": op("authTokens", [{"bearer": [], "oidc": []}])},
    },
}
SECRETS = {
    f"{PREFIX}_HDRKEY": "hdr-secret-1",
    f"{PREFIX}_QUERYKEY": "query-secret-2",
    f"{PREFIX}_COOKIEKEY": "cookie-secret-3",
    f"{PREFIX}_BEARER": "bearer-secret-4",
    f"{PREFIX}_BASIC_USERNAME": "alice",
    f"{PREFIX}_BASIC_PASSWORD": "basic-secret-5",
    f"{PREFIX}_CC_CLIENT_ID": "client-id-6",
    f"{PREFIX}_CC_CLIENT_SECRET": "client-secret-7",
    f"{PREFIX}_OIDC": "oidc-secret-8",
}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("runtime")
    out = tmp / PKG
    generate_into(write_spec(tmp, RUNTIME_SPEC), out, name=PKG)
    with on_path(out):
        yield out


@pytest.fixture(scope="module")
def server_module(package: Path) -> ModuleType:
    return importlib.import_module(f"{PKG}.server")


@pytest.fixture(scope="module")
def api() -> Iterator[Upstream]:
    with upstream_server() as server:
        yield server


@pytest.fixture
def upstream(api: Upstream) -> Upstream:
    api.reset()
    return api


def make(server_module: ModuleType, upstream: Upstream, **options: Any) -> Any:
    """The generated server (in-process) with every credential set, pointed at the upstream."""
    settings_module = importlib.import_module(f"{PKG}.settings")
    settings = settings_module.Settings.from_env(
        {f"{PREFIX}_BASE_URL": upstream.url, f"{PREFIX}_RETRIES": "0", **SECRETS}
    )
    return server_module.build_server(replace(settings, **options))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def call(server: Any, tool: str, arguments: dict[str, Any], mode: str = "legacy") -> types.CallToolResult:
    async with Client(server, mode=mode) as client:
        return await client.call_tool(tool, arguments)


# -- authentication -----------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_each_scheme_is_sent_where_the_spec_says(server_module: ModuleType, upstream: Upstream) -> None:
    for path in ("header", "query", "cookie", "bearer", "basic", "oidc", "default"):
        upstream.script(f"/auth/{path}", Answer(200, JSON, b"{}"))
    server = make(server_module, upstream)
    async with Client(server, mode="legacy") as client:
        for tool in (
            "auth_header",
            "auth_query",
            "auth_cookie",
            "auth_bearer",
            "auth_basic",
            "auth_oidc",
            "auth_default",
        ):
            result = await client.call_tool(tool, {})
            assert not result.is_error, (tool, text_of(result))
    sent = {r.path.rsplit("/", 1)[1]: r for r in upstream.requests}
    assert sent["header"].headers["x-api-key"] == "hdr-secret-1"
    assert sent["query"].query == "api_key=query-secret-2"
    assert sent["cookie"].headers["cookie"] == "session=cookie-secret-3"
    assert sent["bearer"].headers["authorization"] == "Bearer bearer-secret-4"
    assert sent["basic"].headers["authorization"] == "Basic " + base64.b64encode(b"alice:basic-secret-5").decode()
    assert sent["oidc"].headers["authorization"] == "Bearer oidc-secret-8"
    assert sent["default"].headers["x-api-key"] == "hdr-secret-1"  # the document-wide `security`
    for name, request in sent.items():  # exactly one credential per request (basic's is base64, checked above)
        if name == "basic":
            continue
        others = [
            s for s in SECRETS.values() if s in json.dumps(request.headers) + request.query and s not in ("alice",)
        ]
        assert len(others) == 1, (name, others)


@pytest.mark.anyio
async def test_security_empty_sends_no_credentials(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    result = await call(make(server_module, upstream), "get_item", {"item_id": "1"})
    assert not result.is_error
    request = upstream.requests[0]
    assert "authorization" not in request.headers and "x-api-key" not in request.headers and request.query == ""


@pytest.mark.anyio
async def test_or_alternatives_and_combinations(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/auth/either", Answer(200, JSON, b"{}"))
    upstream.script("/auth/both", Answer(200, JSON, b"{}"))
    only_bearer = {k: v for k, v in SECRETS.items() if k != f"{PREFIX}_HDRKEY"}
    # OR: the first alternative whose credentials are configured
    assert not (await call(make(server_module, upstream), "auth_either", {})).is_error
    assert not (await call(make(server_module, upstream, credentials=only_bearer), "auth_either", {})).is_error
    first, second = upstream.for_path("/auth/either")
    assert first.headers["x-api-key"] == "hdr-secret-1" and "authorization" not in first.headers
    assert second.headers["authorization"] == "Bearer bearer-secret-4" and "x-api-key" not in second.headers
    # AND: both, or an error naming what is missing
    assert not (await call(make(server_module, upstream), "auth_both", {})).is_error
    both = upstream.for_path("/auth/both")[0]
    assert both.headers["x-api-key"] == "hdr-secret-1" and both.headers["authorization"] == "Bearer bearer-secret-4"
    missing = await call(make(server_module, upstream, credentials=only_bearer), "auth_both", {})
    assert missing.is_error and f"{PREFIX}_HDRKEY" in text_of(missing)
    assert len(upstream.for_path("/auth/both")) == 1


def test_schemes_sharing_authorization_are_reported_at_generation(tmp_path: Path) -> None:
    _, _, problems = analyze(Config(spec=str(write_spec(tmp_path, RUNTIME_SPEC)), output=tmp_path / "out"))
    clashes = [p for p in problems if "Authorization header" in p.message]
    assert [(p.level, p.pointer) for p in clashes] == [
        (Level.WARNING, "/paths/~1auth~1clash/get/security/0"),
        (Level.WARNING, "/paths/~1auth~1clash-or/get/security/0"),
    ]
    assert "'basic', 'bearer'" in clashes[0].message
    # a document-wide requirement is reported once, where it is written
    document = {
        **RUNTIME_SPEC,
        "security": [{"hdrKey": []}, {"basic": [], "oidc": []}],
        "paths": {p: {"get": op(p.strip("/"))} for p in ("/one", "/two")},
    }
    _, _, problems = analyze(Config(spec=str(write_spec(tmp_path, document, "doc.yaml")), output=tmp_path / "o2"))
    assert [p.pointer for p in problems if "Authorization header" in p.message] == ["/security/1"]


@pytest.mark.anyio
async def test_schemes_sharing_authorization_are_not_combined(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/auth/clash-or", Answer(200, JSON, b"{}"))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        clash = await client.call_tool("auth_clash", {})
        fallback = await client.call_tool("auth_clash_or", {})
    assert clash.is_error and text_of(clash) == (
        "This operation cannot be called by this server: security schemes 'basic' and 'bearer' are required "
        "together but each needs the Authorization header."
    )
    assert not fallback.is_error, text_of(fallback)
    (sent,) = upstream.requests  # only the fallback was sent, with the API key alone
    assert sent.path == "/auth/clash-or" and sent.headers["x-api-key"] == "hdr-secret-1"
    assert "authorization" not in sent.headers
    upstream.script("/auth/tokens", Answer(200, JSON, b"{}"))
    only_oidc = {f"{PREFIX}_OIDC": SECRETS[f"{PREFIX}_OIDC"]}
    for credentials in (SECRETS, only_oidc, {}):
        result = await call(make(server_module, upstream, credentials=credentials), "auth_tokens", {})
        assert result.is_error is (not credentials), text_of(result)
    assert [r.headers["authorization"] for r in upstream.for_path("/auth/tokens")] == [
        "Bearer bearer-secret-4",
        "Bearer oidc-secret-8",
    ]
    assert f"set {PREFIX}_BEARER or {PREFIX}_OIDC in" in text_of(result)


@pytest.mark.anyio
async def test_missing_credentials_name_the_variables(server_module: ModuleType, upstream: Upstream) -> None:
    server = make(server_module, upstream, credentials={})
    async with Client(server, mode="legacy") as client:
        expected = {
            "auth_header": [f"{PREFIX}_HDRKEY"],
            "auth_basic": [f"{PREFIX}_BASIC_USERNAME", f"{PREFIX}_BASIC_PASSWORD"],
            "auth_cc": [f"{PREFIX}_CC", f"{PREFIX}_CC_CLIENT_ID", f"{PREFIX}_CC_CLIENT_SECRET"],
            "auth_either": [f"{PREFIX}_HDRKEY", f"{PREFIX}_BEARER"],
        }
        for tool, variables in expected.items():
            result = await client.call_tool(tool, {})
            assert result.is_error and all(v in text_of(result) for v in variables), text_of(result)
        unsupported = await client.call_tool("auth_mtls", {})
        assert unsupported.is_error and "cannot be called by this server" in text_of(unsupported)
        assert "'mtls' of type mutualTLS is not supported" in text_of(unsupported)
    assert upstream.requests == []


@pytest.mark.anyio
async def test_client_credentials_token_cached_and_refreshed(server_module: ModuleType, upstream: Upstream) -> None:
    tokens = [Answer(200, JSON, json.dumps({"access_token": f"tok-{i}", "expires_in": 2}).encode()) for i in (1, 2, 3)]
    upstream.script("/oauth/token", *tokens)
    upstream.script(
        "/auth/cc",
        Answer(200, JSON, b"{}"),
        Answer(200, JSON, b"{}"),
        Answer(401, JSON, b"{}"),
        Answer(200, JSON, b"{}"),
    )
    creds = {k: v for k, v in SECRETS.items() if "_CC_" in k}
    async with Client(make(server_module, upstream, credentials=creds), mode="legacy") as client:
        assert not (await client.call_tool("auth_cc", {})).is_error
        assert not (await client.call_tool("auth_cc", {})).is_error  # cached
        await anyio.sleep(1.2)  # past the renewal point (half of a 2 s lifetime)
        assert (await client.call_tool("auth_cc", {})).is_error  # tok-2 refused: 401 drops the cache
        assert not (await client.call_tool("auth_cc", {})).is_error  # tok-3
    token_requests = upstream.for_path("/oauth/token")
    assert len(token_requests) == 3
    form = token_requests[0].body.decode()
    assert "grant_type=client_credentials" in form and "scope=read" in form
    assert (
        token_requests[0].headers["authorization"]
        == "Basic " + base64.b64encode(b"client-id-6:client-secret-7").decode()
    )
    used = [r.headers["authorization"] for r in upstream.for_path("/auth/cc")]
    assert used == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2", "Bearer tok-3"]


@pytest.mark.anyio
async def test_secrets_never_in_results_or_logs(
    server_module: ModuleType, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = json.dumps({"got": list(SECRETS.values())}).encode()
    for path in ("header", "query", "bearer", "basic"):
        upstream.script(f"/auth/{path}", Answer(403, JSON, echo))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        for tool in ("auth_header", "auth_query", "auth_bearer", "auth_basic"):
            result = await client.call_tool(tool, {})
            assert result.is_error and "403" in text_of(result) and "***" in text_of(result)
            assert not any(s in text_of(result) for s in SECRETS.values() if len(s) > 5)
    upstream.script("/auth/bearer", Answer(200, JSON, echo))  # a successful answer echoing a key
    async with Client(make(server_module, upstream), mode="legacy") as client:
        echoed = await client.call_tool("auth_bearer", {})
    assert not echoed.is_error and "bearer-secret-4" not in text_of(echoed) + json.dumps(echoed.structured_content)
    assert "***" in json.dumps(echoed.structured_content)
    leaked = [line for line in caplog.text.splitlines() if any(s in line for s in SECRETS.values() if len(s) > 5)]
    assert not leaked


# -- arguments and safety ------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_every_bad_field_is_listed_and_nothing_is_sent(server_module: ModuleType, upstream: Upstream) -> None:
    result = await call(make(server_module, upstream), "search", {"limit": "ten", "kind": "bird"})
    text = text_of(result)
    assert result.is_error and "limit" in text and "kind" in text and "'q' is a required property" in text
    assert "'cat'" in text  # what was expected
    assert upstream.requests == []


@pytest.mark.anyio
async def test_path_and_header_tricks(server_module: ModuleType, upstream: Upstream) -> None:
    server = make(server_module, upstream)
    async with Client(server, mode="legacy") as client:
        for trick in ("../../admin", "x?admin=1#f", "%2F..%2Fetc", "http://elsewhere.test/x"):
            await client.call_tool("get_item", {"item_id": trick})
        crlf = await client.call_tool("send_note", {"X-Note": "hi\r\nX-Injected: yes"})
    targets = [r.target for r in upstream.requests]
    assert len(targets) == 4 and all(
        t.startswith("/items/") and t.count("/") == 2 and "?" not in t for t in targets
    ), targets
    assert targets[0] == "/items/..%2F..%2Fadmin"
    assert crlf.is_error and "line breaks" in text_of(crlf)
    assert not upstream.for_path("/note")


# -- resilience ---------------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_hanging_upstream_times_out(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(hang=True))
    result = await call(make(server_module, upstream, timeout=0.5), "get_item", {"item_id": "1"})
    assert result.is_error and "within the total timeout of 0.5 s" in text_of(result)


@pytest.mark.anyio
async def test_slow_drip_is_cut_at_the_deadline(server_module: ModuleType, upstream: Upstream) -> None:
    """One byte a second never trips a per-read timeout; the call's one deadline cuts it."""
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "' + b"x" * 200 + b'"}', drip=1.0, chunk=1))
    started = time.monotonic()
    result = await call(make(server_module, upstream, timeout=2.5), "get_item", {"item_id": "1"})
    elapsed = time.monotonic() - started
    assert result.is_error and "total timeout of 2.5 s" in text_of(result)
    assert 2.4 < elapsed < 5, elapsed


def gzip_bomb(gigabytes: int = 1) -> bytes:
    """`gzip, gzip` of `gigabytes` GB of zeros, a few KB long (the inner stream is one repeated block)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    head = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    repeated = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    return gzip.compress(head + repeated * (1024 * gigabytes - 1), 9)


@pytest.mark.anyio
async def test_gzip_bomb_stops_at_the_cap(server_module: ModuleType, upstream: Upstream) -> None:
    """A few KB of `gzip, gzip` that would be 1 GB: read over a real socket, decoded only up to the cap."""
    bomb = gzip_bomb(1)
    assert len(bomb) < 10_000
    encoded = {"Content-Type": "application/octet-stream", "Content-Encoding": "gzip, gzip"}
    upstream.script("/files/bomb", Answer(200, encoded, bomb))
    upstream.script("/files/three", Answer(200, {**encoded, "Content-Encoding": "gzip, gzip, gzip"}, bomb))
    tracemalloc.start()
    try:
        async with Client(make(server_module, upstream, max_response_bytes=100_000), mode="legacy") as client:
            result = await client.call_tool("get_file", {"item_id": "bomb"})
            three = await client.call_tool("get_file", {"item_id": "three"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    block = result.content[0]
    assert isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents)
    assert base64.b64decode(block.resource.blob) == bytes(75_000)
    assert "[truncated: the response has more bytes; only the first 75,000 are shown]" in text_of(result)
    assert peak < 64_000_000, peak  # megabytes, not the gigabyte the bomb holds
    assert three.is_error and "encoded 3 times" in text_of(three)


@pytest.mark.anyio
async def test_token_endpoint_is_bounded_too(server_module: ModuleType, upstream: Upstream) -> None:
    """Fetching an OAuth2 token counts against the call's deadline, and its answer is read bounded."""
    upstream.script("/oauth/token", Answer(hang=True))
    started = time.monotonic()
    hung = await call(make(server_module, upstream, timeout=0.5), "auth_cc", {})
    assert hung.is_error and "No access token within the total timeout of 0.5 s" in text_of(hung), text_of(hung)
    assert time.monotonic() - started < 3
    upstream.reset()
    bomb = {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"}
    upstream.script("/oauth/token", Answer(200, bomb, gzip_bomb(1)))
    result = await call(make(server_module, upstream), "auth_cc", {})
    assert result.is_error and "refused the client credentials" in text_of(result), text_of(result)
    assert not upstream.for_path("/auth/cc")


@pytest.mark.anyio
async def test_invalid_json_and_unknown_arguments(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "hdr-secret-1", '))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        broken = await client.call_tool("get_item", {"item_id": "1"})
        misspelled = await client.call_tool("get_item", {"item_id": "1", "itemid": "2"})
    assert broken.is_error and "upstream sent invalid JSON" in text_of(broken)
    assert '{"id": 1, "name": "***", ' in text_of(broken)  # the first bytes, secrets masked
    assert misspelled.is_error and "'itemid': unknown argument; did you mean 'item_id'?" in text_of(misspelled)
    assert len(upstream.requests) == 1  # the misspelled call sent nothing


@pytest.mark.anyio
async def test_500_is_an_error_with_status_reason_and_truncated_body(
    server_module: ModuleType, upstream: Upstream
) -> None:
    upstream.script("/items/1", Answer(500, {"Content-Type": "text/plain"}, b"boom " * 2000))
    result = await call(make(server_module, upstream, retries=2), "get_item", {"item_id": "1"})
    text = text_of(result)
    assert result.is_error and "HTTP 500 Internal Server Error" in text and "boom boom" in text
    assert "[truncated" in text and len(text) < 4500 and len(upstream.requests) == 1  # 500 is not retried


@pytest.mark.anyio
async def test_429_retry_after_is_honoured_and_reported(
    server_module: ModuleType, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    upstream.script("/items/1", Answer(429, {"Retry-After": "1"}), Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with Client(make(server_module, upstream, retries=2), mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("get_item", {"item_id": "1"}, progress_callback=on_progress)
    assert not result.is_error and result.structured_content == {"id": 1, "name": "one"}
    first, second = upstream.requests
    assert second.at - first.at >= 0.95  # waited as the API asked
    assert any("HTTP 429; retry 1 of 2" in p for p in progress)
    assert any(isinstance(d, dict) and d.get("retry") == 1 for d in logs)
    audit = [r.getMessage() for r in caplog.records if r.name == f"{PKG}.audit"]
    assert (
        audit == [audit[0]]
        and "tool=get_item method=GET path=/items/{item_id} status=200" in audit[0]
        and "retries=1" in audit[0]
    )


@pytest.mark.anyio
async def test_log_level_is_honoured(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(503, {"Retry-After": "0"}), Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with Client(make(server_module, upstream, retries=1), mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("error")
        assert not (await client.call_tool("get_item", {"item_id": "1"})).is_error
    assert logs == []  # the retry notice is "info", below the level the client asked for


@pytest.mark.anyio
async def test_retries_are_bounded_and_only_for_idempotent_methods(
    server_module: ModuleType, upstream: Upstream
) -> None:
    upstream.script("/items/1", Answer(503, {"Retry-After": "0"}))
    upstream.script("/items", Answer(503, {"Retry-After": "0"}))
    server = make(server_module, upstream, retries=2)
    async with Client(server, mode="legacy") as client:
        got = await client.call_tool("get_item", {"item_id": "1"})
        put = await client.call_tool("put_item", {"item_id": "1"})
        post = await client.call_tool("create_item", {"id": 1, "name": "x"})
    assert got.is_error and put.is_error and "503" in text_of(got)
    assert [r.method for r in upstream.for_path("/items/1")] == ["GET"] * 3 + ["PUT"] * 3
    assert post.is_error and "503" in text_of(post) and len(upstream.for_path("/items")) == 1
    assert json.loads(upstream.for_path("/items")[0].body) == {"id": 1, "name": "x"}


@pytest.mark.anyio
async def test_connection_reset(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(reset=True), Answer(reset=True), Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    ok = await call(make(server_module, upstream, retries=2), "get_item", {"item_id": "1"})
    assert not ok.is_error and len(upstream.for_path("/items/1")) == 3
    upstream.script("/items/1", Answer(reset=True))
    failed = await call(make(server_module, upstream, retries=0), "get_item", {"item_id": "1"})
    assert failed.is_error and "connection" in text_of(failed).lower()


@pytest.mark.anyio
async def test_cancellation_reaches_the_upstream(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(hang=True))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        with anyio.move_on_after(0.5):
            await client.call_tool("get_item", {"item_id": "1"})
        deadline = time.monotonic() + 5
        while not upstream.closed and time.monotonic() < deadline:
            await anyio.sleep(0.05)
    assert upstream.closed == ["/items/1"]


@pytest.mark.anyio
async def test_rate_limit_spaces_requests(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    async with Client(make(server_module, upstream, rate_limit=5.0), mode="legacy") as client:
        for _ in range(4):
            assert not (await client.call_tool("get_item", {"item_id": "1"})).is_error
    times = [r.at for r in upstream.requests]
    # 5 per second: 0.2 s apart (the first request also pays for opening the connection, so it is left out)
    assert times[3] - times[1] >= 0.37


@pytest.mark.anyio
async def test_connection_pool_limit(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}', delay=0.4))
    async with Client(make(server_module, upstream, max_connections=1), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(client.call_tool, "get_item", {"item_id": "1"})
    first, second = upstream.requests
    assert second.at - first.at >= 0.35  # one connection: the second request waited for the first answer


@pytest.mark.anyio
async def test_long_call_reports_progress(server_module: ModuleType, upstream: Upstream) -> None:
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}', delay=0.5))
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with Client(make(server_module, upstream, progress_interval=0.4), mode="legacy") as client:
        result = await client.call_tool("get_item", {"item_id": "1"}, progress_callback=on_progress)
    # a heartbeat at 0.4 s of a 0.5 s wait (on a loaded machine the wait can outlast a second interval: 0.8 s)
    assert not result.is_error and 1 <= len(messages) <= 2, messages
    assert messages[0] in ("waiting for the API (0.4 s)", "waiting for the API (0.5 s)"), messages


# -- responses ----------------------------------------------------------------------------------------
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_off_spec_json_reaches_the_official_client(
    server_module: ModuleType, upstream: Upstream, mode: str
) -> None:
    body = {"id": "not-a-number", "name": "rex", "tags": "oops", "extra": True}
    upstream.script("/items/1", Answer(200, JSON, json.dumps(body).encode()))
    result = await call(make(server_module, upstream), "get_item", {"item_id": "1"}, mode)
    assert not result.is_error
    assert result.structured_content == {"name": "rex", "extra": True}  # the members that match
    assert json.loads(text_of(result).split("\n[note")[0]) == body  # the full answer, as text
    assert "id, tags did not match" in text_of(result)
    upstream.script("/items/1", Answer(200, JSON, b"[1, 2, 3]"))
    array = await call(make(server_module, upstream), "get_item", {"item_id": "1"}, mode)
    assert not array.is_error and array.structured_content == {"result": [1, 2, 3]} and "[1, 2, 3]" in text_of(array)


@pytest.mark.anyio
async def test_content_kinds(server_module: ModuleType, upstream: Upstream) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    )
    upstream.script("/files/img", Answer(200, {"Content-Type": "image/png"}, png))
    upstream.script("/files/bin", Answer(200, {"Content-Type": "application/pdf"}, b"%PDF-1.4\x00\xff\xfe"))
    upstream.script("/files/txt", Answer(200, {"Content-Type": "text/plain; charset=utf-8"}, "héllo".encode()))
    upstream.script("/files/none", Answer(204))
    upstream.script("/files/big", Answer(200, {"Content-Type": "text/plain"}, b"z" * 50_000))
    async with Client(make(server_module, upstream, max_response_bytes=10_000), mode="legacy") as client:
        image = await client.call_tool("get_file", {"item_id": "img"})
        binary = await client.call_tool("get_file", {"item_id": "bin"})
        text = await client.call_tool("get_file", {"item_id": "txt"})
        empty = await client.call_tool("get_file", {"item_id": "none"})
        big = await client.call_tool("get_file", {"item_id": "big"})
    assert isinstance(image.content[0], types.ImageContent) and base64.b64decode(image.content[0].data) == png
    assert image.content[0].mime_type == "image/png"
    resource = binary.content[0]
    assert isinstance(resource, types.EmbeddedResource) and isinstance(resource.resource, types.BlobResourceContents)
    assert (
        resource.resource.mime_type == "application/pdf"
        and base64.b64decode(resource.resource.blob) == b"%PDF-1.4\x00\xff\xfe"
    )
    assert text_of(text) == "héllo"
    assert not empty.is_error and text_of(empty) == "HTTP 204 No Content: success, no content."
    assert (
        not big.is_error
        and text_of(big).startswith("z" * 10_000)
        and "[truncated: the response has 50,000 bytes" in text_of(big)
    )


@pytest.mark.anyio
async def test_redirects(server_module: ModuleType, upstream: Upstream) -> None:
    port = upstream.url.rsplit(":", 1)[1]
    upstream.script("/items/away", Answer(302, {"Location": f"http://localhost:{port}/items/1"}))
    upstream.script("/items/moved", Answer(307, {"Location": "/items/1"}))
    upstream.script("/items/1", Answer(200, JSON, b'{"id": 1, "name": "one"}'))
    async with Client(make(server_module, upstream), mode="legacy") as client:
        away = await client.call_tool("get_item", {"item_id": "away"})
        moved = await client.call_tool("get_item", {"item_id": "moved"})
    assert away.is_error and "redirected to another host (localhost)" in text_of(away)
    assert not moved.is_error and moved.structured_content == {"id": 1, "name": "one"}
    assert [r.target for r in upstream.requests] == ["/items/away", "/items/moved", "/items/1"]


# -- transports ---------------------------------------------------------------------------------------
def _env(package: Path, upstream: Upstream, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(package / "src"),
        f"{PREFIX}_BASE_URL": upstream.url,
        **SECRETS,
        **extra,
    }


def test_help_documents_every_variable(package: Path, upstream: Upstream) -> None:
    done = subprocess.run(
        [sys.executable, "-m", PKG, "--help"], env=_env(package, upstream), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    readme = (package / "README.md").read_text()
    for variable in [
        *SECRETS,
        f"{PREFIX}_BASE_URL",
        f"{PREFIX}_TIMEOUT",
        f"{PREFIX}_MCP_TOKEN",
        f"{PREFIX}_RATE_LIMIT",
        f"{PREFIX}_PROGRESS_INTERVAL",
        f"{PREFIX}_BACKOFF",
    ]:
        assert variable in done.stdout and variable in readme, variable


def test_stdio_keeps_stdout_for_protocol_and_logs_audit_to_stderr(package: Path, upstream: Upstream) -> None:
    upstream.script("/auth/bearer", Answer(200, JSON, b'{"ok": true}'))
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "auth_bearer", "arguments": {}}},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", PKG],
        env=_env(package, upstream),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
    lines = [json.loads(process.stdout.readline()), json.loads(process.stdout.readline())]
    process.stdin.close()
    assert process.wait(timeout=30) == 0 and process.stderr is not None
    stderr = process.stderr.read()
    assert lines[1]["id"] == 2 and lines[1]["result"]["isError"] is False
    assert "tool=auth_bearer method=GET path=/auth/bearer status=200" in stderr and "retries=0" in stderr
    assert not any(secret in stderr for secret in SECRETS.values() if len(secret) > 5)


@pytest.mark.anyio
async def test_http_transport_token_health_and_statelessness(package: Path, upstream: Upstream) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    upstream.script("/auth/bearer", Answer(200, JSON, b'{"ok": true}'))
    port = free_port()
    env = _env(package, upstream, **{f"{PREFIX}_MCP_TOKEN": "mcp-door-key"})
    process = subprocess.Popen(
        [sys.executable, "-m", PKG, "--transport", "http", "--port", str(port)], env=env, stderr=subprocess.PIPE
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(base + "/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert httpx.post(base + "/mcp", json={}, timeout=5).status_code == 401
        for _ in range(2):  # two independent connections: no session to keep
            headers = {"Authorization": "Bearer mcp-door-key"}
            async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
                async with Client(streamable_http_client(base + "/mcp", http_client=http), mode="legacy") as client:
                    result = await client.call_tool("auth_bearer", {})
                    assert not result.is_error and result.structured_content == {"result": {"ok": True}}
        assert len(upstream.for_path("/auth/bearer")) == 2
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_generated_runtime_package_is_formatted_typed_and_its_tests_pass(package: Path) -> None:
    """The package with every kind of security scheme: black, mypy --strict, and its own tests."""
    assert_package_is_clean(package)
