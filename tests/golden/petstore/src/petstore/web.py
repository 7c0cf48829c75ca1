"""The streamable HTTP transport: the SDK's stateless app at /mcp behind a health endpoint (GET /healthz)
and a bearer-token guard (the shared MCP token, or OAuth access tokens: resource.py); tools/list answered as
plain JSON, everything else as server-sent events."""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from .catalog import NAME, load_routes, load_tools
from .settings import Settings

if TYPE_CHECKING:  # for annotations only (.upstream imports httpx itself)
    import httpx
    from mcp.server import Server

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def guard(app: ASGIApp, token: str | None, tool_count: int) -> ASGIApp:
    """`app` behind a health endpoint (GET /healthz, no auth) and, with `token`, a bearer-token check."""
    expected = f"Bearer {token}".encode() if token else None

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if scope["path"] == "/healthz":
                body = json.dumps(
                    {"status": "ok", "name": NAME, "tools": tool_count}
                ).encode()
                await _respond(
                    send, 200, body, [(b"content-type", b"application/json")]
                )
                return
            if expected is not None:
                given = dict(scope.get("headers") or []).get(b"authorization", b"")
                if not hmac.compare_digest(given, expected):
                    headers = [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                    ]
                    await _respond(
                        send,
                        401,
                        b'{"error": "missing or wrong bearer token"}',
                        headers,
                    )
                    return
        await app(scope, receive, send)

    return guarded


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


LISTINGS = frozenset({"tools/list"})  # answered as plain JSON, whatever their size
# bytes of a request body read to find its method; a longer one is answered as usual
MAX_PEEK = 1 << 20


def by_method(
    streaming: ASGIApp,
    plain: ASGIApp,
    plain_running: Callable[[], AbstractAsyncContextManager[None]],
) -> ASGIApp:
    """`streaming` (answers as server-sent events: a call's progress and log notifications reach the client
    while it runs), except for the requests in LISTINGS, which `plain` answers as one JSON body: a large API's
    tools/list is megabytes, more than a client takes as one event (the official client: 1 MiB). `plain` is
    the same server with the SDK's JSON responses; its session manager runs while `streaming`'s lifespan does.
    """

    async def routed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async with plain_running():
                await streaming(scope, receive, send)
            return
        if scope["type"] != "http" or scope.get("method") != "POST":
            await streaming(scope, receive, send)
            return
        read: list[MutableMapping[str, Any]] = []
        body = b""
        while len(body) <= MAX_PEEK:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break

        async def replay() -> MutableMapping[str, Any]:
            return read.pop(0) if read else await receive()

        target = plain if _method(body) in LISTINGS else streaming
        await target(scope, replay, send)

    return routed


def _method(body: bytes) -> str | None:
    """The JSON-RPC method of a request body (None for anything else: a batch, a response, not JSON)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested too deep to parse
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


def http_app(
    server: Server[Any],
    settings: Settings,
    host: str = "127.0.0.1",
    port: int = 8000,
    auth_transport: httpx.AsyncBaseTransport | None = None,
) -> ASGIApp:
    """The streamable HTTP app (stateless, at /mcp), guarded: by OAuth access tokens with an issuer configured
    (oauth.py; `auth_transport` replaces the network to it in tests), else by the shared MCP token if set.
    """
    plain = server.streamable_http_app(
        stateless_http=True, json_response=True, host=host
    )
    listing = server.session_manager  # the next app's takes its place on `server`
    app = by_method(
        server.streamable_http_app(stateless_http=True, host=host), plain, listing.run
    )
    tool_count = len(load_tools())
    if settings.auth_issuer:
        from .resource import resource_server

        audience = settings.auth_audience or f"http://{host}:{port}/mcp"
        return guard(
            resource_server(app, settings, audience, load_routes(), auth_transport),
            None,
            tool_count,
        )
    return guard(app, settings.mcp_token, tool_count)
