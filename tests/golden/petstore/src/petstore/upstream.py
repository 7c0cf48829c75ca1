"""The API behind the tools: one pooled httpx client, one deadline per call, retries, a rate limit, host pinning.

- Each call has one deadline (`Settings.timeout`): connecting, sending, reading the whole answer, and
  retries with their waits all happen within it; an upstream that drips its answer is cut at it.
- Idempotent requests are retried on connection errors and on 429/502/503/504, with exponential
  backoff and jitter, honouring Retry-After; a request that never reached the API (connection refused)
  is retried whatever its method (the waits, the rate limit and the words for a failure: retries.py).
- Requests only go to the configured base URL's scheme, host and port. Redirects are followed only
  within it; a redirect elsewhere is reported, not followed.
- At most `max_connections` requests are in flight at once (the rest wait, within their deadline),
  and the connection pool holds as many connections.
- Bodies are decoded (gzip/deflate, at most two layers) while they stream in, and reading stops once
  the decoded body passes READ_FACTOR times the size cap (the cap itself applies to the result, see
  responses.py); the rest is dropped and the result says so.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from .decoding import ACCEPT_ENCODING, DecodingError, read_bounded
from .plans import Request
from .pool import cheap_liveness_checks
from .retries import (
    IDEMPOTENT,
    MAX_RETRY_AFTER,
    RETRY_STATUSES,
    RateLimiter,
    backoff,
    describe,
    retry_after,
)
from .settings import Settings

if (
    TYPE_CHECKING
):  # httpx itself is imported at the first request: start-up does not need it
    import httpx

REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
READ_FACTOR = 2  # decoded bytes read, per byte of the size cap (a UTF-16 or Latin-1 text still fills the cap)
TOKEN_BODY_LIMIT = 65_536  # bytes of a token endpoint's answer read
URL_CACHE = 256  # parsed URLs kept (see _url)
URL_CACHE_LENGTH = 2_048  # characters of the longest URL kept

OnRetry = Callable[[int, float, str], Awaitable[None]]  # (attempt, delay, reason)


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    reason: str
    headers: httpx.Headers
    body: bytes
    total: int | None  # the full decoded size in bytes when known
    truncated: bool
    path: str  # the path requested, without the query (which may carry an API key)
    retries: int


class UpstreamError(Exception):
    """The API could not be reached or did not answer in time; the message says what happened."""

    def __init__(self, message: str, retries: int) -> None:
        super().__init__(message)
        self.retries = retries


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
        self._pool: httpx.AsyncBaseTransport | None = None
        self._client: httpx.AsyncClient | None = None
        self._origin = _origin(settings.base_url or "http://invalid")
        self._limiter = (
            RateLimiter(settings.rate_limit) if settings.rate_limit > 0 else None
        )
        # requests in flight at once; a free slot is taken without a turn of the event loop (one less per call)
        self._slots = anyio.Semaphore(settings.max_connections, fast_acquire=True)

    def pool(self) -> httpx.AsyncBaseTransport:
        """The transport every call's requests go through, without httpx's client layers (no cookie jar: one
        caller's cookies never reach another's requests). The headers, URL and timeouts are what an
        `httpx.AsyncClient` with these settings sends (see `request`)."""
        if self._pool is None:
            import httpx

            s = self.settings
            self._base = _base_url(httpx.URL(s.base_url or ""))
            # the base URL as text, when a relative target can simply follow it (no query or fragment of its own)
            plain = (
                not self._base.query
                and not self._base.fragment
                and self._base.is_absolute_url
            )
            self._prefix = (
                str(self._base).rstrip("/") + "/" if plain else ""
            )  # (its path ends in "/")
            # httpx.AsyncClient's headers, in its order, with ours (User-Agent, Accept-Encoding) set
            self._headers = [
                ("Accept", "*/*"),
                ("Connection", "keep-alive"),
                ("User-Agent", self._user_agent),
                ("Accept-Encoding", ACCEPT_ENCODING),
            ]
            # the call's deadline (fetch) bounds everything; these only bound each step by as much
            self._timeout = httpx.Timeout(
                s.timeout, connect=min(s.connect_timeout, s.timeout)
            )
            if self._transport is not None:
                self._pool = self._transport
            else:
                limits = httpx.Limits(
                    max_connections=s.max_connections,
                    max_keepalive_connections=s.max_connections,
                )
                transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=False)
                cheap_liveness_checks(transport)
                self._pool = transport
        return self._pool

    def request(
        self,
        method: str,
        target: str | httpx.URL,
        headers: Mapping[str, str],
        content: bytes | None,
    ) -> httpx.Request:
        """The request as `httpx.AsyncClient.build_request` makes it: `target` relative to the base URL, the
        client's headers under the request's own, the timeouts as extensions."""
        import httpx

        self.pool()
        url: str | httpx.URL
        if (
            self._prefix
            and isinstance(target, str)
            and target[:1] == "/"
            and target[1:2] != "/"
            and "#" not in target
        ):
            url = _url(self._prefix + target.lstrip("/"))  # the same URL as below
        else:
            url = httpx.URL(target)
            if url.is_relative_url:
                url = self._base.copy_with(
                    raw_path=self._base.raw_path + url.raw_path.lstrip(b"/")
                )
        lowered = {key.lower() for key in headers}
        merged = [
            (key, value) for key, value in self._headers if key.lower() not in lowered
        ]
        merged += headers.items()
        return httpx.Request(
            method,
            url,
            headers=merged,
            content=content,
            extensions={"timeout": self._timeout.as_dict()},
        )

    def client(self) -> httpx.AsyncClient:
        """An httpx client over the same connections, for token requests (which need its authentication flow)."""
        if self._client is None:
            import httpx

            s = self.settings
            self._client = httpx.AsyncClient(
                base_url=s.base_url or "",
                timeout=httpx.Timeout(
                    s.timeout, connect=min(s.connect_timeout, s.timeout)
                ),
                transport=self.pool(),
                follow_redirects=False,
                trust_env=False,
                headers={
                    "User-Agent": self._user_agent,
                    "Accept-Encoding": ACCEPT_ENCODING,
                },
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()  # closes the pool too
        elif self._pool is not None:
            await self._pool.aclose()
        self._client = self._pool = None

    def same_origin(self, url: httpx.URL) -> bool:
        return (
            url.scheme,
            url.host,
            url.port or _PORTS.get(url.scheme),
        ) == self._origin

    async def fetch(
        self,
        request: Request,
        on_retry: OnRetry | None = None,
        deadline: float | None = None,
    ) -> Reply:
        """Send `request` (retrying when safe) and read its answer, all before `deadline` (time.monotonic();
        default: `settings.timeout` from now)."""
        if deadline is None:
            deadline = time.monotonic() + self.settings.timeout
        attempts = [0]
        try:
            with anyio.fail_after(max(deadline - time.monotonic(), 0.001)):
                return await self._fetch(request, on_retry, deadline, attempts)
        except TimeoutError:
            retries = attempts[0]
            raise UpstreamError(
                f"The API did not answer completely within the total timeout of {self.settings.timeout:g} s"
                + (f" ({retries} retries)." if retries else "."),
                retries,
            ) from None

    async def _fetch(
        self,
        request: Request,
        on_retry: OnRetry | None,
        deadline: float,
        attempts: list[int],
    ) -> Reply:
        import httpx

        s = self.settings
        idempotent = request.method in IDEMPOTENT
        attempt = 0
        while True:
            attempts[0] = attempt
            problem: str
            try:
                if self._limiter is not None:
                    await self._limiter.wait()
                async with self._slots:
                    reply = await self._attempt(request, attempt)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                problem = describe(exc)
                retry = True  # the request never reached the API
            except (
                httpx.ReadError,
                httpx.WriteError,
                httpx.RemoteProtocolError,
            ) as exc:
                problem = describe(exc)
                retry = idempotent
            except httpx.TimeoutException as exc:
                raise UpstreamError(describe(exc, s.timeout), attempt) from None
            except httpx.HTTPError as exc:
                raise UpstreamError(describe(exc), attempt) from None
            except DecodingError as exc:
                raise UpstreamError(f"Refused the answer: {exc}.", attempt) from None
            else:
                if (
                    reply.status not in RETRY_STATUSES
                    or not idempotent
                    or attempt >= s.retries
                ):
                    return reply
                delay = retry_after(reply.headers.get("retry-after"))
                if delay is None:
                    delay = backoff(s.backoff, attempt)
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
            delay = backoff(s.backoff, attempt)
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

        pool = self.pool()
        method, content = request.method, request.content
        target: str | httpx.URL = request.target
        for _ in range(MAX_REDIRECTS + 1):
            outgoing = self.request(method, target, request.headers, content)
            if not self.same_origin(outgoing.url):
                raise httpx.UnsupportedProtocol(
                    f"refused to send a request outside the configured API ({outgoing.url.host})"
                )
            response = await pool.handle_async_request(outgoing)
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
                    target = following
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
        return await read_bounded(
            response, self.settings.max_response_bytes * READ_FACTOR
        )


async def fetch_token(
    upstream: Upstream, url: str, form: dict[str, str], user: str, password: str
) -> tuple[int, Any]:
    """POST a client-credentials token request (client_secret_basic); (status, JSON body or None).
    Bounded like any call: the settings' timeout, and TOKEN_BODY_LIMIT bytes of answer.
    """
    import json

    client = upstream.client()
    request = client.build_request(
        "POST", url, data=form, headers={"Accept": "application/json"}
    )
    with anyio.fail_after(upstream.settings.timeout):
        response = await client.send(request, auth=(user, password), stream=True)
        try:
            body, _, truncated = await read_bounded(response, TOKEN_BODY_LIMIT)
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()
    try:
        return response.status_code, None if truncated else json.loads(body)
    except (ValueError, RecursionError):
        return response.status_code, None


def _url(text: str) -> str | httpx.URL:
    """`text`, or the URL httpx.Request would parse from it: one without a query (which may carry an API key or
    a caller's values) of up to URL_CACHE_LENGTH characters is parsed once and kept, the last URL_CACHE of them
    (a tool without path parameters calls the same URL every time)."""
    if len(text) > URL_CACHE_LENGTH or "?" in text:
        return text
    return _parsed(text)


@functools.lru_cache(maxsize=URL_CACHE)
def _parsed(text: str) -> httpx.URL:
    import httpx

    return httpx.URL(text)


def _base_url(url: httpx.URL) -> httpx.URL:
    """The base URL with its path ending in "/", as httpx.AsyncClient keeps it."""
    return (
        url
        if url.raw_path.endswith(b"/")
        else url.copy_with(raw_path=url.raw_path + b"/")
    )


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _PORTS.get(scheme)


_PORTS = {"http": 80, "https": 443}
