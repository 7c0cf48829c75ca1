"""Deterministic example arguments for a tool: a value for each property of its inputSchema (every property, or
the required ones), built from the schema's own examples, enums, formats, patterns and bounds, and checked
against the schema. Used by tools/corpus_calls.py (`tools/corpus-run --calls`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 8  # nesting of built example values

FORMATS: dict[str, Any] = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05Z",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "iri": "https://example.com/x",
    "uri-reference": "https://example.com/x",
    "iri-reference": "https://example.com/x",
    "uri-template": "https://example.com/{x}",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ip": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "byte": "aGVsbG8=",
    "base64": "aGVsbG8=",
    "binary": "hello",
    "password": "secret",
    "duration": "P1D",
    "json-pointer": "/x",
    "regex": "^x$",
}


class NoExample(Exception):
    """No value could be built for a schema (e.g. a pattern Python cannot read, or unbounded recursion)."""


def build_arguments(schema: Mapping[str, Any], full: bool) -> dict[str, Any]:
    """A deterministic instance of a tool's inputSchema: required properties only, or (full) every property."""
    value = _build(schema, schema, full, 0)
    if not isinstance(value, dict):
        raise NoExample("inputSchema is not an object")
    return value


def _resolve(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    for _ in range(20):
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#/"):
            raise NoExample(f"non-local $ref {ref}")
        target: Any = root
        for token in ref[2:].split("/"):
            target = target[token.replace("~1", "/").replace("~0", "~")]
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        node = merged
    raise NoExample("$ref chain too long")


def valid(schema: Mapping[str, Any], value: Any) -> bool:
    """Whether `value` is valid against `schema` (JSON Schema 2020-12, formats checked)."""
    return _valid(schema, schema, value)


def _valid(root: Mapping[str, Any], schema: Mapping[str, Any], value: Any) -> bool:
    from jsonschema import Draft202012Validator

    candidate = {**schema, "$defs": root.get("$defs", {})} if "$defs" in root else dict(schema)
    try:
        return Draft202012Validator(candidate, format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(value)
    except Exception:
        return False


def _build(root: Mapping[str, Any], node: Any, full: bool, depth: int) -> Any:
    if node is True or node is None:
        return "example"
    if not isinstance(node, Mapping):
        raise NoExample("schema is not an object")
    if depth > MAX_DEPTH:
        raise NoExample("too deep")
    node = _resolve(root, node)
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return next((v for v in node["enum"] if v is not None), node["enum"][0])
    for key in ("default", "examples"):
        if key in node:
            candidate = node[key][0] if key == "examples" and isinstance(node[key], list) and node[key] else node[key]
            if key == "examples" and not isinstance(node[key], list):
                continue
            if _valid(root, node, candidate):
                return candidate
    if "allOf" in node and isinstance(node["allOf"], list):
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        for part in node["allOf"]:
            part = _resolve(root, part) if isinstance(part, Mapping) else {}
            for key, value in part.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = sorted(set(merged.get("required", [])) | set(value))
                else:
                    merged.setdefault(key, value)
        return _build(root, merged, full, depth + 1)
    for key in ("oneOf", "anyOf"):
        options = node.get(key)
        if isinstance(options, list) and options:
            rest = {k: v for k, v in node.items() if k != key}
            for option in options:
                try:
                    merged_option = {**rest, **_resolve(root, option)} if isinstance(option, Mapping) else rest
                    value = _build(root, merged_option, full, depth + 1)
                except NoExample:
                    continue
                if _valid(root, node, value):
                    return value
            raise NoExample(f"no {key} option gave a valid value")
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in node else "array" if "items" in node else "string"
    if kind == "null":
        return None
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return _number(node, kind == "integer")
    if kind == "string":
        return _string(node)
    if kind == "array":
        count = max(int(node.get("minItems", 0)), 1 if full else 0)
        if count == 0:
            return []
        items = node.get("items", {})
        if node.get("uniqueItems") and count > 1:
            raise NoExample("unique items")
        return [_build(root, items, full, depth + 1)] * count
    if kind == "object":
        props = node.get("properties", {}) if isinstance(node.get("properties"), Mapping) else {}
        required = [r for r in node.get("required", []) if isinstance(r, str)]
        result: dict[str, Any] = {}
        for name in required:
            result[name] = _build(root, props.get(name, {}), full, depth + 1)
        if full:
            for name, sub in props.items():
                if name in result or (isinstance(sub, Mapping) and sub.get("readOnly")):
                    continue
                try:
                    result[name] = _build(root, sub, full, depth + 1)
                except NoExample:
                    continue
        return result
    raise NoExample(f"type {kind!r}")


def _number(node: Mapping[str, Any], integer: bool) -> int | float:
    low = node.get("minimum")
    ex_low = node.get("exclusiveMinimum")
    high = node.get("maximum")
    ex_high = node.get("exclusiveMaximum")
    value: float = 1
    if isinstance(low, (int, float)):
        value = max(value, low) if not isinstance(high, (int, float)) or high >= 1 else low
    if isinstance(ex_low, (int, float)) and value <= ex_low:
        value = ex_low + 1
    if isinstance(high, (int, float)) and value > high:
        value = high
    if isinstance(ex_high, (int, float)) and value >= ex_high:
        value = ex_high - 1
    step = node.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        value = math.ceil(value / step) * step
    return int(math.ceil(value)) if integer else value


_REGEX_CACHE: dict[str, str] = {}  # "low:high:pattern" -> the shortest match hypothesis finds (derandomized)


def _string(node: Mapping[str, Any]) -> str:
    pattern = node.get("pattern")
    fmt = node.get("format")
    low = int(node.get("minLength", 0) or 0)
    high = node.get("maxLength")
    if node.get("contentEncoding") == "base64":
        text = FORMATS["byte"]
    elif isinstance(pattern, str):
        text = _from_regex(pattern, low, high if isinstance(high, int) else None)
    elif isinstance(fmt, str) and fmt in FORMATS:
        text = FORMATS[fmt]
    elif fmt in ("int32", "int64", "integer"):
        text = "1"
    else:
        text = "example"
    if len(text) < low:
        text += "a" * (low - len(text)) if not isinstance(pattern, str) else ""
    if isinstance(high, int) and len(text) > high and not isinstance(pattern, str):
        text = text[: max(high, low)]
    return text


def _from_regex(pattern: str, low: int = 0, high: int | None = None) -> str:
    key = f"{low}:{high}:{pattern}"
    if key not in _REGEX_CACHE:
        from hypothesis import HealthCheck, find, settings
        from hypothesis import strategies as st

        try:
            compiled = re.compile(pattern)
            _REGEX_CACHE[key] = find(
                st.from_regex(compiled).filter(lambda s: "\n" not in s and "\r" not in s),
                lambda s: low <= len(s) and (high is None or len(s) <= high),
                settings=settings(derandomize=True, database=None, suppress_health_check=list(HealthCheck)),
            )
        except Exception as exc:  # re.error for ECMA-only syntax, or no example found
            raise NoExample(f"pattern {pattern!r}: {type(exc).__name__}") from None
    return _REGEX_CACHE[key]
