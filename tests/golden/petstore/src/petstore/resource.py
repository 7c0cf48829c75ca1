"""The HTTP transport as an OAuth 2.1 resource server (the MCP authorization specification, 2025-06-18 on).

- Protected Resource Metadata (RFC 9728) at /.well-known/oauth-protected-resource and its path form
  /.well-known/oauth-protected-resource/mcp: the resource (`--auth-audience`), the authorization server and the
  scopes; a request without a valid token (oauth.py checks it) gets 401 with
  `WWW-Authenticate: Bearer resource_metadata="..."`.
- Scopes: `--auth-scopes` are needed for every request; a tool whose operation's OAuth2 security lists scopes
  needs them too (any one alternative's), else 403 with `error="insufficient_scope"`: the request body is read
  (up to MAX_BODY) to see which tools it calls, then handed on unchanged.
- The verified token travels with the request (`scope["user"]`, as Starlette's authentication sets it), so a
  tool call knows its caller (`caller()`), for the audit line and the upstream credential.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import cors_middleware
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.routing import Route

from .auth import SCHEMES
from .oauth import Fetcher, Issuer, ResourceConfig, Unavailable, Verifier, config_from
from .settings import Settings

if TYPE_CHECKING:
    from .catalog import Routes

log = logging.getLogger("petstore.oauth")
MAX_BODY = 4_000_000  # bytes of a request body read to find the tool it calls (larger: refused)
WELL_KNOWN = "/.well-known/oauth-protected-resource"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ScopeSets = Callable[
    [str], Sequence[frozenset[str]]
]  # tool name -> alternatives of needed scopes


def caller(request: Any) -> AccessToken | None:
    """The verified access token of the HTTP request behind a tool call (None: stdio, or no OAuth)."""
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    return user.access_token if isinstance(user, AuthenticatedUser) else None


def scope_sets(
    security: Sequence[Mapping[str, Sequence[str]]],
    schemes: Mapping[str, Mapping[str, Any]],
) -> list[frozenset[str]]:
    """The scopes a caller needs for a tool, as alternatives: the OAuth2 scopes of each security requirement.
    [] when no requirement lists any (or one alternative needs none)."""
    sets = []
    for alternative in security:
        needed = frozenset(
            s
            for key, scopes in alternative.items()
            if schemes.get(key, {}).get("kind") == "oauth2"
            for s in scopes
        )
        if not needed:
            return []
        sets.append(needed)
    return sets


def metadata_url(audience: str) -> str:
    """RFC 9728: the metadata's path form, /.well-known/oauth-protected-resource + the resource's path."""
    parts = urlsplit(audience)
    path = parts.path if parts.path != "/" else ""
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}"


def protect(
    app: ASGIApp,
    config: ResourceConfig,
    verifier: Verifier,
    needs: ScopeSets,
    tool_scopes: Sequence[str] = (),
) -> ASGIApp:
    """`app` (the MCP endpoint) as a resource server: metadata routes, token and scope checks. `needs` gives
    the scopes a tool needs; `tool_scopes` are all of them (listed in the metadata's scopes_supported).
    """
    # the URLs as configured (not normalized): issuers compare as exact strings, trailing slash included
    metadata = ProtectedResourceMetadata.model_validate(
        {
            "resource": config.audience,
            "authorization_servers": [config.issuer],
            "scopes_supported": sorted(set(config.scopes) | set(tool_scopes)) or None,
            "resource_name": "Swagger Petstore (MCP)",
        }
    )
    endpoint = cors_middleware(
        ProtectedResourceMetadataHandler(metadata).handle, ["GET", "OPTIONS"]
    )
    # the path form (RFC 9728 section 3.1) and the root form, which some clients try first
    paths = (urlsplit(metadata_url(config.audience)).path, WELL_KNOWN)
    routes = [
        Route(path, endpoint=endpoint, methods=["GET", "OPTIONS"])
        for path in dict.fromkeys(paths)
    ]
    metadata_app = Starlette(routes=routes)
    challenge = f'Bearer resource_metadata="{metadata_url(config.audience)}"'

    async def refuse(
        send: Send, status: int, error: str, description: str, scope: str = ""
    ) -> None:
        header = challenge + (
            f', error="{error}", error_description="{description}"' if error else ""
        )
        if scope:
            header += f', scope="{scope}"'
        body = json.dumps(
            {"error": error or "invalid_request", "error_description": description}
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"www-authenticate", header.encode()),
        ]
        await send(
            {"type": "http.response.start", "status": status, "headers": headers}
        )
        await send({"type": "http.response.body", "body": body})

    async def protected(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["path"] in (WELL_KNOWN, urlsplit(metadata_url(config.audience)).path):
            await metadata_app(scope, receive, send)
            return
        given = (
            dict(scope.get("headers") or [])
            .get(b"authorization", b"")
            .decode("latin-1")
        )
        if not given.lower().startswith("bearer ") or not given[7:].strip():
            await refuse(send, 401, "", "an access token is required")
            return
        try:
            checked = await verifier.check(given[7:].strip())
        except (
            Unavailable
        ) as exc:  # not the caller's fault: 503, so clients retry instead of logging in again
            log.warning("cannot check a token: %s", exc)
            busy = json.dumps(
                {"error": "temporarily_unavailable", "error_description": str(exc)}
            ).encode()
            headers = [(b"content-type", b"application/json"), (b"retry-after", b"5")]
            await send(
                {"type": "http.response.start", "status": 503, "headers": headers}
            )
            await send({"type": "http.response.body", "body": busy})
            return
        if isinstance(checked, str):
            log.info("refused a request to %s: %s", scope["path"], checked)
            await refuse(send, 401, "invalid_token", checked)
            return
        granted = set(checked.scopes)
        missing = [s for s in config.scopes if s not in granted]
        if missing:
            await refuse(
                send,
                403,
                "insufficient_scope",
                "the token lacks a scope",
                " ".join(config.scopes),
            )
            return
        body, receive = await _peek(receive)
        if body is None:
            await refuse(send, 413, "", "the request body is too large")
            return
        for tool in _called_tools(body):
            sets = needs(tool)
            if sets and not any(needed <= granted for needed in sets):
                log.info(
                    "refused tool %s to subject %s: missing scope",
                    tool,
                    printable(checked.subject),
                )
                await refuse(
                    send,
                    403,
                    "insufficient_scope",
                    f"tool {tool} needs another scope",
                    " ".join(sorted(sets[0])),
                )
                return
        scope["user"] = AuthenticatedUser(checked)
        scope["auth"] = AuthCredentials(checked.scopes)
        await app(scope, receive, send)

    return protected


async def _peek(receive: Receive) -> tuple[bytes | None, Receive]:
    """The whole request body (None when over MAX_BODY) and a `receive` that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > MAX_BODY:
            return None, receive
        chunks.append(chunk)
        more = bool(message.get("more_body", False))
    body = b"".join(chunks)
    replayed = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _called_tools(body: bytes) -> list[str]:
    """The tools a JSON-RPC message (or batch) calls; [] for anything else (the MCP layer reports bad JSON)."""
    try:
        data = json.loads(body) if body else None
    except ValueError:
        return []
    messages = data if isinstance(data, list) else [data]
    names = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str):
                names.append(name)
    return names


def printable(text: str | None) -> str:
    """A subject for a log line: printable, no spaces, bounded."""
    if not text:
        return "-"
    return "".join(c if c.isprintable() and not c.isspace() else "?" for c in text)[
        :128
    ]


def resource_server(
    app: ASGIApp,
    settings: Settings,
    audience: str,
    routes: Routes,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ASGIApp:
    """`app` behind `protect`, with the scopes each tool's OAuth2 security lists."""
    config = config_from(settings, audience)
    fetcher = Fetcher(transport)
    needs = {
        name: scope_sets(routes.security(name), SCHEMES) for name in routes.names()
    }
    every = sorted(
        {scope for sets in needs.values() for group in sets for scope in group}
    )
    verifier = Verifier(config, Issuer(config.issuer, fetcher), fetcher)
    return protect(app, config, verifier, lambda name: needs.get(name, []), every)
