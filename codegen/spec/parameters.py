"""Parameters: path, query, header and cookie parameters merged from the path item and the operation,
checked against the path template, and the values a request carries whatever the arguments (fixed values)."""

from __future__ import annotations

import json
import re
import sys
from typing import Any, cast
from urllib.parse import unquote

from .media import examples, pick_media_type
from .model import Location, Parameter, Schema
from .refs import Ref, RefError
from .walker import Walker, text

LOCATIONS: tuple[Location, ...] = ("path", "query", "header", "cookie")
IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})  # OpenAPI: these are ignored
TEMPLATE_PARAM = re.compile(r"{([^{}]+)}")


class Parameters(Walker):
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
                param = self._declared(node, owner_at, index, not override)
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

    def _declared(self, node: Any, owner_at: Ref, index: int, path_item: bool) -> Parameter | None:
        """The parameter declared at `index` of the `parameters` of the operation or path item at `owner_at`. A path
        item's are read once for all its operations (Graph declares each path's ids there: ~25,000 parameters),
        unless reading one reported a problem: it is read, and reported, again for each."""
        key = (id(node), id(owner_at), index)
        found = self._path_parameters.get(key) if path_item else None
        if found is not None:
            param: Parameter | None = found[2]
            return param
        node_at = owner_at.child("parameters", index)
        reported = len(self.problems)
        param = self.shared("parameter", node, node_at, lambda: self.parameter(node, node_at))
        if path_item and len(self.problems) == reported:
            self._path_parameters[key] = (node, owner_at, param)  # [0], [1]: their ids are not reused
        return param

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
                schema = Schema(self.canonical(media["schema"]), at.child("content", content_type, "schema"))
        elif "schema" in node:
            schema = Schema(self.canonical(node["schema"]), at.child("schema"))
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
            name=sys.intern(name),  # one string for the thousands of operations that have the parameter
            location=location,
            required=required,
            schema=schema,
            description=sys.intern(text(node.get("description")).strip()),
            style=style,
            explode=explode,
            allow_reserved=node.get("allowReserved") is True,
            deprecated=node.get("deprecated") is True,
            content_type=content_type,
            at=at,
            examples=examples(node),
        )


def _pairs(text: str) -> list[tuple[str, str]]:
    """`a=1&b=2` -> [("a", "1"), ("b", "2")], percent-decoded; parts without `=` are left out."""
    pairs = []
    for part in text.split("&"):
        name, eq, value = part.partition("=")
        if eq and name:
            pairs.append((unquote(name), unquote(value)))
    return pairs
