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
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

SDK = {"mcp": "2.3.0", "mcp-types": "2.3.0"}  # the SDK whose serializer this follows
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # tools/list: one model for all
MODERN_VERSION = "2026-07-28"
FORMAT = 1
MAX_LIST_BYTES = 16 << 20  # tools.json larger than this: no pre-serialized answers (the SDK answers)
# What the generated server's build_server() registers: tools (list, call) and logging/setLevel.
CAPABILITIES: dict[str, Any] = {"logging": {}, "tools": {"listChanged": False}}


class Unsupported(Exception):
    """Something the SDK might serialize differently from this module."""


Shaper = Callable[[Any], str]  # a value -> its JSON text as the SDK writes it
# a number token in exponent form, as json writes large and small floats (the SDK's encoder does not)
EXPONENT = re.compile(r"[:,\[]-?[0-9]+(?:\.[0-9]+)?e[+-][0-9]+[,}\]]")


# one encoder for every value (json.dumps with options builds a new encoder per call)
plain: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode  # a value below the models (a schema's content): tools.json's key order, which the SDK keeps


def _model(fields: Sequence[str], extra: bool, nested: Mapping[str, Shaper] | None = None) -> Shaper:
    """A wire model's dump: declared `fields` in order (None left out), then extra keys if `extra` (in
    tools.json's order, sorted), each value as its own model's dump or as plain JSON."""
    inner = nested or {}

    def shape(data: Any) -> str:
        if not isinstance(data, dict):
            raise Unsupported("not an object")
        parts = []
        for name in fields:
            value = data.get(name)
            if value is not None:
                parts.append(plain(name) + ":" + (inner[name](value) if name in inner else plain(value)))
        if extra:
            for name in sorted(data):
                if name not in fields and data[name] is not None:
                    parts.append(plain(name) + ":" + plain(data[name]))
        return "{" + ",".join(parts) + "}"

    return shape


def _refuse(field: str) -> Shaper:
    def shape(_: Any) -> str:
        raise Unsupported(f"tool field {field}")

    return shape


def _object_schema(shaper: Shaper) -> Shaper:
    def shape(data: Any) -> str:
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
    """Compact JSON in the given key order (the small results, built here in the models' order)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _checked(text: str) -> str:
    """`text`, unless the SDK's encoder could write it differently (floats in exponent form, lone
    surrogates). A false alarm (such a token inside a string) only costs the fast start."""
    if EXPONENT.search(text):
        raise Unsupported("a float in exponent form")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unsupported("a lone surrogate") from None
    return text


def handshake_lines(
    tools: list[dict[str, Any]], name: str, version: str, surface: str = "tools", size: int = 0
) -> str:
    """The generated handshake.jsonl: a header line, then one result per answer the header names.

    `tools`: the tools/list entries as the server's SDK path serves them (tools.json, whose keys are sorted);
    `size`: tools.json's length (above MAX_LIST_BYTES nothing is pre-serialized)."""
    server_info = {"name": name, "version": version}
    stamp = {"io.modelcontextprotocol/serverInfo": server_info}
    header: dict[str, Any] = {"format": FORMAT, "sdk": SDK, "surface": surface, "answers": []}
    if size > MAX_LIST_BYTES:  # two more copies of a list this large would cost generation more than it saves
        return encode(header) + "\n"
    try:
        answers = {
            f"initialize {v}": _checked(
                encode({"capabilities": CAPABILITIES, "protocolVersion": v, "serverInfo": server_info})
            )
            for v in HANDSHAKE_VERSIONS
        }
        answers[f"server/discover {MODERN_VERSION}"] = _checked(
            encode(
                {
                    "cacheScope": "private",
                    "capabilities": CAPABILITIES,
                    "resultType": "complete",
                    "supportedVersions": [MODERN_VERSION],
                    "ttlMs": 0,
                    "_meta": stamp,
                }
            )
        )
        answers["tools/list handshake"] = _checked('{"tools":[' + ",".join(map(_HANDSHAKE_TOOL, tools)) + "]}")
        answers[f"tools/list {MODERN_VERSION}"] = _checked(
            '{"cacheScope":"private","resultType":"complete","tools":['
            + ",".join(map(_MODERN_TOOL, tools))
            + '],"ttlMs":0,"_meta":'
            + encode(stamp)
            + "}"
        )
    except (Unsupported, ValueError):  # ValueError: a float json cannot write (nan, infinity)
        return encode(header) + "\n"
    header["answers"] = list(answers)
    return "\n".join([encode(header), *answers.values()]) + "\n"
