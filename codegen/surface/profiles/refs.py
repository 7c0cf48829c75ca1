"""`$ref` inlining for clients that take no references (Gemini) or whose arguments the server must walk
along a finite tree (OpenAI strict: the nulls it maps back to "absent" sit at known paths).

Every `#/$defs/...` reference is replaced by a copy of its definition (keywords written next to the `$ref`,
such as a description, win). A reference is cut to a *loosened* node (the definition's type and its
description, nothing nested) when it is recursive (the definition is already being expanded on this
path), when INLINE_DEPTH definitions are already open on this path, or when the tool's schema has
grown past MAX_NODES nodes. The shaping step turns a loosened object into JSON text the server decodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...problems import unescape

INLINE_DEPTH = 5  # definitions expanded inside one another along one path
MAX_NODES = 5_000  # schema nodes one tool's input schema may grow to by inlining
CUT_NOTE = "(nested structure not shown)"
MAX_LEVEL = 200  # nested schemas followed; deeper ones are loosened

SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)


class Inliner:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.nodes = 0
        self.cuts = 0
        self.level = 0

    def schema(self, node: Any, stack: tuple[str, ...] = ()) -> Any:
        if not isinstance(node, Mapping):
            return node
        self.nodes += 1
        self.level += 1
        try:
            if self.level > MAX_LEVEL:  # bounded recursion, whatever the schema
                self.cuts += 1
                return loosened(node, {})
            return self._schema(node, stack)
        finally:
            self.level -= 1

    def _schema(self, node: Mapping[str, Any], stack: tuple[str, ...]) -> Any:
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, node, stack)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key in SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {k: self.schema(v, stack) for k, v in value.items()}
            elif key in SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.schema(v, stack) for v in value]
            elif key in SCHEMA_ONE:
                out[key] = self.schema(value, stack)
            else:
                out[key] = value
        return out

    def _ref(self, ref: str, node: Mapping[str, Any], stack: tuple[str, ...]) -> Any:
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        name = unescape(ref[len("#/$defs/") :]) if ref.startswith("#/$defs/") else None
        target = self.defs.get(name) if name is not None else None
        if not isinstance(target, Mapping):
            self.cuts += 1
            return {**self.schema(siblings, stack), "description": _note(siblings.get("description"))}
        assert name is not None
        if name in stack or len(stack) >= INLINE_DEPTH or self.nodes >= MAX_NODES:
            self.cuts += 1
            return loosened(target, siblings)
        expanded = self.schema(target, (*stack, name))
        rest = self.schema(siblings, stack)
        if isinstance(expanded, Mapping):
            return {**expanded, **rest}
        return rest or expanded  # a boolean definition


def loosened(target: Mapping[str, Any], siblings: Mapping[str, Any]) -> dict[str, Any]:
    """The definition's type (object when it has none) and its description, with a note."""
    kind = target.get("type")
    out: dict[str, Any] = {"type": kind if isinstance(kind, (str, list)) else "object"}
    text = siblings.get("description", target.get("description"))
    out["description"] = _note(text if isinstance(text, str) else None)
    return out


def _note(text: str | None) -> str:
    return f"{text} {CUT_NOTE}" if text else CUT_NOTE


def inline_refs(schema: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """The schema without `$ref`/`$defs`; and how many references were cut to loosened nodes."""
    defs = schema.get("$defs")
    inliner = Inliner(defs if isinstance(defs, Mapping) else {})
    result = inliner.schema(schema)
    return (dict(result) if isinstance(result, Mapping) else {"type": "object"}), inliner.cuts
