"""The keyword-by-keyword conversion of one schema node: whitelisted keywords with checked value types,
sub-schemas converted recursively (to MAX_DEPTH), readOnly/writeOnly properties left out by direction."""

from __future__ import annotations

from typing import Any, Literal

from ..problems import Level, Problem
from ..spec.model import Dialect
from ..spec.refs import Ref, RefError, Resolver
from .schema_keywords import (
    ANNOTATIONS,
    ANY_VALUE,
    BOOLEANS,
    COUNTS,
    JSON_TYPES,
    MAX_DEPTH,
    NUMBERS,
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    SCHEMA_VALUED,
    STRINGS,
    is_number,
    make_nullable,
    nullable,
    type_clash,
    unique,
    usable_regex,
)

Direction = Literal["input", "output"]
EXCLUSIVE = ("exclusiveMinimum", "exclusiveMaximum")


class NodeConverter:
    """Converts inline schema nodes; `SchemaConverter` (schemas.py) adds references and definitions."""

    def __init__(self, resolver: Resolver, dialect: Dialect) -> None:
        self.resolver = resolver
        self.dialect = dialect
        self._problems: dict[tuple[str, str, str], Problem] = {}
        self._converting: set[tuple[Ref, Direction]] = set()  # definitions being converted (not expanded in allOf)
        self._reported = 0  # problems reported so far (repeats included): a conversion that reported none is pure

    @property
    def problems(self) -> list[Problem]:
        return sorted(self._problems.values(), key=lambda p: (p.source, p.pointer, p.message))

    def _report(self, level: Level, message: str, at: Ref) -> None:
        self._reported += 1
        problem = self.resolver.problem(level, message, at)
        self._problems.setdefault((problem.source, problem.pointer, problem.message), problem)

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
        keys = node.keys()  # most nodes hold a few keywords: groups they have none of are skipped
        for key in STRINGS if not keys.isdisjoint(STRINGS) else ():
            if isinstance(node.get(key), str):
                out[key] = node[key]
        if "pattern" in out and not usable_regex(out["pattern"]):
            self._report(
                Level.WARNING,
                f"pattern {out.pop('pattern')!r} is not a regular expression Python can compile "
                "(e.g. \\p{...} classes); dropped, so values are not checked against it",
                at.child("pattern"),
            )
        for key in BOOLEANS if not keys.isdisjoint(BOOLEANS) else ():
            if isinstance(node.get(key), bool):
                out[key] = node[key]
        for key in NUMBERS if not keys.isdisjoint(NUMBERS) else ():
            value = node.get(key)
            if is_number(value) and not (key == "multipleOf" and value <= 0):
                out[key] = value
        for key in COUNTS if not keys.isdisjoint(COUNTS) else ():
            value = node.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out[key] = value
            elif is_number(value) and value >= 0 and float(value).is_integer():
                out[key] = int(value)
        for key in EXCLUSIVE if not keys.isdisjoint(EXCLUSIVE) else ():
            value = node.get(key)
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value is True and bound in out:  # 3.0: a flag on minimum/maximum
                out[key] = out.pop(bound)
            elif is_number(value):
                out[key] = value
        for key in ANY_VALUE if not keys.isdisjoint(ANY_VALUE) else ():
            if key in node:
                out[key] = node[key]
        if isinstance(node.get("enum"), list):
            out["enum"] = unique(node["enum"])
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

        for key in SCHEMA_MAPS if not keys.isdisjoint(SCHEMA_MAPS) else ():
            value = node.get(key)
            if isinstance(value, dict):
                converted = {}
                for name, child in value.items():
                    if key == "properties" and self._hidden(child, at, direction):
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
        for key in SCHEMA_VALUED if not keys.isdisjoint(SCHEMA_VALUED) else ():
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
        for key in SCHEMA_LISTS if not keys.isdisjoint(SCHEMA_LISTS) else ():
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
        if "oneOf" in out and "anyOf" not in out and self._twins(node["oneOf"], at.child("oneOf")):
            self._report(
                Level.WARNING,
                "oneOf members are the same schema, so no value could match exactly one; kept as anyOf"
                + (" (the discriminator picks the member)" if "discriminator" in out else ""),
                at.child("oneOf"),
            )
            out["anyOf"] = out.pop("oneOf")

        if "allOf" in out:
            hidden = self._hidden_in_members(node, at, direction, 0)
            if hidden:  # `allOf: [{$ref: Pet}, {required: [id]}]` with Pet's id readOnly: not required in input
                out = _unrequired(out, hidden)
                out["allOf"] = [_unrequired(m, hidden) for m in out["allOf"]]
            clash = type_clash(out["allOf"])
            if clash:
                self._report(
                    Level.WARNING,
                    f"allOf members require different types ({', '.join(clash)}), so no value can satisfy it; "
                    "any value is accepted here",
                    at.child("allOf"),
                )
                return {k: v for k, v in out.items() if k in ANNOTATIONS}
            out = self._merge_referenced(out, node, at, direction, refs)
        if self.dialect == "3.0" and nullable(node):
            make_nullable(out)
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

    def _twins(self, members: list[Any], at: Ref) -> bool:
        """Whether two members of a oneOf are the same schema (after their references, notes aside)."""
        seen: list[Any] = []
        for i, member in enumerate(members):
            target = member
            if isinstance(member, dict) and "$ref" in member:
                try:
                    target, _ = self.resolver.resolve(member, at.child(i))
                except RefError:
                    continue
            if isinstance(target, dict):
                target = {k: v for k, v in target.items() if k not in ANNOTATIONS}
            if target in seen:
                return True
            seen.append(target)
        return False

    def _hidden(self, child: Any, at: Ref, direction: Direction) -> bool:
        """readOnly properties are not inputs; writeOnly properties are not outputs. `at`: the property's location,
        or any in the same document (only its document is read, to follow a `$ref`)."""
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

    def _hidden_in_members(self, node: dict[str, Any], at: Ref, direction: Direction, depth: int) -> set[str]:
        """The properties an allOf member of `node` leaves out in this direction (through $refs and nested allOf)."""
        members = node.get("allOf")
        if not isinstance(members, list) or depth > MAX_DEPTH:
            return set()
        hidden: set[str] = set()
        for index, member in enumerate(members):
            try:
                target, target_at = self.resolver.resolve(member, at.child("allOf", index))
            except RefError:
                continue
            if not isinstance(target, dict):
                continue
            props = target.get("properties")
            if isinstance(props, dict):
                hidden.update(name for name, child in props.items() if self._hidden(child, target_at, direction))
            hidden |= self._hidden_in_members(target, target_at, direction, depth + 1)
        return hidden

    def _was_hidden(self, node: dict[str, Any], name: str, at: Ref, direction: Direction) -> bool:
        props = node.get("properties")
        return isinstance(props, dict) and name in props and self._hidden(props[name], at, direction)

    # -- provided by SchemaConverter ----------------------------------------------------------------
    def _ref(self, node: dict[str, Any], at: Ref, direction: Direction, refs: set[Ref]) -> dict[str, Any]:
        raise NotImplementedError

    def _discriminator(self, node: dict[str, Any], at: Ref, refs: set[Ref]) -> dict[str, Any]:
        raise NotImplementedError

    def _merge_referenced(
        self, out: dict[str, Any], node: dict[str, Any], at: Ref, direction: Direction, refs: set[Ref]
    ) -> dict[str, Any]:
        raise NotImplementedError


def _unrequired(schema: Any, hidden: set[str]) -> Any:
    """`schema` without the `required` names in `hidden` that its own properties do not declare."""
    if not isinstance(schema, dict) or not isinstance(schema.get("required"), list):
        return schema
    props = schema.get("properties")
    own: dict[str, Any] = props if isinstance(props, dict) else {}
    kept = [name for name in schema["required"] if name not in hidden or name in own]
    if len(kept) == len(schema["required"]):
        return schema
    out = {k: v for k, v in schema.items() if k != "required"}
    if kept:
        out["required"] = kept
    return out
