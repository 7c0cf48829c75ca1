"""The model -> one MCP tool per operation: name, title, description, schemas, annotations, request plan.

The request plan is everything the generated server needs to turn the tool's arguments back into the
exact HTTP request the spec describes: for each argument, its wire name, location and serialization.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import naming
from ..spec.model import Api, Body, Operation, Parameter, Response
from ..spec.normalize import json_media_rank
from ..problems import Level, Problem
from ..spec.refs import Ref, Resolver
from .schemas import Definitions, SchemaConverter, refs_in

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
COMPACT_TEXT = 300  # --compact: characters of the operation description kept in the tool description
OUTPUT_DEPTH = 0  # default: definitions more than this many $ref hops below an output schema become loose
INPUT_BUDGET = 64_000  # default: characters of an input schema's definitions before deeper ones become loose
# Output-schema keywords that never change which responses validate (annotations), dropped to keep
# tools/list small; `discriminator` is an annotation in 2020-12 and its mapping would name dropped defs.
OUTPUT_ANNOTATIONS = frozenset(
    {"examples", "default", "title", "deprecated", "readOnly", "writeOnly", "discriminator", "$comment"}
)
# Keywords whose subschemas constrain in reverse (or conditionally): loosening inside them could reject
# valid responses, so a loosened output schema drops them, which only accepts more.
OUTPUT_CONTRAVARIANT = frozenset({"not", "if", "then", "else"})


@dataclass(frozen=True, slots=True)
class ArgPlan:
    arg: str  # the argument key in inputSchema
    name: str  # the name on the wire
    location: str  # path | query | header | cookie | body (a property of a flattened body)
    style: str = ""
    explode: bool = False
    allow_reserved: bool = False
    content_type: str | None = None  # parameters declared with `content` are serialized as this
    file: bool = False  # a multipart file part: the argument is {"content": base64, "filename"?, "contentType"?}
    nullable: bool = False  # a JSON body property whose schema allows null: an explicit null is sent as null

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"arg": self.arg, "name": self.name, "in": self.location}
        if self.location != "body" or self.style:
            data.update(style=self.style, explode=self.explode)
        if self.file:
            data["file"] = True
        if self.nullable:
            data["nullable"] = True
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
    fixed: tuple[tuple[str, str, str], ...] = ()  # (header | query | cookie, name, value) sent with every request

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
        if self.fixed:
            data["fixed"] = [{"in": location, "name": name, "value": value} for location, name, value in self.fixed]
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


def map_tools(
    api: Api,
    resolver: Resolver,
    output_depth: int | None = OUTPUT_DEPTH,
    compact: bool = False,
    input_budget: int | None = INPUT_BUDGET,
) -> tuple[list[ToolSpec], list[Problem]]:
    """`output_depth`: $ref hops kept in output schemas (None: all); `compact`: no output schemas at all;
    `input_budget`: characters of definitions an input schema keeps whole (None: no limit)."""
    converter = SchemaConverter(resolver, api.dialect)
    problems: list[Problem] = []
    names = _tool_names(api.operations, resolver, problems)
    tools = [
        _tool(op, names[op.path, op.method], converter, problems, output_depth, compact, input_budget)
        for op in api.operations
    ]
    return tools, problems + converter.problems


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
) -> ToolSpec:
    input_schema, args, body, notes = _input(op, converter, problems, input_budget)
    output_schema, wrap = _output(op, converter, 0 if compact else output_depth)  # compact: only `wrap` is used
    if compact:
        output_schema = None  # the result is still returned, as text and (for objects) structured content
        input_schema = _unlink(input_schema)
    read_only, destructive, idempotent = HINTS.get(op.method, (False, True, False))
    title = op.summary.rstrip(".") or naming.snake_case(name).replace("_", " ").capitalize()
    annotations = {
        **({} if compact else {"title": title}),  # compact: the tool's own title says it already
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": True,
    }
    success = [r for r in op.responses if r.status.startswith("2")]
    accept = success[0].media_types[0] if success and success[0].media_types else None
    fixed = tuple(f for f in op.fixed if not (f[0] == "header" and f[1].lower() == "accept"))
    if accept is None:  # a single-valued Accept parameter, when the responses name no media type
        accept = next((f[2] for f in op.fixed if f[0] == "header" and f[1].lower() == "accept"), None)
    plan = RequestPlan(op.method, op.path, args, body, accept, wrap, security=op.security, fixed=fixed)
    description = "\n\n".join([_description(op, compact), *notes])
    return ToolSpec(name, title, description, input_schema, output_schema, annotations, plan, op)


def _description(op: Operation, compact: bool = False) -> str:
    """Summary, description, method and path, and the documented failures; `compact`: the summary and
    the description's first paragraph (at most COMPACT_TEXT characters), method and path only."""
    parts = []
    if op.deprecated:
        parts.append("Deprecated.")
    if op.summary:
        parts.append(op.summary)
    if op.description and op.description != op.summary:
        text = op.description
        if compact:
            text = next((p.strip() for p in text.split("\n\n") if p.strip() and p.strip() != op.summary), "")
            if len(text) > COMPACT_TEXT:
                text = text[: COMPACT_TEXT - 1].rstrip() + "…"
        if text:
            parts.append(text)
    parts.append(f"{op.method} {op.path}")
    if compact:
        return MARKDOWN_LINK.sub(r"\1", "\n\n".join(parts))
    failures = [r for r in op.responses if r.status[:1] in "45" or r.status == "DEFAULT"]
    if failures:
        listed = "; ".join(_failure(r) for r in failures)
        parts.append(f"Errors: {listed}.")
    return "\n\n".join(parts)


MARKDOWN_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")


def _unlink(node: Any) -> Any:
    """--compact: Markdown links `[text](url)` -> `text` in descriptions (the URLs cost tokens, not meaning)."""
    if isinstance(node, str):
        return MARKDOWN_LINK.sub(r"\1", node)
    if isinstance(node, list):
        return [_unlink(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            out[key] = MARKDOWN_LINK.sub(r"\1", value)
        elif key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(value, dict):
            out[key] = {k: _unlink(v) for k, v in value.items()}
        elif isinstance(value, (dict, list)) and key not in ("enum", "const", "default", "examples", "required"):
            out[key] = _unlink(value)
        else:
            out[key] = value
    return out


def _failure(response: Response) -> str:
    text = " ".join(response.description.split())
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 1].rstrip() + "…"
    status = "other" if response.status == "DEFAULT" else response.status
    return f"{status} {text}".strip().rstrip(".")


# -- input ------------------------------------------------------------------------------------------
FILE_SCHEMA: Mapping[str, Any] = {  # a file part of a multipart body, as the tool takes it
    "type": "object",
    "properties": {
        "content": {"type": "string", "contentEncoding": "base64", "description": "The file's bytes, base64-encoded."},
        "filename": {"type": "string", "description": "File name sent with the part."},
        "contentType": {"type": "string", "description": "Media type of the file (default: application/octet-stream)."},
    },
    "required": ["content"],
    "additionalProperties": False,
}
MAX_EXAMPLE_TEXT = 300  # characters of the example arguments shown in the tool description


@dataclass(frozen=True, slots=True)
class _Entry:
    wire: str  # the name on the wire ("body" for a whole body)
    location: str  # path | query | header | cookie | body | body-whole
    schema: dict[str, Any]
    required: bool
    param: Parameter | None = None
    style: str = ""  # form/multipart fields: the encoding's style and explode
    explode: bool = False
    content_type: str | None = None
    file: bool = False
    at: Ref | None = None  # where the parameter or property is declared (for problems)
    nullable: bool = False  # a JSON body property whose schema allows null


def _input(
    op: Operation,
    converter: SchemaConverter,
    problems: list[Problem] | None = None,
    budget: int | None = INPUT_BUDGET,
) -> tuple[dict[str, Any], tuple[ArgPlan, ...], Any, list[str]]:
    """The input schema, the argument plans, the body plan and notes for the description.

    Each argument key that differs from its wire name is reported as a warning in `problems`, and so is
    a schema whose definitions had to be cut to fit `budget` (see fit_budget)."""
    defs = converter.defs("input")
    entries: list[_Entry] = []
    examples: dict[str, Any] = {}  # wire name -> example value
    for param in op.parameters:
        if param.schema is not None:
            schema = converter.convert(param.schema, "input")
        else:
            schema = {"type": "string"}
        schema = _describe(schema, param.description, param.deprecated)
        if param.examples and "examples" not in schema:
            schema = {**schema, "examples": list(param.examples)}
        if param.examples:
            examples.setdefault(param.name, param.examples[0])
        entries.append(_Entry(param.name, param.location, schema, param.required, param, at=param.at))

    notes: list[str] = []
    body = op.body
    if body is not None:
        body_schema: dict[str, Any] = {}
        if body.schema is not None:
            body_schema = converter.convert(body.schema, "input")
        if body.alternatives:
            notes.append(f"Request body sent as {body.media_type} (also accepted: {', '.join(body.alternatives)}).")
        kind = _body_kind(body.media_type)
        shape = _object_shape(body_schema, defs, converter) if kind in ("json", "form", "multipart") else None
        if shape is not None:
            props, required = shape
            styles = {name: (style, explode) for name, style, explode in body.encoding_styles}
            content_types = dict(body.encoding)
            props_at = body.schema.at.child("properties") if body.schema is not None else body.at
            for prop, schema in sorted(props.items()):  # the spec's key order must not matter
                nullable = kind == "json" and _allows_null(schema, defs)
                entry = _Entry(prop, "body", schema, prop in required, at=props_at.child(prop), nullable=nullable)
                if kind != "json":
                    style, explode = styles.get(prop, ("form", True))
                    is_file = kind == "multipart" and _is_binary(schema, defs, converter)
                    entry = _Entry(
                        prop,
                        "body",
                        _file_schema(schema, defs, converter) if is_file else schema,
                        prop in required,
                        None,
                        style,
                        explode,
                        content_types.get(prop),
                        is_file,
                        props_at.child(prop),
                    )
                entries.append(entry)
            if body.examples and isinstance(body.examples[0], dict):
                for key, value in body.examples[0].items():
                    if key in props:
                        examples.setdefault(key, value)
        else:
            whole = _whole_body_schema(kind, body.media_type, body_schema, defs, converter)
            entries.append(_Entry("body", "body-whole", _describe(whole, body.description, False), body.required))
            if body.examples:
                examples.setdefault("body", body.examples[0])

    schema_examples: dict[str, Any] = {}  # wire name -> the first `example`/`examples` of the argument's schema
    for entry in entries:
        found = converter.resolve_converted(entry.schema, defs).get("examples") if not entry.file else None
        if isinstance(found, list) and found and entry.wire not in examples:
            schema_examples.setdefault(entry.wire, found[0])

    keys = arg_keys([(e.wire, e.location) for e in entries])
    properties: dict[str, Any] = {}
    required_keys: list[str] = []
    args: list[ArgPlan] = []
    body_arg = None
    for entry, key in zip(entries, keys):
        if key != entry.wire and problems is not None:
            problems.append(
                converter.resolver.problem(Level.WARNING, _rename_reason(entry, key, entries), entry.at or op.at)
            )
        properties[key] = entry.schema
        if entry.required:
            required_keys.append(key)
        if entry.location == "body-whole":
            body_arg = key
        elif entry.param is not None:
            p = entry.param
            args.append(ArgPlan(key, entry.wire, entry.location, p.style, p.explode, p.allow_reserved, p.content_type))
        else:
            args.append(
                ArgPlan(
                    key,
                    entry.wire,
                    "body",
                    entry.style,
                    entry.explode,
                    False,
                    entry.content_type,
                    entry.file,
                    entry.nullable,
                )
            )
    body_plan = BodyPlan(body.media_type, body_arg, body.required) if body is not None else None

    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required_keys:
        result["required"] = required_keys
    result, used_defs, cut = fit_budget(result, defs, budget)
    if cut is not None and problems is not None:
        message = (
            f"the input schema's definitions exceed {budget} characters (--input-budget); those more than {cut} "
            "$ref levels down accept any value of their type"
        )
        problems.append(converter.resolver.problem(Level.WARNING, message, op.at))
    if used_defs:
        result["$defs"] = used_defs
    wire_to_key = {e.wire: k for e, k in zip(entries, keys)}
    example = {wire_to_key[w]: v for w, v in examples.items() if w in wire_to_key}
    if len(_example_text(example)) <= MAX_EXAMPLE_TEXT:  # the spec's own examples first, whole or not at all,
        for wire, value in sorted(schema_examples.items()):  # then schema examples while the text stays short
            more = {**example, wire_to_key[wire]: value}
            if len(_example_text(more)) <= MAX_EXAMPLE_TEXT:
                example = more
        if example:
            notes.append(f"Example arguments: {_example_text(example)}")
    return result, tuple(args), body_plan, notes


def _example_text(example: Mapping[str, Any]) -> str:
    return json.dumps(dict(sorted(example.items())), ensure_ascii=False, separators=(", ", ": "))


def _rename_reason(entry: _Entry, key: str, entries: list[_Entry]) -> str:
    what = "request body" if entry.location == "body-whole" else f"{entry.location} parameter"
    if entry.location == "body":
        what = "body property"
    if naming.arg_name(entry.wire) != entry.wire:
        why = f"is not a client-safe argument name ({naming.ARG_NAME_RULE})"
    else:
        why = "is used by another argument of this tool"
    return f"{what} {entry.wire!r} {why}; the tool takes it as {key!r} and sends it as {entry.wire!r}"


def arg_keys(wires: list[tuple[str, str]]) -> list[str]:
    """Client-safe, unique argument keys for (wire name, location) pairs, deterministically.

    A wire name that is already a valid key keeps it. When two entries want the same key from different
    locations, each gets its location as a suffix (`id__path`, `id__body`); a key still taken gets `_2`,
    `_3`, ... Names that are valid as they are claim their key before names that had to be changed.
    """
    bases = [naming.arg_name(wire) for wire, _ in wires]
    locations: dict[str, set[str]] = {}
    for base, (_, location) in zip(bases, wires):
        locations.setdefault(base, set()).add("body" if location.startswith("body") else location)
    wanted = []
    for base, (_, location) in zip(bases, wires):
        if len(locations[base]) > 1:
            suffix = "__" + ("body" if location.startswith("body") else location)
            base = naming.shorten(base, naming.MAX_ARG_NAME - len(suffix)) + suffix
        wanted.append(base)
    keys: list[str | None] = [None] * len(wires)
    taken: set[str] = set()
    for exact in (True, False):  # unchanged names first
        for index, ((wire, _), want) in enumerate(zip(wires, wanted)):
            if keys[index] is None and (want == wire) == exact:
                keys[index] = naming.unique(want, taken, naming.MAX_ARG_NAME)
    return [k for k in keys if k is not None]


def _body_kind(media_type: str) -> str:
    rank = json_media_rank(media_type)
    base = media_type.split(";")[0].strip().lower()
    if rank <= 1:
        return "json"
    if rank == 2:
        return "form"
    if rank == 3:
        return "multipart"
    if (
        base.startswith("text/")
        or base.endswith(("xml", "+yaml", "/yaml", "csv"))
        or base in ("application/javascript", "application/graphql")
    ):
        return "text"
    return "binary"


def _whole_body_schema(
    kind: str, media_type: str, schema: dict[str, Any], defs: Mapping[str, Any], converter: SchemaConverter
) -> dict[str, Any]:
    """The schema of a `body` argument: as declared for JSON, a string for text, base64 for binary."""
    if kind == "text":
        out = {
            k: v
            for k, v in schema.items()
            if k in ("description", "examples", "enum", "pattern", "minLength", "maxLength")
        }
        out["type"] = "string"
        out.setdefault("description", f"The request body ({media_type}), as text.")
        return out
    if kind == "binary":
        return {
            "type": "string",
            "contentEncoding": "base64",
            "description": f"The request body ({media_type}), base64-encoded.",
        }
    return schema


def _allows_null(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> bool:
    """Whether a converted schema says, explicitly, that null is a valid value (`type` with "null", an enum or
    const of null, an anyOf/oneOf member that does, through $refs); a schema that says nothing (`{}`) does not."""
    if depth > 16 or not isinstance(schema, dict):
        return False
    checks: list[bool] = []
    if "type" in schema:
        kind = schema["type"]
        checks.append(kind == "null" or (isinstance(kind, list) and "null" in kind))
    if "enum" in schema:
        checks.append(isinstance(schema["enum"], list) and None in schema["enum"])
    if "const" in schema:
        checks.append(schema["const"] is None)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            checks.append(any(_allows_null(member, defs, depth + 1) for member in schema[key]))
    if isinstance(schema.get("allOf"), list):
        checks.append(all(_allows_null(member, defs, depth + 1) for member in schema["allOf"]))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        checks.append(_allows_null(defs.get(ref[len("#/$defs/") :]), defs, depth + 1))
    return bool(checks) and all(checks)


def _is_binary(schema: dict[str, Any], defs: Mapping[str, Any], converter: SchemaConverter) -> bool:
    """A file: a binary string (3.0 `format: binary`, 2.0 `type: file`, 3.1 `contentMediaType`), or an array of them."""
    schema = converter.resolve_converted(schema, defs)
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return _is_binary(schema["items"], defs, converter)
    types = schema.get("type")
    if types not in ("string", None) and not (isinstance(types, list) and "string" in types):
        return False
    return schema.get("format") == "binary" or ("contentMediaType" in schema and "contentEncoding" not in schema)


def _file_schema(schema: dict[str, Any], defs: Mapping[str, Any], converter: SchemaConverter) -> dict[str, Any]:
    resolved = converter.resolve_converted(schema, defs)
    if resolved.get("type") == "array":
        out: dict[str, Any] = {"type": "array", "items": dict(FILE_SCHEMA)}
        for key in ("minItems", "maxItems", "description"):
            if key in resolved:
                out[key] = resolved[key]
        return out
    out = dict(FILE_SCHEMA)
    if isinstance(resolved.get("description"), str):
        out["description"] = resolved["description"]
    return out


def _describe(schema: dict[str, Any], description: str, deprecated: bool) -> dict[str, Any]:
    if not description and not deprecated:
        return schema
    out = dict(schema)
    if description and "description" not in out:
        out["description"] = description
    if deprecated:
        out["deprecated"] = True
    return out


def _object_shape(
    schema: dict[str, Any], defs: Mapping[str, Any], converter: SchemaConverter, depth: int = 0
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
def _output(
    op: Operation, converter: SchemaConverter, depth: int | None = OUTPUT_DEPTH
) -> tuple[dict[str, Any] | None, bool]:
    """The output schema (always object-rooted, no required keys at the root) and whether it wraps.

    With `depth`, definitions more than `depth` $ref hops below the root are replaced by their type
    alone (or by {}), and annotations are dropped: the schema gets looser, never stricter, so every
    response that matched the full schema still validates."""
    for response in op.responses:
        if not response.status.startswith("2"):
            continue
        if response.schema is None or response.media_type is None or json_media_rank(response.media_type) > 1:
            return None, False
        schema = converter.convert(response.schema, "output")
        defs = converter.defs("output")
        root = converter.resolve_converted(schema, defs)
        if _plain_object(root):
            out = {k: v for k, v in root.items() if k not in ("required", "additionalProperties", "examples")}
            out["type"] = "object"
            wrap = False
        else:
            out = {"type": "object", "properties": {"result": schema}}
            wrap = True
        if depth is None:
            used = prune_defs(out, defs)
        else:  # a wrapped (array, scalar) result counts from its items, one level down
            out, used = loosen(out, defs, depth + 1 if wrap else depth)
        if used:
            out["$defs"] = used
        return out, wrap
    return None, False


def loosen(schema: dict[str, Any], defs: Definitions, depth: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """`schema` and its `defs` cut `depth` $ref hops below the root, without annotations (see _output).

    A definition's distance is the fewest $ref hops from the root (breadth first); references to
    definitions farther than `depth` become `{"type": <its type>}` (or `{}`), which accepts a superset."""
    kept = set(reach(schema, defs, depth))

    def cut(node: Any, level: int) -> Any:  # level: 0 = the root, 1 = its properties; descriptions below go
        if isinstance(node, list):
            return [cut(v, level) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and _names_cut(ref, kept):
            return _loose(defs.get(ref[len("#/$defs/") :]))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in OUTPUT_ANNOTATIONS or key in OUTPUT_CONTRAVARIANT or (key == "description" and level > 1):
                continue
            if key in ("properties", "patternProperties", "dependentSchemas") and isinstance(value, dict):
                out[key] = {k: cut(v, level + 1) for k, v in value.items()}
            elif key in ("enum", "const", "required", "dependentRequired"):
                out[key] = value
            else:
                out[key] = cut(value, level + 2)
        return out

    return cut(schema, 0), {name: cut(defs[name], 2) for name in sorted(kept)}


def fit_budget(
    schema: dict[str, Any], defs: Definitions, budget: int | None
) -> tuple[dict[str, Any], dict[str, Any], int | None]:
    """An input schema, the definitions it uses, and the $ref depth they were cut at (None: not cut).

    When the definitions, as compact JSON, exceed `budget` characters, only those at most N $ref hops from
    the root are kept, N the largest that fits (at least 1); a reference to a farther one becomes its type
    and description alone. The server then accepts more there and the upstream API judges the rest: a tool
    whose schema runs to megabytes (a large API's entity graph) is no use to a model either."""
    distance = reach(schema, defs)
    if budget is None or sum(defs.size(name) for name in distance) <= budget:
        return schema, {name: defs[name] for name in sorted(distance)}, None
    by_level: Counter[int] = Counter()
    for name, hops in distance.items():
        by_level[hops] += defs.size(name)
    depth, total = 1, by_level[1]
    while depth + 1 in by_level and total + by_level[depth + 1] <= budget:
        depth += 1
        total += by_level[depth]
    kept = {name for name, hops in distance.items() if hops <= depth}

    def cut(node: Any) -> Any:
        if isinstance(node, list):
            return [cut(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and _names_cut(ref, kept):
            target = defs.get(ref[len("#/$defs/") :])
            out = {**_loose(target), **{k: cut(v) for k, v in node.items() if k != "$ref"}}
            if isinstance(target, dict) and isinstance(target.get("description"), str):
                out.setdefault("description", target["description"])
            return out
        out = {}
        for key, value in node.items():
            if key in ("enum", "const", "default", "examples"):
                out[key] = value
            elif key == "discriminator" and isinstance(value, dict) and isinstance(value.get("mapping"), dict):
                mapping = {k: v for k, v in value["mapping"].items() if not _names_cut(v, kept)}
                out[key] = (
                    {**value, "mapping": mapping} if mapping else {k: v for k, v in value.items() if k != "mapping"}
                )
            else:
                out[key] = cut(value)
        return out

    return cut(schema), {name: cut(defs[name]) for name in sorted(kept)}, depth


def _names_cut(ref: Any, kept: set[str]) -> bool:
    return isinstance(ref, str) and ref.startswith("#/$defs/") and ref[len("#/$defs/") :] not in kept


def _loose(target: Any) -> dict[str, Any]:
    """What stands for a cut definition: its own `type`, which holds for every value it accepts, or {}."""
    return {"type": target["type"]} if isinstance(target, dict) and "type" in target else {}


def reach(schema: Mapping[str, Any], defs: Definitions, depth: int | None = None) -> dict[str, int]:
    """The definitions `schema` reaches (within `depth` $ref hops, if given): name -> fewest hops."""
    distance: dict[str, int] = {}
    frontier = set(refs_in(schema))
    hops = 1
    while frontier and (depth is None or hops <= depth):
        found: set[str] = set()
        for name in frontier:
            if name in defs:
                distance[name] = hops
                found |= defs.refs(name)
        frontier = found - distance.keys()
        hops += 1
    return distance


def _plain_object(schema: Mapping[str, Any]) -> bool:
    return (
        schema.get("type") == "object"
        and isinstance(schema.get("properties"), dict)
        and not any(k in schema for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties"))
    )


def prune_defs(schema: Mapping[str, Any], defs: Definitions) -> dict[str, Any]:
    """Only the definitions reachable from `schema` (its own `$defs` excluded), sorted by name."""
    return {name: defs[name] for name in sorted(reach(schema, defs))}
