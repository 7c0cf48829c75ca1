"""End to end: the generated server sends each security scheme where the spec says, combines OR and AND requirements,
names missing credentials, caches client-credentials tokens and never leaks a secret; bad arguments are refused
with every field named and nothing sent. The official MCP client, a real HTTP upstream (support/runtime.py)."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from types import ModuleType

import anyio
import pytest
from mcp import Client

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.problems import Level
from conftest import write_spec
from support.upstream import Answer, Upstream
from support.runtime import JSON, PREFIX, RUNTIME_SPEC, SECRETS, call, make, op, text_of

pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


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
