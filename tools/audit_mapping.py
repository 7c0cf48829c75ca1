#!/usr/bin/env python3
"""Audit the operation -> tool mapping on real specs: invariants between each spec and the tools made of it.

Nothing here is part of the generator: it runs `codegen.pipeline.analyze` and checks what came out against the spec,
re-reading the spec on its own (parameters merged from path item and operation, bodies, responses). Findings that a
documented rule explains (Accept/Content-Type/Authorization headers, fixed values, readOnly/writeOnly, budgets,
renamed arguments) are not reported.

Run it with the worktree's venv, from the repository root:
  .venv/bin/python tools/audit_mapping.py SPEC [SPEC ...]
  tools/list-specs --named | .venv/bin/python tools/audit_mapping.py -
  tools/list-specs --set directory --sample 300 --seed audit | .venv/bin/python tools/audit_mapping.py - --jobs 2
  .venv/bin/python tools/audit_mapping.py SPEC --client gemini     # the tools as a client profile reshapes them
Set AUDIT_CODEGEN_ROOT to a checkout (e.g. an older commit's worktree) to audit that code instead of this one's.
Each spec runs in its own process (skipped after --timeout seconds). Prints one line per finding
(CHECK <tab> spec <tab> tool <tab> detail) and a count per check at the end; --json writes the findings as JSON lines.
Exit status 1 when anything was found or a spec was skipped (tests/test_corpus.py runs it on CI's sample).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(os.environ.get("AUDIT_CODEGEN_ROOT") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
ARG_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
IGNORED_HEADERS = {"accept", "content-type", "authorization"}
CONSTRAINTS = ("enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")
HINTS = {  # method -> (readOnlyHint, destructiveHint, idempotentHint), surface/annotations.py
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "PUT": (False, True, True),
    "DELETE": (False, True, True),
    "POST": (False, None, False),  # destructive when its name says so
    "PATCH": (False, False, False),
}
RESULT_ARGS = {"fields", "max_items", "max_pages"}  # added by surface/results.py, never sent


class Audit:
    """The checks for one spec; `found` collects (check, tool, detail)."""

    def __init__(self, path: str, clients: tuple[str, ...] = ("portable",)) -> None:
        self.path = path
        self.clients = clients
        self.found: list[tuple[str, str, str]] = []
        self.checked: Counter[str] = (
            Counter()
        )  # how many times each kind of check ran (a check that never runs finds nothing)

    def report(self, check: str, tool: str, detail: str) -> None:
        self.found.append((check, tool, detail))

    def run(self) -> None:
        from codegen.config import Config
        from codegen.pipeline import analyze
        from codegen.spec.load import open_documents
        from codegen.spec.refs import Resolver
        from codegen.spec.upgrade import is_swagger2, upgrade
        from codegen.surface import schemas

        converters: list[Any] = []
        original_init = schemas.SchemaConverter.__init__

        def hooked(self_: Any, *args: Any, **kwargs: Any) -> None:
            original_init(self_, *args, **kwargs)
            converters.append(self_)

        schemas.SchemaConverter.__init__ = hooked  # type: ignore[method-assign]
        try:
            api, tools, problems = analyze(Config(spec=self.path, validate=False, clients=self.clients))
        finally:
            schemas.SchemaConverter.__init__ = original_init  # type: ignore[method-assign]
        if api is None:
            return
        documents, _ = open_documents(self.path)
        assert documents is not None
        swagger2 = is_swagger2(documents.root)
        raw2 = documents.root if swagger2 else None
        if swagger2:
            documents, _, _ = upgrade(documents)
        self.resolver = Resolver(documents)
        self.doc = documents.root
        self.warnings = [p.message for p in problems]
        self.named: dict[str, Any] = {}
        for converter in converters:
            self.check_names(converter)
            self.named.update(converter._named)
        names = Counter(t.name for t in tools)
        for name, count in names.items():
            if count > 1:
                self.report("TOOL_NAME_DUP", name, f"{count} tools")
        for tool in tools:
            try:
                self.check_tool(tool, raw2)
            except Exception as exc:  # a checker bug must not hide the other tools
                self.report("CHECKER_ERROR", tool.name, f"{type(exc).__name__}: {exc}")

    # -- $defs names --------------------------------------------------------------------------------
    def check_names(self, converter: Any) -> None:
        by_name: dict[str, list[Any]] = {}
        for ref, name in converter._names.items():
            by_name.setdefault(name, []).append(ref)
        for name, refs in by_name.items():
            if len(refs) > 1:
                self.report("DEF_NAME_SHARED", name, ", ".join(f"{r.uri.rsplit('/', 1)[-1]}#{r.pointer}" for r in refs))
            elif converter._named.get(name) != refs[0]:
                self.report("DEF_NAME_REVERSE", name, f"{refs[0].pointer} vs {converter._named.get(name)}")

    # -- one tool -----------------------------------------------------------------------------------
    def check_tool(self, tool: Any, raw2: Any) -> None:
        name = tool.name
        op = tool.operation
        if not TOOL_NAME.match(name):
            self.report("TOOL_NAME_RULE", name, name)
        schema = tool.input_schema
        props = schema.get("properties", {})
        required = schema.get("required", [])
        for key in props:
            if not ARG_NAME.match(key):
                self.report("ARG_NAME_RULE", name, key)
        for key in required:
            if key not in props:
                self.report("REQUIRED_NOT_ARG", name, key)
        if len(set(required)) != len(required):
            self.report("REQUIRED_DUP", name, str(required))
        self.check_refs(name, "input", schema)
        self.check_required(name, "input", schema, tool)
        self.check_definitions(name, "input", schema)
        for output in (tool.output_schema, tool.described_output):
            if output is not None:
                self.check_refs(name, "output", output)
                self.check_required(name, "output", output, tool)
                self.check_definitions(name, "output", output)
        plan = tool.plan
        keys = [a.arg for a in plan.args] + ([plan.body.arg] if plan.body and plan.body.arg else [])
        for key, count in Counter(keys).items():
            if count > 1:
                self.report("PLAN_ARG_DUP", name, key)
        for key in keys:
            if key not in props:
                self.report("PLAN_ARG_NOT_IN_SCHEMA", name, key)
        wires = Counter((a.name, a.location) for a in plan.args)
        for wire, count in wires.items():
            if count > 1:
                self.report("PLAN_WIRE_DUP", name, str(wire))
        unplanned = set(props) - set(keys) - RESULT_ARGS
        for key in sorted(unplanned):
            self.report("ARG_NOT_PLANNED", name, key)
        results = plan.results
        if results is not None:  # the arguments next pages, projection and auto-pagination use are the tool's
            pages = results.pages
            used = [results.fields, results.max_items, results.max_pages]
            if pages is not None:
                used += [pages.param, pages.size] + [arg for _, arg, _ in pages.query]
            for key in used:
                if key is not None and key not in props:
                    self.report("RESULT_PLAN_KEY", name, key)
        if plan.method != op.method or plan.path != op.path:
            self.report("PLAN_ROUTE", name, f"{plan.method} {plan.path} vs {op.method} {op.path}")
        self.check_annotations(tool)
        item = self.doc.get("paths", {}).get(op.path)
        item, item_at = self.resolver.resolve(item, self.resolver.root.child("paths", op.path))
        raw_op = item.get(op.method.lower()) if isinstance(item, dict) else None
        if not isinstance(raw_op, dict):
            self.report("NO_SPEC_OPERATION", name, f"{op.method} {op.path}")
            return
        self.check_parameters(tool, item, raw_op, item_at)
        self.check_body(tool, raw_op, item_at.child(op.method.lower()))
        self.check_output(tool, raw_op, item_at.child(op.method.lower()))
        if raw2 is not None:
            self.check_swagger2(tool, raw2)

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

    def check_annotations(self, tool: Any) -> None:
        if any(k == "x-mcp-annotations" for k, _ in tool.operation.extensions):
            return
        hints = HINTS.get(tool.plan.method)
        if hints is None:
            return
        got = (tool.annotations.get("readOnlyHint"), tool.annotations.get("destructiveHint"))
        got += (tool.annotations.get("idempotentHint"),)
        for label, want, have in zip(("readOnly", "destructive", "idempotent"), hints, got):
            if want is not None and want != have:
                self.report("ANNOTATION", tool.name, f"{tool.plan.method}: {label}Hint {have}")

    # -- parameters ---------------------------------------------------------------------------------
    def spec_parameters(self, path: str, item: dict[str, Any], op: dict[str, Any], item_at: Any) -> dict[Any, Any]:
        merged: dict[tuple[str, str], tuple[dict[str, Any], Any]] = {}
        for owner, at in ((item, item_at), (op, item_at.child("x"))):
            seen: set[tuple[str, str]] = set()
            for node in owner.get("parameters", []) if isinstance(owner.get("parameters"), list) else []:
                try:
                    node, node_at = self.resolver.resolve(node, at)
                except Exception:
                    continue
                if not isinstance(node, dict) or not isinstance(node.get("name"), str):
                    continue
                key = (node["name"], node.get("in"))
                if key in seen:
                    continue
                seen.add(key)
                merged[key] = (node, node_at)
        return merged

    def check_parameters(self, tool: Any, item: dict[str, Any], raw_op: dict[str, Any], item_at: Any) -> None:
        op = tool.operation
        params = self.spec_parameters(op.path, item, raw_op, item_at)
        by_wire = {(a.name, a.location): a for a in tool.plan.args}
        fixed = {(loc, n) for loc, n, _ in op.fixed} | {(loc, n) for loc, n, _ in tool.plan.fixed}
        key_path, _, key_query = op.path.partition("#")[0].partition("?")
        in_key_query = {part.partition("=")[0] for part in key_query.split("&") if "=" in part}
        template = set(re.findall(r"{([^{}]+)}", key_path)) | set(re.findall(r"{([^{}]+)}", key_query))
        required = set(tool.input_schema.get("required", []))
        props = tool.input_schema.get("properties", {})
        defs = tool.input_schema.get("$defs", {})
        for (wire, location), (node, node_at) in params.items():
            if location not in ("path", "query", "header", "cookie"):
                continue
            if location == "header" and wire.lower() in IGNORED_HEADERS:
                continue
            if (location, wire) in fixed or (location == "query" and wire in in_key_query):
                continue
            if location == "path" and wire not in template:
                continue
            arg = by_wire.get((wire, location))
            self.checked["parameter"] += 1
            if arg is None:
                self.report("PARAM_MISSING", tool.name, f"{location} {wire!r}")
                continue
            want_required = location == "path" or node.get("required") is True
            if want_required != (arg.arg in required):
                self.report("PARAM_REQUIRED", tool.name, f"{location} {wire!r}: spec {want_required}")
            if arg.arg in props:
                spec_schema = node.get("schema")
                if spec_schema is None and isinstance(node.get("content"), dict) and node["content"]:
                    continue
                self.check_constraints(tool.name, f"{location} {wire!r}", spec_schema, node_at, props[arg.arg], defs)
            style = node.get("style") if isinstance(node.get("style"), str) else None
            if style is not None and style != arg.style:
                self.report("PARAM_STYLE", tool.name, f"{location} {wire!r}: {arg.style} vs spec {style}")
            if isinstance(node.get("explode"), bool) and node["explode"] != arg.explode:
                self.report("PARAM_EXPLODE", tool.name, f"{location} {wire!r}: {arg.explode}")

    def check_constraints(self, tool: str, what: str, spec: Any, at: Any, arg: Any, defs: dict[str, Any]) -> None:
        """The spec schema's simple constraints survive in the argument schema (through $refs, allOf, nullable)."""
        try:
            spec, _ = self.resolver.resolve(spec, at)
        except Exception:
            return
        if not isinstance(spec, dict):
            return
        got = flatten(arg, defs)
        if got is None:
            return
        self.checked["constraints"] += 1
        for key in CONSTRAINTS:
            if key not in spec:
                continue
            value = spec[key]
            if key in ("minimum", "maximum") and spec.get("exclusive" + key.title()) is True:
                key = "exclusive" + key.title()
            if key == "pattern" and not isinstance(value, str):
                continue  # not a pattern at all: dropped by the converter's type checks
            if key == "pattern" and any("pattern" in w and "not a regular expression" in w for w in self.warnings):
                continue
            have = got.get(key)
            if key == "enum" and isinstance(have, list) and isinstance(value, list):
                if [v for v in have if v is not None] != [v for v in dict_unique(value) if v is not None]:
                    self.report("CONSTRAINT", tool, f"{what}: enum {short(have)} vs spec {short(value)}")
                continue
            if have != value and not (isinstance(value, (int, float)) and have == value):
                if key in ("minLength", "maxLength", "minItems", "maxItems") and not isinstance(value, int):
                    continue
                if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") and isinstance(value, str):
                    continue
                self.report("CONSTRAINT", tool, f"{what}: {key} {short(have)} vs spec {short(value)}")

    # -- body ---------------------------------------------------------------------------------------
    def check_body(self, tool: Any, raw_op: dict[str, Any], op_at: Any) -> None:
        body = raw_op.get("requestBody")
        if body is None:
            return
        found = self.media(body, op_at.child("requestBody"))
        if found is None:
            return
        body, content, media_type, body_at = found
        plan = tool.plan
        if plan.body is None:
            self.report("BODY_NO_PLAN", tool.name, media_type)
            return
        if plan.body.media_type != media_type:
            self.report("BODY_MEDIA", tool.name, f"{plan.body.media_type} vs {media_type}")
        body_args = [a for a in plan.args if a.location == "body"]
        if plan.body.arg is not None:
            if body_args:
                self.report("BODY_BOTH", tool.name, "a whole-body argument and body properties")
            want = body.get("required") is True
            if want != (plan.body.arg in tool.input_schema.get("required", [])):
                self.report("BODY_REQUIRED", tool.name, f"spec {want}")
            return
        media = content[media_type] if isinstance(content[media_type], dict) else {}
        props, required = self.object_props(media.get("schema"), body_at.child("content", media_type, "schema"))
        if props is None:
            if body_args:
                self.report("BODY_FLATTENED_NON_OBJECT", tool.name, ", ".join(a.name for a in body_args))
            return
        wires = {a.name: a for a in body_args}
        self.checked["flattened body"] += 1
        for prop in sorted(props):
            if prop not in wires:
                self.report("BODY_PROP_MISSING", tool.name, prop)
        for prop in sorted(set(wires) - set(props)):
            self.report("BODY_PROP_EXTRA", tool.name, prop)
        req = set(tool.input_schema.get("required", []))
        for prop, arg in wires.items():
            if prop in props and (prop in required) != (arg.arg in req):
                self.report("BODY_PROP_REQUIRED", tool.name, f"{prop}: spec {prop in required}")
        defs = tool.input_schema.get("$defs", {})
        for prop, arg in wires.items():
            if prop in props and not arg.file:
                node, at = props[prop]
                self.check_constraints(
                    tool.name, f"body {prop!r}", node, at, tool.input_schema["properties"].get(arg.arg), defs
                )
                self.check_shape(
                    tool.name, f"body {prop!r}", node, at, tool.input_schema["properties"].get(arg.arg), defs, "input"
                )

    def object_props(
        self, node: Any, at: Any, direction: str = "input", depth: int = 0
    ) -> tuple[dict[str, Any] | None, set[str]]:
        """Top-level properties (name -> (schema, location)) of an object schema through $ref and allOf, readOnly
        (input) or writeOnly (output) ones left out; None when it is not a plain object."""
        if depth > 16:
            return None, set()
        try:
            node, at = self.resolver.resolve(node, at)
        except Exception:
            return None, set()
        if not isinstance(node, dict) or node.get("type", "object") != "object" or node.get("nullable") is True:
            return None, set()
        if set(node) & {"anyOf", "oneOf", "not", "if", "patternProperties", "enum", "const"}:
            return None, set()
        hidden = "readOnly" if direction == "input" else "writeOnly"
        props: dict[str, Any] = {}
        raw_required = node.get("required")
        required = {r for r in raw_required if isinstance(r, str)} if isinstance(raw_required, list) else set()
        for name, child in (node.get("properties") or {}).items():
            try:
                target, _ = self.resolver.resolve(child, at)
            except Exception:
                target = child
            if any(isinstance(n, dict) and n.get(hidden) is True for n in (child, target)):
                continue
            props[name] = (child, at.child("properties", name))
        for index, member in enumerate(node.get("allOf") or []):
            sub, sub_required = self.object_props(member, at.child("allOf", index), direction, depth + 1)
            if sub is None:
                return None, set()
            for k, v in sub.items():
                props.setdefault(k, v)
            required |= sub_required
        if depth == 0 and not props:
            return None, set()
        return props, required

    def check_shape(
        self, tool: str, what: str, spec: Any, at: Any, arg: Any, defs: dict[str, Any], direction: str
    ) -> None:
        """An object-valued argument or output member declares the spec's property names (the wrong definition
        under a shared `$defs` name would not)."""
        spec_props, _ = self.object_props(spec, at, direction)
        got = flatten(arg, defs)
        if spec_props is None or got is None or not isinstance(got.get("properties"), dict):
            return
        have = set(got["properties"])
        self.checked[f"{direction} shape"] += 1
        if direction == "output":
            spec_props = {k: v for k, v in spec_props.items()}
        extra = have - set(spec_props)
        if extra:
            self.report("SHAPE", tool, f"{what}: properties not in the spec: {short(sorted(extra))}")

    # -- output -------------------------------------------------------------------------------------
    def check_output(self, tool: Any, raw_op: dict[str, Any], op_at: Any) -> None:
        out = tool.output_schema if tool.output_schema is not None else tool.described_output
        if out is None or tool.plan.wrap_result:
            return
        responses = raw_op.get("responses")
        if not isinstance(responses, dict):
            return
        status = min((s for s in map(str, responses) if s.upper().startswith("2")), default=None, key=str.upper)
        if status is None:
            return
        found = self.media(
            responses.get(status, responses.get(int(status) if status.isdigit() else status)),
            op_at.child("responses", status),
        )
        if found is None:
            return
        _, content, media_type, response_at = found
        media = content[media_type] if isinstance(content[media_type], dict) else {}
        node, at = media.get("schema"), response_at.child("content", media_type, "schema")
        try:
            node, at = self.resolver.resolve(node, at)
        except Exception:
            return
        spec_props, _ = self.object_props(node, at, "output")
        if spec_props is None:
            return
        names = set(spec_props)
        have = set(out.get("properties", {})) - {"next"}
        self.checked["output"] += 1
        extra = have - names
        if extra:
            self.report("OUTPUT_PROPS", tool.name, f"not in the spec response: {short(sorted(extra))}")
        defs = out.get("$defs", {})
        for prop in sorted(have & names):
            child, child_at = spec_props[prop]
            self.check_shape(tool.name, f"output {prop!r}", child, child_at, out["properties"][prop], defs, "output")

    # -- Swagger 2.0: the original parameters -------------------------------------------------------
    def check_swagger2(self, tool: Any, raw2: dict[str, Any]) -> None:
        op = tool.operation
        item = raw2.get("paths", {}).get(op.path)
        if not isinstance(item, dict) or "$ref" in item:
            return
        raw_op = item.get(op.method.lower())
        if not isinstance(raw_op, dict):
            return
        by_wire = {(a.name, a.location): a for a in tool.plan.args}
        fixed = {(loc, n) for loc, n, _ in op.fixed}
        consumes = raw_op.get("consumes", raw2.get("consumes", []))
        for node in list(item.get("parameters", [])) + list(raw_op.get("parameters", [])):
            if isinstance(node, dict) and isinstance(node.get("$ref"), str):
                ref = node["$ref"]
                if not ref.startswith("#/parameters/"):
                    continue
                node = raw2.get("parameters", {}).get(ref[len("#/parameters/") :].replace("~1", "/").replace("~0", "~"))
            if not isinstance(node, dict) or not isinstance(node.get("name"), str):
                continue
            location, wire = node.get("in"), node["name"]
            if location == "formData":
                location = "body"
            if location not in ("path", "query", "header", "body") or (location, wire) in fixed:
                continue
            if node.get("in") == "body" or (location == "header" and wire.lower() in IGNORED_HEADERS):
                continue
            if location == "path" and "{" + wire + "}" not in op.path:
                continue
            if location == "query" and "?" in op.path:
                continue
            arg = by_wire.get((wire, location))
            self.checked["swagger2 parameter"] += 1
            if arg is None:
                if location == "body" and tool.plan.body is not None and tool.plan.body.arg is not None:
                    continue
                self.report("SW2_PARAM_MISSING", tool.name, f"{node.get('in')} {wire!r} (consumes {consumes})")
                continue
            props = tool.input_schema.get("properties", {})
            if arg.arg in props and not arg.file:
                got = flatten(props[arg.arg], tool.input_schema.get("$defs", {}))
                if got is None:
                    continue
                for key in CONSTRAINTS:
                    if key in node and key != "pattern" and got.get(key) != node[key]:
                        value = node[key]
                        if key == "enum" and isinstance(got.get(key), list) and isinstance(value, list):
                            if [v for v in got[key] if v is not None] == [
                                v for v in dict_unique(value) if v is not None
                            ]:
                                continue
                        if key in ("minimum", "maximum") and node.get("exclusive" + key.title()) is True:
                            if got.get("exclusive" + key.title()) == value:
                                continue
                        self.report(
                            "SW2_CONSTRAINT",
                            tool.name,
                            f"{node.get('in')} {wire!r}: {key} {short(got.get(key))} vs {short(value)}",
                        )
            if node.get("type") == "array" and isinstance(node.get("items"), dict) and "enum" in node["items"]:
                got = flatten(props.get(arg.arg), tool.input_schema.get("$defs", {}))
                items = flatten(got.get("items"), tool.input_schema.get("$defs", {})) if got else None
                if items is not None and "enum" not in items:
                    self.report("SW2_CONSTRAINT", tool.name, f"{node.get('in')} {wire!r}: items.enum lost")


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


def audit_one(path: str, clients: tuple[str, ...]) -> int:
    audit = Audit(path, clients)
    audit.run()
    for check, tool, detail in audit.found:
        print(json.dumps({"check": check, "spec": path, "tool": tool, "detail": detail}))
    print(json.dumps({"checked": audit.checked}))
    return 0


def _path_of(line: str) -> str:
    """The path in a line of tools/list-specs output (plain, --named or --tsv)."""
    fields = line.split("\t")
    return next((f for f in fields if f.startswith("/")), fields[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="*", help="spec paths; - reads them from stdin (first column)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="write the findings here as JSON lines")
    parser.add_argument("--client", action="append", help="client profiles to generate for (default: portable)")
    args = parser.parse_args()
    clients = tuple(args.client or ["portable"])
    if args.one:
        return audit_one(args.one, clients)
    specs: list[str] = []
    for spec in args.specs:
        specs += [_path_of(line) for line in sys.stdin.read().splitlines() if line.strip()] if spec == "-" else [spec]

    def run(spec: str) -> tuple[str, str, list[dict[str, Any]]]:
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--one", spec, *(f"--client={c}" for c in clients)],
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            return spec, "timeout", []
        if done.returncode != 0:
            return spec, "crash: " + done.stderr.strip().splitlines()[-1:][0] if done.stderr.strip() else "crash", []
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        for line in lines:
            checked.update(line.get("checked", {}))
        return spec, "ok", [line for line in lines if "check" in line]

    counts: Counter[str] = Counter()
    checked: Counter[str] = Counter()
    skipped = 0
    specs_per_check: dict[str, set[str]] = {}
    out = open(args.json, "w") if args.json else None
    with ThreadPoolExecutor(args.jobs) as pool:
        for spec, status, found in pool.map(run, specs):
            if status != "ok":
                skipped += 1
                print(f"SKIPPED\t{spec}\t{status}", flush=True)
            for f in found:
                counts[f["check"]] += 1
                specs_per_check.setdefault(f["check"], set()).add(spec)
                print(
                    f"{f['check']}\t{os.path.relpath(spec, os.path.expanduser('~/.cache/mcp-codegen-corpus'))}\t{f['tool']}\t{f['detail']}",
                    flush=True,
                )
                if out:
                    out.write(json.dumps(f) + "\n")
    if out:
        out.close()
    print(f"# {len(specs)} specs; checks run: {dict(checked)}")
    for check, count in counts.most_common():
        print(f"# {check}: {count} findings in {len(specs_per_check[check])} specs")
    return 1 if counts or skipped else 0


if __name__ == "__main__":
    sys.exit(main())
