"""Swagger Petstore MCP server: 20 tools, each forwarding to one API operation.

The tool definitions (tools.json) and request plans (routes.json) were computed by mcp-codegen from
the OpenAPI document, so start-up only loads them. One shared httpx.AsyncClient, created on the first
call, sends every request.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from importlib.resources import files
from typing import Any

import anyio
import httpx
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext

from .requests import ArgumentError, Request, Route, build_request
from .responses import failure, to_result
from .settings import ENV_PREFIX, Settings

NAME = "petstore"
VERSION = "1.0.0"
log = logging.getLogger(NAME)


def load_tools() -> list[types.Tool]:
    raw = json.loads(
        files(__package__).joinpath("tools.json").read_text(encoding="utf-8")
    )
    return [types.Tool.model_validate(tool) for tool in raw]


def load_routes() -> dict[str, Route]:
    raw = json.loads(
        files(__package__).joinpath("routes.json").read_text(encoding="utf-8")
    )
    return {name: Route.from_json(route) for name, route in raw.items()}


class Upstream:
    """The API behind the tools: one connection pool, created on first use."""

    def __init__(
        self, settings: Settings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.settings = settings
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                base_url=self.settings.base_url or "",
                timeout=self.settings.timeout,
                transport=self._transport,
                follow_redirects=False,
                headers={"User-Agent": f"{NAME}/{VERSION} (mcp-codegen)"},
            )
        return self._client

    async def send(self, request: Request) -> httpx.Response:
        return await self.client().request(
            request.method,
            request.target,
            headers=request.headers,
            content=request.content,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def build_server(
    settings: Settings | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> Server[Any]:
    """The MCP server. `transport` replaces the network (tests pass an httpx.MockTransport)."""
    settings = settings or Settings.from_env()
    tools = load_tools()
    routes = load_routes()
    schemas = {tool.name: tool.input_schema for tool in tools}
    required = {
        tool.name: tuple(tool.input_schema.get("required", ())) for tool in tools
    }
    structured = {tool.name: tool.output_schema is not None for tool in tools}
    upstream = Upstream(settings, transport)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        route = routes.get(params.name)
        if route is None:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}"
            )
        arguments = params.arguments or {}
        missing = [key for key in required[params.name] if arguments.get(key) is None]
        if missing:
            return failure(
                f"Invalid arguments: missing required argument(s): {', '.join(missing)}"
            )
        if not settings.base_url or "://" not in settings.base_url:
            return failure(
                f"No upstream base URL is configured: set {ENV_PREFIX}_BASE_URL or pass --base-url."
            )
        started = time.perf_counter()
        try:
            request = build_request(route, arguments)
            response = await upstream.send(request)
        except ArgumentError as exc:
            return failure(f"Invalid arguments: {exc}")
        except httpx.TimeoutException:
            return failure(
                f"The API did not answer within {settings.timeout:g} s ({route.method} {route.path})."
            )
        except httpx.HTTPError as exc:
            return failure(
                f"Request to the API failed ({route.method} {route.path}): {type(exc).__name__}: {exc}"
            )
        except (
            Exception
        ) as exc:  # never crash the session, never leak a traceback to the client
            log.exception("tool %s failed", params.name)
            return failure(
                f"Internal error while calling {params.name}: {type(exc).__name__}"
            )
        log.info(
            "tool=%s method=%s path=%s status=%s ms=%.1f",
            params.name,
            route.method,
            route.path,
            response.status_code,
            (time.perf_counter() - started) * 1000,
        )
        return to_result(
            response,
            structured=structured[params.name],
            wrap=route.wrap_result,
            limit=settings.max_response_bytes,
        )

    return Server(
        NAME,
        version=VERSION,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=NAME,
        description="MCP server for Swagger Petstore: each API operation is a tool.",
        epilog=(
            "environment: "
            f"{ENV_PREFIX}_BASE_URL (upstream base URL), {ENV_PREFIX}_TIMEOUT (seconds), "
            f"{ENV_PREFIX}_MAX_RESPONSE_BYTES (response size cap)"
        ),
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
        type=float,
        help=f"upstream timeout in seconds (overrides {ENV_PREFIX}_TIMEOUT)",
    )
    parser.add_argument(
        "--log-level", default="WARNING", help="stderr log level (default: WARNING)"
    )
    return parser.parse_args(argv)


def settings_from(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> Settings:
    settings = Settings.from_env(environ)
    return Settings(
        base_url=args.base_url or settings.base_url,
        timeout=args.timeout or settings.timeout,
        max_response_bytes=settings.max_response_bytes,
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(name)s %(levelname)s %(message)s",
    )
    server = build_server(settings_from(args))
    if args.transport == "http":
        import uvicorn

        app = server.streamable_http_app(stateless_http=True, host=args.host)
        uvicorn.run(
            app, host=args.host, port=args.port, log_level=args.log_level.lower()
        )
        return

    async def run_stdio() -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run_stdio)
    except KeyboardInterrupt:
        pass
