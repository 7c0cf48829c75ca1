"""Tool annotations: the behaviour hints each HTTP method implies, and the title."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# method -> (readOnlyHint, destructiveHint, idempotentHint)
HINTS: Mapping[str, tuple[bool, bool, bool]] = {
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "PUT": (False, True, True),
    "DELETE": (False, True, True),
    "POST": (False, False, False),
    "PATCH": (False, False, False),
}


def tool_annotations(method: str, title: str, compact: bool = False) -> dict[str, Any]:
    """The MCP annotations of a tool for `method`; `compact` leaves out the title (the tool's own title says it)."""
    read_only, destructive, idempotent = HINTS.get(method, (False, True, False))
    return {
        **({} if compact else {"title": title}),
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": True,
    }
