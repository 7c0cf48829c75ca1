"""When a call to the API waits and tries again, and how a failure reads to the model.

- A request is retried when it is idempotent (or never reached the API) and the answer is 429, 502, 503 or 504,
  or the connection failed: after exponential backoff with jitter, capped at BACKOFF_CAP seconds, or after the
  answer's Retry-After (seconds or an HTTP date) when it says, up to MAX_RETRY_AFTER.
- `RateLimiter` spaces the requests that start evenly (`PETSTORE_RATE_LIMIT` requests a second).
- `describe` says what went wrong with a request in words a model can act on, without the exception's text.
"""

from __future__ import annotations

import random
import re
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    import httpx

RETRY_STATUSES = frozenset({429, 502, 503, 504})
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
BACKOFF_CAP = 10.0  # seconds: the longest wait between retries (settings.backoff doubles up to it)
MAX_RETRY_AFTER = 60.0  # a longer Retry-After is not waited for
_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


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


def backoff(base: float, attempt: int) -> float:
    return min(BACKOFF_CAP, base * 2.0**attempt) * (0.5 + random.random() / 2)


def retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):  # delay-seconds (fractions accepted too)
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def describe(exc: httpx.HTTPError, timeout: float = 0.0) -> str:
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
