"""Swagger 2.0 -> the OpenAPI 3.0 shape, so every later stage sees one dialect.

What moves where:
- host, basePath, schemes -> servers (one per scheme);
- definitions / parameters / responses / securityDefinitions -> components.*, with `$ref`s rewritten;
- `in: body` -> requestBody (one media type per `consumes` entry, JSON when none is given);
- `in: formData` -> requestBody with an object schema (multipart/form-data when a part is `type: file`
  or `consumes` says so, else application/x-www-form-urlencoded);
- parameter type/format/items/... -> `schema`; collectionFormat -> style/explode (csv: form/simple,
  ssv: spaceDelimited, tsv: tabDelimited (no 3.x style; the generated server joins with a tab),
  pipes: pipeDelimited, multi: form + explode);
- responses' `schema` -> `content` (one entry per `produces` media type);
- `type: file` -> binary string; `x-nullable` -> `nullable`; `discriminator: name` -> `{propertyName: name}`.

The result comes with a `PointerMap`: problems found later in the upgraded document are moved back to the
node of the original 2.0 document they come from, so messages point at what the user wrote.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin, urlparse

from .load import Documents
from .problems import Problem, join, warning
from .refs import Ref, RefError, Resolver

METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
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
REF_PREFIXES = (
    ("#/definitions/", "#/components/schemas/"),
    ("#/parameters/", "#/components/parameters/"),
    ("#/responses/", "#/components/responses/"),
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


@dataclass(frozen=True)
class PointerMap:
    """Upgraded-document pointer prefixes -> the original document's pointers."""

    moved: Mapping[str, str]

    def original(self, pointer: str) -> str:
        """The original pointer for `pointer`: its longest moved prefix replaced."""
        probe = pointer
        while True:
            if probe in self.moved:
                return self.moved[probe] + pointer[len(probe) :]
            if not probe:
                return pointer
            probe = probe[: probe.rindex("/")]

    def remap_all(self, problems: list[Problem]) -> list[Problem]:
        return [self.remap(p) for p in problems]

    def remap(self, problem: Problem) -> Problem:
        if problem.source:  # another document: not upgraded
            return problem
        return Problem(problem.level, problem.message, self.original(problem.pointer), problem.source)


def is_swagger2(document: Any) -> bool:
    return isinstance(document, dict) and str(document.get("swagger", "")).startswith("2")


def upgrade(documents: Documents) -> tuple[Documents, PointerMap, list[Problem]]:
    """The bundle with its 2.0 root replaced by the equivalent 3.0 document."""
    upgrader = _Upgrader(documents)
    upgraded = upgrader.run()
    upgraded_documents = documents.replace_root(
        upgraded, lambda uri, doc: _refs_into_root(doc, uri, documents.root_uri)
    )
    return upgraded_documents, PointerMap(dict(upgrader.moved)), upgrader.problems


class _Upgrader:
    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self.resolver = Resolver(documents)
        self.doc: dict[str, Any] = documents.root
        self.moved: dict[str, str] = {}
        self.problems: list[Problem] = []
        self.consumes = _media_list(self.doc.get("consumes"))
        self.produces = _media_list(self.doc.get("produces"))

    def warn(self, message: str, pointer: str) -> None:
        self.problems.append(warning(message, pointer))

    # -- document -----------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        doc = self.doc
        out: dict[str, Any] = {"openapi": "3.0.3"}
        for key, value in doc.items():
            if key.startswith("x-") or key in ("info", "tags", "externalDocs", "security"):
                out[key] = _rewrite_refs(copy.deepcopy(value))
        out.setdefault("info", {"title": "API", "version": "0"})
        servers = self.servers()
        if servers:
            out["servers"] = servers
            self.moved["/servers"] = "/host" if "host" in doc else "/basePath"
        components: dict[str, Any] = {}
        if isinstance(doc.get("definitions"), dict):
            components["schemas"] = {k: _schema(v) for k, v in doc["definitions"].items()}
            self.moved["/components/schemas"] = "/definitions"
        if isinstance(doc.get("parameters"), dict):
            params = {}
            for key, node in doc["parameters"].items():
                if isinstance(node, dict) and node.get("in") in ("body", "formData"):
                    continue  # inlined as a requestBody where operations use them
                at = join("/parameters", key)
                params[key] = self.parameter(node, at, join("/components/parameters", key))
            if params:
                components["parameters"] = params
                self.moved["/components/parameters"] = "/parameters"
        if isinstance(doc.get("responses"), dict):
            components["responses"] = {
                key: self.response(node, join("/components/responses", key), join("/responses", key), self.produces)
                for key, node in doc["responses"].items()
            }
        if isinstance(doc.get("securityDefinitions"), dict):
            components["securitySchemes"] = {
                key: self.security_scheme(node, join("/securityDefinitions", key))
                for key, node in doc["securityDefinitions"].items()
            }
            self.moved["/components/securitySchemes"] = "/securityDefinitions"
        if components:
            out["components"] = components
        if isinstance(doc.get("paths"), dict):
            out["paths"] = {path: self.path_item(path, item) for path, item in doc["paths"].items()}
        else:
            out["paths"] = {}
        return out

    def servers(self) -> list[dict[str, str]]:
        host = self.doc.get("host")
        base_path = self.doc.get("basePath") if isinstance(self.doc.get("basePath"), str) else ""
        assert isinstance(base_path, str)
        if base_path and not base_path.startswith("/"):
            base_path = "/" + base_path
        if not isinstance(host, str) or not host:
            return [{"url": base_path}] if base_path else []
        schemes = (
            [s for s in self.doc.get("schemes", ()) if s in ("http", "https")]
            if isinstance(self.doc.get("schemes"), list)
            else []
        )
        if not schemes:
            root_scheme = urlparse(self.documents.root_uri).scheme
            schemes = [root_scheme if root_scheme in ("http", "https") else "https"]
        return [{"url": f"{scheme}://{host}{base_path}"} for scheme in sorted(schemes, key=lambda s: s != "https")]

    def security_scheme(self, node: Any, at: str) -> Any:
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        out: dict[str, Any] = {k: v for k, v in node.items() if k.startswith("x-") or k == "description"}
        if kind == "basic":
            out.update(type="http", scheme="basic")
        elif kind == "apiKey":
            out.update(type="apiKey", name=node.get("name"), **{"in": node.get("in")})
        elif kind == "oauth2":
            flow_names = {
                "implicit": "implicit",
                "password": "password",
                "application": "clientCredentials",
                "accessCode": "authorizationCode",
            }
            flow = node.get("flow")
            if flow not in flow_names:
                self.warn(f"unknown oauth2 flow {flow!r}", join(at, "flow"))
                return {"type": "oauth2", "flows": {}}
            details: dict[str, Any] = {"scopes": node.get("scopes") if isinstance(node.get("scopes"), dict) else {}}
            if flow in ("implicit", "accessCode"):
                details["authorizationUrl"] = node.get("authorizationUrl", "")
            if flow in ("password", "application", "accessCode"):
                details["tokenUrl"] = node.get("tokenUrl", "")
            out.update(type="oauth2", flows={flow_names[str(flow)]: details})
        else:
            self.warn(f"unknown security scheme type {kind!r}", join(at, "type"))
            out.update(node)
        return out

    # -- paths --------------------------------------------------------------------------------------
    def path_item(self, path: str, item: Any) -> Any:
        at = join("/paths", path)
        if not isinstance(item, dict):
            return item
        if isinstance(item.get("$ref"), str):
            return _rewrite_refs(copy.deepcopy(item))  # 2.0 path item refs point at other files
        shared = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        assert isinstance(shared, list)
        out: dict[str, Any] = {k: copy.deepcopy(v) for k, v in item.items() if k.startswith("x-")}
        kept = self.parameters(shared, join(at, "parameters"), join(at, "parameters"))[0]
        if kept:
            out["parameters"] = kept
        for method in METHODS:
            if isinstance(item.get(method), dict):
                out[method] = self.operation(item[method], join(at, method), shared, join(at, "parameters"))
        return out

    def operation(self, op: dict[str, Any], at: str, shared: list[Any], shared_at: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in op.items():
            if key in ("parameters", "responses", "consumes", "produces", "schemes"):
                continue
            out[key] = _rewrite_refs(copy.deepcopy(value))
        consumes = _media_list(op["consumes"]) if "consumes" in op else self.consumes
        produces = _media_list(op["produces"]) if "produces" in op else self.produces
        own = op.get("parameters") if isinstance(op.get("parameters"), list) else []
        assert isinstance(own, list)
        params, body_params = self.parameters(own, join(at, "parameters"), join(at, "parameters"))
        if not body_params:  # a body or form fields declared once for the whole path
            for index, node in enumerate(shared):
                resolved, where = self.resolve(node, join(shared_at, index))
                if isinstance(resolved, dict) and resolved.get("in") in ("body", "formData"):
                    body_params.append((resolved, where))
        if params:
            out["parameters"] = params
        if body_params:
            body = self.request_body(body_params, join(at, "requestBody"), consumes)
            if body is not None:
                out["requestBody"] = body
        responses = op.get("responses")
        if isinstance(responses, dict):
            out["responses"] = {
                str(status): self.response(
                    node, join(at, "responses", str(status)), join(at, "responses", str(status)), produces
                )
                for status, node in responses.items()
            }
        return out

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
                params.append(_rewrite_refs(dict(node)))
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
            return _absolute_refs(copy.deepcopy(resolved), ref.uri), at
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
        out["schema"] = _inline_schema(node)
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
            body_schema = _schema(param.get("schema", {}))
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
            prop = _inline_schema(param)
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
            return _rewrite_refs(dict(node))
        out: dict[str, Any] = {"description": node.get("description", "")}
        for key, value in node.items():
            if key.startswith("x-"):
                out[key] = copy.deepcopy(value)
        if isinstance(node.get("headers"), dict):
            out["headers"] = {
                name: (
                    {"description": h.get("description", ""), "schema": _inline_schema(h)} if isinstance(h, dict) else h
                )
                for name, h in node["headers"].items()
            }
        if "schema" in node:
            schema = _schema(node["schema"])
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


def _media_list(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _inline_schema(param: dict[str, Any]) -> dict[str, Any]:
    """A non-body parameter's (or formData field's, or items') inline type -> a schema object."""
    schema: dict[str, Any] = {}
    for key in SCHEMA_KEYS:
        if key in param:
            schema[key] = copy.deepcopy(param[key])
    if "x-nullable" in param:
        schema["nullable"] = param["x-nullable"] is True
    if isinstance(schema.get("items"), dict):
        schema["items"] = _inline_schema(schema["items"])
    if schema.get("type") == "file":
        schema["type"] = "string"
        schema["format"] = "binary"
    if not schema:
        schema["type"] = "string"
    _rewrite_refs(schema)
    return schema


def _schema(node: Any) -> Any:
    """A 2.0 schema (body, definition, response) -> 3.0: refs rewritten, 2.0-only keywords translated."""
    return _fix_schema(_rewrite_refs(copy.deepcopy(node)))


def _fix_schema(node: Any) -> Any:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(current)
            continue
        if not isinstance(current, dict):
            continue
        if current.get("type") == "file":
            current["type"] = "string"
            current["format"] = "binary"
        if "x-nullable" in current and "nullable" not in current:
            current["nullable"] = current["x-nullable"] is True
        if isinstance(current.get("discriminator"), str):
            current["discriminator"] = {"propertyName": current["discriminator"]}
        for key, value in current.items():
            if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
                stack.extend(value.values())
            elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
                stack.append(value)
    return node


def _rewrite_refs(node: Any) -> Any:
    """`#/definitions/X` -> `#/components/schemas/X` (and parameters, responses), in place."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str):
                for old, new in REF_PREFIXES:
                    if ref.startswith(old):
                        current["$ref"] = new + ref[len(old) :]
                        break
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return node


def _refs_into_root(document: Any, uri: str, root_uri: str) -> Any:
    """Another document of the bundle, with its `$ref`s to the 2.0 root's definitions, parameters and responses
    pointed at where the upgrade moved them (`root.yaml#/definitions/X` -> `root.yaml#/components/schemas/X`).
    Documents without such references are returned as they are; the others are copied first."""
    if uri == root_uri:
        return document

    def moved(ref: str) -> str | None:
        target, fragment = urldefrag(urljoin(uri, ref))
        if target != root_uri:
            return None
        for old, new in REF_PREFIXES:
            if ("#" + fragment).startswith(old):
                return root_uri + new + fragment[len(old) - 1 :]
        return None

    copied: Any = None
    stack = [document]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if isinstance(current.get("$ref"), str) and moved(current["$ref"]) is not None:
                copied = copy.deepcopy(document)
                break
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    if copied is None:
        return document
    stack = [copied]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if isinstance(current.get("$ref"), str):
                current["$ref"] = moved(current["$ref"]) or current["$ref"]
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return copied


def _absolute_refs(node: Any, base_uri: str) -> Any:
    """Refs inside a node copied out of another document, made absolute so they still resolve."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if isinstance(current.get("$ref"), str):
                current["$ref"] = urljoin(base_uri, current["$ref"])
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return node


__all__ = ["PointerMap", "is_swagger2", "upgrade"]
