"""The API behind the tools: one pooled httpx client, timeouts, retries, a rate limit, host pinning.

- Every attempt has connect/read/write timeouts; the whole call (retries and waits included) has a
  total deadline.
- Idempotent requests are retried on connection errors and on 429/502/503/504, with exponential
  backoff and jitter, honouring Retry-After; a request that never reached the API (connection refused)
  is retried whatever its method.
- Requests only go to the configured base URL's scheme, host and port. Redirects are followed only
  within it; a redirect elsewhere is reported, not followed.
- Bodies are read up to the size cap and the rest is dropped (the result says so).
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from .requests import Request
from .settings import Settings

if (
    TYPE_CHECKING
):  # httpx itself is imported at the first request: start-up does not need it
    import httpx

RETRY_STATUSES = frozenset({429, 502, 503, 504})
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
BACKOFF_BASE = 0.5  # seconds before the first retry; doubled each time, with jitter
BACKOFF_CAP = 10.0
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is not waited for

OnRetry = Callable[[int, float, str], Awaitable[None]]  # (attempt, delay, reason)


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    reason: str
    headers: httpx.Headers
    body: bytes
    total: int | None  # the full size in bytes when known (truncated bodies)
    truncated: bool
    path: str  # the path requested, without the query (which may carry an API key)
    retries: int


class UpstreamError(Exception):
    """The API could not be reached or did not answer in time; the message says what happened."""

    def __init__(self, message: str, retries: int) -> None:
        super().__init__(message)
        self.retries = retries


class RateLimiter:
    """At most `per_second` requests start per second (evenly spaced)."""

    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second
        self.next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        slot = max(now, self.next)
        self.next = slot + self.interval
        if slot > now:
            await anyio.sleep(slot - now)


class Upstream:
    def __init__(
        self,
        settings: Settings,
        transport: httpx.AsyncBaseTransport | None = None,
        user_agent: str = "",
    ) -> None:
        self.settings = settings
        self._transport = transport
        self._user_agent = user_agent
        self._client: httpx.AsyncClient | None = None
        self._origin = _origin(settings.base_url or "http://invalid")
        self._limiter = (
            RateLimiter(settings.rate_limit) if settings.rate_limit > 0 else None
        )

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            s = self.settings
            self._client = httpx.AsyncClient(
                base_url=s.base_url or "",
                timeout=httpx.Timeout(s.timeout, connect=s.connect_timeout),
                limits=httpx.Limits(
                    max_connections=s.max_connections,
                    max_keepalive_connections=s.max_connections,
                ),
                transport=self._transport,
                follow_redirects=False,
                trust_env=False,
                headers={"User-Agent": self._user_agent},
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def same_origin(self, url: httpx.URL) -> bool:
        return (
            url.scheme,
            url.host,
            url.port or _PORTS.get(url.scheme),
        ) == self._origin

    async def fetch(self, request: Request, on_retry: OnRetry | None = None) -> Reply:
        """Send `request` (retrying when safe) and read its answer, within the total deadline."""
        import httpx

        s = self.settings
        deadline = time.monotonic() + s.total_timeout
        idempotent = request.method in IDEMPOTENT
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            problem: str
            try:
                if self._limiter is not None:
                    await self._limiter.wait()
                with anyio.fail_after(max(remaining, 0.001)):
                    reply = await self._attempt(request, attempt)
            except TimeoutError:
                raise UpstreamError(
                    f"The API did not answer completely within the total timeout of {s.total_timeout:g} s"
                    + (f" ({attempt} retries)." if attempt else "."),
                    attempt,
                ) from None
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                problem = _describe(exc)
                retry = True  # the request never reached the API
            except (
                httpx.ReadError,
                httpx.WriteError,
                httpx.RemoteProtocolError,
            ) as exc:
                problem = _describe(exc)
                retry = idempotent
            except httpx.TimeoutException as exc:
                raise UpstreamError(_describe(exc, s.timeout), attempt) from None
            except httpx.HTTPError as exc:
                raise UpstreamError(_describe(exc), attempt) from None
            else:
                if (
                    reply.status not in RETRY_STATUSES
                    or not idempotent
                    or attempt >= s.retries
                ):
                    return reply
                delay = _retry_after(reply.headers.get("retry-after"))
                if delay is None:
                    delay = _backoff(attempt)
                elif delay > MAX_RETRY_AFTER or delay > deadline - time.monotonic():
                    return (
                        reply  # the API asks for a longer wait than this call may take
                    )
                await self._wait(
                    attempt + 1, delay, f"HTTP {reply.status}", deadline, on_retry
                )
                attempt += 1
                continue
            if not retry or attempt >= s.retries:
                suffix = f" (after {attempt} retries)" if attempt else ""
                raise UpstreamError(problem + suffix, attempt)
            delay = _backoff(attempt)
            if delay > deadline - time.monotonic():
                raise UpstreamError(problem, attempt)
            await self._wait(attempt + 1, delay, problem, deadline, on_retry)
            attempt += 1

    async def _wait(
        self,
        attempt: int,
        delay: float,
        reason: str,
        deadline: float,
        on_retry: OnRetry | None,
    ) -> None:
        if on_retry is not None:
            await on_retry(attempt, delay, reason)
        await anyio.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))

    async def _attempt(self, request: Request, retries: int) -> Reply:
        import httpx

        client = self.client()
        method, target, content = request.method, request.target, request.content
        for _ in range(MAX_REDIRECTS + 1):
            outgoing = client.build_request(
                method, target, headers=request.headers, content=content
            )
            if not self.same_origin(outgoing.url):
                raise httpx.UnsupportedProtocol(
                    f"refused to send a request outside the configured API ({outgoing.url.host})"
                )
            response = await client.send(outgoing, stream=True)
            try:
                location = response.headers.get("location")
                if response.status_code in REDIRECTS and location:
                    following = outgoing.url.join(location)
                    if not self.same_origin(following):
                        raise httpx.UnsupportedProtocol(
                            f"the API redirected to another host ({following.host}); "
                            "redirects are only followed within the configured base URL"
                        )
                    if response.status_code == 303 or (
                        response.status_code in (301, 302) and method != "HEAD"
                    ):
                        method, content = ("GET" if method != "HEAD" else "HEAD"), None
                    target = str(following)
                    continue
                body, total, truncated = await self._read(response)
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
            return Reply(
                response.status_code,
                response.reason_phrase,
                response.headers,
                body,
                total,
                truncated,
                outgoing.url.path,
                retries,
            )
        raise httpx.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")

    async def _read(self, response: httpx.Response) -> tuple[bytes, int | None, bool]:
        limit = self.settings.max_response_bytes
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                length = response.headers.get("content-length")
                total = int(length) if length and length.isdigit() else None
                return b"".join(chunks)[:limit], total, True
        return b"".join(chunks), size, False


async def fetch_token(
    upstream: Upstream, url: str, form: dict[str, str], user: str, password: str
) -> tuple[int, Any]:
    """POST a client-credentials token request (client_secret_basic); (status, JSON body or None)."""
    response = await upstream.client().post(
        url, data=form, auth=(user, password), headers={"Accept": "application/json"}
    )
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, None


def _backoff(attempt: int) -> float:
    return min(BACKOFF_CAP, BACKOFF_BASE * 2.0**attempt) * (0.5 + random.random() / 2)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _PORTS.get(scheme)


_PORTS = {"http": 80, "https": 443}


def _describe(exc: httpx.HTTPError, timeout: float = 0.0) -> str:
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return "Could not connect to the API: the connection timed out."
    if isinstance(exc, httpx.ConnectError):
        return "Could not connect to the API (connection refused or host unreachable)."
    if isinstance(exc, httpx.ReadTimeout):
        return f"The API stopped answering: no data for {timeout:g} s (read timeout)."
    if isinstance(exc, httpx.WriteTimeout):
        return f"Sending the request to the API timed out after {timeout:g} s."
    if isinstance(exc, httpx.PoolTimeout):
        return "No free connection to the API in time (too many calls in flight)."
    if isinstance(exc, (httpx.ReadError, httpx.RemoteProtocolError)):
        return "The API closed the connection before answering completely (connection reset)."
    if isinstance(exc, httpx.WriteError):
        return "The connection to the API broke while sending the request."
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"Request refused: {exc}."
    return f"Request to the API failed ({type(exc).__name__})."
