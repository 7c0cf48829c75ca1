"""JSON Schema keywords: which ones a converted schema keeps, and the rules that repair or simplify a node
(allOf merging, 3.0 `nullable`, regular expressions Python cannot compile, duplicate enum values)."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
MAX_DEPTH = 48  # nesting of inline schemas; deeper parts become {} (refs do not count)

SCHEMA_VALUED = ("additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
NUMBERS = ("minimum", "maximum", "multipleOf")
COUNTS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
)
STRINGS = ("title", "description", "format", "pattern", "contentMediaType", "contentEncoding")
BOOLEANS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")
ANY_VALUE = ("const", "default")
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
MERGEABLE = frozenset({"type", "properties", "required", "title", "description"})


def merge_all_of(out: dict[str, Any]) -> dict[str, Any]:
    """allOf merged where the result means the same and reads simpler; otherwise left as it is.

    - `{allOf: [{$ref}], description: ...}` (the 3.0 way to describe a reference) -> `{$ref, description}`;
    - inline object members with distinct (or identical) properties -> one object with their union.
    Members that are references stay references here; SchemaConverter._merge_referenced takes plain ones by value.
    """
    members = out["allOf"]
    rest = {k: v for k, v in out.items() if k != "allOf"}
    if len(members) == 1 and set(members[0]) == {"$ref"} and set(rest) <= ANNOTATIONS:
        return {**members[0], **rest}
    if not all(isinstance(m, dict) and set(m) <= MERGEABLE and m.get("type", "object") == "object" for m in members):
        return out
    if not set(rest) <= MERGEABLE | ANNOTATIONS or rest.get("type", "object") != "object":
        return out
    merged: dict[str, Any] = dict(rest)
    properties: dict[str, Any] = dict(rest.get("properties", {}))
    required: list[str] = list(rest.get("required", []))
    for member in members:
        for name, schema in member.get("properties", {}).items():
            if name in properties and properties[name] != schema:
                return out  # the same property constrained twice: keep allOf
            properties[name] = schema
        required += [r for r in member.get("required", []) if r not in required]
        for key in ("title", "description"):
            if key in member and key not in merged:
                merged[key] = member[key]
    if rest.get("type") == "object" or any(m.get("type") == "object" for m in members):
        merged["type"] = "object"  # only when a part said so: properties alone do not require an object
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged


def type_clash(members: list[Any]) -> list[str]:
    """The types of inline allOf members when no one type is allowed by all of them (else [])."""
    allowed: set[str] | None = None
    named: list[str] = []
    for member in members:
        if not isinstance(member, dict) or "type" not in member:
            continue
        types = member["type"] if isinstance(member["type"], list) else [member["type"]]
        kinds = {str(t) for t in types} | ({"integer"} if "number" in types else set())
        named += [str(t) for t in types if str(t) not in named]
        allowed = kinds if allowed is None else allowed & kinds
    return named if allowed is not None and not allowed else []


def nullable(node: dict[str, Any]) -> bool:
    """3.0 `nullable: true`, or Swagger 2.0's `x-nullable: true` (kept by files the upgrade did not rewrite)."""
    return node.get("nullable") is True or node.get("x-nullable") is True


def make_nullable(out: dict[str, Any]) -> None:
    """OpenAPI 3.0 `nullable: true` -> a type union with null (and null in an enum)."""
    types = out.get("type")
    if isinstance(types, str):
        out["type"] = [types, "null"] if types != "null" else "null"
    elif isinstance(types, list) and "null" not in types:
        out["type"] = [*types, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    if "type" not in out and any(k in out for k in ("allOf", "anyOf", "oneOf", "$ref")):
        inner = dict(out)
        out.clear()
        out["anyOf"] = [inner, {"type": "null"}]


def usable_regex(pattern: str) -> bool:
    """True when Python's `re` compiles the pattern: JSON Schema validators in Python (the MCP SDK's input check,
    jsonschema's metaschema "regex" format) do, and fail on ECMA/Java-only syntax such as \\p{L} or \\p{Print}."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def unique(values: list[Any]) -> list[Any]:
    """enum items must be unique in JSON Schema; specs sometimes repeat one. Strings (a large API's enums list
    hundreds) are looked up in a set; other values are compared with the other values seen."""
    seen: list[Any] = []
    strings: set[str] = set()
    others: list[Any] = []
    for value in values:
        if type(value) is str:
            if value not in strings:
                strings.add(value)
                seen.append(value)
        elif not any(value == s and type(value) is type(s) for s in others):
            others.append(value)
            seen.append(value)
    return seen
