"""OAuth access tokens for the HTTP transport (the MCP authorization specification, 2025-06-18 on).

With `--auth-issuer` (or `PETSTORE_AUTH_ISSUER`) every request to /mcp needs an access token from
that authorization server (resource.py does the HTTP part). This module checks the tokens:

- JWT access tokens are checked against the issuer's keys (JWKS), found through its RFC 8414 or OpenID
  metadata: signature with an allow-list of asymmetric algorithms (never `none`, never a shared secret), `iss`,
  `exp` and `nbf` with a small leeway, and `aud` equal to this server's resource URL (RFC 8707). The key set is
  cached; an unknown key id fetches it again (at most once per JWKS_REFRESH seconds), so key rotation works.
- Other (opaque) tokens are checked with RFC 7662 introspection when `--auth-introspection-url` is set.
- Scopes are read from the token's space-separated `scope` claim, or `scp`.

What a call then sends upstream for its caller (`--upstream-auth`: token exchange, passthrough) is exchange.py's.

No token or secret is ever logged or put in an error: a refusal says why in general terms only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import jwt
from mcp.server.auth.provider import AccessToken

from .settings import Settings

ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
LEEWAY = 30  # seconds of clock skew allowed for exp and nbf
JWKS_REFRESH = 10.0  # seconds: the shortest interval between two fetches of the key set for unknown key ids
METADATA_TTL = 3600.0  # seconds the issuer's metadata and keys are kept (unknown key ids refetch sooner)
MAX_DOCUMENT = 256_000  # bytes: the largest metadata, key set or token response read


class OAuthError(Exception):
    """A check or a request to the authorization server failed; the message is safe to show and log."""


class Unavailable(OAuthError):
    """The authorization server could not be reached (the token may be fine: try again later)."""


@dataclass(frozen=True, slots=True)
class ResourceConfig:
    issuer: str
    audience: str  # this server's canonical resource URL (the tokens' `aud`)
    introspection_url: str | None = None
    scopes: tuple[str, ...] = ()  # needed by every request
    client_id: str | None = (
        None  # this server's own client: introspection and token exchange
    )
    client_secret: str | None = None


class Fetcher:
    """Bounded JSON requests to the authorization server (its own client: never the API's)."""

    def __init__(
        self, transport: httpx.AsyncBaseTransport | None = None, timeout: float = 10.0
    ) -> None:
        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
        )

    async def request(
        self,
        method: str,
        url: str,
        form: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
    ) -> tuple[int, Any]:
        """(status, parsed JSON or None); OAuthError when the server cannot be reached."""
        if urlsplit(url).scheme not in ("http", "https"):
            raise OAuthError("the authorization server URL is not an http(s) URL")
        try:
            async with self._client.stream(
                method,
                url,
                data=dict(form) if form else None,
                auth=auth,
                headers={"Accept": "application/json"},
            ) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT:
                        raise OAuthError(
                            f"the authorization server's answer is over {MAX_DOCUMENT} bytes"
                        )
                status = response.status_code
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"the authorization server could not be reached ({type(exc).__name__})"
            ) from None
        try:
            return status, json.loads(body)
        except ValueError:
            return status, None


class Issuer:
    """The authorization server's metadata (RFC 8414, else OpenID Connect discovery) and key set, cached."""

    def __init__(self, issuer: str, fetcher: Fetcher) -> None:
        self.issuer = issuer
        self._fetcher = fetcher
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: dict[str, jwt.PyJWK] = {}
        self._keys_at: float | None = None  # when the key set was read (None: never)
        self._refetched_at = (
            -JWKS_REFRESH
        )  # when an unknown key id last made it read the set again
        self._lock = anyio.Lock()

    def _candidates(self) -> list[str]:
        parts = urlsplit(self.issuer)
        path = parts.path.rstrip("/")
        origin = f"{parts.scheme}://{parts.netloc}"
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
            f"{origin}{path}/.well-known/oauth-authorization-server",  # Okta's custom authorization servers
        ]

    async def metadata(self) -> dict[str, Any]:
        if (
            self._metadata is not None
            and time.monotonic() - self._metadata_at < METADATA_TTL
        ):
            return self._metadata
        for url in self._candidates():
            status, data = await self._fetcher.request("GET", url)
            if status == 200 and isinstance(data, dict):
                if data.get("issuer") != self.issuer:  # RFC 8414 section 3.3
                    raise OAuthError(
                        "the authorization server's metadata names another issuer"
                    )
                self._metadata, self._metadata_at = data, time.monotonic()
                return data
        raise OAuthError(
            "the authorization server publishes no metadata (RFC 8414 or OpenID discovery)"
        )

    async def endpoint(self, name: str) -> str:
        url = (await self.metadata()).get(name)
        if not isinstance(url, str) or not url:
            raise OAuthError(f"the authorization server's metadata has no {name}")
        return url

    async def key(self, kid: str | None) -> jwt.PyJWK:
        """The signing key `kid` (the only key when the token names none); refetches the set for an unknown id."""
        now = time.monotonic()
        if self._keys_at is not None and now - self._keys_at < METADATA_TTL:
            found = self._pick(kid)
            if found is not None or now - self._refetched_at < JWKS_REFRESH:
                return _known(found)
        async with self._lock:
            stale = (
                self._keys_at is None
                or time.monotonic() - self._keys_at >= METADATA_TTL
            )
            found = None if stale else self._pick(kid)
            if found is None and (
                stale or time.monotonic() - self._refetched_at >= JWKS_REFRESH
            ):
                if not stale:
                    self._refetched_at = time.monotonic()
                await self._refresh()
                found = self._pick(kid)
        return _known(found)

    def _pick(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        self._keys_at = time.monotonic()  # a failed read is not retried at once either
        status, data = await self._fetcher.request(
            "GET", await self.endpoint("jwks_uri")
        )
        if (
            status != 200
            or not isinstance(data, dict)
            or not isinstance(data.get("keys"), list)
        ):
            raise OAuthError("the issuer's key set (jwks_uri) could not be read")
        keys: dict[str, jwt.PyJWK] = {}
        for index, entry in enumerate(data["keys"][:100]):
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK.from_dict(entry)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                continue  # a key type or curve this server cannot use
            keys[str(entry.get("kid", f"#{index}"))] = key
        self._keys = keys


def _known(key: jwt.PyJWK | None) -> jwt.PyJWK:
    if key is None:
        raise OAuthError("the token's key id is not in the issuer's key set")
    return key


class Verifier:
    """Access tokens -> the SDK's AccessToken (the mcp TokenVerifier protocol), or the reason of a refusal."""

    def __init__(
        self, config: ResourceConfig, issuer: Issuer, fetcher: Fetcher
    ) -> None:
        self.config = config
        self.issuer = issuer
        self._fetcher = fetcher

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            checked = await self.check(token)
        except Unavailable:
            return None
        return checked if isinstance(checked, AccessToken) else None

    async def check(self, token: str) -> AccessToken | str:
        """The token's AccessToken, or why it is refused; Unavailable when the issuer cannot be asked."""
        try:
            if token.count(".") == 2:
                return await self._jwt(token)
            if self.config.introspection_url:
                return await self._introspect(token, self.config.introspection_url)
            return "the token is not a JWT and no introspection endpoint is configured"
        except Unavailable:
            raise
        except OAuthError as exc:
            return str(exc)

    async def _jwt(self, token: str) -> AccessToken | str:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return "the token is malformed"
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            return f"the token's signing algorithm is not accepted (allowed: {', '.join(ALGORITHMS)})"
        kid = header.get("kid")
        key = await self.issuer.key(kid if isinstance(kid, str) else None)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.config.audience,
                issuer=self.config.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            return "the token has expired"
        except jwt.ImmatureSignatureError:
            return "the token is not valid yet"
        except jwt.InvalidAudienceError:
            return "the token was issued for another resource (aud)"
        except jwt.InvalidIssuerError:
            return "the token was issued by another authorization server (iss)"
        except jwt.MissingRequiredClaimError as exc:
            return f"the token lacks the {exc.claim} claim"
        except jwt.InvalidSignatureError:
            return "the token's signature does not verify"
        except jwt.PyJWTError as exc:
            return f"the token is not valid ({type(exc).__name__})"
        return _access_token(token, claims, self.config.audience)

    async def _introspect(self, token: str, url: str) -> AccessToken | str:
        client, secret = self.config.client_id, self.config.client_secret
        form = {"token": token, "token_type_hint": "access_token"}
        status, data = await self._fetcher.request(
            "POST", url, form, (client, secret) if client and secret else None
        )
        if status != 200 or not isinstance(data, dict):
            return f"token introspection failed (HTTP {status})"
        if data.get("active") is not True:
            return "the token is not active"
        if "iss" in data and data["iss"] != self.config.issuer:
            return "the token was issued by another authorization server (iss)"
        exp = data.get("exp")
        if isinstance(exp, (int, float)) and exp + LEEWAY < time.time():
            return "the token has expired"
        nbf = data.get("nbf")
        if isinstance(nbf, (int, float)) and nbf - LEEWAY > time.time():
            return "the token is not valid yet"
        audiences = data.get("aud")
        audiences = [audiences] if isinstance(audiences, str) else audiences
        if not isinstance(audiences, list) or self.config.audience not in audiences:
            return "the token was issued for another resource (aud)"
        return _access_token(token, data, self.config.audience)


def _access_token(token: str, claims: Mapping[str, Any], audience: str) -> AccessToken:
    raw = claims.get("scope")
    if not isinstance(raw, str):
        raw = claims.get("scp")
    scopes = (
        raw.split()
        if isinstance(raw, str)
        else [s for s in raw if isinstance(s, str)] if isinstance(raw, list) else []
    )
    client = claims.get("client_id") or claims.get("azp") or ""
    subject = claims.get("sub")
    exp = claims.get("exp")
    kept = {
        k: v
        for k, v in claims.items()
        if k in ("iss", "sub", "aud", "client_id", "azp", "act")
    }
    return AccessToken(
        token=token,
        client_id=str(client),
        scopes=scopes,
        expires_at=int(exp) if isinstance(exp, (int, float)) else None,
        resource=audience,
        subject=str(subject) if subject is not None else None,
        claims=kept,
    )


def config_from(settings: Settings, audience: str) -> ResourceConfig:
    return ResourceConfig(
        issuer=settings.auth_issuer or "",
        audience=audience,
        introspection_url=settings.auth_introspection_url,
        scopes=settings.auth_scopes,
        client_id=settings.oauth_client_id,
        client_secret=settings.oauth_client_secret,
    )
