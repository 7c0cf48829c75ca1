"""Input schemas: the operation's parameters and body as one object schema, and the argument plans.

Parameters become properties named after their wire names; an object JSON, form or multipart body is
flattened into top-level properties, any other body is one `body` argument (an object body that can hold
nothing is no argument at all). Keys that clash or are not client-safe are renamed (`naming.arg_keys`) and each
argument's plan keeps its wire name and location. The definitions the schema uses are kept within the
input budget (`budget.fit_budget`). The tool description gets the spec's example arguments unless their
schemas already list every one of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..problems import Level, Problem
from ..spec.model import Operation, Parameter
from ..spec.content import content_key
from ..spec.media import json_media_rank
from ..spec.refs import Ref
from . import naming
from .budget import INPUT_BUDGET, fit_budget
from .naming import arg_keys
from .plans import ArgPlan, BodyPlan
from .schemas import Definitions, SchemaConverter

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


class _Entry(NamedTuple):  # a tuple: tens of thousands are made for a large API, and a frozen dataclass is slower
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


def build_input(
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
    examples: dict[tuple[str, str], Any] = {}  # (wire name, location) -> example value
    for param in op.parameters:
        schema = _param_schema(param, converter, defs.memo)
        if param.examples:
            examples.setdefault((param.name, param.location), param.examples[0])
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
                nullable = kind == "json" and _nullable(schema, defs)
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
                        examples.setdefault((key, "body"), value)
        elif kind in ("json", "form", "multipart") and _is_empty_object(body_schema, defs, converter):
            pass  # an object that can hold nothing (Stripe's GETs declare one): no `body` argument
        else:
            whole = _whole_body_schema(kind, body.media_type, body_schema, defs, converter)
            entries.append(_Entry("body", "body-whole", _describe(whole, body.description, False), body.required))
            if body.examples:
                examples.setdefault(("body", "body-whole"), body.examples[0])

    in_schema: dict[tuple[str, str], list[Any]] = {}  # (wire name, location) -> the examples its schema lists
    for entry in entries:
        found = converter.resolve_converted(entry.schema, defs).get("examples") if not entry.file else None
        if isinstance(found, list):
            in_schema[entry.wire, entry.location] = found
    if all(value in in_schema.get(wire, []) for wire, value in examples.items()):
        examples = {}  # every example is already in its argument's schema

    keys = _keys(tuple((e.wire, e.location) for e in entries), defs.memo)
    properties: dict[str, Any] = {}
    required_keys: list[str] = []
    args: list[ArgPlan] = []
    body_arg = None
    for entry, key in zip(entries, keys):
        if key != entry.wire and problems is not None:
            problems.append(_renamed(entry, key, entry.at or op.at, converter, defs.memo))
        properties[key] = entry.schema
        if entry.required:
            required_keys.append(key)
        if entry.location == "body-whole":
            body_arg = key
        elif entry.param is not None:
            p = entry.param
            fields: tuple[Any, ...] = (key, entry.wire, entry.location, p.style, p.explode, p.allow_reserved)
            args.append(_arg_plan((*fields, p.content_type), defs.memo))
        else:
            fields = (key, entry.wire, "body", entry.style, entry.explode, False, entry.content_type, entry.file)
            args.append(_arg_plan((*fields, entry.nullable), defs.memo))
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
    wire_to_key = {(e.wire, e.location): k for e, k in zip(entries, keys)}
    example = {wire_to_key[w]: v for w, v in examples.items() if w in wire_to_key}
    if example and len(_example_text(example)) <= MAX_EXAMPLE_TEXT:  # whole or not at all
        notes.append(f"Example arguments: {_example_text(example)}")
    return result, tuple(args), body_plan, notes


def _param_schema(param: Parameter, converter: SchemaConverter, memo: dict[Any, Any]) -> dict[str, Any]:
    """A parameter's argument schema: converted, with its description, deprecation and examples.

    Remembered by the converted schema (shared, see SchemaConverter.convert) and the rest: a large API declares
    the same parameter on thousands of operations, and the one object it gets lets the later steps (cleaning,
    the budget) do their work on it once. Never modified by its users."""
    if param.schema is None:
        return _describe({"type": "string"}, param.description, param.deprecated)
    converted = converter.convert(param.schema, "input")
    examples = content_key(param.examples) if param.examples else b""
    key = ("argument", id(converted), param.description, param.deprecated, examples)
    found = memo.get(key) if examples is not None else None
    if found is None:  # found[0] keeps `converted` alive: its id is not reused
        schema = _describe(converted, param.description, param.deprecated)
        if param.examples and "examples" not in schema:
            schema = {**schema, "examples": list(param.examples)}
        found = (converted, schema)
        if examples is not None:
            memo[key] = found
    return found[1]


def _arg_plan(fields: tuple[Any, ...], memo: dict[Any, Any]) -> ArgPlan:
    """The ArgPlan of these fields, one object for all the tools that have the same (a large API's tools repeat
    their parameters thousands of times; plans are frozen)."""
    found = memo.get(("plan", fields))
    if found is None:
        found = memo["plan", fields] = ArgPlan(*fields)
    assert isinstance(found, ArgPlan)
    return found


def _example_text(example: Mapping[str, Any]) -> str:
    return json.dumps(dict(sorted(example.items())), ensure_ascii=False, separators=(",", ":"))  # compact: tokens


def _renamed(entry: _Entry, key: str, at: Ref, converter: SchemaConverter, memo: dict[Any, Any]) -> Problem:
    """The warning that an argument is taken as `key`: one object for all the tools that rename the same argument
    declared at the same place, one location object (Graph's `$count` parameter, shared through a $ref by
    thousands of operations; problems are frozen)."""
    memo_key = ("renamed", entry.wire, entry.location, key, id(at))
    found = memo.get(memo_key)
    if found is None:  # found[0] keeps `at` alive: its id is not reused
        found = memo[memo_key] = (at, converter.resolver.problem(Level.WARNING, _rename_reason(entry, key), at))
    problem = found[1]
    assert isinstance(problem, Problem)
    return problem


def _rename_reason(entry: _Entry, key: str) -> str:
    what = "request body" if entry.location == "body-whole" else f"{entry.location} parameter"
    if entry.location == "body":
        what = "body property"
    if naming.arg_name(entry.wire) != entry.wire:
        why = f"is not a client-safe argument name ({naming.ARG_NAME_RULE})"
    else:
        why = "is used by another argument of this tool"
    return f"{what} {entry.wire!r} {why}; the tool takes it as {key!r} and sends it as {entry.wire!r}"


def _keys(wires: tuple[tuple[str, str], ...], memo: dict[Any, Any]) -> list[str]:
    """arg_keys, remembered per argument list (a large API's tools repeat the same few)."""
    found = memo.get(("keys", wires))
    if found is None:
        found = memo["keys", wires] = tuple(arg_keys(list(wires)))
    return list(found)


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


def _is_empty_object(schema: dict[str, Any], defs: Mapping[str, Any], converter: SchemaConverter) -> bool:
    """An object schema that allows no property at all: `{"type": "object", "properties": {},
    "additionalProperties": false}` (as converted: `{"not": {}}`)."""
    schema = converter.resolve_converted(schema, defs)
    extra = schema.get("additionalProperties")
    return (
        schema.get("type") == "object"
        and not schema.get("properties")
        and (extra is False or extra == {"not": {}})
        and not set(schema) & {"patternProperties", "anyOf", "oneOf", "allOf", "propertyNames", "unevaluatedProperties"}
    )


def _nullable(schema: Any, defs: Definitions) -> bool:
    """_allows_null, remembered per schema object (body properties are the definitions' own, shared)."""
    found = defs.memo.get(("null", id(schema)))
    if found is None:  # found[0] keeps `schema` alive: its id is not reused
        found = defs.memo["null", id(schema)] = (schema, _allows_null(schema, defs))
    return bool(found[1])


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
