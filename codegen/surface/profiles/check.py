"""The rule checker: a tools.json (the tools/list entries) against each named client's rules.

It shares only the rule *tables* (rules.py) with the transforms, never their code, so a transform that
gets something wrong is caught here. Every violation names the client, the tool, a JSON pointer into
tools.json and the rule. Walks are iterative and bounded (a committed tools.json is untrusted input).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...problems import Level, Problem, join
from .rules import (
    GEMINI,
    GEMINI_FORMATS,
    GEMINI_KEYS,
    JSON_TYPES,
    OPENAI_STRICT,
    PROFILES,
    STRICT_DEPTH,
    STRICT_ENUM_VALUES,
    STRICT_FORMATS,
    STRICT_KEYS,
    STRICT_PROPERTIES,
    Profile,
    Rules,
)

MAX_NODES = 200_000  # schema nodes walked per tool
COMBINATORS = ("anyOf", "oneOf", "allOf", "not")
SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas", "definitions")
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")


@dataclass(frozen=True, slots=True)
class Violation:
    client: str
    tool: str
    pointer: str  # into tools.json
    rule: str
    level: Level = Level.WARNING

    def problem(self) -> Problem:
        where = f"tool {self.tool!r}: " if self.tool else ""
        return Problem(self.level, f"{self.client}: {where}{self.rule}", self.pointer, "tools.json")


def check_tools(tools: Any, clients: Iterable[str], server: str, listed: int | None = None) -> list[Violation]:
    """Every rule of every named client that `tools` (a parsed tools.json) breaks. `listed`: how many tools the
    server lists when that is not all of them (the discovery surface lists a few that reach the others)."""
    if not isinstance(tools, list):
        return [Violation("portable", "", "", "tools.json must be a list of tools", Level.ERROR)]
    found: list[Violation] = []
    for client in Rules.of(clients).clients:
        found += _check_profile(tools, PROFILES[client], server, len(tools) if listed is None else listed)
    return found


def _check_profile(tools: list[Any], profile: Profile, server: str, listed: int) -> Iterator[Violation]:
    client = profile.client
    if profile.tool_cap is not None and listed > profile.tool_cap:
        verb = "refuses" if profile.cap_refuses else "does not work well with"
        yield Violation(
            client,
            "",
            "",
            f"{listed} tools: {profile.label} {verb} more than {profile.tool_cap} tools from a server; "
            "serve them through the discovery surface (a few tools that search, describe and call the others) "
            "or select fewer operations (--rule)",
            Level.ERROR,
        )
    name_rule = re.compile(profile.tool_name)
    arg_rule = re.compile(profile.arg_name)
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        at = f"/{index}"
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            yield Violation(client, "", at, "a tool must be an object with a string name", Level.ERROR)
            continue
        name: str = tool["name"]
        if not name_rule.fullmatch(name):
            yield Violation(client, name, join(at, "name"), f"tool name must match ^{profile.tool_name}$")
        if name in seen:
            yield Violation(client, name, join(at, "name"), "tool name is used twice")
        seen.add(name)
        if profile.name_budget is not None and len(server) + len(name) > profile.name_budget:
            yield Violation(
                client,
                name,
                join(at, "name"),
                f"server name {server!r} plus tool name is {len(server) + len(name)} characters; "
                f"at most {profile.name_budget}",
            )
        schema = tool.get("inputSchema")
        yield from _check_root(client, name, join(at, "inputSchema"), schema, "input")
        output = tool.get("outputSchema")
        if output is not None:
            yield from _check_root(client, name, join(at, "outputSchema"), output, "output")
        if not isinstance(schema, Mapping):
            continue
        properties = schema.get("properties")
        for key in properties if isinstance(properties, Mapping) else ():
            if not arg_rule.fullmatch(str(key)):
                yield Violation(
                    client,
                    name,
                    join(at, "inputSchema", "properties", key),
                    f"argument name must match ^{profile.arg_name}$",
                )
        if profile.dialect == GEMINI:
            yield from _walk(client, name, join(at, "inputSchema"), schema, _gemini_node)
        elif profile.dialect == OPENAI_STRICT:
            yield from _walk(client, name, join(at, "inputSchema"), schema, _strict_node)
            yield from _strict_totals(client, name, join(at, "inputSchema"), schema)


def _check_root(client: str, name: str, at: str, schema: Any, what: str) -> Iterator[Violation]:
    if not isinstance(schema, Mapping):
        yield Violation(client, name, at, f"the {what} schema must be an object", Level.ERROR)
        return
    if schema.get("type") != "object":
        yield Violation(client, name, join(at, "type"), f"the {what} schema's root must have type: object")
    for key in COMBINATORS:
        if key in schema:
            yield Violation(client, name, join(at, key), f"the {what} schema's root must not use {key}")


Rule = Any  # (client, tool, pointer, node, is_root, object_depth) -> Iterator[Violation]


def _walk(client: str, tool: str, at: str, root: Mapping[str, Any], rule: Rule) -> Iterator[Violation]:
    stack: list[tuple[str, Any, bool, int]] = [(at, root, True, 1)]
    walked = 0
    while stack:
        pointer, node, is_root, depth = stack.pop()
        walked += 1
        if walked > MAX_NODES:
            yield Violation(client, tool, at, f"schema has more than {MAX_NODES} nodes; not checked further")
            return
        if not isinstance(node, Mapping):
            if not isinstance(node, bool):
                yield Violation(client, tool, pointer, "a schema must be an object or a boolean")
            else:
                yield from rule(client, tool, pointer, node, is_root, depth)
            continue
        yield from rule(client, tool, pointer, node, is_root, depth)
        inner = depth + 1 if _is_object(node) else depth
        for key in SUBSCHEMA_MAPS:
            value = node.get(key)
            if isinstance(value, Mapping):
                for name, child in value.items():
                    stack.append(
                        (join(pointer, key, name), child, False, 1 if key in ("$defs", "definitions") else inner)
                    )
        for key in SUBSCHEMA_LISTS:
            value = node.get(key)
            if isinstance(value, list):
                stack.extend((join(pointer, key, i), child, False, depth) for i, child in enumerate(value))
        for key in SUBSCHEMA_ONE:
            if key in node and not (key == "additionalProperties" and isinstance(node[key], bool)):
                stack.append((join(pointer, key), node[key], False, depth))


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _gemini_node(client: str, tool: str, at: str, node: Any, is_root: bool, depth: int) -> Iterator[Violation]:
    if isinstance(node, bool):
        yield Violation(client, tool, at, "Gemini takes no boolean schemas")
        return
    for key in node:
        if key not in GEMINI_KEYS:
            yield Violation(client, tool, join(at, key), f"Gemini's Schema has no {key!r}")
    kind = node.get("type")
    if kind is None and "anyOf" not in node:
        yield Violation(client, tool, at, "Gemini needs a type (or anyOf) on every schema")
    elif kind is not None and kind not in JSON_TYPES:
        yield Violation(client, tool, join(at, "type"), f"Gemini takes one type name, not {kind!r}")
    enum = node.get("enum")
    if enum is not None and not (isinstance(enum, list) and all(isinstance(v, str) for v in enum)):
        yield Violation(client, tool, join(at, "enum"), "Gemini's enum values are strings")
    fmt = node.get("format")
    if fmt is not None and fmt not in GEMINI_FORMATS.get(kind if isinstance(kind, str) else "", set()):
        yield Violation(client, tool, join(at, "format"), f"Gemini does not take format {fmt!r} for type {kind!r}")
    if kind == "object" and not is_root and not (isinstance(node.get("properties"), Mapping) and node["properties"]):
        yield Violation(client, tool, at, "Gemini needs properties on a nested object")
    if kind == "array" and not isinstance(node.get("items"), Mapping):
        yield Violation(client, tool, at, "Gemini needs items on an array")


def _strict_node(client: str, tool: str, at: str, node: Any, is_root: bool, depth: int) -> Iterator[Violation]:
    if isinstance(node, bool):
        yield Violation(client, tool, at, "OpenAI strict mode takes no boolean schemas")
        return
    for key in node:
        if key not in STRICT_KEYS:
            yield Violation(client, tool, join(at, key), f"OpenAI strict mode does not take {key!r}")
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if kind is None and not any(k in node for k in ("anyOf", "$ref", "enum")):
        yield Violation(client, tool, at, "OpenAI strict mode needs a type on every schema")
    elif kind is not None and not all(k in (*JSON_TYPES, "null") for k in kinds):
        yield Violation(client, tool, join(at, "type"), f"unknown type {kind!r}")
    fmt = node.get("format")
    if fmt is not None and fmt not in STRICT_FORMATS:
        yield Violation(client, tool, join(at, "format"), f"OpenAI strict mode does not take format {fmt!r}")
    if "object" in kinds:
        if depth > STRICT_DEPTH:
            yield Violation(client, tool, at, f"OpenAI strict mode takes at most {STRICT_DEPTH} levels of objects")
        if node.get("additionalProperties") is not False:
            yield Violation(client, tool, at, "OpenAI strict mode needs additionalProperties: false on every object")
        properties = node.get("properties")
        names = set(properties) if isinstance(properties, Mapping) else set()
        required = node.get("required", [])
        listed = set(required) if isinstance(required, list) else set()
        for missing in sorted(names - listed):
            yield Violation(
                client, tool, join(at, "properties", missing), "OpenAI strict mode needs every property in required"
            )
    if "null" in kinds and isinstance(node.get("enum"), list) and None not in node["enum"]:
        yield Violation(client, tool, join(at, "enum"), "a nullable enum must list null")


def _strict_totals(client: str, tool: str, at: str, schema: Mapping[str, Any]) -> Iterator[Violation]:
    properties = enums = 0
    stack: list[Any] = [schema]
    while stack and len(stack) < MAX_NODES:
        node = stack.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("properties"), Mapping):
                properties += len(node["properties"])
            if isinstance(node.get("enum"), list):
                enums += len(node["enum"])
            for key, value in node.items():
                if key in SUBSCHEMA_MAPS and isinstance(value, Mapping):
                    stack.extend(value.values())
                elif key in SUBSCHEMA_LISTS and isinstance(value, list):
                    stack.extend(value)
                elif key in SUBSCHEMA_ONE:
                    stack.append(value)
    if properties > STRICT_PROPERTIES:
        yield Violation(
            client, tool, at, f"{properties} object properties; OpenAI strict mode takes {STRICT_PROPERTIES}"
        )
    if enums > STRICT_ENUM_VALUES:
        yield Violation(client, tool, at, f"{enums} enum values; OpenAI strict mode takes {STRICT_ENUM_VALUES}")


def summarize(violations: Iterable[Violation]) -> dict[str, int]:
    """Violations per client."""
    counts: dict[str, int] = {}
    for violation in violations:
        counts[violation.client] = counts.get(violation.client, 0) + 1
    return counts


MAX_FILE = 256 * 1024 * 1024  # bytes of a committed tools.json read by --check


def check_file(path: Path, clients: Iterable[str], server: str) -> list[Violation]:
    """check_tools on a committed tools.json (--check); a file that cannot be read is one violation."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE + 1)
        if len(data) > MAX_FILE:
            raise ValueError(f"larger than {MAX_FILE} bytes")
        tools = json.loads(data)
    except FileNotFoundError:
        return []  # nothing committed yet: the staleness check reports it
    except (OSError, ValueError, RecursionError) as exc:
        return [Violation("portable", "", "", f"cannot read {path.name}: {str(exc)[:200]}", Level.ERROR)]
    discovery = path.with_name("discovery.json")  # a discovery package lists its meta-tools and pins only
    listed = None
    if discovery.is_file():
        try:
            meta = json.loads(discovery.read_bytes()[: MAX_FILE + 1])
            listed = len(meta.get("tools") or []) + len(meta.get("pinned") or [])
        except (OSError, ValueError, AttributeError):
            listed = None
    return check_tools(tools, clients, server, listed)
