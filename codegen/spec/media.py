"""Media types and examples: which content a tool sends and expects, and the examples an object carries."""

from __future__ import annotations

from typing import Any


def json_media_rank(media_type: str) -> int:
    """Lower is better: JSON first, then forms, text and binary."""
    base = media_type.split(";")[0].strip().lower()
    if base == "application/json":
        return 0
    if base.endswith("+json") or (base.startswith("application/") and "json" in base):
        return 1
    ranks = {
        "application/x-www-form-urlencoded": 2,
        "multipart/form-data": 3,
        "text/plain": 4,
        "application/octet-stream": 5,
        "*/*": 6,
    }
    return ranks.get(base, 7)


def pick_media_type(content: dict[str, Any]) -> str:
    return min(content, key=lambda m: (json_media_rank(m), m))


def examples(node: dict[str, Any]) -> tuple[Any, ...]:
    """`example`, or the values of `examples` (a map of Example objects), in key order."""
    if "example" in node:
        return (node["example"],)
    examples = node.get("examples")
    if isinstance(examples, dict):
        return tuple(e["value"] for _, e in sorted(examples.items()) if isinstance(e, dict) and "value" in e)
    return ()
