"""Swagger 2.0 parameters, bodies and responses in the 3.0 shape: inline types become `schema`,
collectionFormat becomes style/explode, `in: body` and `in: formData` become a requestBody, and a response's
`schema` becomes `content` for each media type the operation produces."""

from __future__ import annotations

import copy
from typing import Any

from ..problems import Problem, join, warning
from .load import Documents
from .refs import Ref, RefError, Resolver
from .upgrade_schemas import absolute_refs, rewrite_refs, upgrade_schema

SCHEMA_KEYS = (  # the JSON Schema subset a 2.0 non-body parameter (or items) carries inline
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
)
COLLECTION_STYLES = {  # collectionFormat -> (query style, explode); path and header use "simple"
    "csv": ("form", False),
    "ssv": ("spaceDelimited", False),
    "tsv": ("tabDelimited", False),
    "pipes": ("pipeDelimited", False),
    "multi": ("form", True),
}
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
JSON = "application/json"


class ParameterUpgrader:
    """The parts of an operation; `_Upgrader` (upgrade.py) adds the document and its paths."""

    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self.resolver = Resolver(documents)
        self.doc: dict[str, Any] = documents.root
        self.moved: dict[str, str] = {}
        self.problems: list[Problem] = []
        self.consumes = media_list(self.doc.get("consumes"))
        self.produces = media_list(self.doc.get("produces"))

    def warn(self, message: str, pointer: str) -> None:
        self.problems.append(warning(message, pointer))

    def parameters(
        self, raw: list[Any], original_at: str, new_at: str
    ) -> tuple[list[Any], list[tuple[dict[str, Any], str]]]:
        """(the 3.0 parameters, the body/formData parameters with their original pointers)."""
        params: list[Any] = []
        body: list[tuple[dict[str, Any], str]] = []
        for index, node in enumerate(raw):
            at = join(original_at, index)
            resolved, where = self.resolve(node, at)
            if isinstance(resolved, dict) and resolved.get("in") in ("body", "formData"):
                body.append((resolved, where))
                continue
            target = join(new_at, len(params))
            if (
                isinstance(node, dict)
                and isinstance(node.get("$ref"), str)
                and node["$ref"].startswith("#/parameters/")
            ):
                params.append(rewrite_refs(dict(node)))
                self.moved[target] = at
            else:
                params.append(self.parameter(resolved, where, target))
        return params, body

    def resolve(self, node: Any, at: str) -> tuple[Any, str]:
        """Follow a parameter `$ref` in the original documents; the pointer says where it ended."""
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node, at
        try:
            resolved, ref = self.resolver.resolve(node, Ref(self.documents.root_uri, at))
        except RefError as exc:
            self.warn(f"parameter: {exc}", at)
            return node, at
        if ref.uri != self.documents.root_uri:
            return absolute_refs(copy.deepcopy(resolved), ref.uri), at
        return resolved, ref.pointer

    def parameter(self, node: Any, original_at: str, new_at: str) -> Any:
        self.moved[new_at] = original_at
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {
            k: copy.deepcopy(v)
            for k, v in node.items()
            if k in ("name", "in", "description", "required", "allowEmptyValue", "deprecated") or k.startswith("x-")
        }
        if "example" in node:  # not 2.0, but common in the wild
            out["example"] = copy.deepcopy(node["example"])
        out["schema"] = _inlineschema(node)
        self.moved[join(new_at, "schema")] = original_at
        location = node.get("in")
        fmt = node.get("collectionFormat", "csv")
        if node.get("type") == "array":
            style, explode = COLLECTION_STYLES.get(str(fmt), ("form", False))
            if fmt not in COLLECTION_STYLES:
                self.warn(f"unknown collectionFormat {fmt!r}; taken as csv", join(original_at, "collectionFormat"))
            if location in ("path", "header"):
                if fmt not in ("csv",):
                    self.warn(
                        f"collectionFormat {fmt!r} is not possible in {location}; taken as csv",
                        join(original_at, "collectionFormat"),
                    )
                style, explode = "simple", False
            out["style"], out["explode"] = style, explode
        return out

    def request_body(
        self, params: list[tuple[dict[str, Any], str]], at: str, consumes: tuple[str, ...]
    ) -> dict[str, Any] | None:
        bodies = [(p, where) for p, where in params if p.get("in") == "body"]
        if bodies:
            param, where = bodies[0]
            self.moved[at] = where
            media_types = [m for m in consumes if m not in (FORM, MULTIPART)] or [JSON]
            body_schema = upgrade_schema(param.get("schema", {}))
            content = {}
            for media_type in media_types:
                content[media_type] = {"schema": body_schema}
                self.moved[join(at, "content", media_type, "schema")] = join(where, "schema")
            body: dict[str, Any] = {"content": content, "required": param.get("required") is True}
            if isinstance(param.get("description"), str):
                body["description"] = param["description"]
            return body
        fields = [(p, where) for p, where in params if p.get("in") == "formData"]
        if not fields:
            return None
        has_file = any(p.get("type") == "file" for p, _ in fields)
        media_type = MULTIPART if has_file or (MULTIPART in consumes and FORM not in consumes) else FORM
        schema: dict[str, Any] = {"type": "object", "properties": {}}
        required: list[str] = []
        encoding: dict[str, Any] = {}
        schema_at = join(at, "content", media_type, "schema")
        self.moved[at] = fields[0][1].rsplit("/", 1)[0]
        for param, where in fields:
            name = param.get("name")
            if not isinstance(name, str):
                self.warn("formData parameter has no name; ignored", where)
                continue
            prop = _inlineschema(param)
            if isinstance(param.get("description"), str):
                prop["description"] = param["description"]
            schema["properties"][name] = prop
            self.moved[join(schema_at, "properties", name)] = where
            if param.get("required") is True:
                required.append(name)
            fmt = param.get("collectionFormat", "csv")
            if param.get("type") == "array":
                style, explode = COLLECTION_STYLES.get(str(fmt), ("form", False))
                encoding[name] = {"style": style, "explode": explode}
        if required:
            schema["required"] = required
        media: dict[str, Any] = {"schema": schema}
        if encoding:
            media["encoding"] = encoding
        return {"content": {media_type: media}, "required": bool(required)}

    def response(self, node: Any, new_at: str, original_at: str, produces: tuple[str, ...]) -> Any:
        self.moved[new_at] = original_at
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            return rewrite_refs(dict(node))
        out: dict[str, Any] = {"description": node.get("description", "")}
        for key, value in node.items():
            if key.startswith("x-"):
                out[key] = copy.deepcopy(value)
        if isinstance(node.get("headers"), dict):
            out["headers"] = {
                name: (
                    {"description": h.get("description", ""), "schema": _inlineschema(h)} if isinstance(h, dict) else h
                )
                for name, h in node["headers"].items()
            }
        if "schema" in node:
            schema = upgrade_schema(node["schema"])
            examples = node.get("examples") if isinstance(node.get("examples"), dict) else {}
            assert isinstance(examples, dict)
            content = {}
            for media_type in produces or (JSON,):
                media: dict[str, Any] = {"schema": schema}
                if media_type in examples:
                    media["example"] = copy.deepcopy(examples[media_type])
                content[media_type] = media
                self.moved[join(new_at, "content", media_type, "schema")] = join(original_at, "schema")
            out["content"] = content
        return out


def media_list(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _inlineschema(param: dict[str, Any]) -> dict[str, Any]:
    """A non-body parameter's (or formData field's, or items') inline type -> a schema object."""
    schema: dict[str, Any] = {}
    for key in SCHEMA_KEYS:
        if key in param:
            schema[key] = copy.deepcopy(param[key])
    if "x-nullable" in param:
        schema["nullable"] = param["x-nullable"] is True
    if isinstance(schema.get("items"), dict):
        schema["items"] = _inlineschema(schema["items"])
    if schema.get("type") == "file":
        schema["type"] = "string"
        schema["format"] = "binary"
    if not schema:
        schema["type"] = "string"
    rewrite_refs(schema)
    return schema
