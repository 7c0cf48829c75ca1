"""Swagger Petstore MCP server: 20 tools, each forwarding to one API operation.

The tool definitions (tools.json) and request plans (routes.json, catalog.py) were computed by
mcp-codegen from the OpenAPI document, so start-up only loads them. The command line is cli.py, the
HTTP transport web.py. One shared httpx.AsyncClient, created on the first
call, sends every request. Each call: arguments checked against the tool's input schema, request
built, credentials applied, request sent (with timeouts and retries), answer turned into a result.
Whatever goes wrong is an `isError` result saying what happened; nothing reaches the client as a
traceback, and no secret reaches a result, an error or a log line.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
import warnings
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning

from .auth import SCHEMES, Auth, AuthError
from .catalog import load_routes, load_tools
from .links import contents, parse_uri, result_uri
from .paging import Failed
from .requests import ArgumentError, Route, build_request, file_shorthand
from .responses import failure
from .restore import restore
from .shaping import respond
from .settings import ENV_PREFIX, Settings
from .upstream import Reply, Upstream, UpstreamError, fetch_token
from .validation import Validators

if (
    TYPE_CHECKING
):  # for annotations only (.upstream imports httpx itself; .oauth only with OAuth)
    import httpx
    from mcp.server.auth.provider import AccessToken

NAME = "petstore"
VERSION = "1.0.0"
WARM_DELAY = 0.5  # seconds after the first tools/list before the argument and result checks are compiled
LEVELS = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
MODERN = (
    "2026-07-28",
)  # protocol versions where the client asks for log levels per request
log = logging.getLogger(NAME)
# Log notifications are still what handshake-era clients (all hosts today) understand.
warnings.filterwarnings(
    "ignore", "The logging capability is deprecated", MCPDeprecationWarning
)
audit = logging.getLogger(NAME + ".audit")


class Progress:
    """Progress notifications for one call (only when the client sent a progressToken)."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self.ctx = ctx
        self.count = 0

    async def step(self, message: str) -> None:
        self.count += 1
        try:
            await self.ctx.session.report_progress(self.count, None, message)
        except Exception:  # a client that went away must not fail the call
            log.debug("progress notification failed", exc_info=True)


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
    structured = {name: schema is not None for name, schema in output_schemas.items()}
    inputs = Validators(schemas)
    outputs = Validators(output_schemas)

    # Compiled in the background shortly after the first tools/list (while the client reads it), so neither
    # start-up nor the first call waits for it; a call that comes sooner compiles them itself.
    def warm() -> None:
        inputs.warm()
        outputs.warm()

    warming = threading.Timer(WARM_DELAY, warm)
    warming.daemon = True
    upstream = Upstream(
        settings, transport, user_agent=f"{NAME}/{VERSION} (mcp-codegen)"
    )

    async def token(
        url: str, form: dict[str, str], user: str, password: str
    ) -> tuple[int, Any]:
        return await fetch_token(upstream, url, form, user, password)

    auth = Auth(settings.credentials, token, settings.base_url or "")
    upstream_credential = None
    if (
        settings.upstream_auth != "static"
    ):  # per caller (HTTP with OAuth only; stdio keeps the environment's)
        from .oauth import UpstreamCredential

        upstream_credential = UpstreamCredential(settings, transport)
    state = {
        "level": "warning"
    }  # MCP log level set by a handshake-era client (logging/setLevel)

    async def notify(
        ctx: ServerRequestContext[Any], level: types.LoggingLevel, data: Any
    ) -> None:
        """An MCP log notification, if the client asked for this level."""
        if ctx.protocol_version not in MODERN and LEVELS.index(level) < LEVELS.index(
            state["level"]
        ):
            return
        try:
            with warnings.catch_warnings():  # deprecated in 2026-07-28, still what today's hosts use
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await ctx.session.send_log_message(
                    level, data, logger=NAME, related_request_id=ctx.request_id
                )
        except Exception:
            log.debug("log notification failed", exc_info=True)

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
        state["level"] = params.level
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
            result, status, retries = await execute(
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
            await notify(
                ctx,
                "warning",
                {
                    "tool": params.name,
                    "status": status,
                    "error": getattr(block, "text", "")[:500],
                },
            )
        return result

    async def execute(
        ctx: ServerRequestContext[Any],
        name: str,
        route: Route,
        arguments: dict[str, Any],
        caller: AccessToken | None,
        whole: bool = False,
    ) -> tuple[types.CallToolResult, int | str, int]:
        """One call of tool `name`; `whole`: the answer without the result budget (a result link being read)."""
        deadline = (
            time.monotonic() + settings.timeout
        )  # the call's one deadline: token, connect, send, answer, retries
        arguments = file_shorthand(route, arguments)
        problems = inputs.errors(name, arguments)
        if problems:
            listed = "\n".join(f"- {p}" for p in problems)
            return failure(f"Invalid arguments for {name}:\n{listed}"), "invalid", 0
        if not settings.base_url or "://" not in settings.base_url:
            message = f"No upstream base URL is configured: set {ENV_PREFIX}_BASE_URL or pass --base-url."
            return failure(message), "unconfigured", 0
        bearer = None
        if upstream_credential is not None and caller is not None:
            from .oauth import OAuthError

            try:
                bearer = await upstream_credential.bearer(caller)
            except OAuthError as exc:
                return (
                    failure(f"No upstream credential for this caller: {exc}"),
                    "auth",
                    0,
                )
        private = [caller.token] if caller is not None else []
        private += [bearer] if bearer else []
        progress = (
            Progress(ctx)
            if ctx.meta and ctx.meta.get("progress_token") is not None
            else None
        )

        async def on_retry(attempt: int, delay: float, reason: str) -> None:
            message = (
                f"{reason}; retry {attempt} of {settings.retries} in {delay:.1f} s"
            )
            await notify(
                ctx,
                "info",
                {
                    "tool": name,
                    "retry": attempt,
                    "reason": reason,
                    "delay": round(delay, 2),
                },
            )
            if progress is not None:
                await progress.step(message)

        security = routes.security(name)
        oauth = any(
            SCHEMES.get(k, {}).get("kind") == "oauth2" for alt in security for k in alt
        )  # a token may be fetched

        async def send(args: dict[str, Any]) -> Reply | Failed:
            """One request of this call (a later page too): built, authenticated, sent within the deadline."""
            try:
                if oauth:
                    with anyio.fail_after(max(deadline - time.monotonic(), 0.001)):
                        request = await auth.apply(
                            security,
                            build_request(route, restore(args, route.restore)),
                            bearer,
                        )
                else:  # nothing to wait for
                    request = await auth.apply(
                        security,
                        build_request(route, restore(args, route.restore)),
                        bearer,
                    )
            except ArgumentError as exc:
                return Failed(
                    failure(f"Invalid arguments for {name}: {exc}"), "invalid", 0
                )
            except AuthError as exc:
                return Failed(failure(auth.redact(str(exc), private)), "auth", 0)
            except TimeoutError:
                message = f"No access token within the total timeout of {settings.timeout:g} s."
                return Failed(failure(message), "network", 0)
            try:
                if progress is None:
                    reply = await upstream.fetch(request, on_retry, deadline)
                else:
                    work = upstream.fetch(request, on_retry, deadline)
                    reply = await with_heartbeat(
                        progress, work, settings.progress_interval
                    )
            except UpstreamError as exc:
                return Failed(
                    failure(
                        auth.redact(f"{route.method} {route.path}: {exc}", private)
                    ),
                    "network",
                    exc.retries,
                )
            if reply.status == 401 and oauth:
                auth.forget_tokens()  # a cached token may have been revoked: fetch a new one next time
            body = auth.redact_bytes(
                reply.body, private
            )  # an API may echo a secret: masked before any cut
            return (
                reply if body is reply.body else dataclasses.replace(reply, body=body)
            )

        reply = await send(arguments)
        if isinstance(reply, Failed):
            return reply.result, reply.status, reply.retries
        # every result goes through respond: next pages, `fields`, `max_items`/`max_pages` and the budget
        result = await respond(
            name,
            routes.shaping(name),
            arguments,
            reply,
            send,
            deadline,
            tokens=settings.result_tokens,
            structured=structured[name],
            wrap=route.wrap_result,
            check=outputs.first_level_failures,
            limit=settings.max_response_bytes,
            uri=(
                result_uri(name, arguments)
                if route.method == "GET" and not whole
                else None
            ),
            whole=whole,
        )
        return masked(result, auth, private), reply.status, reply.retries

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
            result, status, _ = await execute(
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


def masked(
    result: types.CallToolResult, auth: Auth, extra: Sequence[str] = ()
) -> types.CallToolResult:
    """`result` with every configured secret (and `extra`: the caller's tokens) replaced by *** (an API may
    echo a key back)."""
    found = False
    for block in result.content:
        if isinstance(block, types.TextContent):
            redacted = auth.redact(block.text, extra)
            found = found or redacted != block.text
            block.text = redacted
    if found and result.structured_content is not None:
        result.structured_content = json.loads(
            auth.redact(json.dumps(result.structured_content), extra)
        )
    if found and result.meta is not None:  # `next` may travel here
        result.meta = json.loads(auth.redact(json.dumps(result.meta), extra))
    return result


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


async def with_heartbeat(
    progress: Progress, work: Awaitable[Any], interval: float
) -> Any:
    """Await `work`, reporting progress every `interval` seconds while it runs (never when 0)."""
    result: list[Any] = []
    failed: list[Exception] = []

    async def run(scope: anyio.CancelScope) -> None:
        try:
            result.append(await work)
        except Exception as exc:  # re-raised below, not as an exception group
            failed.append(exc)
        scope.cancel()

    async def beat() -> None:
        started = time.monotonic()
        while interval > 0:
            await anyio.sleep(interval)
            await progress.step(
                f"waiting for the API ({round(time.monotonic() - started, 1):g} s)"
            )

    async with anyio.create_task_group() as group:
        group.start_soon(run, group.cancel_scope)
        group.start_soon(beat)
    if failed:
        raise failed[0]
    return result[0]
