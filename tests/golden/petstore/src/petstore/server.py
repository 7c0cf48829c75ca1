"""Swagger Petstore MCP server: 20 tools, each forwarding to one API operation.

The tool definitions (tools.json) and request plans (routes.json) were computed by mcp-codegen from
the OpenAPI document, so start-up only loads them. One shared httpx.AsyncClient, created on the first
call, sends every request. Each call: arguments checked against the tool's input schema, request
built, credentials applied, request sent (with timeouts and retries), answer turned into a result.
Whatever goes wrong is an `isError` result saying what happened; nothing reaches the client as a
traceback, and no secret reaches a result, an error or a log line.
"""

from __future__ import annotations

import argparse
import dataclasses
import hmac
import json
import logging
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from importlib.resources import files
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning

from .auth import SCHEMES, Auth, AuthError, Security
from .links import contents, parse_uri, result_uri
from .paging import Failed, Shaping
from .requests import ArgumentError, Route, build_request, file_shorthand
from .responses import failure
from .restore import restore
from .shaping import respond
from .settings import (
    CREDENTIAL_VARIABLES,
    DEFAULT_RESULT_TOKENS,
    DEFAULT_TIMEOUT,
    ENV_PREFIX,
    OPTIONAL_VARIABLES,
    Settings,
)
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


def load_tools() -> list[dict[str, Any]]:
    """The tools exactly as tools/list sends them. They are served as parsed: the SDK validates the
    tools/list result against the client's protocol version anyway, so building `types.Tool` models
    first would only validate and serialize the same data twice."""
    tools: list[dict[str, Any]] = json.loads(
        files(__package__).joinpath("tools.json").read_text(encoding="utf-8")
    )
    return tools


class Routes:
    """The request plans (routes.json), read at the first call and built per tool on its first use:
    start-up and tools/list do not need them."""

    def __init__(self) -> None:
        self._raw: dict[str, Any] | None = None
        self._built: dict[str, Route] = {}
        self._shaping: dict[str, Shaping] = {}

    def _load(self) -> dict[str, Any]:
        if self._raw is None:
            self._raw = json.loads(
                files(__package__).joinpath("routes.json").read_text(encoding="utf-8")
            )
        return self._raw

    def security(self, name: str) -> Security:
        """The tool's security requirements: alternatives of schemes -> scopes ([]: none)."""
        raw = self._load().get(name)
        return (raw.get("security") or []) if raw else []

    def names(self) -> list[str]:
        return list(self._load())

    def shaping(self, name: str) -> Shaping:
        """How the tool's JSON results are shaped (next pages, projection, budget)."""
        shaping = self._shaping.get(name)
        if shaping is None:
            raw = self._load().get(name)
            shaping = Shaping.from_json(raw.get("results") if raw else None)
            if raw is not None:
                self._shaping[name] = shaping
        return shaping

    def get(self, name: str) -> Route | None:
        route = self._built.get(name)
        if route is None:
            raw = self._load().get(name)
            if raw is None:
                return None
            route = self._built[name] = Route.from_json(raw)
        return route


def load_routes() -> Routes:
    return Routes()


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


# -- HTTP transport -------------------------------------------------------------------------------
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
    app = server.streamable_http_app(stateless_http=True, host=host)
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


# -- command line ---------------------------------------------------------------------------------
def environment_help() -> str:
    lines = [
        "environment variables:",
        f"  {ENV_PREFIX}_BASE_URL            upstream API base URL",
        f"  {ENV_PREFIX}_TIMEOUT             seconds per call in all: connecting, sending, the whole answer,",
        f"                                   retries and their waits (default {DEFAULT_TIMEOUT:g})",
        f"  {ENV_PREFIX}_TOTAL_TIMEOUT       older name of {ENV_PREFIX}_TIMEOUT (read when that is not set)",
        f"  {ENV_PREFIX}_CONNECT_TIMEOUT     seconds to open one connection, within the call's timeout (default 10)",
        f"  {ENV_PREFIX}_RETRIES             retries of idempotent requests (default 2)",
        f"  {ENV_PREFIX}_BACKOFF             seconds before the first retry, doubled each time (default 0.5)",
        f"  {ENV_PREFIX}_RATE_LIMIT          requests per second to the API (default 0: no limit)",
        f"  {ENV_PREFIX}_MAX_CONNECTIONS     requests in flight at once, and pooled connections (default 20)",
        f"  {ENV_PREFIX}_MAX_RESPONSE_BYTES  size cap of a result's text, in UTF-8 bytes (default 1000000)",
        f"  {ENV_PREFIX}_RESULT_TOKENS       tokens (characters / 4) a JSON result may take before it is trimmed",
        f"                                   to whole items (default {DEFAULT_RESULT_TOKENS}; 0: no budget)",
        f"  {ENV_PREFIX}_PROGRESS_INTERVAL   seconds between progress notifications of a waiting call (default 2; 0: none)",
        f"  {ENV_PREFIX}_LOG_LEVEL           stderr log level (default INFO: one audit line per call)",
        f"  {ENV_PREFIX}_MCP_TOKEN           bearer token required by --transport http (the simple option)",
        f"  {ENV_PREFIX}_AUTH_ISSUER         --auth-issuer: OAuth authorization server whose tokens are accepted",
        f"  {ENV_PREFIX}_AUTH_AUDIENCE       --auth-audience: this server's resource URL (the tokens' aud)",
        f"  {ENV_PREFIX}_AUTH_INTROSPECTION_URL  --auth-introspection-url: RFC 7662 endpoint for opaque tokens",
        f"  {ENV_PREFIX}_AUTH_SCOPES         --auth-scopes: scopes every call needs",
        f"  {ENV_PREFIX}_UPSTREAM_AUTH       --upstream-auth: static (default), exchange or passthrough",
        f"  {ENV_PREFIX}_OAUTH_CLIENT_ID     this server's own OAuth client (token exchange, introspection)",
        f"  {ENV_PREFIX}_OAUTH_CLIENT_SECRET its secret",
    ]
    if CREDENTIAL_VARIABLES:
        lines += [
            "credentials (SCHEME: the security scheme's key, upper-cased, other characters as _):",
            f"  {ENV_PREFIX}_<SCHEME>: a key or token; {ENV_PREFIX}_<SCHEME>_USERNAME and _PASSWORD: HTTP basic;",
            f"  {ENV_PREFIX}_<SCHEME>_CLIENT_ID and _CLIENT_SECRET: OAuth2 client credentials. This API's:",
        ]
        for key, scheme in SCHEMES.items():
            variables = " + ".join(
                v for k, v in scheme["env"].items() if k in ("username", "password")
            )
            if not variables:
                variables = scheme["env"].get("token", "(not supported)")
                if "client_id" in scheme["env"]:
                    variables += f", or {scheme['env']['client_id']} + {scheme['env']['client_secret']}"
            lines.append(
                f"  {variables}  ({key}: {scheme['type']} {scheme['scheme'] or scheme['in']})".rstrip()
            )
        for variable in OPTIONAL_VARIABLES:
            lines.append(f"  {variable}  (optional: overrides the token URL)")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=NAME,
        description="MCP server for Swagger Petstore: each API operation is a tool.",
        epilog=environment_help().replace("%", "%%"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="default: stdio"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="HTTP bind address (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="HTTP port (default: 8000)"
    )
    parser.add_argument(
        "--base-url", help=f"upstream API base URL (overrides {ENV_PREFIX}_BASE_URL)"
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        help="seconds per call in all: connecting, sending, the whole answer, retries and their waits "
        f"(overrides {ENV_PREFIX}_TIMEOUT; default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--result-tokens",
        type=_tokens,
        help="tokens (characters / 4) a JSON result may take before it is trimmed "
        f"(overrides {ENV_PREFIX}_RESULT_TOKENS; default {DEFAULT_RESULT_TOKENS}; 0: no budget)",
    )
    parser.add_argument(
        "--log-level",
        help=f"stderr log level (overrides {ENV_PREFIX}_LOG_LEVEL; default INFO)",
    )
    oauth = parser.add_argument_group(
        "OAuth (HTTP transport; each option has its environment twin)"
    )
    oauth.add_argument(
        "--auth-issuer",
        help=f"accept access tokens of this authorization server ({ENV_PREFIX}_AUTH_ISSUER)",
    )
    oauth.add_argument(
        "--auth-audience",
        help=f"this server's resource URL, the tokens' aud (default: its URL + /mcp; {ENV_PREFIX}_AUTH_AUDIENCE)",
    )
    oauth.add_argument(
        "--auth-introspection-url",
        help=f"RFC 7662 endpoint for opaque tokens ({ENV_PREFIX}_AUTH_INTROSPECTION_URL)",
    )
    oauth.add_argument(
        "--auth-scopes",
        help=f"scopes every call needs, space-separated ({ENV_PREFIX}_AUTH_SCOPES)",
    )
    oauth.add_argument(
        "--upstream-auth",
        choices=("static", "exchange", "passthrough"),
        help=f"API credential of bearer schemes: the environment's (static, default), the caller's token exchanged "
        f"(RFC 8693), or the caller's token as is (passthrough: see the README) ({ENV_PREFIX}_UPSTREAM_AUTH)",
    )
    return parser.parse_args(argv)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds, got {text!r}"
        )
    return value


def _tokens(text: str) -> int:
    if not text.isdigit() or len(text) > 12:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of tokens (0: no budget), got {text!r}"
        )
    return int(text)


def settings_from(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> Settings:
    from dataclasses import replace

    settings = Settings.from_env(environ)
    return replace(
        settings,
        base_url=args.base_url or settings.base_url,
        timeout=args.timeout or settings.timeout,
        result_tokens=(
            settings.result_tokens if args.result_tokens is None else args.result_tokens
        ),
        log_level=(args.log_level or settings.log_level).upper(),
        auth_issuer=args.auth_issuer or settings.auth_issuer,
        auth_audience=args.auth_audience or settings.auth_audience,
        auth_introspection_url=args.auth_introspection_url
        or settings.auth_introspection_url,
        auth_scopes=(
            tuple(args.auth_scopes.replace(",", " ").split())
            if args.auth_scopes
            else settings.auth_scopes
        ),
        upstream_auth=args.upstream_auth or settings.upstream_auth,
    )


def check_oauth(settings: Settings) -> None:
    """Refuse OAuth settings that cannot work together; warn about the risky ones."""
    if settings.upstream_auth != "static" and not settings.auth_issuer:
        raise SystemExit(
            f"--upstream-auth {settings.upstream_auth} needs --auth-issuer (callers' tokens come from it)"
        )
    if settings.upstream_auth == "exchange" and not (
        settings.oauth_client_id and settings.oauth_client_secret
    ):
        raise SystemExit(
            f"--upstream-auth exchange needs {ENV_PREFIX}_OAUTH_CLIENT_ID and {ENV_PREFIX}_OAUTH_CLIENT_SECRET"
        )
    if settings.upstream_auth == "passthrough":
        log.warning(
            "--upstream-auth passthrough: callers' access tokens are forwarded to the API unchanged. The MCP "
            "specification forbids this by default (token passthrough): the API must itself accept tokens issued "
            "for this server, and a token leaked here works there too"
        )
    if settings.auth_issuer and settings.mcp_token:
        log.warning(
            "%s_MCP_TOKEN is ignored: with --auth-issuer only access tokens of the issuer are accepted",
            ENV_PREFIX,
        )


def configure_logging(level: str) -> None:
    """Everything to stderr; this server's own lines at `level`, libraries at WARNING."""
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="%(name)s %(levelname)s %(message)s",
    )
    # the format shows no caller, thread or process: not looked up for every line (the logging HOWTO's "Optimization")
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    try:
        log.setLevel(level)
    except ValueError:
        raise SystemExit(
            f"unknown log level {level!r} (use DEBUG, INFO, WARNING or ERROR)"
        ) from None


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    settings = settings_from(args)
    configure_logging(settings.log_level)
    server = build_server(settings)
    if args.transport == "http":
        import uvicorn

        check_oauth(settings)
        if (
            args.host not in ("127.0.0.1", "localhost", "::1")
            and not settings.mcp_token
            and not settings.auth_issuer
        ):
            log.warning(
                "serving on %s without %s_MCP_TOKEN: anyone who can reach it can call the API",
                args.host,
                ENV_PREFIX,
            )
        app = http_app(server, settings, args.host, args.port)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
        return

    async def run_stdio() -> None:
        from mcp.server.stdio import stdio_server

        from .stdio import event_loop_stdio

        async with event_loop_stdio() as pipes:
            stdin, stdout = pipes or (None, None)
            async with stdio_server(stdin, stdout) as (read, write):
                await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(
            run_stdio, backend_options={"use_uvloop": find_spec("uvloop") is not None}
        )
    except KeyboardInterrupt:
        pass
