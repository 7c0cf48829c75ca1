"""The command line: arguments and environment, logging set-up, and main() serving over stdio or HTTP."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping, Sequence
from importlib.util import find_spec

import anyio

from .auth import SCHEMES
from .catalog import NAME
from .server import build_server
from .settings import (
    CREDENTIAL_VARIABLES,
    DEFAULT_RESULT_TOKENS,
    DEFAULT_TIMEOUT,
    ENV_PREFIX,
    OPTIONAL_VARIABLES,
    Settings,
)
from .web import http_app

log = logging.getLogger(NAME)


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
