"""Runtime settings of the petstore MCP server: defaults < environment < command line."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

ENV_PREFIX = "PETSTORE"
DEFAULT_BASE_URL: str | None = "http://petstore.swagger.io/v2"
DEFAULT_TIMEOUT = 30.0  # seconds, for connect, read and write each
DEFAULT_MAX_RESPONSE_BYTES = 1_000_000  # larger bodies are truncated, with a note


@dataclass(frozen=True, slots=True)
class Settings:
    base_url: str | None = DEFAULT_BASE_URL
    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read `PETSTORE_BASE_URL`, `PETSTORE_TIMEOUT` and `PETSTORE_MAX_RESPONSE_BYTES`."""
        env = os.environ if environ is None else environ
        return cls(
            base_url=env.get(f"{ENV_PREFIX}_BASE_URL") or DEFAULT_BASE_URL,
            timeout=_number(env, f"{ENV_PREFIX}_TIMEOUT", DEFAULT_TIMEOUT),
            max_response_bytes=int(
                _number(
                    env, f"{ENV_PREFIX}_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES
                )
            ),
        )


def _number(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{key} must be a number, got {raw!r}") from None
    if value <= 0:
        raise SystemExit(f"{key} must be positive, got {raw!r}")
    return value
