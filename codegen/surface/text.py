"""Tool text: titles and descriptions built from the operation (summary, description, method and path,
documented failures), and the --compact forms of both."""

from __future__ import annotations

import re
from typing import Any

from ..spec.model import Operation, Response
from . import naming

MAX_ERROR_TEXT = 120  # characters of each failure response's description in the tool description
COMPACT_TEXT = 300  # --compact: characters of the operation description kept in the tool description
MARKDOWN_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")


def title(op: Operation, name: str) -> str:
    """The summary without its final period, else the tool name in words."""
    return op.summary.rstrip(".") or naming.snake_case(name).replace("_", " ").capitalize()


def description(op: Operation, compact: bool = False) -> str:
    """Summary, description, method and path, and the documented failures; `compact`: the summary and
    the description's first paragraph (at most COMPACT_TEXT characters), method and path only."""
    parts = []
    if op.deprecated:
        parts.append("Deprecated.")
    if op.summary:
        parts.append(op.summary)
    if op.description and op.description != op.summary:
        text = op.description
        if compact:
            text = next((p.strip() for p in text.split("\n\n") if p.strip() and p.strip() != op.summary), "")
            if len(text) > COMPACT_TEXT:
                text = text[: COMPACT_TEXT - 1].rstrip() + "…"
        if text:
            parts.append(text)
    parts.append(f"{op.method} {op.path}")
    if compact:
        return MARKDOWN_LINK.sub(r"\1", "\n\n".join(parts))
    failures = [r for r in op.responses if r.status[:1] in "45" or r.status == "DEFAULT"]
    if failures:
        listed = "; ".join(failure(r) for r in failures)
        parts.append(f"Errors: {listed}.")
    return "\n\n".join(parts)


def unlink(node: Any) -> Any:
    """--compact: Markdown links `[text](url)` -> `text` in descriptions (the URLs cost tokens, not meaning)."""
    if isinstance(node, str):
        return MARKDOWN_LINK.sub(r"\1", node)
    if isinstance(node, list):
        return [unlink(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            out[key] = MARKDOWN_LINK.sub(r"\1", value)
        elif key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(value, dict):
            out[key] = {k: unlink(v) for k, v in value.items()}
        elif isinstance(value, (dict, list)) and key not in ("enum", "const", "default", "examples", "required"):
            out[key] = unlink(value)
        else:
            out[key] = value
    return out


def failure(response: Response) -> str:
    text = " ".join(response.description.split())
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 1].rstrip() + "…"
    status = "other" if response.status == "DEFAULT" else response.status
    return f"{status} {text}".strip().rstrip(".")
