"""Credentials of the generated petstore server: each security scheme applied as declared, tokens
fetched once, missing credentials named, secrets kept out of results and logs."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import httpx
import pytest
from mcp import Client

from petstore.auth import (
    SCHEMES,
    Auth,
    AuthError,
    authorization_family,
    usable,
    uses_authorization,
)
from petstore.plans import Request
from support import (
    BASE_URL,
    CALLABLE,
    ROUTES,
    SECRETS,
    TOOLS,
    Recorder,
    arguments_for,
    buildable,
    first,
    server,
    target,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


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
    """The first tool and alternative using `key` that this server sends and no earlier alternative pre-empts
    (a tool with sample arguments first)."""
    found: list[tuple[dict[str, Any], list[str]]] = []
    for tool in TOOLS:
        earlier: list[set[str]] = []
        for alt in ROUTES[tool["name"]].get("security", []):
            if key in alt and usable(alt) and not any(e <= set(alt) for e in earlier):
                if buildable(tool):
                    return tool, list(alt)
                found.append((tool, list(alt)))
            earlier.append(set(alt))
    return found[0] if found else None


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
        for tool in filter(buildable, TOOLS):
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
        for tool in filter(buildable, TOOLS):
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
