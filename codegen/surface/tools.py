"""The IR -> one MCP tool per operation: name, title, description, schemas, annotations, request plan.

This module puts the parts together (`map_tools`); each part has its own module: naming, text,
annotations, inputs, outputs, budget, plans (the ToolSpec and RequestPlan it returns).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..problems import Level, Problem
from ..spec.model import Api, Operation
from ..spec.refs import Resolver
from . import naming, prose, text
from .annotations import tool_annotations
from .budget import INPUT_BUDGET, OUTPUT_DEPTH
from .inputs import build_input
from .outputs import build_output
from .parallel import Early, Mapper, Shaper, Part, map_operations, map_part
from .plans import RequestPlan, ToolSpec
from .results import with_results
from .schemas import SchemaConverter

Cleaned = dict[int, tuple[Any, Any]]  # id of a definition -> (the definition, kept alive; its cleaned copy)


def map_tools(
    api: Api,
    resolver: Resolver,
    output_depth: int | None = OUTPUT_DEPTH,
    compact: bool = False,
    input_budget: int | None = INPUT_BUDGET,
    early: Early | None = None,
    waiting: Callable[[], None] | None = None,
) -> tuple[list[ToolSpec], list[Problem]]:
    """`output_depth`: $ref hops kept in output schemas (None: all); `compact`: no output schemas at all;
    `input_budget`: characters of definitions an input schema keeps whole (None: no limit); `early`: a helper
    reading and mapping the last paths' operations already (parallel.share_early, with `map_early`); `waiting`:
    work done while a helper sends its tools (parallel.map_operations)."""
    problems: list[Problem] = []
    names = _tool_names(api.operations, resolver, problems)
    mapped, shaped = _mappers(names, resolver, output_depth, compact, input_budget)
    # a large API's operations are mapped in two processes (parallel.py), with `early`
    tools, found = map_operations(api.operations, resolver, api.dialect, mapped, shaped, early, names, waiting)
    return tools, problems + found


def map_early(
    api: Api,
    resolver: Resolver,
    output_depth: int | None = OUTPUT_DEPTH,
    compact: bool = False,
    input_budget: int | None = INPUT_BUDGET,
) -> Part | None:
    """An early helper's tools (parallel.Early): map_tools' of `api`, the last paths' operations only, each named
    as if they were all (map_tools uses them only where that is the name it gives)."""
    names = _tool_names(api.operations, resolver, [])
    mapped, shaped = _mappers(names, resolver, output_depth, compact, input_budget)
    return map_part(api.operations, resolver, api.dialect, mapped, shaped)


def _mappers(
    names: dict[Any, str],
    resolver: Resolver,
    output_depth: int | None,
    compact: bool,
    input_budget: int | None,
) -> tuple[Mapper, Shaper]:
    def mapped(operations: Sequence[Operation], converter: SchemaConverter, found: list[Problem]) -> list[ToolSpec]:
        cleaned: Cleaned = {}
        return [
            _tool(op, names[op.path, op.method], converter, found, output_depth, compact, input_budget, cleaned)
            for op in operations
        ]

    def shaped(tools: list[ToolSpec], found: list[Problem]) -> list[ToolSpec]:  # next pages, fields, budget
        shared: Cleaned = {}  # output definitions without `required`, done once for all the tools that share them
        return [with_results(tool, resolver, found, compact, shared) for tool in tools]

    return mapped, shaped


def _tool_names(operations: tuple[Operation, ...], resolver: Resolver, problems: list[Problem]) -> dict[Any, str]:
    names: dict[Any, str] = {}
    taken: set[str] = set()
    for op in operations:  # normalize() yields them sorted by path and method
        raw = op.operation_id or naming.fallback_tool_name(op.method, op.path)
        if op.operation_id and not naming.snake_case(op.operation_id):
            raw = naming.fallback_tool_name(op.method, op.path)
            message = f"operationId {op.operation_id!r} has nothing usable in a tool name; named after method and path"
            problems.append(resolver.problem(Level.WARNING, message, op.at))
        name = naming.tool_name(raw)
        if len(naming.snake_case(raw)) > naming.MAX_TOOL_NAME:
            problems.append(
                resolver.problem(
                    Level.WARNING,
                    f"tool name for {raw!r} is longer than {naming.MAX_TOOL_NAME} characters; shortened to {name!r}",
                    op.at,
                )
            )
        final = naming.unique(name, taken, naming.MAX_TOOL_NAME)
        if final != name:
            problems.append(
                resolver.problem(
                    Level.WARNING, f"tool name {name!r} is already used; this operation is named {final!r}", op.at
                )
            )
        if not op.operation_id:
            problems.append(
                resolver.problem(Level.WARNING, f"no operationId; tool named {final!r} after method and path", op.at)
            )
        names[op.path, op.method] = final  # not op.at: path items shared through $ref share their operations' `at`
    return names


def _tool(
    op: Operation,
    name: str,
    converter: SchemaConverter,
    problems: list[Problem],
    output_depth: int | None = OUTPUT_DEPTH,
    compact: bool = False,
    input_budget: int | None = INPUT_BUDGET,
    cleaned: Cleaned | None = None,
) -> ToolSpec:
    input_schema, args, body, notes = build_input(op, converter, problems, input_budget)
    output_schema, wrap = build_output(op, converter, 0 if compact else output_depth)  # compact: only `wrap` is used
    input_schema = _clean(input_schema, {} if cleaned is None else cleaned)
    output_schema = None if compact else _clean(output_schema, {} if cleaned is None else cleaned)  # still returned
    words = text.tool_text(op, name, compact)
    success = [r for r in op.responses if r.status.startswith("2")]
    accept = success[0].media_types[0] if success and success[0].media_types else None
    fixed = tuple(f for f in op.fixed if not (f[0] == "header" and f[1].lower() == "accept"))
    if accept is None:  # a single-valued Accept parameter, when the responses name no media type
        accept = next((f[2] for f in op.fixed if f[0] == "header" and f[1].lower() == "accept"), None)
    plan = RequestPlan(op.method, op.path, args, body, accept, wrap, security=op.security, fixed=fixed)
    description = "\n\n".join(part for part in [words.description, *notes] if part)
    annotations = tool_annotations(op, words.title)
    return ToolSpec(name, words.title, description, input_schema, output_schema, annotations, plan, op)


def _clean(schema: Any, cleaned: Cleaned) -> Any:
    """prose.clean_schema of a tool's schema, each of its `$defs` and properties cleaned once for all the tools that
    share it (the definitions a schema reaches, and most argument schemas, are shared objects, never modified)."""
    if not isinstance(schema, dict):
        return prose.clean_schema(schema)
    out = {}
    for key, value in schema.items():
        if key in ("$defs", "properties") and isinstance(value, dict):
            out[key] = {name: _clean_shared(node, cleaned) for name, node in value.items()}
        else:
            out.update(prose.clean_schema({key: value}))
    return out


def _clean_shared(node: Any, cleaned: Cleaned) -> Any:
    found = cleaned.get(id(node))
    if found is None:  # found[0] keeps `node` alive: its id is not reused
        found = cleaned[id(node)] = (node, prose.clean_schema(node))
    return found[1]
