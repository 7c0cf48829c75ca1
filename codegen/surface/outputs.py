"""Output schemas: the first 2xx JSON response as an object-rooted schema, and whether the result is wrapped.

An object response schema is used as is (made tolerant of extra and missing properties); anything else is
wrapped as `{"result": ...}`, and the server wraps the response the same way, so structuredContent always
matches. Definitions deeper than `depth` $ref hops are loosened (`budget.loosen`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spec.model import Operation
from ..spec.media import json_media_rank
from .budget import OUTPUT_DEPTH, loosen, prune_defs
from .schemas import SchemaConverter


def build_output(
    op: Operation, converter: SchemaConverter, depth: int | None = OUTPUT_DEPTH
) -> tuple[dict[str, Any] | None, bool]:
    """The output schema (always object-rooted, no required keys at the root) and whether it wraps.

    With `depth`, definitions more than `depth` $ref hops below the root are replaced by their type
    alone (or by {}), and annotations are dropped: the schema gets looser, never stricter, so every
    response that matched the full schema still validates."""
    for response in op.responses:
        if not response.status.startswith("2"):
            continue
        if response.schema is None or response.media_type is None or json_media_rank(response.media_type) > 1:
            return None, False
        schema = converter.convert(response.schema, "output")
        defs = converter.defs("output")
        root = converter.resolve_converted(schema, defs)
        if _plain_object(root):
            out = {k: v for k, v in root.items() if k not in ("required", "additionalProperties", "examples")}
            out["type"] = "object"
            wrap = False
        else:
            out = {"type": "object", "properties": {"result": schema}}
            wrap = True
        if depth is None:
            used = prune_defs(out, defs)
        else:  # a wrapped (array, scalar) result counts from its items, one level down
            out, used = loosen(out, defs, depth + 1 if wrap else depth)
        if used:
            out["$defs"] = used
        return out, wrap
    return None, False


def _plain_object(schema: Mapping[str, Any]) -> bool:
    return (
        schema.get("type") == "object"
        and isinstance(schema.get("properties"), dict)
        and not any(k in schema for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties"))
    )
