"""The model -> one MCP tool per operation: name, title, description, schemas, annotations, request plan.

The request plan is everything the generated server needs to turn the tool's arguments back into the
exact HTTP request the spec describes: for each argument, its wire name, location and serialization.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import naming
from .model import Api, Body, Operation, Parameter, Response
from .normalize import json_media_rank
from .problems import Level, Problem
from .refs import Resolver
from .schemas import SchemaConverter

# method -> (readOnlyHint, destructiveHint, idempotentHint)
HINTS: Mapping[str, tuple[bool, bool, bool]] = {
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "PUT": (False, True, True),
    "DELETE": (False, True, True),
    "POST": (False, False, False),
    "PATCH": (False, False, False),
}
MAX_ERROR_TEXT = 120  # characters of each failure response's description in the tool description


@dataclass(frozen=True, slots=True)
class ArgPlan:
    arg: str  # the argument key in inputSchema
    name: str  # the name on the wire
    location: str  # path | query | header | cookie | body (a property of a flattened body)
    style: str = ""
    explode: bool = False
    allow_reserved: bool = False
    content_type: str | None = None  # parameters declared with `content` are serialized as this

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"arg": self.arg, "name": self.name, "in": self.location}
        if self.location != "body":
            data.update(style=self.style, explode=self.explode)
        if self.allow_reserved:
            data["allowReserved"] = True
        if self.content_type:
            data["contentType"] = self.content_type
        return data


@dataclass(frozen=True, slots=True)
class BodyPlan:
    media_type: str
    arg: str | None  # the argument holding the whole body; None when its properties are arguments
    required: bool

    def to_json(self) -> dict[str, Any]:
        return {"mediaType": self.media_type, "arg": self.arg, "required": self.required}


@dataclass(frozen=True, slots=True)
class RequestPlan:
    method: str
    path: str
    args: tuple[ArgPlan, ...]
    body: BodyPlan | None
    accept: str | None
    wrap_result: bool  # the structured result is {"result": <response>} (non-object response schema)
    # alternatives (OR) of requirements (AND): scheme key -> scopes; () = no authentication
    security: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "method": self.method,
            "path": self.path,
            "args": [a.to_json() for a in self.args],
            "body": self.body.to_json() if self.body else None,
            "accept": self.accept,
            "wrapResult": self.wrap_result,
        }
        if self.security:
            data["security"] = [{key: list(scopes) for key, scopes in alt} for alt in self.security]
        return data


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    plan: RequestPlan
    operation: Operation

    def to_json(self) -> dict[str, Any]:
        """The tool exactly as tools/list sends it."""
        data: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.output_schema is not None:
            data["outputSchema"] = self.output_schema
        data["annotations"] = self.annotations
        return data


def map_tools(api: Api, resolver: Resolver) -> tuple[list[ToolSpec], list[Problem]]:
    converter = SchemaConverter(resolver, api.dialect)
    problems: list[Problem] = []
    names = _tool_names(api.operations, resolver, problems)
    tools = [_tool(op, names[op.at], converter) for op in api.operations]
    return tools, problems + converter.problems


def _tool_names(operations: tuple[Operation, ...], resolver: Resolver, problems: list[Problem]) -> dict[Any, str]:
    names: dict[Any, str] = {}
    taken: set[str] = set()
    for op in operations:  # normalize() yields them sorted by path and method
        raw = op.operation_id or naming.fallback_tool_name(op.method, op.path)
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
        names[op.at] = final
    return names


def _tool(op: Operation, name: str, converter: SchemaConverter) -> ToolSpec:
    input_schema, args, body = _input(op, converter)
    output_schema, wrap = _output(op, converter)
    read_only, destructive, idempotent = HINTS.get(op.method, (False, True, False))
    title = op.summary.rstrip(".") or naming.snake_case(name).replace("_", " ").capitalize()
    annotations = {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": True,
    }
    success = [r for r in op.responses if r.status.startswith("2")]
    accept = success[0].media_types[0] if success and success[0].media_types else None
    plan = RequestPlan(op.method, op.path, args, body, accept, wrap, security=op.security)
    return ToolSpec(name, title, _description(op), input_schema, output_schema, annotations, plan, op)


def _description(op: Operation) -> str:
    parts = []
    if op.deprecated:
        parts.append("Deprecated.")
    if op.summary:
        parts.append(op.summary)
    if op.description and op.description != op.summary:
        parts.append(op.description)
    parts.append(f"{op.method} {op.path}")
    failures = [r for r in op.responses if r.status[:1] in "45" or r.status == "DEFAULT"]
    if failures:
        listed = "; ".join(_failure(r) for r in failures)
        parts.append(f"Errors: {listed}.")
    return "\n\n".join(parts)


def _failure(response: Response) -> str:
    text = " ".join(response.description.split())
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 1].rstrip() + "…"
    status = "other" if response.status == "DEFAULT" else response.status
    return f"{status} {text}".strip().rstrip(".")


# -- input ------------------------------------------------------------------------------------------
def _input(op: Operation, converter: SchemaConverter) -> tuple[dict[str, Any], tuple[ArgPlan, ...], Any]:
    defs: dict[str, Any] = {}
    entries: list[tuple[str, str, dict[str, Any], bool, Parameter | None]] = (
        []
    )  # (wire, location, schema, required, param)
    for param in op.parameters:
        if param.schema is not None:
            schema, used = converter.convert(param.schema, "input")
            defs.update(used)
        else:
            schema = {"type": "string"}
        schema = _describe(schema, param.description, param.deprecated)
        entries.append((param.name, param.location, schema, param.required, param))

    body_plan = None
    body_arg_wire = None
    if op.body is not None:
        body_schema: dict[str, Any] = {}
        if op.body.schema is not None:
            body_schema, used = converter.convert(op.body.schema, "input")
            defs.update(used)
        shape = _object_shape(body_schema, defs, converter) if _flattenable(op.body) else None
        if shape is not None:
            props, body_required = shape
            for prop, schema in props.items():
                entries.append((prop, "body", schema, prop in body_required, None))
        else:
            body_arg_wire = "body"
            entries.append(
                ("body", "body-whole", _describe(body_schema, op.body.description, False), op.body.required, None)
            )

    counts = Counter(naming.arg_name(wire) for wire, *_ in entries)
    taken: set[str] = set()
    properties: dict[str, Any] = {}
    required: list[str] = []
    args: list[ArgPlan] = []
    body_arg = None
    for wire, location, schema, is_required, declared in entries:
        base = naming.arg_name(wire)
        if counts[base] > 1:
            base = f"{base}__{'body' if location.startswith('body') else location}"
        key = naming.unique(base, taken, naming.MAX_ARG_NAME)
        properties[key] = schema
        if is_required:
            required.append(key)
        if location == "body-whole":
            body_arg = key
        elif declared is not None:
            args.append(
                ArgPlan(
                    key,
                    wire,
                    location,
                    declared.style,
                    declared.explode,
                    declared.allow_reserved,
                    declared.content_type,
                )
            )
        else:
            args.append(ArgPlan(key, wire, "body"))
    if op.body is not None:
        body_plan = BodyPlan(op.body.media_type, body_arg if body_arg_wire else None, op.body.required)

    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    used_defs = prune_defs(result, defs)
    if used_defs:
        result["$defs"] = used_defs
    return result, tuple(args), body_plan


def _describe(schema: dict[str, Any], description: str, deprecated: bool) -> dict[str, Any]:
    if not description and not deprecated:
        return schema
    out = dict(schema)
    if description and "description" not in out:
        out["description"] = description
    if deprecated:
        out["deprecated"] = True
    return out


def _flattenable(body: Body) -> bool:
    return json_media_rank(body.media_type) <= 3  # JSON and forms: properties become arguments


def _object_shape(
    schema: dict[str, Any], defs: dict[str, Any], converter: SchemaConverter, depth: int = 0
) -> tuple[dict[str, Any], list[str]] | None:
    """Properties and required names of a plain object schema (through $ref and allOf), else None."""
    if depth > 16:
        return None
    schema = converter.resolve_converted(schema, defs)
    if set(schema) - {
        "type",
        "properties",
        "required",
        "description",
        "title",
        "allOf",
        "additionalProperties",
        "examples",
        "discriminator",
    }:
        return None  # anyOf/oneOf/not/...: the body stays one argument
    if schema.get("type", "object") != "object":
        return None
    props: dict[str, Any] = dict(schema.get("properties", {}))
    required = list(schema.get("required", []))
    for member in schema.get("allOf", []):
        shape = _object_shape(member, defs, converter, depth + 1)
        if shape is None:
            return None
        for key, value in shape[0].items():
            props[key] = value if key not in props or props[key] == value else {"allOf": [props[key], value]}
        required += [r for r in shape[1] if r not in required]
    if not props:
        return None
    return props, required


# -- output -----------------------------------------------------------------------------------------
def _output(op: Operation, converter: SchemaConverter) -> tuple[dict[str, Any] | None, bool]:
    """The output schema (always object-rooted, no required keys at the root) and whether it wraps."""
    for response in op.responses:
        if not response.status.startswith("2"):
            continue
        if response.schema is None or response.media_type is None or json_media_rank(response.media_type) > 1:
            return None, False
        schema, defs = converter.convert(response.schema, "output")
        root = converter.resolve_converted(schema, defs)
        if _plain_object(root):
            out = {k: v for k, v in root.items() if k not in ("required", "additionalProperties", "examples")}
            out["type"] = "object"
            wrap = False
        else:
            out = {"type": "object", "properties": {"result": schema}}
            wrap = True
        used = prune_defs(out, defs)
        if used:
            out["$defs"] = used
        return out, wrap
    return None, False


def _plain_object(schema: Mapping[str, Any]) -> bool:
    return (
        schema.get("type") == "object"
        and isinstance(schema.get("properties"), dict)
        and not any(k in schema for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties"))
    )


def prune_defs(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """Only the definitions reachable from `schema` (its own `$defs` excluded), sorted by name."""
    used: set[str] = set()
    pending = list(_refs_in(schema))
    while pending:
        name = pending.pop()
        if name in used or name not in defs:
            continue
        used.add(name)
        pending.extend(_refs_in(defs[name]))
    return {name: defs[name] for name in sorted(used)}


def _refs_in(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key == "$defs":
                    continue
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    yield value[len("#/$defs/") :]
                elif key == "mapping" and isinstance(value, dict):
                    yield from (
                        v[len("#/$defs/") :] for v in value.values() if isinstance(v, str) and v.startswith("#/$defs/")
                    )
                else:
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(current)
