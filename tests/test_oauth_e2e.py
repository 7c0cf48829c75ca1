"""The generated server's HTTP transport as an OAuth 2.1 resource server, end to end with real parts: a local
authorization server (tests/support/authserver.py, joserfc), the generated server as a real process (uvicorn on
127.0.0.1), the official MCP client over streamable HTTP (both protocol eras) with the SDK's own client-credentials
OAuth support, and a recording upstream API.

Bad tokens (none, expired, not yet valid, wrong audience, wrong issuer, alg none, tampered signature, unknown key
id, missing scope) get 401/403 and nothing reaches the upstream; with --upstream-auth exchange two users reach the
upstream with two different exchanged tokens (RFC 8693), each cached for its subject.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from conftest import generate_into, write_spec
from support.authserver import Issuer, auth_server
from support.servers import free_port, wait_until_listening
from support.upstream import Answer, Upstream, upstream_server

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Guarded pets", "version": "1"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "components": {
        "securitySchemes": {
            "oauth": {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": "/token",
                        "scopes": {"pets:read": "read pets", "pets:write": "change pets"},
                    }
                },
            },
            "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
        }
    },
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "security": [{"oauth": ["pets:read"]}],
                "responses": {
                    "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array"}}}}
                },
            },
            "post": {
                "operationId": "createPet",
                "security": [{"oauth": ["pets:write"]}],
                "responses": {"204": {"description": "created"}},
            },
        },
        "/status": {
            "get": {"operationId": "getStatus", "security": [{"key": []}], "responses": {"204": {"description": "ok"}}}
        },
    },
}
PREFIX = "GUARDED"
USERS = {"alice-app": "alice-secret", "bob-app": "bob-secret"}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("oauth")
    out = folder / "guarded"
    generate_into(write_spec(folder, SPEC), out, name="guarded")
    return out


class Running:
    def __init__(self, url: str, proc: subprocess.Popen[bytes]) -> None:
        self.url = url  # http://127.0.0.1:<port>
        self.proc = proc

    @property
    def mcp(self) -> str:
        return self.url + "/mcp"

    def stderr(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
        return err.decode(errors="replace")


@pytest.fixture(scope="module")
def parts(package: Path) -> Iterator[tuple[Issuer, Upstream, Running]]:
    """The authorization server, the upstream API and the generated server in exchange mode."""
    with auth_server({**USERS, "test-client": "test-secret", "mcp-server": "server-secret"}) as issuer:
        with upstream_server() as api:
            port = free_port()
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith(PREFIX)},
                "PYTHONPATH": str(package / "src"),
                f"{PREFIX}_BASE_URL": api.url,
                f"{PREFIX}_KEY": "static-api-key",
                f"{PREFIX}_OAUTH": "static-env-token",  # what static mode would send; never sent in exchange mode
                f"{PREFIX}_OAUTH_CLIENT_ID": "mcp-server",
                f"{PREFIX}_OAUTH_CLIENT_SECRET": "server-secret",
                f"{PREFIX}_AUTH_INTROSPECTION_URL": f"{issuer.url}/introspect",
            }
            args = [
                "--transport",
                "http",
                "--port",
                str(port),
                "--auth-issuer",
                issuer.url,
                "--upstream-auth",
                "exchange",
            ]
            proc = subprocess.Popen(
                [sys.executable, "-m", "guarded", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            try:
                wait_until_listening(proc, port)
                yield issuer, api, Running(f"http://127.0.0.1:{port}", proc)
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()


def call_body(tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments or {}}}


def post(server: Running, token: str | None, body: dict[str, Any]) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(server.mcp, json=body, headers=headers, timeout=10)


def b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def test_protected_resource_metadata_and_401(parts: tuple[Issuer, Upstream, Running]) -> None:
    issuer, api, server = parts
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        metadata = httpx.get(server.url + path, timeout=10)
        assert metadata.status_code == 200, metadata.text
        document = metadata.json()
        assert document["resource"] == server.mcp
        assert document["authorization_servers"] == [issuer.url]
        assert set(document["scopes_supported"]) == {"pets:read", "pets:write"}
    refused = post(server, None, call_body("list_pets"))
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert (
        challenge.startswith("Bearer ")
        and f'resource_metadata="{server.url}/.well-known/oauth-protected-resource/mcp"' in challenge
    )
    print(f"\nEVIDENCE 401: POST /mcp without a token -> {refused.status_code}\n  WWW-Authenticate: {challenge}")
    print(f"EVIDENCE metadata: GET /.well-known/oauth-protected-resource/mcp -> {json.dumps(document)}")
    assert not api.requests


def test_key_rotation_refetches_the_key_set_rate_limited(parts: tuple[Issuer, Upstream, Running]) -> None:
    issuer, api, server = parts
    api.script("/pets", Answer(200, {"Content-Type": "application/json"}, b"[]"))
    assert post(server, issuer.issue("carol", server.mcp, "pets:read"), call_body("list_pets")).status_code == 200
    fetched = issuer.jwks_fetches
    issuer.rotate()  # a new key signs from now on; the server has not seen it yet
    rotated = post(server, issuer.issue("carol", server.mcp, "pets:read"), call_body("list_pets"))
    assert rotated.status_code == 200, rotated.text
    assert issuer.jwks_fetches == fetched + 1
    stranger = Issuer(url=issuer.url)
    stranger.rotate()
    for _ in range(5):  # unknown key ids right after a refetch do not make the server fetch again
        assert post(server, stranger.issue("carol", server.mcp, "pets:read"), call_body("list_pets")).status_code == 401
    assert issuer.jwks_fetches == fetched + 1


def test_bad_tokens_are_refused_and_nothing_reaches_the_upstream(parts: tuple[Issuer, Upstream, Running]) -> None:
    issuer, api, server = parts
    api.reset()
    audience, scope = server.mcp, "pets:read pets:write"
    good = issuer.issue("mallory", audience, scope)
    header, payload, signature = good.split(".")
    stranger = Issuer(url=issuer.url)
    stranger.rotate()  # a key the issuer never published, with its own key id
    tampered_payload = b64({**json.loads(base64.urlsafe_b64decode(payload + "==")), "sub": "admin"})
    cases = {
        "expired": (issuer.issue("mallory", audience, scope, lifetime=-120), 401, "expired"),
        "not yet valid": (issuer.issue("mallory", audience, scope, not_before=600), 401, "not valid yet"),
        "wrong audience": (issuer.issue("mallory", "http://127.0.0.1:1/other", scope), 401, "another resource"),
        "no audience": (issuer.issue("mallory", None, scope), 401, "aud"),
        "wrong issuer": (
            issuer.issue("mallory", audience, scope, issuer="http://evil.test"),
            401,
            "another authorization server",
        ),
        "alg none": (b64({"alg": "none", "typ": "JWT"}) + "." + payload + ".", 401, "algorithm"),
        "alg HS256": (b64({"alg": "HS256", "kid": "x"}) + "." + payload + ".c2ln", 401, "algorithm"),
        "tampered payload": (f"{header}.{tampered_payload}.{signature}", 401, "signature"),
        "tampered signature": (f"{header}.{payload}.{signature[:-4]}AAAA", 401, "signature"),
        "unknown kid": (stranger.issue("mallory", audience, scope), 401, "key id"),
        "garbage": ("not-a-token", 401, "invalid_token"),
        "inactive opaque": (issuer.opaque("mallory", audience, active=False), 401, "not active"),
        "missing scope": (issuer.issue("mallory", audience, "pets:write"), 403, "insufficient_scope"),
    }
    for name, (token, status, reason) in cases.items():
        refused = post(server, token, call_body("list_pets"))
        challenge = refused.headers.get("www-authenticate", "")
        assert refused.status_code == status, (name, refused.status_code, refused.text)
        assert "resource_metadata=" in challenge, name
        assert reason in challenge + refused.text, (name, challenge, refused.text)
        assert token not in challenge + refused.text or len(token) < 16, name
        print(f"EVIDENCE refused {name}: {refused.status_code} {challenge}")
    assert not api.requests  # not one request reached the API


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def call_as(
    server: Running, issuer: Issuer, client_id: str, mode: str, tool: str, scope: str
) -> types.CallToolResult:
    """One session of the official client, logging in with the SDK's client-credentials OAuth provider."""
    provider = ClientCredentialsOAuthProvider(
        server.mcp, Memory(), client_id, USERS[client_id], scope=scope, issuer=issuer.url
    )
    async with httpx2.AsyncClient(auth=provider, timeout=20) as http:
        async with Client(streamable_http_client(server.mcp, http_client=http), mode=mode) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert sorted(names) == ["create_pet", "get_status", "list_pets"]
            result: types.CallToolResult = await client.call_tool(tool, {})
            return result


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # 2025-11-25 initialize; 2026-07-28 discover
def test_two_users_reach_the_upstream_with_their_own_exchanged_tokens(
    parts: tuple[Issuer, Upstream, Running], mode: str
) -> None:
    issuer, api, server = parts
    api.reset()
    api.script("/pets", Answer(200, {"Content-Type": "application/json"}, b'[{"id": 1}]'))
    before = len(issuer.exchanges)

    async def run() -> list[types.CallToolResult]:
        return [
            await call_as(server, issuer, "alice-app", mode, "list_pets", "pets:read"),
            await call_as(server, issuer, "bob-app", mode, "list_pets", "pets:read"),
            await call_as(server, issuer, "alice-app", mode, "list_pets", "pets:read"),  # alice's token is cached
        ]

    results = anyio.run(run)
    assert all(not result.is_error for result in results), [r.content for r in results]
    first = results[0].content[0]
    assert isinstance(first, types.TextContent)
    print(
        f"\nEVIDENCE call ({mode}): alice-app's token from {issuer.url} -> list_pets is_error=False: {first.text[:60]}"
    )
    sent = [request.headers["authorization"] for request in api.for_path("/pets")]
    assert len(sent) == 3 and sent[0] == sent[2] != sent[1]
    exchanged = {e["sub"]: e for e in issuer.exchanges[before:]} if mode == "legacy" else {}
    for request_header in sent:
        claims = issuer.verify(request_header.removeprefix("Bearer "))
        assert claims is not None and claims["aud"] == api.url and claims["act"] == {"sub": "mcp-server"}
        assert claims["sub"] in USERS and request_header not in ("Bearer static-env-token",)
        if exchanged:
            assert exchanged[claims["sub"]]["token"] == request_header.removeprefix("Bearer ")
    if mode == "legacy":
        assert len(issuer.exchanges) - before == 2  # one exchange per subject, the second call of alice cached
    subjects = [issuer.verify(h.removeprefix("Bearer "))["sub"] for h in sent]  # type: ignore[index]
    print(f"EVIDENCE exchange ({mode}): upstream saw {len(set(sent))} distinct tokens for subjects {subjects}")
    for h in sent[:2]:
        claims = issuer.verify(h.removeprefix("Bearer "))
        assert claims is not None
        print(
            f"  upstream Authorization: Bearer ...{h[-16:]} claims sub={claims['sub']} aud={claims['aud']} act={claims['act']}"
        )


def test_missing_scope_with_the_official_client_and_the_apikey_scheme_keeps_its_credential(
    parts: tuple[Issuer, Upstream, Running],
) -> None:
    issuer, api, server = parts
    api.reset()
    api.script("/status", Answer(204))
    issuer.allowed["bob-app"] = {"pets:read"}  # so the client's step-up to pets:write is refused

    async def run() -> tuple[types.CallToolResult, str]:
        status = await call_as(server, issuer, "bob-app", "legacy", "get_status", "pets:read")
        try:
            await call_as(server, issuer, "bob-app", "legacy", "create_pet", "pets:read")
        except Exception as exc:  # the client surfaces the HTTP 403 as an error (inside exception groups)
            inner: BaseException = exc
            while isinstance(inner, BaseExceptionGroup):
                inner = inner.exceptions[0]
            return status, f"{type(inner).__name__}: {inner}"
        return status, "no error"

    status, refused = anyio.run(run)
    assert not status.is_error
    assert api.for_path("/status")[0].headers["x-api-key"] == "static-api-key"  # apiKey schemes keep theirs
    assert refused != "no error" and not api.for_path("/pets"), refused
    print(f"EVIDENCE create_pet without pets:write: {refused[:200]}")


def test_opaque_token_through_introspection(parts: tuple[Issuer, Upstream, Running]) -> None:
    issuer, api, server = parts
    api.reset()
    api.script("/pets", Answer(200, {"Content-Type": "application/json"}, b"[]"))
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    token = issuer.opaque("dave", server.mcp, "pets:read")
    assert post(server, token, init).status_code == 200
    assert post(server, issuer.opaque("dave", "http://127.0.0.1:1/other", "pets:read"), init).status_code == 401


def test_audit_lines_name_subject_and_tool_and_no_token_is_logged(parts: tuple[Issuer, Upstream, Running]) -> None:
    issuer, api, server = parts
    token = issuer.issue("erin", server.mcp, "pets:read")
    api.script("/pets", Answer(200, {"Content-Type": "application/json"}, token.encode()))  # an API echoing it
    answered = post(server, token, call_body("list_pets"))
    assert answered.status_code == 200 and token not in answered.text and "***" in answered.text
    time.sleep(0.2)
    log = server.stderr()
    assert "tool=list_pets" in log and "subject=erin" in log, log[-2000:]
    for secret in (
        "server-secret",
        "static-api-key",
        "static-env-token",
        token,
        *[e["token"] for e in issuer.exchanges],
    ):
        assert secret not in log
    print("EVIDENCE audit: " + next(line for line in log.splitlines() if "subject=erin" in line))
