"""A recording HTTP upstream for end-to-end tests: a real server on 127.0.0.1 that keeps every request.

    with recording_upstream() as upstream:               # starts on a free port, stops on exit
        upstream.respond(200, b'{"ok": true}')          # or: upstream.respond_with(lambda request: Reply(...))
        ... point the generated server at upstream.url ...
        request = upstream.last()                        # RecordedRequest
        assert request.method == "GET" and request.path == "/pets/7" and request.query == "a=1&b=2"

Everything is recorded as it arrived on the socket: the request target is split at the first `?` only (nothing
is decoded), headers keep their order and repeats, the body is the exact bytes (chunked bodies are de-chunked).
Stdlib only (http.server in a daemon thread); each request's body is read fully before the reply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from .servers import http_server

MAX_BODY = 64 * 1024 * 1024  # bytes; larger bodies are refused with 413
MAX_RECORDED = 10_000  # requests kept; older ones are dropped


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    target: str  # the raw request target, e.g. "/a%20b/c?x=1&y"
    path: str  # raw, before the first "?"
    query: str  # raw, after the first "?" ("" when absent)
    has_query: bool  # whether the target had a "?" at all
    headers: tuple[tuple[str, str], ...]  # in arrival order, names as sent
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of header `name` (case-insensitive), or None."""
        values = self.header_all(name)
        return values[0] if values else None

    def header_all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def content_type(self) -> str | None:
        return self.header("content-type")

    @property
    def cookie(self) -> str | None:
        """The raw Cookie header (all Cookie headers joined with "; " if several were sent)."""
        values = self.header_all("cookie")
        return "; ".join(values) if values else None


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)


@dataclass
class Upstream:
    url: str = ""  # base URL, e.g. "http://127.0.0.1:54321" (no trailing slash)
    requests: list[RecordedRequest] = field(default_factory=list)
    _handler: Callable[[RecordedRequest], Reply] = field(default=lambda request: Reply())
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def respond(
        self, status: int = 200, body: bytes | str = b"", content_type: str | None = "application/json", **headers: str
    ) -> None:
        """Answer every following request with this fixed response."""
        data = body.encode() if isinstance(body, str) else body
        pairs = ([("Content-Type", content_type)] if content_type else []) + [
            (k.replace("_", "-"), v) for k, v in headers.items()
        ]
        reply = Reply(status, data, tuple(pairs))
        self._handler = lambda request: reply

    def respond_with(self, handler: Callable[[RecordedRequest], Reply]) -> None:
        """Answer each following request with `handler(request)`."""
        self._handler = handler

    def last(self) -> RecordedRequest:
        with self._lock:
            assert self.requests, "the upstream received no request"
            return self.requests[-1]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _record(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            del self.requests[:-MAX_RECORDED]
            handler = self._handler
        return handler(request)


def _handler_class(upstream: Upstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def _body(self) -> bytes | None:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                chunks = []
                total = 0
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return b"".join(chunks)
                    total += size
                    if total > MAX_BODY:
                        return None
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return None
            return self.rfile.read(length) if length else b""

        def _handle(self) -> None:
            body = self._body()
            if body is None:
                self.send_response(413)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                return
            target = self.path
            path, mark, query = target.partition("?")
            request = RecordedRequest(
                method=self.command,
                target=target,
                path=path,
                query=query,
                has_query=bool(mark),
                headers=tuple((k, v) for k, v in self.headers.items()),
                body=body,
            )
            try:
                reply = upstream._record(request)
            except Exception as exc:  # a broken test handler: answer 500 with the reason
                reply = Reply(500, f"recorder handler failed: {exc!r}".encode(), (("Content-Type", "text/plain"),))
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = _handle

    return Handler


@contextmanager
def recording_upstream() -> Iterator[Upstream]:
    """Start a recording server on 127.0.0.1 (free port); stop it when the block ends."""
    upstream = Upstream()
    with http_server(_handler_class(upstream), poll_interval=0.05) as url:
        upstream.url = url
        yield upstream
