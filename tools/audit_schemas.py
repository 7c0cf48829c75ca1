"""tools/audit_mapping.py's schema checks: required names, `$defs` entries and references in a tool's schemas,
compared with the spec locations they stand for; and the schema helpers the other checks share."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

CONSTRAINTS = ("enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")


class SchemaChecks:
    """Mixed into tools/audit_mapping.Audit (which holds the spec, its resolver and `report`)."""

    checked: Counter[str]
    doc: Any
    resolver: Any
    named: dict[str, Any]
    report: Callable[[str, str, str], None]  # (check, tool, detail)

    def check_required(self, name: str, which: str, schema: Any, tool: Any = None) -> None:
        """Every object that lists `required` names defines them (in its properties or its allOf members'): a
        property left out (readOnly in input, writeOnly in output) must not stay required."""
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
        for where, node in walk(schema):
            required = node.get("required")
            if not isinstance(required, list) or not isinstance(node.get("properties"), dict):
                continue
            if set(node) & {"anyOf", "oneOf", "additionalProperties", "patternProperties", "$ref"}:
                continue
            names = set(node["properties"])
            for member in node.get("allOf", []) or []:
                flat = flatten(member, defs)
                if flat is None or "anyOf" in flat:
                    names = None
                    break
                names |= set(flat.get("properties", {}))
            if names is None:
                continue
            missing = [r for r in required if r not in names]
            parts = where.split("/")
            located = self.locate(tool, which, parts[1:]) if missing else None
            if located is not None:
                declared = self.declared_node(located[0], located[1], 0)
                missing = [r for r in missing if r in declared]  # the rest: the spec's own slip
            missing = [r for r in missing if r in self.hidden_names()]  # only what the direction left out
            if missing:
                self.report("REQUIRED_UNDEFINED", name, f"{which} {where}: {short(missing)}")

    def locate(self, tool: Any, which: str, parts: list[str]) -> tuple[Any, Any] | None:
        """The spec schema (node, location) a converted node's pointer parts stand for: from a `$defs` entry's
        location, or (input) from the request body property an argument is, down through properties and items."""
        if len(parts) >= 2 and parts[0] == "$defs" and parts[1] in self.named:
            ref = self.named[parts[1]]
            try:
                node, at = self.resolver.get(ref), ref
            except Exception:
                return None
            rest = parts[2:]
        elif len(parts) >= 2 and parts[0] == "properties" and which == "input" and tool is not None:
            arg = next((a for a in tool.plan.args if a.arg == parts[1] and a.location == "body"), None)
            props = self.body_props(tool) if arg is not None else None
            if arg is None or props is None or arg.name not in props:
                return None
            node, at = props[arg.name]
            rest = parts[2:]
        else:
            return None
        while True:
            try:
                node, at = self.resolver.resolve(node, at)
            except Exception:
                return None
            if not rest:
                return node, at
            if not isinstance(node, dict):
                return None
            if rest[0] == "properties" and len(rest) >= 2:
                member = self.find_property(node, at, rest[1], 0)  # its own or an allOf member's (merged)
                if member is None:
                    return None
                (node, at), rest = member, rest[2:]
            elif rest[0] == "items" and isinstance(node.get("items"), dict):
                node, at, rest = node["items"], at.child("items"), rest[1:]
            else:
                return None

    def find_property(self, node: Any, at: Any, name: str, depth: int) -> tuple[Any, Any] | None:
        if not isinstance(node, dict) or depth > 10:
            return None
        if isinstance(node.get("properties"), dict) and name in node["properties"]:
            return node["properties"][name], at.child("properties", name)
        for index, member in enumerate(node.get("allOf") or []):
            try:
                member, member_at = self.resolver.resolve(member, at.child("allOf", index))
            except Exception:
                continue
            found = self.find_property(member, member_at, name, depth + 1)
            if found is not None:
                return found
        return None

    def media(self, node: Any, at: Any) -> tuple[dict[str, Any], dict[str, Any], str, Any] | None:
        """A request body or response (resolved), its `content` and the media type the generator picks from it,
        and where it is; None when it cannot be resolved or has no content."""
        try:
            node, at = self.resolver.resolve(node, at)
        except Exception:
            return None
        content = node.get("content") if isinstance(node, dict) else None
        if not isinstance(content, dict) or not content:
            return None
        from codegen.spec.media import pick_media_type

        return node, content, pick_media_type(content), at

    def body_props(self, tool: Any) -> dict[str, Any] | None:
        """The spec's request body properties (name -> (schema, location)) of the tool's operation."""
        op = tool.operation
        try:
            item, item_at = self.resolver.resolve(
                self.doc.get("paths", {}).get(op.path), self.resolver.root.child("paths", op.path)
            )
            raw_op = item.get(op.method.lower())
            op_at = item_at.child(op.method.lower())
            found = self.media(raw_op.get("requestBody"), op_at.child("requestBody"))
            if found is None:
                return None
            _, content, media_type, body_at = found
            props, _ = self.object_props(
                content[media_type].get("schema"), body_at.child("content", media_type, "schema")
            )
            return props
        except Exception:
            return None

    def hidden_names(self) -> set[str]:
        """Names of the spec's properties declared readOnly or writeOnly anywhere (a required name the spec never
        declares at all is the spec's own slip, not the generator's)."""
        if getattr(self, "_hidden", None) is None:
            self._hidden: set[str] | None = set()
            for _, node in walk(self.doc):
                for name, child in (
                    (node.get("properties") or {}).items() if isinstance(node.get("properties"), dict) else ()
                ):
                    target = child
                    if isinstance(child, dict) and "$ref" in child:
                        try:
                            target, _ = self.resolver.resolve(child, self.resolver.root)
                        except Exception:
                            pass
                    if any(
                        isinstance(n, dict) and (n.get("readOnly") is True or n.get("writeOnly") is True)
                        for n in (child, target)
                    ):
                        self._hidden.add(name)
        assert self._hidden is not None
        return self._hidden

    def declared_node(self, node: Any, at: Any, depth: int) -> set[str]:
        if not isinstance(node, dict) or depth > 10:
            return set()
        names = set(node.get("properties") or {})
        for index, member in enumerate(node.get("allOf") or []):
            try:
                member, member_at = self.resolver.resolve(member, at.child("allOf", index))
            except Exception:
                continue
            names |= self.declared_node(member, member_at, depth + 1)
        return names

    def check_definitions(self, tool: str, which: str, schema: Any) -> None:
        """Each `$defs` entry says what the spec location its name stands for says: its properties (less the hidden
        ones), required names, enum, type and simple constraints, recursively through inline properties and items."""
        done = self.__dict__.setdefault("_defs_done", set())
        for name, definition in (schema.get("$defs") or {}).items() if isinstance(schema, dict) else ():
            if (name, which, id(definition)) in done or name not in self.named:
                continue
            done.add((name, which, id(definition)))
            ref = self.named[name]
            try:
                node = self.resolver.get(ref)
            except Exception:
                continue
            self.compare(tool, f"{which} $defs/{name}", node, ref, definition, which, 0)

    def compare(self, tool: str, where: str, raw: Any, at: Any, got: Any, which: str, depth: int) -> None:
        if depth > 6 or not isinstance(raw, dict) or not isinstance(got, dict) or "$ref" in raw or "$ref" in got:
            return
        if set(got) <= {"type", "description"} and len(raw) > 2:
            return  # loosened by a budget: its type alone
        self.checked["definition"] += 1
        for key in CONSTRAINTS:
            if key not in raw or key == "enum" or (which == "output" and key == "minItems"):
                continue  # output minItems: dropped for projections (surface/results.unrequire)
            value = raw[key]
            if key == "pattern" and not isinstance(value, str):
                continue
            if key in ("minimum", "maximum") and raw.get("exclusive" + key.title()) is True:
                key = "exclusive" + key.title()
            if key in got and got[key] != value:
                self.report("DEF_CONSTRAINT", tool, f"{where}: {key} {short(got.get(key))} vs spec {short(value)}")
            elif key not in got and not (key == "pattern" and any("pattern" in w for w in self.warnings)):
                if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                    if not (
                        key in ("minLength", "maxLength", "minItems", "maxItems")
                        and (not isinstance(value, int) or value < 0)
                    ):
                        if not (
                            key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
                            and isinstance(value, str)
                        ):
                            self.report("DEF_CONSTRAINT_LOST", tool, f"{where}: {key} {short(value)}")
        if isinstance(raw.get("enum"), list) and isinstance(got.get("enum"), list):
            if [v for v in got["enum"] if v is not None] != [v for v in dict_unique(raw["enum"]) if v is not None]:
                self.report("DEF_ENUM", tool, f"{where}: {short(got['enum'])} vs spec {short(raw['enum'])}")
        elif isinstance(raw.get("enum"), list) and "enum" not in got and "allOf" not in raw:
            self.report("DEF_ENUM_LOST", tool, f"{where}")
        raw_type = raw.get("type")
        if isinstance(raw_type, str) and raw_type != "file" and "type" in got:
            have = got["type"] if isinstance(got["type"], list) else [got["type"]]
            if raw_type not in have:
                self.report("DEF_TYPE", tool, f"{where}: {short(got['type'])} vs spec {raw_type}")
        hidden = "readOnly" if which == "input" else "writeOnly"
        raw_props = raw.get("properties") if isinstance(raw.get("properties"), dict) else None
        got_props = got.get("properties") if isinstance(got.get("properties"), dict) else None
        if raw_props is not None and got_props is not None and "allOf" not in raw:
            want = set()
            for key, child in raw_props.items():
                target = child
                if isinstance(child, dict) and "$ref" in child:
                    try:
                        target, _ = self.resolver.resolve(child, at)
                    except Exception:
                        pass
                if not any(isinstance(n, dict) and n.get(hidden) is True for n in (child, target)):
                    want.add(key)
            if want != set(got_props):
                self.report(
                    "DEF_PROPERTIES",
                    tool,
                    f"{where}: extra {short(sorted(set(got_props) - want))} missing {short(sorted(want - set(got_props)))}",
                )
            for key in sorted(want & set(got_props)):
                self.compare(
                    tool,
                    f"{where}/{key}",
                    raw_props[key],
                    at.child("properties", key),
                    got_props[key],
                    which,
                    depth + 1,
                )
        if isinstance(raw.get("items"), dict) and isinstance(got.get("items"), dict):
            self.compare(tool, f"{where}/items", raw["items"], at.child("items"), got["items"], which, depth + 1)
        raw_required = raw.get("required")
        if isinstance(raw_required, list) and raw_props is not None and got_props is not None and "allOf" not in raw:
            want_required = [
                r for r in dict_unique(raw_required) if isinstance(r, str) and (r in got_props or r not in raw_props)
            ]
            if want_required != list(got.get("required", [])) and which == "input":
                self.report(
                    "DEF_REQUIRED", tool, f"{where}: {short(got.get('required'))} vs spec {short(raw_required)}"
                )

    def check_refs(self, name: str, which: str, schema: Any) -> None:
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
        for ref in refs_in(schema):
            if ref.startswith("#/$defs/"):
                if ref[len("#/$defs/") :] not in defs:
                    self.report("REF_UNRESOLVED", name, f"{which}: {ref}")
            else:
                self.report("REF_FOREIGN", name, f"{which}: {ref}")


def dict_unique(values: list[Any]) -> list[Any]:
    """The values without repeats, compared as JSON values (1 and true, 0 and false are different ones)."""
    out: list[Any] = []
    seen: set[str] = set()
    for v in values:
        key = json.dumps(v, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def flatten(schema: Any, defs: dict[str, Any], depth: int = 0) -> dict[str, Any] | None:
    """A converted argument schema with `$ref`s, single-member allOf and a nullable anyOf followed, or None."""
    if not isinstance(schema, dict) or depth > 20:
        return None
    out = {k: v for k, v in schema.items() if k not in ("$ref", "allOf", "anyOf")}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = flatten(defs.get(ref[len("#/$defs/") :]), defs, depth + 1)
        if target is None:
            return None
        out = {**target, **out}
    for member in schema.get("allOf", []) or []:
        sub = flatten(member, defs, depth + 1)
        if sub is not None:
            out = {**sub, **out}
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        members = [m for m in any_of if m != {"type": "null"}]
        if len(members) == 1:
            sub = flatten(members[0], defs, depth + 1)
            if sub is not None:
                out = {**sub, **out}
        else:
            out["anyOf"] = any_of
    return out


def walk(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in a converted schema, with its JSON pointer (enum/const/examples values skipped)."""
    if isinstance(node, dict):
        yield where or "/", node
        for key, value in node.items():
            if key in ("enum", "const", "examples", "default", "example"):
                continue
            if key in ("properties", "$defs", "patternProperties", "dependentSchemas") and isinstance(value, dict):
                for name, child in value.items():
                    yield from walk(child, f"{where}/{key}/{name}")
            elif isinstance(value, (dict, list)):
                yield from walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from walk(child, f"{where}/{index}")


def refs_in(node: Any) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key == "$ref" and isinstance(value, str):
                    yield value
                elif key == "mapping" and isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
                    yield from (v for v in value.values() if v.startswith("#"))
                elif key in ("enum", "const", "examples", "default", "example"):
                    continue
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(v for v in current if isinstance(v, (dict, list)))


def short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
