"""OpenAPI schema objects (3.0 and 3.1) -> JSON Schema 2020-12, with shared definitions in `$defs`.

Every `$ref` becomes `{"$ref": "#/$defs/<name>"}`; a tool's schema carries only the definitions it
reaches, so circular schemas stay finite and a large definition is written once per tool, not once per
use. Keywords are copied through a whitelist with their value types checked, so the output is valid
2020-12 by construction whatever the spec holds; what is dropped or repaired is reported.

Direction matters: an input schema leaves out `readOnly` properties, an output schema `writeOnly` ones.
Definitions are converted once per (location, direction) and shared by all tools.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal, TypeGuard

from .model import Dialect, Schema
from .problems import Level, Problem
from .refs import Ref, RefError, Resolver

Direction = Literal["input", "output"]
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
MAX_DEPTH = 48  # nesting of inline schemas; deeper parts become {} (refs do not count)

SCHEMA_VALUED = ("additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
NUMBERS = ("minimum", "maximum", "multipleOf")
COUNTS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
)
STRINGS = ("title", "description", "format", "pattern", "contentMediaType", "contentEncoding")
BOOLEANS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")
ANY_VALUE = ("const", "default")
DEF_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")
COMPONENT = re.compile(r"^/components/schemas/([^/]+)$")


class SchemaConverter:
    """Converts schemas for one API; definitions are cached across calls (and so across tools)."""

    def __init__(self, resolver: Resolver, dialect: Dialect) -> None:
        self.resolver = resolver
        self.dialect = dialect
        self._defs: dict[tuple[Ref, Direction], tuple[dict[str, Any], frozenset[Ref]]] = {}
        self._names: dict[Ref, str] = {}
        self._named: dict[str, Ref] = {}  # the reverse of _names
        self._views: dict[Direction, Definitions] = {}
        self._problems: dict[tuple[str, str, str], Problem] = {}
        self._converting: set[tuple[Ref, Direction]] = set()  # definitions being converted (not expanded in allOf)

    @property
    def problems(self) -> list[Problem]:
        return sorted(self._problems.values(), key=lambda p: (p.source, p.pointer, p.message))

    def _report(self, level: Level, message: str, at: Ref) -> None:
        problem = self.resolver.problem(level, message, at)
        self._problems.setdefault((problem.source, problem.pointer, problem.message), problem)

    # -- public -------------------------------------------------------------------------------------
    def convert(self, schema: Schema, direction: Direction) -> dict[str, Any]:
        """The JSON Schema for `schema`; the definitions its `$ref`s name are in `self.defs(direction)`."""
        return self._node(schema.node, schema.at, direction, set(), 0)

    def defs(self, direction: Direction) -> Definitions:
        """Every definition of one direction by its `$defs` name, each converted when first looked up."""
        if direction not in self._views:
            self._views[direction] = Definitions(self, direction)
        return self._views[direction]

    def resolve_converted(self, schema: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
        """Follow a converted `{"$ref": "#/$defs/X"}` chain to the definition it names."""
        seen: set[str] = set()
        while set(schema) == {"$ref"} and schema["$ref"].startswith("#/$defs/"):
            name = schema["$ref"][len("#/$defs/") :]
            if name in seen or name not in defs:
                break
            seen.add(name)
            schema = defs[name]
        return schema

    def name(self, ref: Ref) -> str:
        """A stable `$defs` name for a location: the component name where it is a plain one."""
        if ref not in self._names:
            match = COMPONENT.match(ref.pointer) if ref.uri == self.resolver.documents.root_uri else None
            if match:
                raw = match.group(1).replace("~1", "/").replace("~0", "~")
            elif ref.pointer:
                raw = ref.pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            else:  # a whole file: its name without the extension (`schemas/order.yaml` -> `order`)
                raw = ref.uri.rstrip("/").rsplit("/", 1)[-1].split("?")[0].rsplit(".", 1)[0]
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", raw).strip("_")[:60] or "schema"
            if not (match and DEF_NAME.match(raw)):
                digest = hashlib.sha1(
                    f"{self.resolver.documents.relative(ref.uri)}#{ref.pointer}".encode()
                ).hexdigest()[:6]
                safe = f"{safe}_{digest}"
            self._names[ref] = safe
            self._named.setdefault(safe, ref)
        return self._names[ref]

    # -- internals ----------------------------------------------------------------------------------
    def _definition(self, ref: Ref, direction: Direction) -> tuple[dict[str, Any], frozenset[Ref]]:
        key = (ref, direction)
        if key not in self._defs:
            refs: set[Ref] = set()
            try:
                node = self.resolver.get(ref)
            except RefError as exc:
                self._report(Level.WARNING, f"{exc}; any value is accepted there", ref)
                node = {}
            self._converting.add(key)
            try:
                converted = self._node(node, ref, direction, refs, 0)
            finally:
                self._converting.discard(key)
            self._defs[key] = (converted, frozenset(refs))
        return self._defs[key]

    def _node(self, node: Any, at: Ref, direction: Direction, refs: set[Ref], depth: int) -> dict[str, Any]:
        if node is True:
            return {}
        if node is False:
            return {"not": {}}
        if not isinstance(node, dict):
            self._report(Level.WARNING, f"schema is not an object ({type(node).__name__}); any value is accepted", at)
            return {}
        if depth > MAX_DEPTH:
            self._report(Level.WARNING, f"schema nested deeper than {MAX_DEPTH} levels; the rest accepts any value", at)
            return {}
        if isinstance(node.get("$ref"), str):
            return self._ref(node, at, direction, refs)
        if node.get("type") == "file":  # Swagger 2.0 (e.g. in a file the upgrade did not rewrite): a binary string
            node = {**node, "type": "string", "format": "binary"}
        out: dict[str, Any] = {}
        sub = depth + 1

        types = self._types(node, at)
        if types is not None:
            out["type"] = types[0] if len(types) == 1 else types
        for key in STRINGS:
            if isinstance(node.get(key), str):
                out[key] = node[key]
        if "pattern" in out and not _usable_regex(out["pattern"]):
            self._report(
                Level.WARNING,
                f"pattern {out.pop('pattern')!r} is not a regular expression Python can compile "
                "(e.g. \\p{...} classes); dropped, so values are not checked against it",
                at.child("pattern"),
            )
        for key in BOOLEANS:
            if isinstance(node.get(key), bool):
                out[key] = node[key]
        for key in NUMBERS:
            value = node.get(key)
            if _is_number(value) and not (key == "multipleOf" and value <= 0):
                out[key] = value
        for key in COUNTS:
            value = node.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out[key] = value
            elif _is_number(value) and value >= 0 and float(value).is_integer():
                out[key] = int(value)
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            value = node.get(key)
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value is True and bound in out:  # 3.0: a flag on minimum/maximum
                out[key] = out.pop(bound)
            elif _is_number(value):
                out[key] = value
        for key in ANY_VALUE:
            if key in node:
                out[key] = node[key]
        if isinstance(node.get("enum"), list):
            out["enum"] = _unique(node["enum"])
        examples = node.get("examples")
        if isinstance(examples, list):
            out["examples"] = examples
        elif "example" in node:
            out["examples"] = [node["example"]]
        required = node.get("required")
        if isinstance(required, list):
            names = [r for r in dict.fromkeys(required) if isinstance(r, str)]
            if names:
                out["required"] = names
        if isinstance(node.get("dependentRequired"), dict):
            out["dependentRequired"] = {
                k: [x for x in dict.fromkeys(v) if isinstance(x, str)]
                for k, v in node["dependentRequired"].items()
                if isinstance(v, list)
            }

        for key in SCHEMA_MAPS:
            value = node.get(key)
            if isinstance(value, dict):
                converted = {}
                for name, child in value.items():
                    if key == "properties" and self._hidden(child, at.child(key, name), direction):
                        continue
                    converted[name] = self._node(child, at.child(key, name), direction, refs, sub)
                out[key] = converted
        if "properties" in out and "required" in out:
            kept = [
                r for r in out["required"] if r in out["properties"] or not self._was_hidden(node, r, at, direction)
            ]
            if kept:
                out["required"] = kept
            else:
                del out["required"]
        for key in SCHEMA_VALUED:
            value = node.get(key)
            if isinstance(value, (dict, bool)):
                out[key] = self._node(value, at.child(key), direction, refs, sub)
        items = node.get("items")
        if isinstance(items, (dict, bool)):
            out["items"] = self._node(items, at.child("items"), direction, refs, sub)
        elif isinstance(items, list):  # tuple form (old drafts) -> prefixItems
            out["prefixItems"] = [
                self._node(v, at.child("items", i), direction, refs, sub) for i, v in enumerate(items)
            ]
        for key in SCHEMA_LISTS:
            value = node.get(key)
            if key in out:
                continue
            if isinstance(value, list) and value:
                out[key] = [self._node(v, at.child(key, i), direction, refs, sub) for i, v in enumerate(value)]
            elif value is not None and not isinstance(value, list):
                self._report(Level.WARNING, f"'{key}' is not a list; ignored", at.child(key))
        discriminator = node.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("propertyName"), str):
            out["discriminator"] = self._discriminator(discriminator, at.child("discriminator"), refs)

        if "allOf" in out:
            clash = _type_clash(out["allOf"])
            if clash:
                self._report(
                    Level.WARNING,
                    f"allOf members require different types ({', '.join(clash)}), so no value can satisfy it; "
                    "any value is accepted here",
                    at.child("allOf"),
                )
                return {k: v for k, v in out.items() if k in ANNOTATIONS}
            out = self._merge_referenced(out, node, at, direction, refs)
        if self.dialect == "3.0" and _nullable(node):
            _make_nullable(out)
        return out

    def _merge_referenced(
        self, out: dict[str, Any], node: dict[str, Any], at: Ref, direction: Direction, refs: set[Ref]
    ) -> dict[str, Any]:
        """allOf merged (see _merge_all_of), with members that are plain `$ref`s to plain object definitions
        taken by value: `{allOf: [{$ref: Base}, {properties: {extra}}]}` -> one object with Base's properties and
        `extra`. When the definitions do not merge safely (a property declared twice differently, a
        discriminator, anyOf/oneOf, a recursive reference), allOf stays as it is, references included."""
        merged = _merge_all_of(out)
        raw = node.get("allOf")
        if "allOf" not in merged or not isinstance(raw, list) or len(raw) != len(out["allOf"]):
            return merged
        members: list[Any] = []
        deps: set[Ref] = set()
        for member, raw_member in zip(out["allOf"], raw):
            if not (isinstance(member, dict) and set(member) == {"$ref"} and isinstance(raw_member, dict)):
                members.append(member)
                continue
            target = self.resolver.target(raw_member["$ref"], at)
            if (target, direction) in self._converting:
                return merged  # a definition that contains itself: keep the reference
            definition, used = self._definition(target, direction)
            members.append({k: v for k, v in definition.items() if k not in ("title", "description")})
            deps |= used
        expanded = _merge_all_of({**out, "allOf": members})
        if "allOf" in expanded:
            return merged
        refs |= deps
        return expanded

    def _ref(self, node: dict[str, Any], at: Ref, direction: Direction, refs: set[Ref]) -> dict[str, Any]:
        target = self.resolver.target(node["$ref"], at)
        try:
            self.resolver.get(target)
        except RefError as exc:
            self._report(Level.WARNING, f"{exc}; any value is accepted there", at)
            return {}
        refs.add(target)
        out: dict[str, Any] = {"$ref": "#/$defs/" + self.name(target)}
        for key in ("description", "title"):  # 3.1 allows siblings; 3.0 tools often put a description here
            if isinstance(node.get(key), str):
                out[key] = node[key]
        if self.dialect == "3.0" and _nullable(node):
            return {"anyOf": [out, {"type": "null"}]}
        return out

    def _types(self, node: dict[str, Any], at: Ref) -> list[str] | None:
        raw = node.get("type")
        if raw is None:
            return None
        listed = raw if isinstance(raw, list) else [raw]
        types = list(dict.fromkeys(t for t in listed if isinstance(t, str) and t in JSON_TYPES))
        if len(types) != len(listed):
            bad = [t for t in listed if t not in types]
            self._report(Level.WARNING, f"unknown type {bad!r} ignored", at.child("type"))
        return types or None

    def _hidden(self, child: Any, at: Ref, direction: Direction) -> bool:
        """readOnly properties are not inputs; writeOnly properties are not outputs."""
        flag = "readOnly" if direction == "input" else "writeOnly"
        if isinstance(child, dict) and child.get(flag) is True:
            return True
        if isinstance(child, dict) and "$ref" in child:
            try:
                target, _ = self.resolver.resolve(child, at)
            except RefError:
                return False
            return isinstance(target, dict) and target.get(flag) is True
        return False

    def _was_hidden(self, node: dict[str, Any], name: str, at: Ref, direction: Direction) -> bool:
        props = node.get("properties")
        return (
            isinstance(props, dict)
            and name in props
            and self._hidden(props[name], at.child("properties", name), direction)
        )

    def _discriminator(self, node: dict[str, Any], at: Ref, refs: set[Ref]) -> dict[str, Any]:
        out: dict[str, Any] = {"propertyName": node["propertyName"]}
        mapping = node.get("mapping")
        if isinstance(mapping, dict):
            converted = {}
            for value, ref in sorted(mapping.items()):
                if not isinstance(ref, str):
                    continue
                target = self.resolver.target(ref if "#" in ref or "/" in ref else f"#/components/schemas/{ref}", at)
                try:
                    self.resolver.get(target)
                except RefError as exc:
                    self._report(Level.WARNING, f"discriminator mapping {value!r}: {exc}", at.child("mapping", value))
                    continue
                refs.add(target)
                converted[str(value)] = "#/$defs/" + self.name(target)
            if converted:
                out["mapping"] = converted
        return out


ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
MERGEABLE = frozenset({"type", "properties", "required", "title", "description"})


def _merge_all_of(out: dict[str, Any]) -> dict[str, Any]:
    """allOf merged where the result means the same and reads simpler; otherwise left as it is.

    - `{allOf: [{$ref}], description: ...}` (the 3.0 way to describe a reference) -> `{$ref, description}`;
    - inline object members with distinct (or identical) properties -> one object with their union.
    Members that are references stay references here; SchemaConverter._merge_referenced takes plain ones by value.
    """
    members = out["allOf"]
    rest = {k: v for k, v in out.items() if k != "allOf"}
    if len(members) == 1 and set(members[0]) == {"$ref"} and set(rest) <= ANNOTATIONS:
        return {**members[0], **rest}
    if not all(isinstance(m, dict) and set(m) <= MERGEABLE and m.get("type", "object") == "object" for m in members):
        return out
    if not set(rest) <= MERGEABLE | ANNOTATIONS or rest.get("type", "object") != "object":
        return out
    merged: dict[str, Any] = dict(rest)
    properties: dict[str, Any] = dict(rest.get("properties", {}))
    required: list[str] = list(rest.get("required", []))
    for member in members:
        for name, schema in member.get("properties", {}).items():
            if name in properties and properties[name] != schema:
                return out  # the same property constrained twice: keep allOf
            properties[name] = schema
        required += [r for r in member.get("required", []) if r not in required]
        for key in ("title", "description"):
            if key in member and key not in merged:
                merged[key] = member[key]
    if rest.get("type") == "object" or any(m.get("type") == "object" for m in members):
        merged["type"] = "object"  # only when a part said so: properties alone do not require an object
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged


def _type_clash(members: list[Any]) -> list[str]:
    """The types of inline allOf members when no one type is allowed by all of them (else [])."""
    allowed: set[str] | None = None
    named: list[str] = []
    for member in members:
        if not isinstance(member, dict) or "type" not in member:
            continue
        types = member["type"] if isinstance(member["type"], list) else [member["type"]]
        kinds = {str(t) for t in types} | ({"integer"} if "number" in types else set())
        named += [str(t) for t in types if str(t) not in named]
        allowed = kinds if allowed is None else allowed & kinds
    return named if allowed is not None and not allowed else []


def _nullable(node: dict[str, Any]) -> bool:
    """3.0 `nullable: true`, or Swagger 2.0's `x-nullable: true` (kept by files the upgrade did not rewrite)."""
    return node.get("nullable") is True or node.get("x-nullable") is True


def _make_nullable(out: dict[str, Any]) -> None:
    """OpenAPI 3.0 `nullable: true` -> a type union with null (and null in an enum)."""
    types = out.get("type")
    if isinstance(types, str):
        out["type"] = [types, "null"] if types != "null" else "null"
    elif isinstance(types, list) and "null" not in types:
        out["type"] = [*types, "null"]
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    if "type" not in out and any(k in out for k in ("allOf", "anyOf", "oneOf", "$ref")):
        inner = dict(out)
        out.clear()
        out["anyOf"] = [inner, {"type": "null"}]


def _usable_regex(pattern: str) -> bool:
    """True when Python's `re` compiles the pattern: JSON Schema validators in Python (the MCP SDK's input check,
    jsonschema's metaschema "regex" format) do, and fail on ECMA/Java-only syntax such as \\p{L} or \\p{Print}."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _unique(values: list[Any]) -> list[Any]:
    """enum items must be unique in JSON Schema; specs sometimes repeat one."""
    seen: list[Any] = []
    for value in values:
        if not any(value == s and type(value) is type(s) for s in seen):
            seen.append(value)
    return seen


class Definitions(Mapping[str, dict[str, Any]]):
    """The converted definitions of one direction by `$defs` name: a view over the converter's cache that
    converts a definition when it is first looked up, and remembers which names each one refers to and
    its JSON size (tools of a large API share thousands of definitions; each is walked once)."""

    def __init__(self, converter: SchemaConverter, direction: Direction) -> None:
        self._converter = converter
        self._direction: Direction = direction
        self._refs: dict[str, frozenset[str]] = {}
        self._sizes: dict[str, int] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._converter._definition(self._converter._named[name], self._direction)[0]

    def __contains__(self, name: object) -> bool:
        return name in self._converter._named

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._converter._named))

    def __len__(self) -> int:
        return len(self._converter._named)

    def refs(self, name: str) -> frozenset[str]:
        """The `$defs` names definition `name` refers to."""
        if name not in self._refs:
            self._refs[name] = frozenset(refs_in(self[name]))
        return self._refs[name]

    def size(self, name: str) -> int:
        """Characters of definition `name` as compact JSON."""
        if name not in self._sizes:
            self._sizes[name] = len(json.dumps(self[name], separators=(",", ":"), ensure_ascii=False))
        return self._sizes[name]


def refs_in(node: Any) -> Iterator[str]:
    """The `$defs` names a converted schema refers to (its own `$defs` excluded), discriminator mappings included."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key == "$defs":
                    continue
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    yield value[len("#/$defs/") :]
                else:
                    if key == "mapping" and isinstance(value, dict):  # a discriminator's, or a property named so
                        yield from (
                            v[len("#/$defs/") :]
                            for v in value.values()
                            if isinstance(v, str) and v.startswith("#/$defs/")
                        )
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(current)
