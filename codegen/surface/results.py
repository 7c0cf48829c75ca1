"""Result shaping on the tool surface: the arguments and schema members that next pages, auto-pagination and
projection add to a tool, and the `ResultPlan` the server follows (routes.json `results`).

- A paginated operation (surface/pagination.py) gets `next` in its outputSchema (`{"arguments": {...}}`, the
  arguments of the next call of the same tool), unless its result already has a member called `next` or the
  tool has no outputSchema: then `next` travels in the result's `_meta`.
- A paginated operation whose response holds a list of items gets `max_items` and `max_pages`.
- A read operation (GET) whose response is a JSON object or array gets `fields` (dotted paths kept in each item
  or in the object); writes answer with what they wrote, rarely worth a projection, and every listed argument
  costs tools/list space. Its outputSchema no longer requires members (a projected item lacks the others): looser, never
  stricter, so every answer that matched before still does.
None of these arguments is sent to the API (they have no request plan); a spec parameter of the same name wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..config import Config
from ..problems import Level, Problem
from ..spec.media import json_media_rank
from ..spec.model import Schema
from ..spec.refs import RefError, Resolver
from .pagination import detect, list_items
from .plans import ResultPlan, ToolSpec
from .select import find_override

TOKENS_EXTENSION = "x-mcp-result-tokens"
MAX_ITEMS_LIMIT = 10_000
MAX_PAGES_LIMIT = 100
FIELDS = {"type": "array", "items": {"type": "string"}}
MAX_ITEMS = {"type": "integer", "minimum": 1, "maximum": MAX_ITEMS_LIMIT}
MAX_PAGES = {"type": "integer", "minimum": 1, "maximum": MAX_PAGES_LIMIT}
# descriptions (left out with --compact): short, as they repeat on every tool
FIELDS_TEXT = 'Keep only these dotted paths, e.g. ["id","user.login"] (in each item of a list).'
MAX_ITEMS_TEXT = "Follow next pages until this many items are collected, merged."
MAX_PAGES_TEXT = "Follow at most this many pages."
# the members as listed without --compact: one object each for all the tools (tools' schemas are never modified)
DESCRIBED = {
    "fields": {**FIELDS, "description": FIELDS_TEXT},
    "max_items": {**MAX_ITEMS, "description": MAX_ITEMS_TEXT},
    "max_pages": {**MAX_PAGES, "description": MAX_PAGES_TEXT},
}
NEXT = {
    "type": "object",
    "description": "More results: call this tool again with these arguments.",
    "properties": {"arguments": {"type": "object"}},
}
# keywords holding one subschema, a list of them, or a map of them (JSON Schema 2020-12) where dropping a
# constraint loosens the whole; never `not` or `if` (a looser `not`, or an `if` that holds more often, is stricter)
_ONE = ("items", "additionalProperties", "contains", "propertyNames", "then", "else", "unevaluatedProperties")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
Shared = dict[int, tuple[Any, Any]]  # id of a definition -> (the definition, kept alive; its result)


def with_results(
    tool: ToolSpec,
    resolver: Resolver,
    problems: list[Problem] | None = None,
    compact: bool = False,
    shared: Shared | None = None,
) -> ToolSpec:
    """`tool` with its result plan, and the arguments and output schema members the plan needs (`compact`: their
    descriptions left out). `shared`: see unrequire."""
    op = tool.operation
    success = next((r for r in op.responses if r.status.startswith("2")), None)
    if success is None or success.media_type is None or json_media_rank(success.media_type) > 1:
        return tool
    inputs = dict(tool.input_schema)
    props: dict[str, Any] = dict(inputs.get("properties") or {})
    items = list_items(op, resolver)
    pages = detect(op, tool.plan.args, tool.input_schema, resolver)
    output = dict(tool.output_schema) if tool.output_schema is not None else None
    fields = None
    schema = success.schema if op.method == "GET" else None  # read operations only
    if schema is not None and "fields" not in props and _is_container(schema, resolver):
        fields = "fields"
        props["fields"] = FIELDS if compact else DESCRIBED["fields"]
        if output is not None:
            output = unrequire(output, shared)
    max_items = max_pages = None
    if pages is not None and items is not None and "max_items" not in props and "max_pages" not in props:
        max_items, max_pages = "max_items", "max_pages"
        if compact:
            props.update(max_items=MAX_ITEMS, max_pages=MAX_PAGES)
        else:
            props.update(max_items=DESCRIBED["max_items"], max_pages=DESCRIBED["max_pages"])
    next_in = "meta"
    if pages is not None and output is not None and "next" not in (output.get("properties") or {}):
        output["properties"] = {**output.get("properties", {}), "next": NEXT}
        next_in = "structured"
    tokens = _tokens(tool, resolver, problems)
    if fields is None and pages is None and items is None and tokens is None:
        return tool
    plan = ResultPlan(items, pages, fields, max_items, max_pages, next_in, tokens)
    inputs["properties"] = props
    return replace(
        tool,
        input_schema=inputs,
        output_schema=output if tool.output_schema is not None else None,
        plan=replace(tool.plan, results=plan),
    )


def _tokens(tool: ToolSpec, resolver: Resolver, problems: list[Problem] | None) -> int | None:
    value = dict(tool.operation.extensions).get(TOKENS_EXTENSION)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if problems is not None:
        message = f"{TOKENS_EXTENSION} must be a whole number of tokens (0: no budget); ignored"
        problems.append(resolver.problem(Level.WARNING, message, tool.operation.at.child(TOKENS_EXTENSION)))
    return None


def _is_container(schema: Schema, resolver: Resolver) -> bool:
    try:
        node, _ = resolver.resolve(schema.node, schema.at)
    except RefError:
        return False
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return bool({"object", "array"} & set(kinds)) or "properties" in node or "items" in node or "allOf" in node


def unrequire(schema: Mapping[str, Any], shared: Shared | None = None) -> dict[str, Any]:
    """`schema` without `required`, `minProperties`, `dependentRequired` or `minItems` anywhere ($defs included):
    a projected item may lack any member, a trimmed array any number of items.

    `shared`: the definitions and root properties done so far, by id (the tools of a large API share them): each
    is done once and the result shared (never modified)."""
    if shared is None:
        out = _unrequire(schema, 0)
        assert isinstance(out, dict)
        return out
    out = {}
    for key, value in schema.items():
        if key in ("$defs", "properties") and isinstance(value, Mapping):
            out[key] = {name: _unrequire_shared(node, shared) for name, node in value.items()}
        else:
            out.update(_unrequire({key: value}, 0))
    return out


def _unrequire_shared(node: Any, shared: Shared) -> Any:
    found = shared.get(id(node))
    if found is None:  # found[0] keeps `node` alive: its id is not reused
        found = shared[id(node)] = (node, _unrequire(node, 1))  # depth 1: a member of the root's $defs or properties
    return found[1]


_DROPPED = frozenset({"required", "minProperties", "dependentRequired", "minItems"})
_WALKED = dict.fromkeys(_ONE, 1) | dict.fromkeys(_MANY, 2) | dict.fromkeys(_MAP, 3)
_TOUCHED = _DROPPED | _WALKED.keys()


def _unrequire(node: Any, depth: int) -> Any:
    if not isinstance(node, Mapping) or depth > 200:
        return node
    if type(node) is dict and _TOUCHED.isdisjoint(node):
        return node  # nothing to drop or walk into (most leaves): shared as it is, as results are never modified
    out: dict[str, Any] = {}
    for key, value in node.items():
        kind = _WALKED.get(key)
        if kind is None:
            if key not in _DROPPED:
                out[key] = value
        elif kind == 1:
            out[key] = _unrequire(value, depth + 1)
        elif kind == 2 and isinstance(value, list):
            out[key] = [_unrequire(v, depth + 1) for v in value]
        elif kind == 3 and isinstance(value, Mapping):
            out[key] = {k: _unrequire(v, depth + 1) for k, v in value.items()}
        else:
            out[key] = value
    return out


def pagination_lines(tools: Sequence[ToolSpec]) -> list[str]:
    """What `mcp-codegen -v` prints: the pagination found per operation, and how many have none."""
    lines = []
    for tool in tools:
        pages = tool.plan.results.pages if tool.plan.results is not None else None
        if pages is not None:
            lines.append(f"pagination: {tool.name} ({tool.plan.method} {tool.plan.path}): {pages.describe()}")
    lines.append(f"pagination: found on {len(lines)} of {len(tools)} operations")
    return lines


def config_result_tokens(tools: Sequence[ToolSpec], config: Config) -> list[ToolSpec]:
    """The config file's per-operation `result_tokens` (they win over the spec's x-mcp-result-tokens)."""
    out = []
    for tool in tools:
        override = find_override(tool.operation, config.overrides)
        if override is None or override.result_tokens is None:
            out.append(tool)
            continue
        results = replace(tool.plan.results or ResultPlan(), tokens=override.result_tokens)
        out.append(replace(tool, plan=replace(tool.plan, results=results)))
    return out
