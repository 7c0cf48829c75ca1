"""Each tool call's steps: the arguments checked, the request built and authenticated, sent within the call's
one deadline (with retries, progress and cancellation), the answer turned into a result (next pages, `fields`,
the result budget) and every secret masked in it. Whatever goes wrong is an `isError` result.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
import warnings
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning

from .auth import SCHEMES, Auth, AuthError
from .catalog import NAME, VERSION, Routes
from .links import result_uri
from .paging import Failed
from .plans import ArgumentError, Route
from .requests import build_request, file_shorthand
from .responses import failure
from .restore import restore
from .settings import ENV_PREFIX, Settings
from .shaping import respond
from .upstream import Reply, Upstream, UpstreamError, fetch_token
from .validation import Validators

if (
    TYPE_CHECKING
):  # for annotations only (.upstream imports httpx itself; .oauth only with OAuth)
    import httpx
    from mcp.server.auth.provider import AccessToken

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


class Calls:
    """What every call of a tool shares: the argument and result checks, the upstream client, credentials, and
    the MCP log level a handshake-era client asked for (logging/setLevel)."""

    def __init__(
        self,
        settings: Settings,
        transport: httpx.AsyncBaseTransport | None,
        routes: Routes,
        schemas: dict[str, dict[str, Any]],
        output_schemas: dict[str, dict[str, Any] | None],
    ) -> None:
        self.settings = settings
        self.routes = routes
        self.inputs = Validators(schemas)
        self.outputs = Validators(output_schemas)
        self.structured = {
            name: schema is not None for name, schema in output_schemas.items()
        }
        self.upstream = Upstream(
            settings, transport, user_agent=f"{NAME}/{VERSION} (mcp-codegen)"
        )
        self.auth = Auth(settings.credentials, self._token, settings.base_url or "")
        self.upstream_credential = None
        if (
            settings.upstream_auth != "static"
        ):  # per caller (HTTP with OAuth only; stdio keeps the environment's)
            from .exchange import UpstreamCredential

            self.upstream_credential = UpstreamCredential(settings, transport)
        self.level: types.LoggingLevel = "warning"

    async def _token(
        self, url: str, form: dict[str, str], user: str, password: str
    ) -> tuple[int, Any]:
        return await fetch_token(self.upstream, url, form, user, password)

    def warm(self) -> None:
        """Compile the argument and result checks (else the first call of each tool compiles its own)."""
        self.inputs.warm()
        self.outputs.warm()

    async def notify(
        self, ctx: ServerRequestContext[Any], level: types.LoggingLevel, data: Any
    ) -> None:
        """An MCP log notification, if the client asked for this level."""
        if ctx.protocol_version not in MODERN and LEVELS.index(level) < LEVELS.index(
            self.level
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

    async def execute(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        route: Route,
        arguments: dict[str, Any],
        caller: AccessToken | None,
        whole: bool = False,
    ) -> tuple[types.CallToolResult, int | str, int]:
        """One call of tool `name`; `whole`: the answer without the result budget (a result link being read)."""
        deadline = (
            time.monotonic() + self.settings.timeout
        )  # the call's one deadline: token, connect, send, answer, retries
        arguments = file_shorthand(route, arguments)
        problems = self.inputs.errors(name, arguments)
        if problems:
            listed = "\n".join(f"- {p}" for p in problems)
            return failure(f"Invalid arguments for {name}:\n{listed}"), "invalid", 0
        if not self.settings.base_url or "://" not in self.settings.base_url:
            message = f"No upstream base URL is configured: set {ENV_PREFIX}_BASE_URL or pass --base-url."
            return failure(message), "unconfigured", 0
        bearer = None
        if self.upstream_credential is not None and caller is not None:
            from .oauth import OAuthError

            try:
                bearer = await self.upstream_credential.bearer(caller)
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
                f"{reason}; retry {attempt} of {self.settings.retries} in {delay:.1f} s"
            )
            await self.notify(
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

        security = self.routes.security(name)
        oauth = any(
            SCHEMES.get(k, {}).get("kind") == "oauth2" for alt in security for k in alt
        )  # a token may be fetched

        async def send(args: dict[str, Any]) -> Reply | Failed:
            """One request of this call (a later page too): built, authenticated, sent within the deadline."""
            try:
                if oauth:
                    with anyio.fail_after(max(deadline - time.monotonic(), 0.001)):
                        request = await self.auth.apply(
                            security,
                            build_request(route, restore(args, route.restore)),
                            bearer,
                        )
                else:  # nothing to wait for
                    request = await self.auth.apply(
                        security,
                        build_request(route, restore(args, route.restore)),
                        bearer,
                    )
            except ArgumentError as exc:
                return Failed(
                    failure(f"Invalid arguments for {name}: {exc}"), "invalid", 0
                )
            except AuthError as exc:
                return Failed(failure(self.auth.redact(str(exc), private)), "auth", 0)
            except TimeoutError:
                message = f"No access token within the total timeout of {self.settings.timeout:g} s."
                return Failed(failure(message), "network", 0)
            try:
                if progress is None:
                    reply = await self.upstream.fetch(request, on_retry, deadline)
                else:
                    work = self.upstream.fetch(request, on_retry, deadline)
                    reply = await with_heartbeat(
                        progress, work, self.settings.progress_interval
                    )
            except UpstreamError as exc:
                return Failed(
                    failure(
                        self.auth.redact(f"{route.method} {route.path}: {exc}", private)
                    ),
                    "network",
                    exc.retries,
                )
            if reply.status == 401 and oauth:
                self.auth.forget_tokens()  # a cached token may have been revoked: fetch a new one next time
            body = self.auth.redact_bytes(
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
            self.routes.shaping(name),
            arguments,
            reply,
            send,
            deadline,
            tokens=self.settings.result_tokens,
            structured=self.structured[name],
            wrap=route.wrap_result,
            check=self.outputs.first_level_failures,
            limit=self.settings.max_response_bytes,
            uri=(
                result_uri(name, arguments)
                if route.method == "GET" and not whole
                else None
            ),
            whole=whole,
        )
        return masked(result, self.auth, private), reply.status, reply.retries


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
