"""Schema rewriting for the lossy dialects: Gemini's OpenAPI 3.0 subset and OpenAI's strict mode.

`Shaper.shape` walks an input schema (already without `$ref`, see refs.py) and returns the rewritten
schema and a *restore* tree: what the generated server undoes before building the request.

Both dialects:
- `const: x` -> `enum: [x]`; `oneOf` -> `anyOf`; `allOf` members merged into one schema; `not` dropped;
- a type list -> one type (plus null) or an `anyOf` of one branch per type;
- a value of any type, or an object that declares no properties (a free-form map), cannot be written in
  either subset: it becomes a string holding JSON text, and the server decodes it (restore `json`).
Gemini: null as `nullable: true`; only the keywords of its Schema object; enum values as strings (others are
listed in the description instead); formats it does not know moved into the description.
OpenAI strict: every object lists all its properties in `required` and has `additionalProperties: false`;
an optional property becomes nullable and the server drops the null it receives (restore `absent`);
keywords outside strict mode's subset are dropped (a default is kept in the description, base64 content
encoding becomes a pattern); objects nested
deeper than STRICT_DEPTH become JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .refs import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_ONE
from .rules import GEMINI_FORMATS, GEMINI_KEYS, STRICT_DEPTH, STRICT_FORMATS, STRICT_KEYS

Restore = dict[str, Any]  # {"absent": True, "json": True, "properties": {key: Restore}, "items": Restore}

TYPES = ("string", "integer", "number", "boolean", "array", "object")
BY_TYPE = {
    "object": ("properties", "required", "additionalProperties", "minProperties", "maxProperties"),
    "array": ("items", "minItems", "maxItems"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"),
    "boolean": (),
}
JSON_TEXT = "JSON text"
BASE64 = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"  # exactly the base64 alphabet and padding
MAX_MERGE = 20  # allOf members merged per node
MAX_LEVEL = 200  # nested schemas followed; deeper ones become JSON text


class Shaper:
    def __init__(self, gemini: bool, strict: bool) -> None:
        self.gemini = gemini
        self.strict = strict
        self.level = 0

    def root(self, schema: Mapping[str, Any]) -> tuple[dict[str, Any], Restore]:
        shaped, restore = self.shape(schema, 1, root=True)
        shaped["type"] = "object"
        return shaped, restore

    def shape(self, node: Any, depth: int, root: bool = False) -> tuple[dict[str, Any], Restore]:
        self.level += 1
        try:
            if self.level > MAX_LEVEL:  # schemas are bounded upstream; this keeps the recursion bounded anyway
                return self._json_text({}), {"json": True}
            return self._shape(node, depth, root)
        finally:
            self.level -= 1

    def _shape(self, node: Any, depth: int, root: bool) -> tuple[dict[str, Any], Restore]:
        node = self._normal(node)
        nullable = node.pop("__null", False)
        kind = node.get("type")
        if "anyOf" in node:
            shaped, restore = self._any_of(node, depth)
        elif kind == "object" and (root or self._has_shape(node)) and not (self.strict and depth > STRICT_DEPTH):
            shaped, restore = self._object(node, depth, root)
        elif kind in TYPES and kind != "object":
            shaped, restore = self._scalar(node, depth)
        else:
            shaped, restore = self._json_text(node), {"json": True}
        if nullable:
            shaped = self.nullable(shaped)
        return shaped, restore

    # -- normalizing ---------------------------------------------------------------------------------------

    def _normal(self, node: Any) -> dict[str, Any]:
        """One plain dict: const as enum, oneOf as anyOf, allOf merged, null pulled out into `__null`."""
        out: dict[str, Any] = dict(node) if isinstance(node, Mapping) else {}
        for _ in range(MAX_MERGE):
            members = out.pop("allOf", None)
            if not isinstance(members, list):
                break
            for member in members:
                for key, value in (member.items() if isinstance(member, Mapping) else ()):
                    if key == "properties" and isinstance(value, Mapping):
                        base = out.get("properties")
                        out["properties"] = {**(base if isinstance(base, Mapping) else {}), **value}
                    elif key == "required" and isinstance(value, list):
                        base = out.get("required")
                        names = [*(base if isinstance(base, list) else []), *value]
                        out["required"] = list(dict.fromkeys(k for k in names if isinstance(k, str)))
                    else:
                        out.setdefault(key, value)
        out.pop("allOf", None)
        out.pop("not", None)
        if "const" in out:
            out["enum"] = [out.pop("const")]
        if "oneOf" in out:
            out["anyOf"] = [*out.get("anyOf", []), *out.pop("oneOf")] if isinstance(out["oneOf"], list) else []
        null = out.pop("nullable", False) is True
        kind = out.get("type")
        if isinstance(kind, list):
            null = null or "null" in kind
            kinds = [k for k in kind if k in TYPES]
            if len(kinds) == 1:
                out["type"] = kinds[0]
            else:
                out.pop("type")
                if kinds:
                    out["anyOf"] = [self._branch(out, k) for k in kinds]
        elif kind == "null":
            out.pop("type")
            null = True
        if isinstance(out.get("enum"), list) and None in out["enum"]:
            null = True
            out["enum"] = [v for v in out["enum"] if v is not None]
        if isinstance(out.get("anyOf"), list):
            branches = [b for b in out["anyOf"] if not _is_null(b)]
            null = null or len(branches) < len(out["anyOf"])
            if len(branches) == 1 and isinstance(branches[0], Mapping):
                del out["anyOf"]
                out = {**self._normal(branches[0]), **{k: v for k, v in out.items() if k != "type"}}
                null = null or out.pop("__null", False)
            elif branches:
                out["anyOf"] = branches
            else:
                del out["anyOf"]
        if "type" not in out and "anyOf" not in out and isinstance(out.get("enum"), list) and out["enum"]:
            out["type"] = _enum_type(out["enum"])
        if null:
            out["__null"] = True
        return out

    @staticmethod
    def _branch(node: Mapping[str, Any], kind: str) -> dict[str, Any]:
        return {"type": kind, **{k: node[k] for k in BY_TYPE[kind] if k in node}}

    def _has_shape(self, node: Mapping[str, Any]) -> bool:
        """An object that can stay an object: it declares properties (strict mode: or takes no keys at all)."""
        properties = node.get("properties")
        if isinstance(properties, Mapping) and properties:
            return True
        closed = node.get("additionalProperties") in (False, {"not": {}})
        return self.strict and closed

    # -- the kinds -----------------------------------------------------------------------------------------

    def _object(self, node: dict[str, Any], depth: int, root: bool) -> tuple[dict[str, Any], Restore]:
        found = node.get("properties")
        properties: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        listed = node.get("required")
        required = [k for k in listed if isinstance(k, str) and k in properties] if isinstance(listed, list) else []
        out = self._keywords(node)
        shaped: dict[str, Any] = {}
        restores: dict[str, Restore] = {}
        for key, child in properties.items():
            value, restore = self.shape(child, depth + 1)
            if self.strict and key not in required:
                value = self.nullable(value)
                restore = {**restore, "absent": True}
            shaped[key] = value
            if restore:
                restores[key] = restore
        out["type"] = "object"
        out["properties"] = shaped
        if self.strict:
            out["required"] = list(shaped)
            out["additionalProperties"] = False
        elif required:
            out["required"] = required
        else:
            out.pop("required", None)
        return out, ({"properties": restores} if restores else {})

    def _scalar(self, node: dict[str, Any], depth: int) -> tuple[dict[str, Any], Restore]:
        out = self._keywords(node)
        restore: Restore = {}
        if node["type"] == "array":
            items, item_restore = self.shape(node.get("items", {}), depth)
            out["items"] = items
            if item_restore:
                restore["items"] = item_restore
        return out, restore

    def _any_of(self, node: dict[str, Any], depth: int) -> tuple[dict[str, Any], Restore]:
        branches = []
        merged: Restore = {}
        text_branch = False
        for branch in node["anyOf"]:
            shaped, restore = self.shape(branch, depth)
            branches.append(shaped)
            text_branch = text_branch or restore.get("json", False)
            merged = _merge(merged, {k: v for k, v in restore.items() if k in ("properties", "items")})
        genuine_strings = sum(1 for b in branches if b.get("type") == "string") - (1 if text_branch else 0)
        if text_branch and not genuine_strings:
            merged["json"] = True
        out = self._keywords({k: v for k, v in node.items() if k not in ("type", "enum")})
        out["anyOf"] = branches
        return out, merged

    def _json_text(self, node: Mapping[str, Any]) -> dict[str, Any]:
        what = "a JSON object" if node.get("type") == "object" else "any JSON value"
        text = node.get("description")
        note = f'{JSON_TEXT}: {what}, e.g. {{}} or {{"key": "value"}}' if "object" in what else f"{JSON_TEXT}: {what}"
        return {"type": "string", "description": f"{text}\n\n{note}." if isinstance(text, str) and text else f"{note}."}

    def _keywords(self, node: Mapping[str, Any]) -> dict[str, Any]:
        """The keywords the dialect keeps (schema-valued ones are set by the caller)."""
        allowed = GEMINI_KEYS if self.gemini else STRICT_KEYS
        notes: list[str] = []
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in SCHEMA_MAPS or key in SCHEMA_LISTS or key in SCHEMA_ONE or key == "required":
                continue
            if key == "examples" and self.gemini and isinstance(value, list) and value:
                out["example"] = value[0]
            elif key == "contentEncoding" and value == "base64" and "pattern" not in node:
                out["pattern"] = BASE64  # the same meaning, in a keyword both dialects take
            elif key == "format" and not self._format_ok(node.get("type"), value):
                notes.append(f"Format: {value}.")
            elif key == "enum" and self.gemini and not all(isinstance(v, str) for v in value):
                notes.append("One of: " + ", ".join(json.dumps(v) for v in value[:50]) + ".")
            elif key == "default" and key not in allowed:
                notes.append(f"Default: {json.dumps(value)[:200]}.")
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and key not in allowed and _number(value):
                notes.append(f"{'Greater' if key == 'exclusiveMinimum' else 'Less'} than {value}.")
            elif key in allowed:
                out[key] = value
        if notes:
            text = out.get("description")
            out["description"] = " ".join([text, *notes] if isinstance(text, str) and text else notes)
        return out

    def _format_ok(self, kind: Any, value: Any) -> bool:
        if self.gemini:
            return isinstance(kind, str) and value in GEMINI_FORMATS.get(kind, set())
        return kind == "string" and value in STRICT_FORMATS

    # -- null ----------------------------------------------------------------------------------------------

    def nullable(self, node: dict[str, Any]) -> dict[str, Any]:
        out = dict(node)
        if self.gemini:
            out["nullable"] = True
            return out
        kind = out.get("type")
        if "anyOf" in out:
            if not any(_is_null(b) for b in out["anyOf"]):
                out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        elif isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out


def _is_null(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and len(node) <= 2


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _enum_type(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if all(_number(v) for v in values):
        return "number"
    return "string" if all(isinstance(v, str) for v in values) else "any"


def _merge(a: Restore, b: Restore) -> Restore:
    """Two restore trees at one place (the branches of an anyOf): the union of what each undoes."""
    out: Restore = {**a}
    for key, value in b.items():
        if key == "properties" and isinstance(value, Mapping):
            props = dict(out.get("properties", {}))
            for name, sub in value.items():
                props[name] = _merge(props.get(name, {}), sub)
            out["properties"] = props
        elif key == "items" and isinstance(value, Mapping):
            out["items"] = _merge(out.get("items", {}), dict(value))
        else:
            out[key] = out.get(key, False) or value
    return out
