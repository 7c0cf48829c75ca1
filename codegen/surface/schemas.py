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
from typing import Any

from ..spec.content import content_key
from ..spec.model import Dialect, Schema
from ..problems import Level
from ..spec.refs import Ref, RefError, Resolver

from .schema_keywords import merge_all_of, nullable
from .schema_nodes import Direction, NodeConverter

DEF_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")
MAX_DEF_NAME = 60  # characters of a `$defs` name taken from the spec (a digest may follow)
COMPONENT = re.compile(r"^/components/schemas/([^/]+)$")


class SchemaConverter(NodeConverter):
    """Converts schemas for one API; definitions are cached across calls (and so across tools)."""

    def __init__(self, resolver: Resolver, dialect: Dialect) -> None:
        super().__init__(resolver, dialect)
        self._defs: dict[tuple[Ref, Direction], tuple[dict[str, Any], frozenset[Ref]]] = {}
        self._names: dict[Ref, str] = {}
        self._named: dict[str, Ref] = {}  # the reverse of _names
        self._views: dict[Direction, _Remembered] = {}  # what each direction's Definitions view remembers
        self._converted: dict[tuple[bytes, str, Direction], dict[str, Any]] = {}  # see convert
        self._by_node: dict[tuple[int, str, Direction], tuple[Any, dict[str, Any]]] = {}  # the same, by node id

    # -- public -------------------------------------------------------------------------------------
    def convert(self, schema: Schema, direction: Direction) -> dict[str, Any]:
        """The JSON Schema for `schema`; the definitions its `$ref`s name are in `self.defs(direction)`.

        Remembered by content: a large API declares the same inline schema on thousands of operations (Graph's
        `$select` of one entity type), and a node's conversion depends only on its content, its document (which
        its `$ref`s are relative to) and the direction -- except for where its problems are reported, so a
        conversion that reported any is not remembered. The result is shared: callers never modify it. (normalize
        gives operations one node per content, spec.walker.Walker.canonical: a node seen before is found by id.)"""
        by_node = (id(schema.node), schema.at.uri, direction)
        if by_node in self._by_node:
            return self._by_node[by_node][1]
        content = content_key(schema.node)
        if content is None:
            return self._node(schema.node, schema.at, direction, set(), 0)
        key = (content, schema.at.uri, direction)
        found = self._converted.get(key)
        if found is None:
            reported = self._reported
            found = self._node(schema.node, schema.at, direction, set(), 0)
            if self._reported != reported:
                return found
            self._converted[key] = found
        self._by_node[by_node] = (schema.node, found)  # [0] keeps the node alive: its id is not reused
        return found

    def defs(self, direction: Direction) -> Definitions:
        """Every definition of one direction by its `$defs` name, each converted when first looked up."""
        if direction not in self._views:
            self._views[direction] = ({}, {}, {}, {})
        return Definitions(self, direction, self._views[direction])  # not kept here: no reference cycle

    def resolve_converted(self, schema: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
        """Follow a converted `{"$ref": "#/$defs/X"}` chain to the definition it names."""
        seen: set[str] = set()
        while len(schema) == 1 and "$ref" in schema and schema["$ref"].startswith("#/$defs/"):
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
            cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", raw).strip("_")
            safe = cleaned[:MAX_DEF_NAME] or "schema"
            digest = hashlib.sha1(f"{self.resolver.documents.relative(ref.uri)}#{ref.pointer}".encode()).hexdigest()
            # a name that is not the component's own, or was cut (two long names may share their first characters),
            # gets its location's digest: each location keeps its own name, whatever the order they are met in
            if not (match and DEF_NAME.match(raw)) or len(cleaned) > MAX_DEF_NAME:
                safe = f"{safe}_{digest[:6]}"
            if self._named.get(safe, ref) != ref:  # taken all the same (a component named like a digested name)
                safe = f"{cleaned[:MAX_DEF_NAME] or 'schema'}_{digest[:12]}"
            self._names[ref] = safe
            self._named[safe] = ref
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

    def _merge_referenced(
        self, out: dict[str, Any], node: dict[str, Any], at: Ref, direction: Direction, refs: set[Ref]
    ) -> dict[str, Any]:
        """allOf merged (see _merge_all_of), with members that are plain `$ref`s to plain object definitions
        taken by value: `{allOf: [{$ref: Base}, {properties: {extra}}]}` -> one object with Base's properties and
        `extra`. When the definitions do not merge safely (a property declared twice differently, a
        discriminator, anyOf/oneOf, a recursive reference), allOf stays as it is, references included."""
        merged = merge_all_of(out)
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
        expanded = merge_all_of({**out, "allOf": members})
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
        if self.dialect == "3.0" and nullable(node):
            return {"anyOf": [out, {"type": "null"}]}
        return out

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


# Definitions' converted definitions, refs, sizes and memo
_Remembered = tuple[dict[str, dict[str, Any]], dict[str, frozenset[str]], dict[str, int], dict[Any, Any]]


class Definitions(Mapping[str, dict[str, Any]]):
    """The converted definitions of one direction by `$defs` name: a view over the converter's cache that
    converts a definition when it is first looked up, and remembers which names each one refers to and
    its JSON size (tools of a large API share thousands of definitions; each is walked once)."""

    def __init__(self, converter: SchemaConverter, direction: Direction, remembered: _Remembered | None = None) -> None:
        self._converter = converter
        self._direction: Direction = direction
        self._by_name, self._refs, self._sizes, self.memo = remembered or ({}, {}, {}, {})
        # memo: results of pure steps over this direction's schemas (budget.reach, inputs' argument schemas), by
        # their inputs

    def __getitem__(self, name: str) -> dict[str, Any]:
        found = self._by_name.get(name)
        if found is None:  # converted once per (location, direction), then looked up by name: tools do it often
            found = self._by_name[name] = self._converter._definition(self._converter._named[name], self._direction)[0]
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._converter._named

    def get(self, name: str, default: Any = None) -> Any:  # Mapping.get, without its try/except round trip
        found = self._by_name.get(name)
        if found is None:
            return self[name] if name in self._converter._named else default
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._converter._named))

    def __len__(self) -> int:
        return len(self._converter._named)

    def refs(self, name: str) -> frozenset[str]:
        """The `$defs` names definition `name` refers to."""
        if name not in self._refs:
            self._refs[name] = frozenset(refs_in(self[name]))
        return self._refs[name]

    def total_size(self, names: list[str]) -> int:
        """Characters of the named definitions, together."""
        try:
            return sum(map(self._sizes.__getitem__, names))
        except KeyError:  # some not measured yet
            return sum(self.size(name) for name in names)

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
                    if isinstance(value, (dict, list)):  # nothing else holds a reference
                        stack.append(value)
        elif isinstance(current, list):
            stack.extend([item for item in current if isinstance(item, (dict, list))])  # enums: hundreds of strings
