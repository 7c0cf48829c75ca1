"""A small programmable HTTP/1.1 server on 127.0.0.1 for end-to-end tests: records every request exactly
as it arrived and answers with scripted responses or faults; stdlib only.

    from support.upstream import Answer, upstream_server

    with upstream_server() as api:                       # api.url == "http://127.0.0.1:<port>"
        api.script("/items/1", Answer(429, {"Retry-After": "1"}), Answer(200, body=b'{"id": 1}'))
        ...                                               # the last answer of a script repeats
        api.requests                                      # [Recorded(method, target, headers, body, at), ...]

Faults: `hang=True` (never answers; `closed` events record when the client gives up), `reset=True` (the
connection is closed with a TCP reset before any answer), `drip=seconds` (the body is sent one small
chunk at a time), `delay=seconds` (before the answer). Paths not scripted answer 404. Every connection
is served by its own thread; `close()` (or leaving the `with`) stops them all within a second.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Answer", "Recorded", "Upstream", "upstream_server"]


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0
    hang: bool = False
    reset: bool = False
    drip: float = 0.0  # seconds between chunks of `chunk` bytes
    chunk: int = 16


@dataclass(frozen=True)
class Recorded:
    method: str
    target: str  # path and query, exactly as sent
    headers: dict[str, str]  # lower-cased names
    body: bytes
    at: float  # time.monotonic() when the request was complete

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""


REASONS = {
    200: "OK",
    201: "Created",
    204: "No Content",
    302: "Found",
    307: "Temporary Redirect",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


class Upstream:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.requests: list[Recorded] = []
        self.closed: list[str] = []  # targets of hanging requests whose client went away
        self._scripts: dict[str, list[Answer]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, name="upstream-accept", daemon=True)
        self._accept.start()

    def script(self, path: str, *answers: Answer) -> None:
        """Answer requests for `path` (without the query) with `answers` in order; the last one repeats."""
        with self._lock:
            self._scripts[path] = list(answers)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.closed.clear()
            self._scripts.clear()

    def for_path(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == path]

    def close(self) -> None:
        self._stop.set()
        self._accept.join(timeout=2)
        for thread in self._threads:
            thread.join(timeout=2)
        self._listener.close()

    # -- serving ------------------------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._connection, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _next(self, path: str) -> Answer:
        with self._lock:
            script = self._scripts.get(path)
            if not script:
                return Answer(404, {"Content-Type": "application/json"}, b'{"message": "not scripted"}')
            return script.pop(0) if len(script) > 1 else script[0]

    def _connection(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        buffer = b""
        with conn:
            while not self._stop.is_set():
                request, buffer = self._read_request(conn, buffer)
                if request is None:
                    return
                with self._lock:
                    self.requests.append(request)
                if not self._answer(conn, request, self._next(request.path)):
                    return

    def _read_request(self, conn: socket.socket, buffer: bytes) -> tuple[Recorded | None, bytes]:
        deadline = time.monotonic() + 10
        while b"\r\n\r\n" not in buffer:
            chunk = self._recv(conn, deadline)
            if not chunk:
                return None, b""
            buffer += chunk
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        while len(buffer) < length:
            chunk = self._recv(conn, deadline)
            if not chunk:
                return None, b""
            buffer += chunk
        body, buffer = buffer[:length], buffer[length:]
        return Recorded(method, target, headers, body, time.monotonic()), buffer

    def _recv(self, conn: socket.socket, deadline: float) -> bytes:
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                return conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return b""
        return b""

    def _answer(self, conn: socket.socket, request: Recorded, answer: Answer) -> bool:
        """Send `answer`; False when the connection is finished."""
        if answer.reset:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if answer.hang:
            while not self._stop.is_set():  # until the client closes the connection
                try:
                    if conn.recv(1) == b"":
                        with self._lock:
                            self.closed.append(request.target)
                        return False
                except TimeoutError:
                    continue
                except OSError:
                    with self._lock:
                        self.closed.append(request.target)
                    return False
            return False
        if answer.delay:
            self._stop.wait(answer.delay)
        headers = {"Content-Length": str(len(answer.body)), **answer.headers}
        if answer.status == 204 or request.method == "HEAD":
            headers.pop("Content-Length")
        head = f"HTTP/1.1 {answer.status} {REASONS.get(answer.status, 'Status')}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        try:
            conn.sendall(head.encode("latin-1"))
            if answer.status == 204 or request.method == "HEAD":
                return True
            if not answer.drip:
                conn.sendall(answer.body)
                return True
            for start in range(0, len(answer.body), answer.chunk):
                if self._stop.wait(answer.drip):
                    return False
                conn.sendall(answer.body[start : start + answer.chunk])
        except OSError:
            with self._lock:
                self.closed.append(request.target)
            return False
        return True


@contextlib.contextmanager
def upstream_server() -> Iterator[Upstream]:
    server = Upstream()
    try:
        yield server
    finally:
        server.close()
