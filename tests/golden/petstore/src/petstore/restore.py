"""Arguments shaped for a client profile, turned back into what the API takes (routes.json `restore`).

Some clients take only a subset of JSON Schema, so mcp-codegen reshaped these tools' input schemas when it
generated this package (`--client`; see its docs/clients.md). Before a request is built, each call's
arguments are mapped back:
- `absent`: OpenAI strict mode makes every property required and the optional ones nullable; a null received
  for a property the API declares optional means "not given", and the property is left out;
- `json`: a free-form object (or a value of any type) is sent by the client as a string of JSON text; it is
  decoded here.
The plan mirrors the schema: `properties` for an object's keys, `items` for an array's elements.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .plans import ArgumentError

MAX_TEXT = 1_000_000  # characters of JSON text decoded per value
MAX_DEPTH = 64  # levels of the plan followed


def restore(
    arguments: Mapping[str, Any], plan: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`arguments` as the API takes them (a new dict; `arguments` is not changed)."""
    if not plan:
        return dict(arguments)
    return _object(arguments, plan, "", 0)


def _object(
    value: Mapping[str, Any], plan: Mapping[str, Any], where: str, depth: int
) -> dict[str, Any]:
    out = dict(value)
    for key, node in plan.items():
        if key not in out or not isinstance(node, Mapping):
            continue
        if out[key] is None and node.get("absent"):
            del out[key]
        else:
            out[key] = _value(out[key], node, f"{where}/{key}", depth + 1)
    return out


def _value(value: Any, node: Mapping[str, Any], where: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return value
    if node.get("json") and isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise ArgumentError(
                f"{where.lstrip('/')}: JSON text longer than {MAX_TEXT} characters"
            )
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            raise ArgumentError(
                where.lstrip("/") + ': must be JSON text, e.g. {"key": "value"}'
            ) from None
    properties = node.get("properties")
    if isinstance(value, Mapping) and isinstance(properties, Mapping):
        return _object(value, properties, where, depth)
    items = node.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [
            _value(item, items, f"{where}/{index}", depth + 1)
            for index, item in enumerate(value)
        ]
    return value
