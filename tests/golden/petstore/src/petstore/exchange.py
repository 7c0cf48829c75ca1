"""Upstream credentials per caller on the HTTP transport (`--upstream-auth`, with OAuth access tokens: oauth.py).

- `static` (the default): every call sends the credentials of the environment, as over stdio.
- `passthrough`: a call forwards the caller's own access token.
- `exchange`: a call trades the caller's token for a token of the upstream API with RFC 8693 token exchange at the
  authorization server (this server's own client id and secret), cached per subject until shortly before it expires.

No token is ever logged or put in an error: a refusal says why in general terms only.
"""

from __future__ import annotations

import time

import anyio
import httpx
from mcp.server.auth.provider import AccessToken

from .auth import granted_token
from .oauth import Fetcher, Issuer, OAuthError, ResourceConfig, config_from
from .settings import Settings

EXCHANGE_MARGIN = 30.0  # seconds before expiry at which an exchanged token is renewed
MAX_CACHED = 10_000  # subjects whose exchanged tokens are kept
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


class Exchanger:
    """RFC 8693 token exchange: the caller's token -> a token for the upstream API, cached per subject."""

    def __init__(
        self, config: ResourceConfig, issuer: Issuer, fetcher: Fetcher, upstream: str
    ) -> None:
        self.config = config
        self.issuer = issuer
        self._fetcher = fetcher
        self.upstream = upstream
        self._cache: dict[str, tuple[str, float]] = (
            {}
        )  # subject -> (token, time.monotonic() to renew at)
        self._lock = anyio.Lock()

    def tokens(self) -> list[str]:
        """The exchanged tokens held (for redaction)."""
        return [token for token, _ in self._cache.values()]

    async def token(self, caller: AccessToken) -> str:
        subject = f"{caller.subject or ''}|{caller.client_id}"
        cached = self._cache.get(subject)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        async with self._lock:
            cached = self._cache.get(subject)
            if cached is not None and cached[1] > time.monotonic():
                return cached[0]
            if not self.config.client_id or not self.config.client_secret:
                raise OAuthError(
                    "token exchange needs this server's OAuth client id and secret"
                )
            form = {
                "grant_type": TOKEN_EXCHANGE,
                "subject_token": caller.token,
                "subject_token_type": ACCESS_TOKEN_TYPE,
                "requested_token_type": ACCESS_TOKEN_TYPE,
                "audience": self.upstream,
                "resource": self.upstream,
            }
            url = await self.issuer.endpoint("token_endpoint")
            status, data = await self._fetcher.request(
                "POST", url, form, (self.config.client_id, self.config.client_secret)
            )
            granted = granted_token(data, 300.0, EXCHANGE_MARGIN)
            if status != 200 or granted is None:
                raise OAuthError(
                    f"the authorization server refused the token exchange (HTTP {status})"
                )
            if len(self._cache) >= MAX_CACHED:
                now = time.monotonic()
                self._cache = {k: v for k, v in self._cache.items() if v[1] > now}
                while len(self._cache) >= MAX_CACHED:
                    self._cache.pop(next(iter(self._cache)))
            self._cache[subject] = granted
            return granted[0]


class UpstreamCredential:
    """The bearer token a call sends upstream in place of the environment's (None: the environment's)."""

    def __init__(
        self, settings: Settings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.mode = settings.upstream_auth
        self._exchanger: Exchanger | None = None
        if self.mode == "exchange" and settings.auth_issuer:
            config = config_from(settings, settings.auth_audience or "")
            fetcher = Fetcher(transport)
            self._exchanger = Exchanger(
                config, Issuer(config.issuer, fetcher), fetcher, settings.base_url or ""
            )

    async def bearer(self, caller: AccessToken | None) -> str | None:
        if caller is None or self.mode == "static":
            return None  # stdio, or no OAuth on the HTTP transport: the environment's credentials
        if self.mode == "passthrough":
            return caller.token
        if self._exchanger is None:
            raise OAuthError(
                "token exchange needs an authorization server (--auth-issuer)"
            )
        return await self._exchanger.token(caller)
