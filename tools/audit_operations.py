"""tools/audit_mapping.py's operation checks: each tool's parameters, request body and output schema against the
operation the spec declares (and, for Swagger 2.0, the original parameters)."""

from __future__ import annotations

import re
from typing import Any

from audit_schemas import CONSTRAINTS, SchemaChecks, dict_unique, flatten, short

IGNORED_HEADERS = {"accept", "content-type", "authorization"}
RESULT_ARGS = {"fields", "max_items", "max_pages"}  # added by surface/results.py, never sent


class OperationChecks(SchemaChecks):
    """Mixed into tools/audit_mapping.Audit, beside the schema checks."""

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
