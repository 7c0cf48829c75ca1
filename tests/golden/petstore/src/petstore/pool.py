"""Pooled connections' liveness checks made cheap. Before reusing an idle connection httpcore asks whether its
socket is readable (the server closed it): for every pooled connection, at each request and answer, through
anyio's typed attributes, which cost more than the poll itself. Here its network backend is wrapped so that the
socket is looked up once per connection and polled directly.
"""

from __future__ import annotations

import select
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only
    import httpx


def cheap_liveness_checks(transport: httpx.AsyncHTTPTransport) -> None:
    """`transport`'s httpcore pool with its network backend wrapped (only when this httpx keeps its pool where
    this expects it; otherwise nothing changes)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if (
        backend is not None
        and callable(getattr(backend, "connect_tcp", None))
        and not isinstance(backend, Backend)
    ):
        setattr(pool, "_network_backend", Backend(backend))


class Backend:
    """httpcore's network backend, its streams wrapped in `Stream`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> Stream:
        return Stream(await self._inner.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Stream:
        return Stream(await self._inner.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class Stream:
    """An httpcore network stream whose "is_readable" polls the socket found when it was opened."""

    __slots__ = ("_inner", "_socket")

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._socket: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = await self._inner.read(max_bytes, timeout)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> Stream:
        return Stream(
            await self._inner.start_tls(ssl_context, server_hostname, timeout)
        )

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return readable(self._socket)
        return self._inner.get_extra_info(info)


def readable(sock: socket.socket) -> bool:
    """Whether a read would return at once (data, or the end: the server closed the connection)."""
    fd = sock.fileno()
    if fd < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        return bool(select.select([sock], [], [], 0)[0])
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))
