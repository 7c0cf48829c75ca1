"""Runtime settings of the petstore MCP server: defaults < environment < command line.

Every setting is read once, at start-up. Credentials are read too, but a missing one only fails the
calls that need it (with a message naming the variable), never the start-up.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

ENV_PREFIX = "PETSTORE"
DEFAULT_BASE_URL: str | None = "http://petstore.swagger.io/v2"
# seconds per call in all: connecting, sending, the whole answer, retries and their waits
DEFAULT_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = (
    10.0  # seconds to open one connection (within the call's timeout)
)
DEFAULT_RETRIES = (
    2  # extra attempts for idempotent requests on connection errors and 429/502/503/504
)
DEFAULT_BACKOFF = 0.5  # seconds before the first retry (without Retry-After); doubled each time, with jitter
DEFAULT_RATE_LIMIT = 0.0  # requests per second to the API; 0: unlimited
DEFAULT_MAX_CONNECTIONS = 20
DEFAULT_MAX_RESPONSE_BYTES = 1_000_000  # larger bodies are truncated, with a note
DEFAULT_RESULT_TOKENS = 20_000  # a JSON result past about this many tokens (characters / 4) is trimmed; 0: no budget
DEFAULT_PROGRESS_INTERVAL = (
    2.0  # seconds between progress notifications while a call waits; 0: none
)
DEFAULT_LOG_LEVEL = "INFO"
UPSTREAM_AUTH_MODES = (
    "static",
    "exchange",
    "passthrough",
)  # where the API credential of a bearer scheme comes from

# The environment variables holding credentials, one set per security scheme the tools use.
CREDENTIAL_VARIABLES: tuple[str, ...] = (
    "PETSTORE_API_KEY",
    "PETSTORE_PETSTORE_AUTH",
)
OPTIONAL_VARIABLES: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Settings:
    base_url: str | None = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT  # the one deadline of a call
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF
    rate_limit: float = DEFAULT_RATE_LIMIT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    result_tokens: int = DEFAULT_RESULT_TOKENS
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    credentials: Mapping[str, str] = field(
        default_factory=dict
    )  # variable name -> value
    mcp_token: str | None = (
        None  # bearer token required on the HTTP transport's /mcp endpoint
    )
    log_level: str = DEFAULT_LOG_LEVEL
    # HTTP transport as an OAuth resource server (see oauth.py); None: not used
    auth_issuer: str | None = None
    auth_audience: str | None = None  # default: the server's own URL + /mcp
    auth_introspection_url: str | None = None
    auth_scopes: tuple[str, ...] = ()
    upstream_auth: str = "static"  # static | exchange | passthrough
    oauth_client_id: str | None = (
        None  # this server's own OAuth client (token exchange, introspection)
    )
    oauth_client_secret: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the `PETSTORE_*` variables (see the README for the list)."""
        env = os.environ if environ is None else environ
        names = CREDENTIAL_VARIABLES + OPTIONAL_VARIABLES
        return cls(
            base_url=env.get(f"{ENV_PREFIX}_BASE_URL") or DEFAULT_BASE_URL,
            # PREFIX_TOTAL_TIMEOUT: the older name of the same setting, read when PREFIX_TIMEOUT is not set
            timeout=_number(
                env,
                f"{ENV_PREFIX}_TIMEOUT",
                _number(env, f"{ENV_PREFIX}_TOTAL_TIMEOUT", DEFAULT_TIMEOUT),
            ),
            connect_timeout=_number(
                env, f"{ENV_PREFIX}_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT
            ),
            retries=int(
                _number(env, f"{ENV_PREFIX}_RETRIES", DEFAULT_RETRIES, allow_zero=True)
            ),
            backoff=_number(env, f"{ENV_PREFIX}_BACKOFF", DEFAULT_BACKOFF),
            rate_limit=_number(
                env, f"{ENV_PREFIX}_RATE_LIMIT", DEFAULT_RATE_LIMIT, allow_zero=True
            ),
            max_connections=int(
                _number(env, f"{ENV_PREFIX}_MAX_CONNECTIONS", DEFAULT_MAX_CONNECTIONS)
            ),
            max_response_bytes=int(
                _number(
                    env, f"{ENV_PREFIX}_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES
                )
            ),
            result_tokens=int(
                _number(
                    env,
                    f"{ENV_PREFIX}_RESULT_TOKENS",
                    DEFAULT_RESULT_TOKENS,
                    allow_zero=True,
                )
            ),
            progress_interval=_number(
                env,
                f"{ENV_PREFIX}_PROGRESS_INTERVAL",
                DEFAULT_PROGRESS_INTERVAL,
                allow_zero=True,
            ),
            credentials={name: env[name] for name in names if env.get(name)},
            mcp_token=env.get(f"{ENV_PREFIX}_MCP_TOKEN") or None,
            log_level=(env.get(f"{ENV_PREFIX}_LOG_LEVEL") or DEFAULT_LOG_LEVEL).upper(),
            auth_issuer=env.get(f"{ENV_PREFIX}_AUTH_ISSUER") or None,
            auth_audience=env.get(f"{ENV_PREFIX}_AUTH_AUDIENCE") or None,
            auth_introspection_url=env.get(f"{ENV_PREFIX}_AUTH_INTROSPECTION_URL")
            or None,
            auth_scopes=tuple(
                (env.get(f"{ENV_PREFIX}_AUTH_SCOPES") or "").replace(",", " ").split()
            ),
            upstream_auth=upstream_auth(
                env.get(f"{ENV_PREFIX}_UPSTREAM_AUTH") or "static",
                f"{ENV_PREFIX}_UPSTREAM_AUTH",
            ),
            oauth_client_id=env.get(f"{ENV_PREFIX}_OAUTH_CLIENT_ID") or None,
            oauth_client_secret=env.get(f"{ENV_PREFIX}_OAUTH_CLIENT_SECRET") or None,
        )


def upstream_auth(value: str, where: str) -> str:
    if value not in UPSTREAM_AUTH_MODES:
        raise SystemExit(
            f"{where} must be one of {', '.join(UPSTREAM_AUTH_MODES)}, got {value!r}"
        )
    return value


def _number(
    env: Mapping[str, str], key: str, default: float, allow_zero: bool = False
) -> float:
    raw = env.get(key)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{key} must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise SystemExit(
            f"{key} must be {'zero or more' if allow_zero else 'positive'}, got {raw!r}"
        )
    return value
