"""Credentials for each call, as the operation's `security` in the spec asks.

An operation lists alternatives (any one will do), each a set of schemes that are all applied. The first
alternative whose credentials are all configured is used; if none is, the call fails with a message
naming the variables to set. Credentials come from environment variables read at start-up:

- api_key (apiKey, header api_key): PETSTORE_API_KEY
- petstore_auth (oauth2): PETSTORE_PETSTORE_AUTH
"""

from __future__ import annotations

import base64
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

import anyio

from .requests import Request

# scheme key -> kind (apiKey | http | basic | oauth2 | unsupported), wire details and variable names
SCHEMES: dict[str, dict[str, Any]] = {
    "api_key": {
        "key": "api_key",
        "type": "apiKey",
        "kind": "apiKey",
        "scheme": "",
        "name": "api_key",
        "in": "header",
        "token_url": "",
        "env": {"token": "PETSTORE_API_KEY"},
    },
    "petstore_auth": {
        "key": "petstore_auth",
        "type": "oauth2",
        "kind": "oauth2",
        "scheme": "",
        "name": "",
        "in": "",
        "token_url": "",
        "env": {"token": "PETSTORE_PETSTORE_AUTH"},
    },
}
TOKEN_MARGIN = (
    30.0  # seconds before expiry at which a client-credentials token is renewed
)

Security = Sequence[Mapping[str, Sequence[str]]]
# (url, form fields, basic user, basic password) -> (status, JSON body or None)
TokenFetcher = Callable[[str, dict[str, str], str, str], Awaitable[tuple[int, Any]]]


class AuthError(Exception):
    """Credentials are missing or could not be obtained; the message is safe to show."""


@dataclass(frozen=True, slots=True)
class _Token:
    value: str
    expires: float  # time.monotonic() after which it is renewed


class Auth:
    def __init__(
        self, credentials: Mapping[str, str], fetch_token: TokenFetcher, base_url: str
    ) -> None:
        self.credentials = credentials
        self._fetch_token = fetch_token
        self._base_url = base_url
        self._tokens: dict[tuple[str, tuple[str, ...]], _Token] = {}
        self._lock = anyio.Lock()

    def secrets(self) -> list[str]:
        """Every secret value in use, for redaction (longest first)."""
        values = [v for v in self.credentials.values() if len(v) >= 4]
        values += [t.value for t in self._tokens.values() if len(t.value) >= 4]
        return sorted(set(values), key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets():
            if secret in text:
                text = text.replace(secret, "***")
        return text

    def forget_tokens(self) -> None:
        """Drop cached client-credentials tokens (the API refused one)."""
        self._tokens.clear()

    async def apply(self, security: Security, request: Request) -> Request:
        """`request` with the credentials of the first satisfiable alternative; AuthError if none."""
        if not security:
            return request
        missing: list[str] = []
        chosen = None
        for alternative in security:
            if not alternative:
                continue
            lacking = [m for key in alternative for m in self._missing(key)]
            if not lacking:
                chosen = alternative
                break
            missing.append(" and ".join(dict.fromkeys(lacking)))
            if any(m.startswith("(") for m in lacking):
                missing[-1] = "; ".join(
                    m.strip("()") for m in lacking if m.startswith("(")
                )
                missing[-1] = f"({missing[-1]})"
        if chosen is None:
            if any(not alternative for alternative in security):
                return request  # authentication is optional for this operation
            if all(m.startswith("(") for m in missing):
                raise AuthError(
                    "This operation cannot be called by this server: "
                    + "; ".join(m.strip("()") for m in missing)
                    + "."
                )
            raise AuthError(
                "This operation needs credentials that are not configured: set "
                + " or ".join(missing)
                + " in the server's environment."
            )
        for key, scopes in chosen.items():
            request = await self._apply_one(key, tuple(scopes), request)
        return request

    def _missing(self, key: str) -> list[str]:
        scheme = SCHEMES.get(key)
        if scheme is None:
            return [f"(security scheme {key!r} is not defined in the API description)"]
        env: dict[str, str] = scheme["env"]
        if scheme["kind"] == "unsupported":
            return [
                f"(security scheme {key!r} of type {scheme['type']} is not supported)"
            ]
        if scheme["kind"] == "basic":
            return [
                v
                for v in (env["username"], env["password"])
                if v not in self.credentials
            ]
        if env["token"] in self.credentials:
            return []
        if (
            "client_id" in env
            and env["client_id"] in self.credentials
            and env["client_secret"] in self.credentials
        ):
            return []
        if "client_id" in env:
            return [
                f"{env['token']} (a token), or {env['client_id']} and {env['client_secret']}"
            ]
        return [env["token"]]

    async def _apply_one(
        self, key: str, scopes: tuple[str, ...], request: Request
    ) -> Request:
        scheme = SCHEMES[key]
        env: dict[str, str] = scheme["env"]
        kind = scheme["kind"]
        if kind == "basic":
            pair = f"{self.credentials[env['username']]}:{self.credentials[env['password']]}"
            return _header(
                request,
                "Authorization",
                "Basic " + base64.b64encode(pair.encode()).decode(),
            )
        if kind == "apiKey":
            value = self.credentials[env["token"]]
            if scheme["in"] == "query":
                separator = "&" if "?" in request.target else "?"
                target = f"{request.target}{separator}{quote(scheme['name'], safe='')}={quote(value, safe='')}"
                return replace(request, target=target)
            if scheme["in"] == "cookie":
                cookie = f"{scheme['name']}={quote(value, safe='')}"
                existing = request.headers.get("Cookie")
                return _header(
                    request, "Cookie", f"{existing}; {cookie}" if existing else cookie
                )
            return _header(request, scheme["name"], value)
        if kind == "http":  # bearer and any other token-carrying HTTP scheme
            prefix = (
                "Bearer"
                if scheme["scheme"] in ("", "bearer")
                else scheme["scheme"].capitalize()
            )
            return _header(
                request, "Authorization", f"{prefix} {self.credentials[env['token']]}"
            )
        # oauth2 / openIdConnect: a ready token, else client credentials
        token = self.credentials.get(env["token"]) or await self._client_token(
            key, scopes
        )
        return _header(request, "Authorization", f"Bearer {token}")

    async def _client_token(self, key: str, scopes: tuple[str, ...]) -> str:
        cached = self._tokens.get((key, scopes))
        if cached is not None and cached.expires > time.monotonic():
            return cached.value
        async with self._lock:  # one token request at a time; others reuse its result
            cached = self._tokens.get((key, scopes))
            if cached is not None and cached.expires > time.monotonic():
                return cached.value
            scheme = SCHEMES[key]
            env: dict[str, str] = scheme["env"]
            url = (
                self.credentials.get(env["token"] + "_TOKEN_URL") or scheme["token_url"]
            )
            if "://" not in url:
                url = self._base_url.rstrip("/") + "/" + url.lstrip("/")
            form = {"grant_type": "client_credentials"}
            if scopes:
                form["scope"] = " ".join(scopes)
            try:
                status, data = await self._fetch_token(
                    url,
                    form,
                    self.credentials[env["client_id"]],
                    self.credentials[env["client_secret"]],
                )
            except Exception as exc:
                raise AuthError(
                    f"Could not reach the token endpoint of {key!r}: {type(exc).__name__}"
                ) from None
            token = data.get("access_token") if isinstance(data, dict) else None
            if status >= 400 or not isinstance(token, str) or not token:
                raise AuthError(
                    f"The token endpoint of {key!r} refused the client credentials (HTTP {status})."
                )
            lifetime = data.get("expires_in") if isinstance(data, dict) else None
            seconds = (
                float(lifetime)
                if isinstance(lifetime, (int, float)) and lifetime > 0
                else 3600.0
            )
            self._tokens[(key, scopes)] = _Token(
                token, time.monotonic() + max(seconds - TOKEN_MARGIN, seconds / 2)
            )
            return token


def _header(request: Request, name: str, value: str) -> Request:
    if "\r" in value or "\n" in value:
        raise AuthError(
            f"The credential for header {name} contains a line break and cannot be sent."
        )
    return replace(request, headers={**request.headers, name: value})
