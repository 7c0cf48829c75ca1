"""Tool annotations: the behaviour hints each HTTP method implies, and the title.

A POST whose operationId or summary says it deletes, removes, cancels, revokes, voids or destroys
something is destructive too (`POST /invoices/{id}/void`). Config overrides and `x-mcp-annotations`
still win (select.apply_overrides). The listing leaves out hints equal to their MCP default, and on a read-only
tool the two hints MCP declares meaningful only when a tool is not read-only, when they say what reading implies
(`listed`); `implied` puts them back."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..spec.model import Operation
from . import naming

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
# the MCP defaults a listing can leave out without changing what a client is told; destructiveHint is always
# sent (a client that wrongly assumed `false` for a missing one would under-warn)
LISTED_DEFAULTS: Mapping[str, bool] = {"readOnlyHint": False, "idempotentHint": False, "openWorldHint": True}
# what a read-only tool implies (MCP: destructiveHint and idempotentHint mean something only when readOnlyHint is
# false); left out of the listing for read-only tools, ~13 tokens each on hundreds of GET tools
READ_ONLY_IMPLIES: Mapping[str, bool] = {"destructiveHint": False, "idempotentHint": True}
DESTRUCTIVE_WORDS = frozenset(
    "delete deletes remove removes cancel cancels revoke revokes void voids destroy destroys".split()
)


def says_destructive(op: Operation) -> bool:
    """The operationId or the summary names a destructive action (whole words: "avoid" is not "void")."""
    words = naming.snake_case(op.operation_id or "").split("_") + re.findall(r"[a-z]+", op.summary.lower())
    return any(word in DESTRUCTIVE_WORDS for word in words)


def tool_annotations(op: Operation, title: str) -> dict[str, Any]:
    """The MCP annotations of the tool for `op`; every tool has its title here too."""
    read_only, destructive, idempotent = HINTS.get(op.method, (False, True, False))
    if op.method == "POST" and says_destructive(op):
        destructive = True
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": True,
    }


def _defaults(read_only: bool) -> Mapping[str, bool]:
    return {**LISTED_DEFAULTS, **READ_ONLY_IMPLIES} if read_only else LISTED_DEFAULTS


def listed(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """The annotations as tools/list sends them: hints equal to their MCP default are left out, and so are, on a
    read-only tool, a destructiveHint false and an idempotentHint true (what reading implies)."""
    defaults = _defaults(annotations.get("readOnlyHint") is True)
    return {k: v for k, v in annotations.items() if k not in defaults or defaults[k] is not v}


def implied(listed_annotations: Mapping[str, Any]) -> dict[str, Any]:
    """The annotations a listing stands for (`listed` undone): every hint it left out, at the value it implies."""
    return {**_defaults(listed_annotations.get("readOnlyHint") is True), **listed_annotations}
