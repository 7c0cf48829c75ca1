"""Spec (an OpenAPI 3.x document) -> the intermediate representation in model.py.

Walks paths and methods in a fixed, sorted order so that the result never depends on the key order of
the input. A part that cannot be understood is reported; an operation that cannot be used is skipped
with an error, and everything else goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, cast
from urllib.parse import unquote, urljoin, urlparse

from .model import (
    METHODS,
    Api,
    Body,
    Dialect,
    Location,
    Operation,
    Parameter,
    Response,
    Schema,
    Security,
    SecurityScheme,
)
from .problems import Level, Problem
from .refs import Ref, RefError, Resolver
from .spec.paths import dot_segment

LOCATIONS: tuple[Location, ...] = ("path", "query", "header", "cookie")
IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})  # OpenAPI: these are ignored
TEMPLATE_PARAM = re.compile(r"{([^{}]+)}")


class Skip(Exception):
    """The operation cannot be used; the problem says why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def normalize(document: dict[str, Any], resolver: Resolver) -> tuple[Api | None, list[Problem]]:
    return _Normalizer(document, resolver).run()


def json_media_rank(media_type: str) -> int:
    """Lower is better: JSON first, then forms, text and binary."""
    base = media_type.split(";")[0].strip().lower()
    if base == "application/json":
        return 0
    if base.endswith("+json") or (base.startswith("application/") and "json" in base):
        return 1
    ranks = {
        "application/x-www-form-urlencoded": 2,
        "multipart/form-data": 3,
        "text/plain": 4,
        "application/octet-stream": 5,
        "*/*": 6,
    }
    return ranks.get(base, 7)


def pick_media_type(content: dict[str, Any]) -> str:
    return min(content, key=lambda m: (json_media_rank(m), m))


class _Normalizer:
    def __init__(self, document: dict[str, Any], resolver: Resolver) -> None:
        self.doc = document
        self.resolver = resolver
        self.root = resolver.root
        self.problems: list[Problem] = []
        self._warned_security: set[str] = set()  # pointers of requirements already reported

    # -- reporting ----------------------------------------------------------------------------------
    def warn(self, message: str, at: Ref) -> None:
        self.problems.append(self.resolver.problem(Level.WARNING, message, at))

    def skip(self, message: str, at: Ref) -> Skip:
        return Skip(self.resolver.problem(Level.ERROR, message, at))

    def deref(self, node: Any, at: Ref, what: str) -> tuple[Any, Ref]:
        try:
            return self.resolver.resolve(node, at)
        except RefError as exc:
            raise self.skip(f"{what}: {exc}", exc.at) from None

    # -- document -----------------------------------------------------------------------------------
    def run(self) -> tuple[Api | None, list[Problem]]:
        version = self.doc.get("openapi")
        if not isinstance(version, str) or not version.startswith("3."):
            found = f"openapi: {version!r}" if "openapi" in self.doc else "no 'openapi' field"
            self.problems.append(
                self.resolver.problem(Level.ERROR, f"not an OpenAPI 3.x document ({found})", self.root)
            )
            return None, self.problems
        dialect: Dialect = "3.1" if version.startswith("3.1") else "3.0"
        info = self.doc.get("info") if isinstance(self.doc.get("info"), dict) else {}
        assert isinstance(info, dict)
        operations = tuple(self.operations())
        api = Api(
            title=_text(info.get("title")) or "API",
            version=_text(info.get("version")) or "0",
            description=_text(info.get("description")),
            dialect=dialect,
            servers=self.servers(self.doc.get("servers"), self.root.child("servers")),
            operations=operations,
            security_schemes=tuple(self.security_schemes()),
        )
        return api, self.problems

    def servers(self, servers: Any, at: Ref) -> tuple[str, ...]:
        if not isinstance(servers, list):
            return ()
        urls = []
        for index, server in enumerate(servers):
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                self.warn("server without a 'url' string is ignored", at.child(index))
                continue
            url = server["url"]
            variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}
            assert isinstance(variables, dict)
            for name, variable in variables.items():
                default = variable.get("default") if isinstance(variable, dict) else None
                url = url.replace("{" + name + "}", str(default) if default is not None else "")
            if urlparse(self.root.uri).scheme in ("http", "https"):
                url = urljoin(self.root.uri, url)
            urls.append(url.rstrip("/"))
        return tuple(urls)

    def security_schemes(self) -> Iterator[SecurityScheme]:
        components = self.doc.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        if not isinstance(schemes, dict):
            return
        at = self.root.child("components", "securitySchemes")
        for key in sorted(schemes):
            try:
                node, _ = self.resolver.resolve(schemes[key], at.child(key))
            except RefError as exc:
                self.warn(f"security scheme {key!r}: {exc}", exc.at)
                continue
            if not isinstance(node, dict) or not isinstance(node.get("type"), str):
                self.warn(f"security scheme {key!r} has no 'type' and is ignored", at.child(key))
                continue
            flows = node.get("flows") if isinstance(node.get("flows"), dict) else {}
            assert isinstance(flows, dict)
            client = flows.get("clientCredentials") if isinstance(flows.get("clientCredentials"), dict) else {}
            assert isinstance(client, dict)
            scopes = client.get("scopes") if isinstance(client.get("scopes"), dict) else {}
            assert isinstance(scopes, dict)
            yield SecurityScheme(
                key=key,
                type=node["type"],
                scheme=_text(node.get("scheme")).lower(),
                name=_text(node.get("name")),
                location=_text(node.get("in")),
                token_url=_text(client.get("tokenUrl")),
                scopes=tuple(sorted(str(s) for s in scopes)),
            )

    # -- operations ---------------------------------------------------------------------------------
    def operations(self) -> Iterator[Operation]:
        paths = self.doc.get("paths")
        paths_at = self.root.child("paths")
        if paths is None:
            return
        if not isinstance(paths, dict):
            self.problems.append(self.resolver.problem(Level.ERROR, "'paths' is not an object", paths_at))
            return
        for path in sorted(paths):
            item_at = paths_at.child(path)
            try:
                item, item_at = self.deref(paths[path], item_at, f"path item {path}")
            except Skip as skip:
                self.problems.append(skip.problem)
                continue
            if not isinstance(item, dict):
                self.problems.append(self.resolver.problem(Level.ERROR, "path item is not an object", item_at))
                continue
            if not path.startswith("/"):
                self.warn(f"path {path!r} does not start with '/'", paths_at.child(path))
            for method in METHODS:
                if method not in item:
                    continue
                op_at = item_at.child(method)
                if (segment := dot_segment(path)) is not None:
                    self.warn(
                        f"{method.upper()} {path}: the path has a {segment!r} segment"
                        " (URL normalization would send the call to another path); skipped",
                        op_at,
                    )
                    continue
                try:
                    yield self.operation(path, method, item, item[method], op_at, item_at)
                except Skip as skip:
                    self.problems.append(skip.problem)

    def operation(self, path: str, method: str, item: dict[str, Any], op: Any, at: Ref, item_at: Ref) -> Operation:
        if not isinstance(op, dict):
            raise self.skip(f"{method.upper()} {path}: the operation is not an object; skipped", at)
        params, fixed = self.fixed_values(path, self.parameters(path, item, op, at, item_at), at)
        responses = tuple(self.responses(op.get("responses"), at.child("responses")))
        operation_id = op.get("operationId")
        if operation_id is not None and not isinstance(operation_id, str):
            self.warn("operationId is not a string; ignored", at.child("operationId"))
            operation_id = None
        return Operation(
            method=method.upper(),
            path=path,
            operation_id=operation_id or None,
            summary=_text(op.get("summary")).strip(),
            description=_text(op.get("description")).strip(),
            tags=(
                tuple(str(t) for t in op.get("tags", ()) if isinstance(t, (str, int)))
                if isinstance(op.get("tags"), list)
                else ()
            ),
            deprecated=op.get("deprecated") is True,
            parameters=params,
            body=self.body(op.get("requestBody"), at.child("requestBody")) if "requestBody" in op else None,
            responses=responses,
            security=self.security(
                op.get("security", self.doc.get("security")),
                at.child("security") if "security" in op else self.root.child("security"),
            ),
            extensions=tuple(sorted((k, v) for k, v in op.items() if k.startswith("x-mcp-"))),
            at=at,
            fixed=fixed,
        )

    def fixed_values(
        self, path: str, params: tuple[Parameter, ...], at: Ref
    ) -> tuple[tuple[Parameter, ...], tuple[tuple[str, str, str], ...]]:
        """The parameters that stay tool arguments, and the values every request carries instead.

        A path key may carry a fragment or a query that tells it apart from another key with the same path
        (`/#X-Amz-Target=Service.Action`, `/#Action=List`, `/rest?method=photos.get`). A fragment is never sent,
        so its `name=value` pairs fix the declared parameter of that name (header, query or cookie) to that value;
        a pair that names no parameter only tells the keys apart. The key's own query is sent as written, so the
        query parameters it names are not arguments either. Accept and Content-Type header parameters are never
        arguments (OpenAPI ignores them); one that declares a single value sends it as a fixed header. Nor is a
        required parameter whose schema allows exactly one value (AWS's `Version=2011-06-15`): it is always sent.
        """
        fixed: list[tuple[str, str, str]] = []
        dropped: set[tuple[str, str]] = set()
        key, _, fragment = path.partition("#")
        sendable = ("header", "query", "cookie")
        for name, value in _pairs(fragment):
            param = next((p for p in params if p.name == name and p.location in sendable), None)
            if param is None or not value.isprintable():
                pair = f"{name}={value}"
                self.warn(f"path key fragment {pair!r} names no parameter; not sent (it only tells keys apart)", at)
                continue
            fixed.append((param.location, param.name, value))
            dropped.add((param.name, param.location))
        for name, value in _pairs(key.partition("?")[2]):
            if "{" not in value:  # `name={param}` takes a path parameter's value
                dropped.add((name, "query"))
        for param in params:
            if param.location != "header" or param.name.lower() not in IGNORED_HEADERS:
                continue
            dropped.add((param.name, param.location))
            single = self.single_value(param)
            if single is None:
                self.warn(
                    f"header parameter {param.name!r} is ignored (OpenAPI: Accept, Content-Type and Authorization"
                    " are set by the server)",
                    param.at,
                )
            else:
                self.warn(
                    f"header parameter {param.name!r} is not an argument (OpenAPI ignores it); its single value"
                    f" {single!r} is sent as a fixed header",
                    param.at,
                )
                fixed.append(("header", param.name, single))
        for param in params:  # a required parameter that allows one value is not a choice to offer
            if param.required and param.location in sendable and (param.name, param.location) not in dropped:
                only = self.only_value(param)
                if only is not None:
                    fixed.append((param.location, param.name, only))
                    dropped.add((param.name, param.location))
        kept = tuple(p for p in params if (p.name, p.location) not in dropped)
        return kept, tuple(fixed)

    def only_value(self, param: Parameter) -> str | None:
        """The value of a scalar parameter whose schema allows exactly one (a one-value `enum`, or `const`), as sent."""
        if param.content_type is not None:
            return None
        schema = self.param_schema(param)
        if not isinstance(schema, dict) or schema.get("nullable") is True:
            return None
        values = schema["enum"] if isinstance(schema.get("enum"), list) else None
        if "const" in schema:
            values = [schema["const"]]
        if values is None or len(values) != 1:
            return None
        value = values[0]
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        if isinstance(value, str) and value.isprintable():
            return value
        return None

    def param_schema(self, param: Parameter) -> Any:
        """A parameter's schema with its `$ref` followed ({} when it has none or the reference is broken)."""
        if param.schema is None:
            return {}
        try:
            schema, _ = self.resolver.resolve(param.schema.node, param.schema.at)
        except RefError:
            return {}
        return schema

    def single_value(self, param: Parameter) -> str | None:
        """The one value a parameter can take: a one-value enum, const, default or example (schema or parameter)."""
        schema = self.param_schema(param)
        candidates: list[Any] = []
        if isinstance(schema, dict):
            if isinstance(schema.get("enum"), list) and len(schema["enum"]) == 1:
                candidates.append(schema["enum"][0])
            candidates += [schema[k] for k in ("const", "default", "example") if k in schema]
            if isinstance(schema.get("examples"), list):
                candidates += schema["examples"][:1]
        candidates += list(param.examples[:1])
        for value in candidates:
            if isinstance(value, str) and value.strip() and value.isprintable():
                return value.strip()
        return None

    def parameters(
        self, path: str, item: dict[str, Any], op: dict[str, Any], at: Ref, item_at: Ref
    ) -> tuple[Parameter, ...]:
        merged: dict[tuple[str, str], Parameter] = {}
        for owner, owner_at, override in ((item, item_at, False), (op, at, True)):
            raw = owner.get("parameters")
            if raw is None:
                continue
            if not isinstance(raw, list):
                self.warn("'parameters' is not a list; ignored", owner_at.child("parameters"))
                continue
            seen: set[tuple[str, str]] = set()
            for index, node in enumerate(raw):
                param = self.parameter(node, owner_at.child("parameters", index))
                if param is None:
                    continue
                key = (param.name, param.location)
                if key in seen:
                    self.warn(f"duplicate parameter {param.name!r} in {param.location}; the first is used", param.at)
                    continue
                seen.add(key)
                if key in merged and not override:
                    continue
                merged[key] = param
        declared = {name for name, location in merged if location == "path"}
        key_path, _, key_query = path.partition("#")[0].partition("?")
        in_query = {name for name, location in merged if location == "query"}  # `?q={q}` with q declared in query
        in_template = TEMPLATE_PARAM.findall(key_path) + [
            name for name in TEMPLATE_PARAM.findall(key_query) if name in declared or name not in in_query
        ]
        for name in in_template:
            if name not in declared:
                self.warn(f"path parameter {name!r} is in the path but not declared; taken as a required string", at)
                merged[(name, "path")] = Parameter(
                    name, "path", True, None, "", "simple", False, False, False, None, at
                )
        for name in sorted(declared - set(in_template)):
            param = merged.pop((name, "path"))
            self.warn(f"path parameter {name!r} is declared but not in the path {path!r}; ignored", param.at)
        return tuple(merged.values())

    def parameter(self, node: Any, at: Ref) -> Parameter | None:
        node, at = self.deref(node, at, "parameter")
        if not isinstance(node, dict):
            raise self.skip("parameter is not an object", at)
        name, location = node.get("name"), node.get("in")
        if not isinstance(name, str) or not name:
            raise self.skip("parameter has no 'name'", at)
        if location not in LOCATIONS:
            raise self.skip(f"parameter {name!r} has an unknown location 'in: {location}'", at)
        location = cast(Location, location)
        if location == "header" and name.lower() == "authorization":
            self.warn(
                f"header parameter {name!r} is ignored (OpenAPI: Accept, Content-Type and Authorization are set by the server)",
                at,
            )
            return None
        schema: Schema | None = None
        content_type = None
        if isinstance(node.get("content"), dict) and node["content"]:
            content_type = pick_media_type(node["content"])
            media = node["content"][content_type]
            if isinstance(media, dict) and "schema" in media:
                schema = Schema(media["schema"], at.child("content", content_type, "schema"))
        elif "schema" in node:
            schema = Schema(node["schema"], at.child("schema"))
        else:
            self.warn(f"parameter {name!r} has no schema; taken as a string", at)
        style = (
            node.get("style")
            if isinstance(node.get("style"), str)
            else ("form" if location in ("query", "cookie") else "simple")
        )
        assert isinstance(style, str)
        explode = node.get("explode") if isinstance(node.get("explode"), bool) else style == "form"
        assert isinstance(explode, bool)
        required = location == "path" or node.get("required") is True
        if location == "path" and node.get("required") is not True:
            self.warn(f"path parameter {name!r} must be required; taken as required", at)
        return Parameter(
            name=name,
            location=location,
            required=required,
            schema=schema,
            description=_text(node.get("description")).strip(),
            style=style,
            explode=explode,
            allow_reserved=node.get("allowReserved") is True,
            deprecated=node.get("deprecated") is True,
            content_type=content_type,
            at=at,
            examples=_examples(node),
        )

    def body(self, node: Any, at: Ref) -> Body | None:
        node, at = self.deref(node, at, "request body")
        if not isinstance(node, dict):
            raise self.skip("requestBody is not an object", at)
        content = node.get("content")
        if not isinstance(content, dict) or not content:
            self.warn("requestBody has no content; no body is sent", at)
            return None
        media_type = pick_media_type(content)
        media = content[media_type] if isinstance(content[media_type], dict) else {}
        encoding: dict[str, Any] = media["encoding"] if isinstance(media.get("encoding"), dict) else {}
        styles = []
        for key, value in sorted(encoding.items()):
            if isinstance(value, dict) and ("style" in value or "explode" in value):
                style = value.get("style") if isinstance(value.get("style"), str) else "form"
                explode = value.get("explode") if isinstance(value.get("explode"), bool) else style == "form"
                styles.append((str(key), str(style), bool(explode)))
        return Body(
            media_type=media_type,
            schema=Schema(media["schema"], at.child("content", media_type, "schema")) if "schema" in media else None,
            required=node.get("required") is True,
            description=_text(node.get("description")).strip(),
            alternatives=tuple(sorted(m for m in content if m != media_type)),
            encoding=tuple(
                sorted(
                    (str(k), str(v["contentType"]))
                    for k, v in encoding.items()
                    if isinstance(v, dict) and isinstance(v.get("contentType"), str)
                )
            ),
            at=at,
            examples=_examples(media),
            encoding_styles=tuple(styles),
        )

    def responses(self, node: Any, at: Ref) -> Iterator[Response]:
        if not isinstance(node, dict):
            if node is not None:
                self.warn("'responses' is not an object", at)
            return
        for status in sorted(node, key=str):
            try:
                response, response_at = self.resolver.resolve(node[status], at.child(status))
            except RefError as exc:
                self.warn(f"response {status}: {exc}", exc.at)
                continue
            if not isinstance(response, dict):
                continue
            content = response.get("content")
            media_type = None
            schema = None
            if isinstance(content, dict) and content:
                media_type = pick_media_type(content)
                media = content[media_type]
                if isinstance(media, dict) and "schema" in media:
                    schema = Schema(media["schema"], response_at.child("content", media_type, "schema"))
            media_types = (
                tuple(sorted(content, key=lambda m: (json_media_rank(m), m))) if isinstance(content, dict) else ()
            )
            yield Response(
                str(status).upper(),
                _text(response.get("description")).strip(),
                media_type,
                schema,
                media_types,
                response_at,
            )

    def security(self, node: Any, at: Ref) -> Security:
        """The requirements (alternatives of schemes -> scopes) at `at`, the operation's or the document's."""
        if not isinstance(node, list):
            return ()
        alternatives = []
        for index, requirement in enumerate(node):
            if isinstance(requirement, dict):
                alternatives.append(
                    tuple(
                        (str(key), tuple(str(s) for s in scopes) if isinstance(scopes, list) else ())
                        for key, scopes in sorted(requirement.items())
                    )
                )
                self.check_requirement([str(key) for key in sorted(requirement)], at.child(index))
        return tuple(alternatives)

    def check_requirement(self, keys: list[str], at: Ref) -> None:
        """Warn (once per requirement) when its schemes need the Authorization header in different ways
        (bearer tokens can share it: one is sent)."""
        if len(keys) < 2 or at.pointer in self._warned_security:
            return
        components = self.doc.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        clashing = []
        if not isinstance(schemes, dict):
            return
        for key in keys:
            try:
                scheme, _ = self.resolver.resolve(
                    schemes.get(key), self.root.child("components", "securitySchemes", key)
                )
            except RefError:
                continue
            family = _authorization_family(key, scheme) if isinstance(scheme, dict) else None
            if family is not None:
                clashing.append((key, family))
        if len({family for _, family in clashing}) > 1:
            self._warned_security.add(at.pointer)
            self.warn(
                f"security requirement combines {', '.join(repr(k) for k, _ in clashing)}, which all need the "
                "Authorization header: one request cannot carry them, so the generated server cannot use this "
                "requirement (a call that has no other alternative returns an error)",
                at,
            )


def _authorization_family(key: str, scheme: dict[str, Any]) -> str | None:
    """What a security scheme puts in the Authorization header: "bearer" for a bearer token (http bearer,
    OAuth2, OpenID Connect: one header can serve several), its key for another use, None for none."""
    kind = scheme.get("type")
    if kind in ("oauth2", "openIdConnect") or (
        kind == "http" and _text(scheme.get("scheme")).lower() in ("", "bearer")
    ):
        return "bearer"
    name = scheme.get("name")
    if kind == "http" or (
        kind == "apiKey" and scheme.get("in") == "header" and isinstance(name, str) and name.lower() == "authorization"
    ):
        return key
    return None


def _pairs(text: str) -> list[tuple[str, str]]:
    """`a=1&b=2` -> [("a", "1"), ("b", "2")], percent-decoded; parts without `=` are left out."""
    pairs = []
    for part in text.split("&"):
        name, eq, value = part.partition("=")
        if eq and name:
            pairs.append((unquote(name), unquote(value)))
    return pairs


def _examples(node: dict[str, Any]) -> tuple[Any, ...]:
    """`example`, or the values of `examples` (a map of Example objects), in key order."""
    if "example" in node:
        return (node["example"],)
    examples = node.get("examples")
    if isinstance(examples, dict):
        return tuple(e["value"] for _, e in sorted(examples.items()) if isinstance(e, dict) and "value" in e)
    return ()


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
