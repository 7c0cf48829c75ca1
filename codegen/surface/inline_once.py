"""Definitions used once, written in place: the same schema without the indirection.

A `$defs` entry that one `$ref` in the whole schema names costs its name twice (the key and the pointer) and
sends a model to look it up. `inline_once` writes such a definition where it is referenced, when that
changes nothing a validator or a reader is told:
- the reference is the only one to it (counted over the root and every definition) and it is not recursive
  (it does not reach itself through references);
- the definition is an object schema without identifiers of its own (`$id`, `$anchor`, `$defs`, ...);
- the keywords beside the `$ref` are annotations that the definition does not have too (merging
  `{"$ref": X, "description": d}` into X keeps both; a constraint beside a `$ref` could interact with X's
  keywords, e.g. `properties` with `additionalProperties`, so such references stay).
References left inside the inlined definition still point at `#/$defs/...` from the root, so they stay valid;
a schema with any other reference (into a definition, or elsewhere) is left as it is.
A definition also named by a pointer that is not a `$ref` (a discriminator's mapping) stays. Data keywords
(enum, const, default, examples) are never searched for references.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import KeysView, Mapping
from typing import Any

from ..problems import unescape

PREFIX = "#/$defs/"
DATA = frozenset({"enum", "const", "default", "examples"})
SIBLINGS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"})
OWN_IDS = frozenset({"$id", "$anchor", "$dynamicAnchor", "$schema", "$defs", "$vocabulary", "definitions"})
MAX_LEVEL = 200  # nested schemas followed; a schema nested deeper is left as it is
SCALARS = frozenset({int, float, bool, type(None)})  # values with nothing inside: never walked or counted


Counted = dict[int, tuple[Any, Counter[str | None], frozenset[str]]]  # see inline_once's `counted`


def inline_once(schema: Mapping[str, Any], counted: Counted | None = None) -> Mapping[str, Any]:
    """`schema` with every definition referenced once (and safely) written in place of its reference.

    `counted` remembers, by the identity of each definition (kept alive in it), the references inside it: the
    schemas of a large API's tools share thousands of definitions, each then walked once."""
    defs = schema.get("$defs")
    if not isinstance(defs, Mapping) or not defs:
        return schema
    uses: Counter[str | None] = Counter()
    edges: dict[str, set[str]] = {name: set() for name in defs}
    below = _count_root(schema, uses, edges)
    for def_name, target in defs.items():  # as _count would at level 1, once per definition object
        found = counted.get(id(target)) if counted is not None else None
        if found is None:
            inner: Counter[str | None] = Counter()
            names: dict[str, set[str]] = {"": set()}
            _count(target, inner, "", names, 1)
            found = (target, inner, frozenset(names[""]))
            if counted is not None:
                counted[id(target)] = found
        uses.update(found[1])
        edges[def_name] |= found[2]
    if set(uses) - set(defs):  # a pointer into a definition, or elsewhere: moving definitions could break it
        return schema
    candidates = {
        name
        for name, target in defs.items()
        if uses[name] == 1 and isinstance(target, Mapping) and not OWN_IDS & set(target) and not _cyclic(name, edges)
    }
    if not candidates:
        return schema
    inlined: set[str] = set()

    def walk(node: Any, level: int) -> Any:
        if level > MAX_LEVEL:
            return node
        if type(node) is not dict:
            if isinstance(node, list):
                items = [walk(v, level + 1) for v in node]
                return node if all(new is old for new, old in zip(items, node)) else items
            if not isinstance(node, Mapping):
                return node
        elif id(node) in below and below[id(node)].isdisjoint(candidates):
            return node  # a root property's schema that names no candidate: nothing to write in place
        name = _target(node)
        if name is not None and name in candidates:
            target = defs[name]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if set(siblings) <= SIBLINGS and not set(siblings) & set(target):
                inlined.add(name)
                return {**definition(name, level + 1), **siblings}
        out = {
            k: (v if k in DATA or k == "$defs" or type(v) in SCALARS or type(v) is str else walk(v, level + 1))
            for k, v in node.items()
        }
        unchanged = type(node) is dict and all(out[k] is v for k, v in node.items())
        return node if unchanged else out  # unchanged: the same object rather than a copy of it

    def definition(name: str, level: int) -> Any:
        """A definition walked; one that names no candidate stays the same object (walking would copy it)."""
        return walk(defs[name], level) if edges[name] & candidates else defs[name]

    root = dict(walk(schema, 0))  # its `$defs` is left as it is: replaced below
    walked = {name: definition(name, 1) for name in defs}  # all first: they inline their own uses
    del walk, definition  # the recursive closures are a reference cycle: freed now, without the collector
    kept = {name: value for name, value in walked.items() if name not in inlined}
    if kept:
        root["$defs"] = kept
    else:
        root.pop("$defs", None)
    return root


def _target(node: Mapping[str, Any]) -> str | None:
    ref = node.get("$ref")
    return unescape(ref[len(PREFIX) :]) if isinstance(ref, str) and ref.startswith(PREFIX) else None


def _count_root(
    schema: Mapping[str, Any], uses: Counter[str | None], edges: dict[str, set[str]]
) -> dict[int, KeysView[str | None]]:
    """_count of the root without its `$defs`, each root property's schema counted on its own: the names each one
    refers to, by its id (a keys view), so that writing definitions in place skips the schemas that name none."""
    rest = {key: value for key, value in schema.items() if key != "$defs"}
    properties = rest.get("properties")
    if type(properties) is not dict:
        _count(rest, uses, None, edges, 0)
        return {}
    members = {key: value for key, value in properties.items() if type(value) is dict and key not in DATA}
    rest["properties"] = {key: value for key, value in properties.items() if key not in members}
    _count(rest, uses, None, edges, 0)
    below: dict[int, KeysView[str | None]] = {}
    for member in members.values():
        inner: Counter[str | None] = Counter()
        _count(member, inner, None, edges, 2)  # as _count walks it at level 2; no owner: `edges` is left as it is
        uses.update(inner)
        below[id(member)] = inner.keys()
    return below


def _count(node: Any, uses: Counter[str | None], owner: str | None, edges: dict[str, set[str]], level: int) -> None:
    """Every `$ref` to a definition, anywhere outside data keywords; `edges`: which definitions each one names."""
    if level > MAX_LEVEL:  # not counted: nothing may move
        uses[None] += 1
        return
    if isinstance(node, str):  # a pointer written elsewhere (a discriminator's mapping): never moved
        if node.startswith(PREFIX):
            uses[unescape(node[len(PREFIX) :])] += 2
        return
    if isinstance(node, list):
        for value in node:
            _count(value, uses, owner, edges, level + 1)
        return
    if not isinstance(node, Mapping):
        return
    name = _target(node)
    if name is not None:
        uses[name] += 1
        if owner is not None:
            edges[owner].add(name)
    elif isinstance(node.get("$ref"), str):  # any other reference: nothing may move
        uses[None] += 1
    for key, value in node.items():
        if key in DATA or type(value) in SCALARS or (key == "$ref" and isinstance(value, str)):  # $ref: counted above
            continue
        if key == "$defs" and level == 0 and isinstance(value, Mapping):
            for def_name, target in value.items():
                _count(target, uses, def_name, edges, level + 1)
        else:
            _count(value, uses, owner, edges, level + 1)


def _cyclic(name: str, edges: Mapping[str, set[str]]) -> bool:
    """`name` reaches itself through references (bounded by the number of definitions)."""
    seen: set[str] = set()
    todo = list(edges.get(name, ()))
    while todo:
        current = todo.pop()
        if current == name:
            return True
        if current not in seen:
            seen.add(current)
            todo.extend(edges.get(current, ()))
    return False
