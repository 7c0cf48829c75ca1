"""The environment variables a generated server reads: its own settings and one set per security scheme.

One rule names a scheme's variables: `<PREFIX>_<SCHEME>` (+ `_USERNAME`/`_PASSWORD`, `_CLIENT_ID`/`_CLIENT_SECRET`,
`_TOKEN_URL`), SCHEME the scheme's key upper-cased with other characters as `_`. A scheme whose variables would
be one of the server's own (a scheme called `oauth` would read `<PREFIX>_OAUTH_CLIENT_ID`, which is this server's
own OAuth client) or another scheme's is named `<PREFIX>_SCHEME_<SCHEME>` instead (then numbered).
The list feeds the generated README and `.env.example`, and the generator prints it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..pipeline import Result

# the server's own variables (after `<PREFIX>_`) and what each one sets
SERVER_VARIABLES: tuple[tuple[str, str], ...] = (
    ("BASE_URL", "upstream API base URL"),
    ("TIMEOUT", "seconds per call in all: connect, send, the whole answer, retries and their waits"),
    ("CONNECT_TIMEOUT", "seconds to open one connection, within the call's timeout (default 10)"),
    ("TOTAL_TIMEOUT", "older name of TIMEOUT, read when TIMEOUT is not set"),
    ("RETRIES", "retries of idempotent requests (default 2)"),
    ("BACKOFF", "seconds before the first retry, doubled each time (default 0.5)"),
    ("RATE_LIMIT", "requests per second to the API (default 0: no limit)"),
    ("MAX_CONNECTIONS", "requests in flight at once, and pooled connections (default 20)"),
    ("MAX_RESPONSE_BYTES", "response size cap (default 1000000)"),
    ("RESULT_TOKENS", "tokens (characters / 4) a JSON result may take before it is trimmed (default 20000; 0: none)"),
    ("PROGRESS_INTERVAL", "seconds between progress notifications of a waiting call (default 2; 0: none)"),
    ("LOG_LEVEL", "stderr log level (default INFO: one audit line per call)"),
    ("MCP_TOKEN", "a shared bearer token required by --transport http (the simple option)"),
    ("AUTH_ISSUER", "HTTP: OAuth authorization server (issuer URL) whose access tokens are accepted"),
    ("AUTH_AUDIENCE", "HTTP: this server's canonical resource URL, the tokens' audience (default: its own URL)"),
    ("AUTH_INTROSPECTION_URL", "HTTP: RFC 7662 introspection endpoint for opaque tokens"),
    ("AUTH_SCOPES", "HTTP: scopes every call needs (space-separated)"),
    ("UPSTREAM_AUTH", "HTTP: upstream credentials: static (default), exchange or passthrough"),
    ("OAUTH_CLIENT_ID", "HTTP: this server's own OAuth client (token exchange, introspection)"),
    ("OAUTH_CLIENT_SECRET", "HTTP: this server's own OAuth client secret"),
)
SCHEME_SUFFIXES = ("", "_USERNAME", "_PASSWORD", "_CLIENT_ID", "_CLIENT_SECRET", "_TOKEN_URL")


def upper(key: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", key.upper())


def server_variables(prefix: str) -> list[tuple[str, str]]:
    return [(f"{prefix}_{suffix}", meaning) for suffix, meaning in SERVER_VARIABLES]


def scheme_base(prefix: str, key: str, taken: set[str]) -> str:
    """The base variable name of scheme `key`, unused by the server and by the schemes named before
    (their names are in `taken`, which this adds to)."""
    reserved = {name for name, _ in server_variables(prefix)}
    candidates = [f"{prefix}_{upper(key)}", f"{prefix}_SCHEME_{upper(key)}"]
    candidates += (f"{prefix}_SCHEME_{upper(key)}_{n}" for n in range(2, 100))
    for base in candidates:
        names = {base + suffix for suffix in SCHEME_SUFFIXES}
        if not names & (reserved | taken):
            taken.update(names)
            return base
    raise ValueError(f"no free variable name for security scheme {key!r}")  # 100 schemes of one key: impossible


def scheme_variables(schemes: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(variable, what it holds) for the schemes as render.security_schemes describes them."""
    rows: list[tuple[str, str]] = []
    for scheme in schemes:
        env: Mapping[str, str] = scheme["env"]
        what = f"{scheme['key']}: {scheme['type']} {scheme['scheme'] or scheme['in']}".rstrip()
        meanings = {
            "token": "a ready token" if scheme["kind"] == "oauth2" else "the key or token",
            "username": "HTTP basic user name",
            "password": "HTTP basic password",
            "client_id": "OAuth2 client credentials: client id",
            "client_secret": "OAuth2 client credentials: client secret",
        }
        rows += [(variable, f"{meanings[field]} ({what})") for field, variable in env.items()]
        if "client_id" in env:
            rows.append((env["token"] + "_TOKEN_URL", f"optional: overrides the token URL ({what})"))
    return rows


def all_variables(prefix: str, schemes: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return scheme_variables(schemes) + server_variables(prefix)


def environment_summary(result: Result) -> str:
    """What the generator prints after writing: the credential variables of this API, then the server's own."""
    from .render import security_schemes  # the pipeline's Result carries what render was given

    assert result.api is not None and result.project is not None
    schemes = security_schemes(result.api, result.tools, result.project)
    credentials = scheme_variables(schemes)
    lines = ["The server reads these environment variables (all listed in README.md and .env.example):"]
    if credentials:
        lines += [f"  {name:<34} {meaning}" for name, meaning in credentials]
    else:
        lines.append("  (no credentials: the API's operations declare no security this server can send)")
    own = ", ".join(
        name.removeprefix(result.project.env_prefix + "_") for name, _ in server_variables(result.project.env_prefix)
    )
    lines.append(f"  and its own settings {result.project.env_prefix}_*: {own}")
    return "\n".join(lines) + "\n"
