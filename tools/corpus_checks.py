"""tools/corpus_run.py's checks of the tools a generated server lists: names, JSON Schema 2020-12 validity (the
metaschema), local `$ref`s that resolve, object roots, `required` names among the properties, and the listing
equal to tools.json."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what MCP clients (and Claude's API) accept as a tool name
ARG_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")  # what Claude's API accepts as an inputSchema property key


class Failure(Exception):
    def __init__(self, category: str, detail: str) -> None:
        super().__init__(f"{category}: {detail}")
        self.category = category
        self.detail = detail


def check_tools(listed: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]]) -> list[Failure]:
    """Every check on the listed tools; returns all failures found (empty: fine)."""
    _DEF_PROBLEMS.clear()  # definitions are shared within one API, not across
    found: list[Failure] = []
    names = [t.get("name", "") for t in listed]
    for name in names:
        if not TOOL_NAME.match(name):
            found.append(Failure("tool-name", f"invalid tool name {name!r}"))
    dupes = [n for n, c in Counter(names).items() if c > 1]
    if dupes:
        found.append(Failure("duplicate-tool-name", f"duplicate tool names: {dupes[:5]}"))
    for tool in listed:
        name = tool.get("name", "")
        for key in ("inputSchema", "outputSchema"):
            schema = tool.get(key)
            if schema is None:
                if key == "inputSchema":
                    found.append(Failure("no-input-schema", f"{name}: no inputSchema"))
                continue
            problem = metaschema_problem(schema)
            if problem:
                found.append(Failure(f"invalid-{key}", f"{name}: {problem}"))
                continue
            if schema.get("type") != "object":
                found.append(Failure(f"{key}-not-object", f"{name}: {key} has type {schema.get('type')!r}"))
            for missing in dangling_refs(schema):
                found.append(Failure("dangling-ref", f"{name}: {key} refers to {missing!r}, which is not there"))
                break
            for at, node in objects(schema):
                props = node.get("properties")
                req = node.get("required")
                if (
                    isinstance(req, list)
                    and isinstance(props, dict)
                    and node.get("additionalProperties", True) is False
                ):
                    lost = [r for r in req if r not in props]
                    if lost:
                        found.append(Failure("required-not-in-properties", f"{name}: {key}{at}: {lost[:5]}"))
                        break
            if key == "inputSchema":
                props = schema.get("properties", {})
                lost = [r for r in schema.get("required", []) if r not in props]
                if lost:
                    found.append(Failure("required-not-in-properties", f"{name}: inputSchema: {lost[:5]}"))
                bad = [p for p in props if not ARG_NAME.match(p)]
                if bad:
                    found.append(Failure("argument-name", f"{name}: argument names {bad[:5]} are not client-safe"))
    if [dict(t) for t in listed] != [dict(t) for t in expected]:
        detail = tools_difference(listed, expected)
        found.append(Failure("listed-differs-from-tools.json", detail))
    return found


_META: Any = None
_DEF_PROBLEMS: dict[str, str] = {}  # a definition's canonical JSON -> its metaschema problem ("" if none)


def metaschema_problem(schema: Mapping[str, Any]) -> str:
    """Draft202012Validator.check_schema, with one metaschema validator reused for every schema.

    The metaschema checks each `$defs` entry as a schema of its own, so the root (without `$defs`) and
    each definition are checked apart, and a definition shared by many tools is checked once."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return _meta_problem(schema)
    problem = _meta_problem({k: v for k, v in schema.items() if k != "$defs"})
    for name, definition in defs.items():
        if problem:
            break
        key = json.dumps(definition, sort_keys=True)
        if key not in _DEF_PROBLEMS:
            _DEF_PROBLEMS[key] = _meta_problem(definition)
        if _DEF_PROBLEMS[key]:
            problem = f"in $defs/{name}: {_DEF_PROBLEMS[key]}"
    return problem


def _meta_problem(schema: Any) -> str:
    global _META
    from jsonschema import Draft202012Validator

    if _META is None:  # what check_schema builds on every call, including its format checker (regex patterns)
        _META = Draft202012Validator(
            Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
        )
    error = next(iter(_META.iter_errors(schema)), None)
    if error is None:
        return ""
    where = "/".join(str(p) for p in error.absolute_path)
    return f"at /{where}: {error.message[:300]}"


def objects(schema: Any, at: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    stack: list[tuple[str, Any]] = [(at, schema)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            yield where, node
            for key, value in node.items():
                if key not in ("enum", "const", "default", "examples", "example"):
                    stack.append((f"{where}/{key}", value))
        elif isinstance(node, list):
            stack.extend((f"{where}/{i}", v) for i, v in enumerate(node))


def dangling_refs(schema: Mapping[str, Any]) -> Iterator[str]:
    """Local references (`$ref`, and discriminator mapping values) that name nothing in `schema`."""
    for _, node in objects(schema):
        refs = [node.get("$ref")]
        discriminator = node.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
            refs += list(discriminator["mapping"].values())
        for ref in refs:
            if not (isinstance(ref, str) and ref.startswith("#")):
                continue
            target: Any = schema
            for token in ref[1:].split("/")[1:]:
                token = token.replace("~1", "/").replace("~0", "~")
                if isinstance(target, dict) and token in target:
                    target = target[token]
                else:
                    yield ref
                    break


def tools_difference(listed: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]]) -> str:
    if len(listed) != len(expected):
        return f"listed {len(listed)} tools, tools.json has {len(expected)}"
    for a, b in zip(listed, expected):
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            return f"tool {b.get('name')!r} differs in {keys}"
    return "different"
