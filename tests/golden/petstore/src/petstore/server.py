"""Swagger Petstore MCP server: 20 tools, each forwarding to one API operation.

The tool definitions (tools.json) and request plans (routes.json, catalog.py) were computed by
mcp-codegen from the OpenAPI document, so start-up only loads them. Here: the MCP requests (tools/list,
tools/call, resources, logging level) and the audit line of each call; each call's own steps are in
calls.py, the command line in cli.py, the HTTP transport in web.py.
Whatever goes wrong is an `isError` result saying what happened; nothing reaches the client as a
traceback, and no secret reaches a result, an error or a log line.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning

from .calls import Calls
from .catalog import NAME, VERSION, load_routes, load_tools
from .links import contents, parse_uri
from .responses import failure
from .settings import Settings

if TYPE_CHECKING:  # for annotations only (.upstream imports httpx itself)
    import httpx
    from mcp.server.auth.provider import AccessToken

WARM_DELAY = 0.5  # seconds after the first tools/list before the argument and result checks are compiled
log = logging.getLogger(NAME)
# Log notifications are still what handshake-era clients (all hosts today) understand.
warnings.filterwarnings(
    "ignore", "The logging capability is deprecated", MCPDeprecationWarning
)
audit = logging.getLogger(NAME + ".audit")


def build_server(
    settings: Settings | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> Server[Any]:
    """The MCP server. `transport` replaces the network (tests pass an httpx.MockTransport)."""
    settings = settings or Settings.from_env()
    for noisy in (
        "httpx",
        "httpcore",
    ):  # they would log request URLs, which may carry an API key
        logging.getLogger(noisy).setLevel(logging.WARNING)
    tools = load_tools()
    routes = load_routes()
    schemas: dict[str, dict[str, Any]] = {
        tool["name"]: tool["inputSchema"] for tool in tools
    }
    output_schemas: dict[str, dict[str, Any] | None] = {
        tool["name"]: tool.get("outputSchema") for tool in tools
    }
    calls = Calls(settings, transport, routes, schemas, output_schemas)
    # The checks are compiled in the background shortly after the first tools/list (while the client reads
    # it), so neither start-up nor the first call waits for them; a call that comes sooner compiles its own.
    warming = threading.Timer(WARM_DELAY, calls.warm)
    warming.daemon = True

    # The result's other fields (caching hints, result type) as the SDK's own model fills them in.
    listing = {
        **types.ListToolsResult(tools=[]).model_dump(
            by_alias=True, mode="json", exclude_none=True
        ),
        "tools": tools,
    }

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        if not warming.is_alive() and not warming.finished.is_set():
            warming.start()
        return listing

    async def set_level(
        ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """Kept for the one client of a stdio server; over HTTP (stateless) answered but not kept: no session
        holds it, and a level kept here would reach this replica's other clients and none of another's.
        """
        if ctx.request is None:
            calls.level = params.level
        return types.EmptyResult()

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        route = routes.get(params.name)
        if route is None:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}"
            )
        started = time.perf_counter()
        status: int | str = "-"
        retries = 0
        caller = (
            caller_of(ctx) if settings.auth_issuer else None
        )  # the verified token (HTTP with OAuth)
        try:
            result, status, retries = await calls.execute(
                ctx, params.name, route, params.arguments or {}, caller
            )
        except (
            Exception
        ) as exc:  # never crash the session, never leak a traceback to the client
            log.error("tool %s failed: %s", params.name, type(exc).__name__)
            log.debug("details", exc_info=True)
            result, status = (
                failure(
                    f"Internal error while calling {params.name}: {type(exc).__name__}"
                ),
                "error",
            )
        elapsed = (time.perf_counter() - started) * 1000
        audit.info(
            "tool=%s method=%s path=%s status=%s ms=%.1f retries=%d subject=%s",
            params.name,
            route.method,
            route.path,
            status,
            elapsed,
            retries,
            (
                printable(caller.subject or caller.client_id)
                if caller is not None
                else "-"
            ),
        )
        if result.is_error:
            block = result.content[0]
            await calls.notify(
                ctx,
                "warning",
                {
                    "tool": params.name,
                    "status": status,
                    "error": getattr(block, "text", "")[:500],
                },
            )
        return result

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[]
        )  # result links are made per call, never listed

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """A result link (links.py): the read-only call it names, run again without the result budget."""
        call = parse_uri(params.uri)
        route = routes.get(call[0]) if call else None
        if call is None or route is None or route.method != "GET":
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown resource: {params.uri[:200]}",
            )
        try:
            result, status, _ = await calls.execute(
                ctx,
                call[0],
                route,
                call[1],
                caller_of(ctx) if settings.auth_issuer else None,
                whole=True,
            )
        except Exception as exc:  # as for tools/call: never a traceback
            log.error("resource %s failed: %s", call[0], type(exc).__name__)
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=f"Internal error while reading {call[0]}",
            ) from None
        audit.info(
            "resource tool=%s method=%s path=%s status=%s",
            call[0],
            route.method,
            route.path,
            status,
        )
        if result.is_error:
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=getattr(result.content[0], "text", "error")[:2000],
            )
        return types.ReadResourceResult(contents=contents(params.uri, result))

    server: Server[Any] = Server(
        NAME,
        version=VERSION,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )
    if (
        not tracing()
    ):  # the SDK's OpenTelemetry span around every message records nothing without a tracer provider
        server.middleware = [
            m
            for m in server.middleware
            if type(m).__name__ != "OpenTelemetryMiddleware"
        ]
    server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    server.add_request_handler(
        "logging/setLevel", types.SetLevelRequestParams, set_level
    )
    server.add_request_handler(
        "resources/list", types.PaginatedRequestParams, list_resources
    )
    server.add_request_handler(
        "resources/read", types.ReadResourceRequestParams, read_resource
    )
    return server


def tracing() -> bool:
    """Whether OpenTelemetry spans can be recorded: a tracer provider is installed, or OTEL_* variables ask
    for one (an auto-instrumentation may install it later)."""
    import os

    from opentelemetry import trace

    installed = not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    return installed or any(key.startswith("OTEL_") for key in os.environ)


def caller_of(ctx: ServerRequestContext[Any]) -> AccessToken | None:
    """The verified access token behind this call (HTTP with OAuth); None on stdio."""
    if ctx.request is None:
        return None
    from .resource import caller

    return caller(ctx.request)


def printable(text: str) -> str:
    """A subject for the audit line: printable, no spaces, bounded."""
    return (
        "".join(c if c.isprintable() and not c.isspace() else "?" for c in text)[:128]
        or "-"
    )
