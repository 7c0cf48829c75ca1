"""The handshake answers, serialized at generation time exactly as the MCP SDK sends them.

A generated server answers `initialize`, `server/discover` and `tools/list` from these bytes while the SDK
is still being imported (templates/handshake.py.jinja). They must be the SDK's own bytes, so this module
follows its serializer (mcp / mcp-types, the versions in `SDK`): every result is validated against the
protocol version's wire model and dumped by alias without None values, as compact JSON with raw UTF-8.
A model dumps its declared fields in their declared order (the wire models declare them sorted by wire
name), then, when it allows extra keys, the others in input order; a model that ignores extra keys drops
them. 2026-07-28 results get the cache defaults of the SDK's result types and the `serverInfo` stamp,
which the SDK appends after the dump.

Anything this module does not model (a float JSON would write in exponent form, a lone surrogate, a tool
field such as `icons`, an input schema whose type is not "object") makes `handshake_lines` return only
the header with no answers: the server then answers everything through the SDK. The generated server
uses the answers only when the installed SDK is the version in `SDK`, and tests/test_handshake.py checks
the bytes against the SDK's own server, in both eras.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

SDK = {"mcp": "2.3.0", "mcp-types": "2.3.0"}  # the SDK whose serializer this follows
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # tools/list: one model for all
MODERN_VERSION = "2026-07-28"
FORMAT = 1
# What the generated server's build_server() registers: tools (list, call) and logging/setLevel.
CAPABILITIES: dict[str, Any] = {"logging": {}, "tools": {"listChanged": False}}
MODERN_LIST_DEFAULTS = {"cacheScope": "private", "resultType": "complete", "ttlMs": 0}


class Unsupported(Exception):
    """Something the SDK might serialize differently from this module."""


Shaper = Callable[[Any], Any]


def _model(fields: Sequence[str], extra: bool, nested: Mapping[str, Shaper] | None = None) -> Shaper:
    """A wire model's dump: declared `fields` in order (None left out), then extra keys if `extra`."""
    inner = nested or {}

    def shape(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise Unsupported("not an object")
        out: dict[str, Any] = {}
        for name in fields:
            value = data.get(name)
            if value is not None:
                out[name] = inner[name](value) if name in inner else value
        if extra:
            for name, value in data.items():
                if name not in out and name not in fields and value is not None:
                    out[name] = value
        return out

    return shape


def _refuse(field: str) -> Shaper:
    def shape(_: Any) -> Any:
        raise Unsupported(f"tool field {field}")

    return shape


def _object_schema(shaper: Shaper) -> Shaper:
    def shape(data: Any) -> Any:
        if not isinstance(data, dict) or data.get("type") != "object":
            raise Unsupported("an input schema whose type is not 'object'")
        properties = data.get("properties")
        if properties is not None and not (
            isinstance(properties, dict) and all(isinstance(v, (dict, bool)) for v in properties.values())
        ):
            raise Unsupported("properties that are not schemas")
        return shaper(data)

    return shape


_ANNOTATIONS = _model(("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title"), False)
_HANDSHAKE_SCHEMA = _model(("$schema", "properties", "required", "type"), True)
_HANDSHAKE_TOOL = _model(
    ("_meta", "annotations", "description", "execution", "icons", "inputSchema", "name", "outputSchema", "title"),
    False,
    {
        "annotations": _ANNOTATIONS,
        "inputSchema": _object_schema(_HANDSHAKE_SCHEMA),
        "outputSchema": _object_schema(_HANDSHAKE_SCHEMA),
        "execution": _refuse("execution"),
        "icons": _refuse("icons"),
        "_meta": _refuse("_meta"),
    },
)
_MODERN_TOOL = _model(
    ("_meta", "annotations", "description", "icons", "inputSchema", "name", "outputSchema", "title"),
    False,
    {
        "annotations": _ANNOTATIONS,
        "inputSchema": _object_schema(_model(("$schema", "type"), True)),
        "outputSchema": _model(("$schema",), True),
        "icons": _refuse("icons"),
        "_meta": _refuse("_meta"),
    },
)


def encode(value: Any) -> str:
    """Compact JSON as the SDK writes it; raises Unsupported where its encoder could differ from json's."""
    _check_numbers(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unsupported("a lone surrogate") from None
    return text


def _check_numbers(value: Any) -> None:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) and (not math.isfinite(node) or "e" in repr(node)):
            raise Unsupported("a float in exponent form")


def handshake_lines(tools: list[dict[str, Any]], name: str, version: str, surface: str = "tools") -> str:
    """The generated handshake.jsonl: a header line, then one result per answer the header names.

    `tools`: the tools/list entries exactly as the server's SDK path serves them (tools.json, parsed)."""
    server_info = {"name": name, "version": version}
    stamp = {"io.modelcontextprotocol/serverInfo": server_info}
    header: dict[str, Any] = {"format": FORMAT, "sdk": SDK, "surface": surface, "answers": []}
    try:
        answers = {
            f"initialize {v}": encode(
                {"capabilities": CAPABILITIES, "protocolVersion": v, "serverInfo": server_info}
            )
            for v in HANDSHAKE_VERSIONS
        }
        answers[f"server/discover {MODERN_VERSION}"] = encode(
            {
                "cacheScope": "private",
                "capabilities": CAPABILITIES,
                "resultType": "complete",
                "supportedVersions": [MODERN_VERSION],
                "ttlMs": 0,
                "_meta": stamp,
            }
        )
        answers["tools/list handshake"] = encode({"tools": [_HANDSHAKE_TOOL(tool) for tool in tools]})
        modern = {**MODERN_LIST_DEFAULTS, "tools": [_MODERN_TOOL(tool) for tool in tools]}
        answers[f"tools/list {MODERN_VERSION}"] = encode(
            {key: modern[key] for key in ("cacheScope", "resultType", "tools", "ttlMs")} | {"_meta": stamp}
        )
    except Unsupported:
        return encode(header) + "\n"
    header["answers"] = list(answers)
    return "\n".join([encode(header), *answers.values()]) + "\n"
