"""Starting local servers in tests: a free port on 127.0.0.1, waiting until a started process listens, and an HTTP
server of the standard library serving in a thread."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(proc: subprocess.Popen[bytes], port: int, timeout: float = 60) -> None:
    """Return once 127.0.0.1:port accepts connections; fail with the process's stderr if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler], poll_interval: float = 0.5) -> Iterator[str]:
    """`handler` served on 127.0.0.1 (a free port) from a thread while the block runs; the block gets the URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
