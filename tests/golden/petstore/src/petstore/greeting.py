"""What a client's opening messages must look like to be answered from handshake.jsonl (handshake.py): shapes the
MCP SDK accepts exactly as they are, so that its answer is the pre-serialized one. Anything else is handed over to
the SDK, which then answers it itself."""

from __future__ import annotations

from typing import Any

MODERN = "2026-07-28"  # the stateless protocol version (server/discover)
META = "io.modelcontextprotocol/"
CAPABILITY_KEYS = frozenset(
    {"roots", "sampling", "elicitation", "experimental", "tasks", "extensions"}
)
INFO_KEYS = frozenset({"name", "version", "title", "description", "websiteUrl"})


def plain_info(value: Any) -> bool:
    """A client's Implementation as the SDK accepts it without question (icons and the like: hand over)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
        and INFO_KEYS.issuperset(value)
        and all(isinstance(v, str) for v in value.values())
    )


def plain_capabilities(value: Any) -> bool:
    """Client capabilities of a plain shape (keys the SDK's models do not know are ignored by them too)."""
    if not isinstance(value, dict):
        return False
    for key, inner in value.items():
        if key not in CAPABILITY_KEYS:
            continue
        if not isinstance(inner, dict) or key == "tasks":
            return False
        if key == "roots" and not all(
            k == "listChanged" and isinstance(v, bool) for k, v in inner.items()
        ):
            return False
        if key in ("sampling", "elicitation") and not all(
            isinstance(v, dict) and not v for v in inner.values()
        ):
            return False
        if key in ("experimental", "extensions") and not all(
            isinstance(v, dict) for v in inner.values()
        ):
            return False
    return True


def modern_envelope(params: Any) -> bool:
    """`params` is exactly a 2026-07-28 request envelope, with nothing else."""
    if (
        not isinstance(params, dict)
        or set(params) != {"_meta"}
        or not isinstance(params["_meta"], dict)
    ):
        return False
    meta = params["_meta"]
    return (
        set(meta)
        == {META + "protocolVersion", META + "clientInfo", META + "clientCapabilities"}
        and meta[META + "protocolVersion"] == MODERN
        and plain_info(meta[META + "clientInfo"])
        and plain_capabilities(meta[META + "clientCapabilities"])
    )


def written_id(value: Any) -> bytes | None:
    """The id as the SDK writes it back, for ids it writes exactly as given (else None: hand over)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value).encode()
    if (
        isinstance(value, str)
        and value.isascii()
        and value.isprintable()
        and '"' not in value
        and "\\" not in value
    ):
        return b'"' + value.encode() + b'"'
    return None
