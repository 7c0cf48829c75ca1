"""Short, comparable summaries of a JSON schema (its type, its allowed values), for reports on what changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def deref(schema: Any, defs: Mapping[str, Any]) -> Any:
    for _ in range(16):
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/$defs/"):
            schema = defs.get(schema["$ref"][len("#/$defs/") :], {})
        else:
            break
    return schema


def type_of(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> str:
    """A short, comparable summary of a schema's type: `string`, `integer | null`, `array<string>`, `object`."""
    schema = deref(schema, defs)
    if not isinstance(schema, dict) or depth > 4:
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        base = " | ".join(sorted(str(k) for k in kind))
    elif isinstance(kind, str):
        base = kind
    elif any(k in schema for k in ("anyOf", "oneOf")):
        members = schema.get("anyOf") or schema.get("oneOf") or []
        base = " | ".join(sorted({type_of(m, defs, depth + 1) for m in members}))
    elif "allOf" in schema:
        parts = sorted({type_of(m, defs, depth + 1) for m in schema["allOf"]} - {"any"})
        base = parts[0] if len(parts) == 1 else "object" if not parts else _intersection(parts)
    elif "enum" in schema:
        base = " | ".join(sorted({_json_type(v) for v in schema["enum"]}))
    elif "properties" in schema:
        base = "object"
    else:
        base = "any"
    if base == "array" and "items" in schema:
        base = f"array<{type_of(schema['items'], defs, depth + 1)}>"
    return base


def members(summary: str) -> set[str]:
    """The alternatives of a type summary: `null | string` -> {null, string} (`any` accepts everything)."""
    return {summary} if "<" in summary or "&" in summary else set(summary.split(" | "))


def _intersection(parts: Sequence[str]) -> str:
    """allOf of `null | object` and `object` is `object`; members with nothing in common stay `a & b`."""
    if any("<" in part for part in parts):
        return " & ".join(parts)
    common = set.intersection(*(set(part.split(" | ")) for part in parts))
    return " | ".join(sorted(common)) if common else " & ".join(parts)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "any"


def enum_of(schema: Any, defs: Mapping[str, Any]) -> list[Any] | None:
    """The allowed values of a schema (of its items, for an array), or None when any value is allowed."""
    schema = deref(schema, defs)
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    if schema.get("type") == "array" and "items" in schema:
        return enum_of(schema["items"], defs)
    return None
