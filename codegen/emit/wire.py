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
# What the generated server's build_server() registers: tools (list, call), logging/setLevel and resources
# (list, read: the result links), as the SDK advertises them.
CAPABILITIES: dict[str, Any] = {
    "logging": {},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}


class Unsupported(Exception):
    """Something the SDK might serialize differently from this module."""


Shaper = Callable[[Any], str]  # a value -> its JSON text as the SDK writes it
# a number token in exponent form, as json writes large and small floats (the SDK's encoder does not)
EXPONENT = re.compile(r"[:,\[]-?[0-9]+(?:\.[0-9]+)?e[+-][0-9]+[,}\]]")


# one encoder for every value (json.dumps with options builds a new encoder per call): a value below the
# models (a schema's content) keeps the key order the server reads, which the SDK keeps too
_sorted_plain: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode  # tools.json's key order (sorted): the tools surface, whose entries are built unsorted
_input_plain: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode  # the entries' own key order: the discovery surface (discovery.json is written in input order)


def _model(fields: Sequence[str], extra: bool, nested: Mapping[str, Shaper] | None = None, sort: bool = True) -> Shaper:
    """A wire model's dump: declared `fields` in order (None left out), then extra keys if `extra` (in
    the server's key order: sorted for tools.json, else as given), each value as its own model's dump or as
    plain JSON."""
    inner = nested or {}
    dump = _sorted_plain if sort else _input_plain

    def shape(data: Any) -> str:
        if not isinstance(data, dict):
            raise Unsupported("not an object")
        parts = []
        for name in fields:
            value = data.get(name)
            if value is not None:
                if name in inner:
                    text = inner[name](value)
                elif type(value) is str:
                    text = _quote(value)
                else:
                    text = _members(dump, value) if name in SHARED else dump(value)
                parts.append(_quote(name) + ":" + text)
        if extra:
            for name in sorted(data) if sort else data:
                if name not in fields and data[name] is not None:
                    value = data[name]
                    text = _members(dump, value) if name in SHARED else dump(value)
                    parts.append((_quote(name) if type(name) is str else dump(name)) + ":" + text)
        return "{" + ",".join(parts) + "}"

    return shape


_quote: Callable[[str], str] = json.encoder.encode_basestring  # a key as both encoders write it (raw UTF-8)
SHARED = frozenset({"$defs", "properties"})  # a schema's members the tools share: one object in many tools
_texts: dict[int, tuple[Any, str]] = {}  # id -> (member kept alive, its text), during one handshake_lines call


def _members(dump: Shaper, value: Any) -> str:
    """`dump(value)` for a schema's `$defs` or `properties`, each member's text written once per call (in both
    eras' answers and every tool that shares it)."""
    if not isinstance(value, dict) or not all(type(key) is str for key in value):
        return dump(value)
    parts = []
    for key in sorted(value) if dump is _sorted_plain else value:
        member = value[key]
        found = _texts.get(id(member))
        if found is None:
            found = _texts[id(member)] = (member, dump(member))
        parts.append(_quote(key) + ":" + found[1])
    return "{" + ",".join(parts) + "}"


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


def _tool_models(sort: bool) -> tuple[Shaper, Shaper]:
    """The Tool wire models' dumps: (handshake era, 2026-07-28), with extra keys in sorted or input order."""
    annotations = _model(
        ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title"), False, sort=sort
    )
    handshake = _model(
        ("_meta", "annotations", "description", "execution", "icons", "inputSchema", "name", "outputSchema", "title"),
        False,
        {
            "annotations": annotations,
            "inputSchema": _object_schema(_model(("$schema", "properties", "required", "type"), True, sort=sort)),
            "outputSchema": _object_schema(_model(("$schema", "properties", "required", "type"), True, sort=sort)),
            "execution": _refuse("execution"),
            "icons": _refuse("icons"),
            "_meta": _refuse("_meta"),
        },
        sort,
    )
    modern = _model(
        ("_meta", "annotations", "description", "icons", "inputSchema", "name", "outputSchema", "title"),
        False,
        {
            "annotations": annotations,
            "inputSchema": _object_schema(_model(("$schema", "type"), True, sort=sort)),
            "outputSchema": _model(("$schema",), True, sort=sort),
            "icons": _refuse("icons"),
            "_meta": _refuse("_meta"),
        },
        sort,
    )
    return handshake, modern


TOOL_MODELS = {True: _tool_models(True), False: _tool_models(False)}


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
    tools: Sequence[Mapping[str, Any]],
    name: str,
    version: str,
    surface: str = "tools",
    size: int = 0,
    sort_keys: bool = True,
) -> str:
    """The generated handshake.jsonl: a header line, then one result per answer the header names.

    `tools`: the tools/list entries the server's SDK path serves for `surface`; `sort_keys`: their keys are
    served sorted (tools.json), else in the order given (discovery.json); `size`: the listing file's length
    (above MAX_LIST_BYTES nothing is pre-serialized)."""
    handshake_tool, modern_tool = TOOL_MODELS[sort_keys]
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
        answers["tools/list handshake"] = _checked('{"tools":[' + ",".join(map(handshake_tool, tools)) + "]}")
        answers[f"tools/list {MODERN_VERSION}"] = _checked(
            '{"cacheScope":"private","resultType":"complete","tools":['
            + ",".join(map(modern_tool, tools))
            + '],"ttlMs":0,"_meta":'
            + encode(stamp)
            + "}"
        )
    except (Unsupported, ValueError):  # ValueError: a float json cannot write (nan, infinity)
        return encode(header) + "\n"
    finally:
        _texts.clear()
    header["answers"] = list(answers)
    return "\n".join([encode(header), *answers.values()]) + "\n"
