"""The generated petstore server as an OAuth resource server over HTTP: metadata, token checks,
scopes, and the caller's token (or the environment's credentials) sent upstream."""

from __future__ import annotations

import base64
import logging
import time
from dataclasses import replace
from typing import Any

import httpx
import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from petstore.auth import SCHEMES, authorization_family, usable
from petstore.cli import check_oauth
from petstore.server import build_server
from petstore.settings import ENV_PREFIX, Settings
from petstore.web import http_app
from support import (
    BASE_URL,
    ROUTES,
    SECRETS,
    TOOLS,
    Recorder,
    arguments_for,
    lifespan,
    server,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


ISSUER = "http://issuer.test"
AUDIENCE = "http://127.0.0.1:8000/mcp"


class FakeIssuer:
    """An authorization server: RFC 8414 metadata, a key set of one ES256 key, RFC 8693 token exchange."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        self.key = ec.generate_private_key(ec.SECP256R1())
        self.jwk: dict[str, Any] = jwt.algorithms.ECAlgorithm.to_jwk(
            self.key.public_key(), as_dict=True
        )
        self.jwk.update(kid="k1", use="sig", alg="ES256")
        self.exchanges: list[dict[str, str]] = []

    def token(
        self,
        subject: str,
        audience: str | None = AUDIENCE,
        scope: str = "",
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": ISSUER,
            "sub": subject,
            "exp": now + 300,
            "iat": now,
            "scope": scope,
            **claims,
        }
        if audience is not None:
            payload["aud"] = audience
        return jwt.encode(payload, self.key, algorithm="ES256", headers={"kid": "k1"})

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-authorization-server":
            metadata = {
                "issuer": ISSUER,
                "jwks_uri": f"{ISSUER}/jwks",
                "token_endpoint": f"{ISSUER}/token",
            }
            return httpx.Response(200, json=metadata)
        if request.url.path == "/jwks":
            return httpx.Response(200, json={"keys": [self.jwk]})
        if request.url.path == "/token":
            form = dict(
                pair.split("=", 1) for pair in request.content.decode().split("&")
            )
            assert (
                form["grant_type"]
                == "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            )
            subject = jwt.decode(
                form["subject_token"], options={"verify_signature": False}
            )["sub"]
            self.exchanges.append(
                {"sub": subject, "auth": request.headers.get("authorization", "")}
            )
            return httpx.Response(
                200,
                json={"access_token": f"exchanged-for-{subject}", "expires_in": 300},
            )
        return httpx.Response(404)


def oauth_app(
    recorder: Recorder, issuer: FakeIssuer, **options: Any
) -> tuple[Any, Any]:
    """(MCP server, guarded HTTP app) as an OAuth resource server; `issuer` answers for ISSUER's host."""

    async def both(request: httpx.Request) -> httpx.Response:
        return (
            issuer(request)
            if request.url.host == "issuer.test"
            else await recorder(request)
        )

    transport = httpx.MockTransport(both)
    settings = replace(
        Settings(base_url=BASE_URL, retries=0, credentials=SECRETS),
        auth_issuer=ISSUER,
        auth_audience=AUDIENCE,
        **options,
    )
    mcp_server = build_server(settings, transport)
    return mcp_server, http_app(mcp_server, settings, auth_transport=transport)


def scoped_tool() -> tuple[dict[str, Any], list[str]] | None:
    """The first tool whose every security alternative lists OAuth2 scopes, with the first one's scopes."""
    for tool in TOOLS:
        security = ROUTES[tool["name"]].get("security") or []
        needed = [
            [
                s
                for key, scopes in alt.items()
                if SCHEMES.get(key, {}).get("kind") == "oauth2"
                for s in scopes
            ]
            for alt in security
        ]
        if needed and all(needed):
            return tool, needed[0]
    return None


async def test_oauth_metadata_401_and_token_checks() -> None:
    issuer, recorder = FakeIssuer(), Recorder()
    mcp_server, app = oauth_app(recorder, issuer)
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as http:
            for path in (
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/mcp",
            ):
                metadata = (await http.get(path)).json()
                assert metadata["resource"] == AUDIENCE and metadata[
                    "authorization_servers"
                ] == [ISSUER]
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": TOOLS[0]["name"]},
            }
            headers = {"Accept": "application/json, text/event-stream"}
            refused = await http.post("/mcp", json=call, headers=headers)
            assert refused.status_code == 401
            expected = 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"'
            assert expected in refused.headers["www-authenticate"]
            forged = issuer.token("eve").rsplit(".", 1)[0] + ".AAAA"
            unsigned = issuer.token("eve").split(".")[1]
            for bad in (
                issuer.token("eve", audience="http://elsewhere.test/mcp"),
                issuer.token("eve", exp=int(time.time()) - 600),
                issuer.token("eve", iss="http://evil.test"),
                forged,
                base64.urlsafe_b64encode(b'{"alg":"none"}').decode().rstrip("=")
                + "."
                + unsigned
                + ".",
            ):
                answer = await http.post(
                    "/mcp",
                    json=call,
                    headers={**headers, "Authorization": f"Bearer {bad}"},
                )
                assert (
                    answer.status_code == 401
                    and "invalid_token" in answer.headers["www-authenticate"]
                )
            found = scoped_tool()
            if (
                found is not None
            ):  # a tool whose OAuth2 security lists scopes needs them
                tool, scopes = found
                call["params"] = {
                    "name": tool["name"],
                    "arguments": arguments_for(tool),
                }
                token = issuer.token("eve", scope="unrelated")
                answer = await http.post(
                    "/mcp",
                    json=call,
                    headers={**headers, "Authorization": f"Bearer {token}"},
                )
                assert (
                    answer.status_code == 403
                    and 'error="insufficient_scope"'
                    in answer.headers["www-authenticate"]
                )
                token = issuer.token("eve", scope=" ".join(scopes))
                answer = await http.post(
                    "/mcp",
                    json=call,
                    headers={**headers, "Authorization": f"Bearer {token}"},
                )
                assert answer.status_code == 200
    assert len(recorder.requests) == (
        1 if scoped_tool() else 0
    )  # only the call with the scopes got through


async def test_an_unreachable_issuer_is_503_not_401() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    settings = replace(
        Settings(base_url=BASE_URL), auth_issuer=ISSUER, auth_audience=AUDIENCE
    )
    mcp_server = build_server(settings, httpx.MockTransport(down))
    app = http_app(mcp_server, settings, auth_transport=httpx.MockTransport(down))
    token = FakeIssuer().token("eve")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        answer = await http.post(
            "/mcp", json={}, headers={"Authorization": f"Bearer {token}"}
        )
    assert (
        answer.status_code == 503
        and answer.headers["retry-after"]
        and token not in answer.text
    )


def bearer_tool() -> dict[str, Any] | None:
    """The first tool whose first security alternative sends a bearer token (http bearer, OAuth2)."""
    for tool in TOOLS:
        security = [
            alt
            for alt in ROUTES[tool["name"]].get("security") or []
            if alt and usable(alt)
        ]
        if security and any(
            authorization_family(key) == "bearer" for key in security[0]
        ):
            return tool
    return None


@pytest.mark.parametrize("mode", ["exchange", "passthrough"])
async def test_upstream_gets_each_callers_token(mode: str) -> None:
    tool = bearer_tool()
    if (
        tool is None
    ):  # no tool sends a bearer token first (none, or only beside other schemes): nothing to swap
        pytest.skip("no tool's first usable security alternative sends a bearer token")
    issuer, recorder = FakeIssuer(), Recorder()
    mcp_server, app = oauth_app(
        recorder,
        issuer,
        upstream_auth=mode,
        oauth_client_id="server-id",
        oauth_client_secret="server-secret",
    )
    granted = " ".join(
        sorted(
            {
                s
                for alt in ROUTES[tool["name"]]["security"]
                for v in alt.values()
                for s in v
            }
        )
    )
    tokens = {user: issuer.token(user, scope=granted) for user in ("alice", "bob")}
    async with lifespan(app):
        for user in ("alice", "bob", "alice"):
            headers = {"Authorization": f"Bearer {tokens[user]}"}
            http = httpx2.AsyncClient(
                transport=httpx2.ASGITransport(app=app), headers=headers
            )
            async with http, Client(
                streamable_http_client(AUDIENCE, http_client=http), mode="legacy"
            ) as client:
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert not result.is_error, text_of(result)
    sent = [request.headers["authorization"] for request in recorder.requests]
    if mode == "exchange":
        assert sent == [
            "Bearer exchanged-for-alice",
            "Bearer exchanged-for-bob",
            "Bearer exchanged-for-alice",
        ]
        assert [e["sub"] for e in issuer.exchanges] == [
            "alice",
            "bob",
        ]  # cached per subject
        assert (
            issuer.exchanges[0]["auth"]
            == "Basic " + base64.b64encode(b"server-id:server-secret").decode()
        )
    else:
        assert (
            sent == [f"Bearer {tokens[user]}" for user in ("alice", "bob", "alice")]
            and not issuer.exchanges
        )


async def test_without_an_http_caller_the_environments_credentials_are_sent() -> None:
    """stdio (and any in-process client) has no caller token: every mode sends the environment's credential."""
    tool = bearer_tool()
    if tool is None:
        return
    key = next(
        k
        for k in ROUTES[tool["name"]]["security"][0]
        if authorization_family(k) == "bearer"
    )
    recorder = Recorder()
    settings = {
        "upstream_auth": "exchange",
        "auth_issuer": ISSUER,
        "oauth_client_id": "id",
        "oauth_client_secret": "s",
    }
    async with Client(server(recorder, **settings), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error, text_of(result)
    assert (
        recorder.requests[0].headers["authorization"]
        == f"Bearer {SECRETS[SCHEMES[key]['env']['token']]}"
    )


def test_upstream_auth_settings_are_checked_at_start_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(SystemExit, match="needs --auth-issuer"):
        check_oauth(replace(Settings(), upstream_auth="exchange"))
    with pytest.raises(SystemExit, match="OAUTH_CLIENT_ID"):
        check_oauth(replace(Settings(), upstream_auth="exchange", auth_issuer=ISSUER))
    with caplog.at_level(logging.WARNING):
        check_oauth(
            replace(Settings(), upstream_auth="passthrough", auth_issuer=ISSUER)
        )
    assert "passthrough" in caplog.text and "forbids" in caplog.text
    with pytest.raises(SystemExit, match="UPSTREAM_AUTH"):
        Settings.from_env({f"{ENV_PREFIX}_UPSTREAM_AUTH": "forward"})
