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

from .plans import Request

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

    def redact(self, text: str, extra: Sequence[str] = ()) -> str:
        """`text` with every secret in use (and `extra` ones, e.g. the caller's token) replaced by ***."""
        for secret in sorted(
            {*self.secrets(), *(e for e in extra if len(e) >= 4)}, key=len, reverse=True
        ):
            if secret in text:
                text = text.replace(secret, "***")
        return text

    def redact_bytes(self, data: bytes, extra: Sequence[str] = ()) -> bytes:
        """`data` (an answer's body) with every secret replaced by ***, before any of it is quoted or cut: a
        secret cut in half would no longer be recognised."""
        for secret in sorted(
            {*self.secrets(), *(e for e in extra if len(e) >= 4)}, key=len, reverse=True
        ):
            raw = secret.encode()
            if raw in data:
                data = data.replace(raw, b"***")
        return data

    def forget_tokens(self) -> None:
        """Drop cached client-credentials tokens (the API refused one)."""
        self._tokens.clear()

    async def apply(
        self, security: Security, request: Request, bearer: str | None = None
    ) -> Request:
        """`request` with the credentials of the first usable, configured alternative; AuthError if none.
        `bearer` (the caller's own or exchanged token) replaces the environment's token of bearer schemes.
        """
        if not security:
            return request
        missing: list[str] = []
        impossible: list[str] = (
            []
        )  # why the other alternatives cannot be used by this server at all
        chosen = None
        for alternative in security:
            if not alternative:
                continue
            reasons = [reason for key in alternative if (reason := _unusable(key))]
            clash = _clash(alternative)
            if reasons or clash:
                impossible.append("; ".join(reasons + ([clash] if clash else [])))
                continue
            lacking = self._lacking(alternative, bearer)
            if not lacking:
                chosen = alternative
                break
            missing.append(" and ".join(dict.fromkeys(lacking)))
        if chosen is None:
            if any(not alternative for alternative in security):
                return request  # authentication is optional for this operation
            if not missing:
                raise AuthError(
                    "This operation cannot be called by this server: "
                    + "; ".join(impossible)
                    + "."
                )
            message = (
                "This operation needs credentials that are not configured: set "
                + " or ".join(missing)
                + " in the server's environment."
            )
            if impossible:
                message += (
                    " (Its other security alternatives cannot be used: "
                    + "; ".join(impossible)
                    + ".)"
                )
            raise AuthError(message)
        one = next(
            (
                k
                for k in chosen
                if authorization_family(k) == "bearer"
                and (bearer or not self._missing(k))
            ),
            None,
        )
        for key, scopes in chosen.items():
            if authorization_family(key) != "bearer":
                request = await self._apply_one(key, tuple(scopes), request)
            elif key == one:  # one bearer token for them all
                if bearer is not None:
                    request = _header(request, "Authorization", f"Bearer {bearer}")
                else:
                    request = await self._apply_one(key, tuple(scopes), request)
        return request

    def _lacking(
        self, alternative: Mapping[str, Sequence[str]], bearer: str | None = None
    ) -> list[str]:
        """What to set for `alternative`: each scheme's variables, except that the bearer-token schemes
        of one requirement share the Authorization header, so any one of them will do (or the caller's token).
        """
        bearers = [key for key in alternative if authorization_family(key) == "bearer"]
        lacking = [
            m for key in alternative if key not in bearers for m in self._missing(key)
        ]
        if bearers and bearer is None and all(self._missing(key) for key in bearers):
            lacking.append(
                " or ".join(m for key in bearers for m in self._missing(key))
            )
        return lacking

    def _missing(self, key: str) -> list[str]:
        """The variables to set for scheme `key` (a usable one), or [] when its credentials are configured."""
        scheme = SCHEMES[key]
        env: dict[str, str] = scheme["env"]
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
        if (
            kind == "http"
        ):  # bearer; any other scheme (digest, custom) sends "<Scheme> <value>" as set
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
            granted = granted_token(data, 3600.0, TOKEN_MARGIN)
            if status >= 400 or granted is None:
                raise AuthError(
                    f"The token endpoint of {key!r} refused the client credentials (HTTP {status})."
                )
            self._tokens[(key, scopes)] = _Token(*granted)
            return granted[0]


def granted_token(
    data: Any, default_lifetime: float, margin: float
) -> tuple[str, float] | None:
    """The access token in a token endpoint's answer (RFC 6749 section 5.1) and the
    time.monotonic() at which to renew it: `margin` seconds before it expires (half way
    for a short-lived one), its lifetime `expires_in` or else `default_lifetime`; None
    when the answer holds no token."""
    token = data.get("access_token") if isinstance(data, dict) else None
    if not isinstance(token, str) or not token:
        return None
    lifetime = data.get("expires_in")
    seconds = (
        float(lifetime)
        if isinstance(lifetime, (int, float)) and lifetime > 0
        else default_lifetime
    )
    return token, time.monotonic() + max(seconds - margin, seconds / 2)


def _header(request: Request, name: str, value: str) -> Request:
    if "\r" in value or "\n" in value:
        raise AuthError(
            f"The credential for header {name} contains a line break and cannot be sent."
        )
    return replace(request, headers={**request.headers, name: value})


def _unusable(key: str) -> str | None:
    """Why scheme `key` can never be applied by this server; None when it can."""
    scheme = SCHEMES.get(key)
    if scheme is None:
        return f"security scheme {key!r} is not defined in the API description"
    if scheme["kind"] == "unsupported":
        return f"security scheme {key!r} of type {scheme['type']} is not supported"
    return None


def authorization_family(key: str) -> str | None:
    """What scheme `key` puts in the Authorization header: "bearer" for a bearer token (http bearer, OAuth2,
    OpenID Connect: such schemes can share one header), its own key for any other use, None for none.
    """
    scheme = SCHEMES.get(key, {})
    kind = scheme.get("kind")
    if kind == "oauth2" or (kind == "http" and scheme["scheme"] in ("", "bearer")):
        return "bearer"
    if kind in ("basic", "http"):
        return key
    if (
        kind == "apiKey"
        and scheme["in"] == "header"
        and scheme["name"].lower() == "authorization"
    ):
        return key
    return None


def uses_authorization(key: str) -> bool:
    """Whether scheme `key` sends its credential in the Authorization header."""
    return authorization_family(key) is not None


def _clash(alternative: Mapping[str, Sequence[str]]) -> str | None:
    """Why the schemes of one (AND) requirement cannot be sent together; None when they can."""
    needing = [key for key in alternative if uses_authorization(key)]
    if len({authorization_family(key) for key in needing}) < 2:
        return None
    names = " and ".join(repr(key) for key in needing)
    return f"security schemes {names} are required together but each needs the Authorization header"


def usable(alternative: Mapping[str, Sequence[str]]) -> bool:
    """Whether this server can ever send the requirement `alternative` (credentials aside)."""
    return (
        not any(_unusable(key) for key in alternative) and _clash(alternative) is None
    )
