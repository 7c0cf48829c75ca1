"""Shape the tool surface: which operations become tools, and per-operation overrides.

Two pure stages around the mapping to tools:
- `select_operations` (after normalize): drops operations. For each operation the first of these that
  applies decides: a config override's `exclude`; the spec's `x-mcp-exclude`; `deprecated = false` for a
  deprecated operation; the first include/exclude rule that matches; finally `unmatched` (default include).
- `apply_overrides` (after tools): name, title, description and annotations from the config's
  `[overrides]`, else from the spec's `x-mcp-name`, `x-mcp-title`, `x-mcp-description`, `x-mcp-annotations`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from ..config import ANNOTATION_KEYS, Config, Override, Rule
from ..configfile import TOOL_NAME
from ..spec.model import Api, Operation
from ..problems import Level, Problem
from ..spec.refs import Resolver
from .plans import ToolSpec

EXTENSIONS = (
    "x-mcp-name",
    "x-mcp-title",
    "x-mcp-description",
    "x-mcp-annotations",
    "x-mcp-exclude",
    "x-mcp-security",  # read by spec/declared_security.py
    "x-mcp-pin",
    "x-mcp-result-tokens",  # read by surface/results.py
)


def find_override(op: Operation, overrides: Sequence[Override]) -> Override | None:
    """The override whose key is this operation's operationId or `METHOD /path` (method in any case)."""
    for override in overrides:
        method, _, path = override.key.partition(" ")
        if override.key == op.operation_id or (path and method.upper() == op.method and path == op.path):
            return override
    return None


def rule_matches(rule: Rule, op: Operation) -> bool:
    return (
        (not rule.tags or any(tag in op.tags for tag in rule.tags))
        and (not rule.paths or any(fnmatchcase(op.path, glob) for glob in rule.paths))
        and (not rule.methods or op.method in rule.methods)
        and (not rule.operations or any(fnmatchcase(op.operation_id or "", glob) for glob in rule.operations))
    )


def included(op: Operation, config: Config) -> bool:
    override = find_override(op, config.overrides)
    if override is not None and override.exclude is not None:
        return not override.exclude
    if dict(op.extensions).get("x-mcp-exclude") is True:
        return False
    if op.deprecated and not config.deprecated:
        return False
    for rule in config.rules:
        if rule_matches(rule, op):
            return rule.action == "include"
    return config.unmatched == "include"


def select_operations(api: Api, config: Config, resolver: Resolver) -> tuple[Api, list[Problem]]:
    problems: list[Problem] = []
    for op in api.operations:
        problems += _check_extensions(op, resolver)
    for override in config.overrides:
        if not any(find_override(op, [override]) for op in api.operations):
            problems.append(
                _located(Level.WARNING, f"override {override.key!r} matches no operation in the spec", override.source)
            )
    kept = tuple(op for op in api.operations if included(op, config))
    return replace(api, operations=kept), problems


def _located(level: Level, message: str, origin: str) -> Problem:
    """A problem at a config location `file#pointer`."""
    source, _, pointer = origin.partition("#")
    return Problem(level, message, pointer, source)


def _check_extensions(op: Operation, resolver: Resolver) -> list[Problem]:
    problems: list[Problem] = []
    for key, value in op.extensions:
        at = op.at.child(key)
        if key not in EXTENSIONS:
            problems.append(
                resolver.problem(
                    Level.WARNING, f"unknown extension {key!r} ignored (known: {', '.join(EXTENSIONS)})", at
                )
            )
        elif key in ("x-mcp-exclude", "x-mcp-pin") and not isinstance(value, bool):
            problems.append(resolver.problem(Level.WARNING, f"{key} must be true or false; ignored", at))
        elif key in ("x-mcp-title", "x-mcp-description") and not isinstance(value, str):
            problems.append(resolver.problem(Level.WARNING, f"{key} must be a string; ignored", at))
        elif key == "x-mcp-name" and not (isinstance(value, str) and TOOL_NAME.fullmatch(value)):
            problems.append(
                resolver.problem(Level.WARNING, f"{key} must be a tool name matching {TOOL_NAME.pattern}; ignored", at)
            )
        elif key == "x-mcp-annotations":
            if not isinstance(value, dict):
                problems.append(resolver.problem(Level.WARNING, f"{key} must be an object; ignored", at))
                continue
            for hint in sorted(value):
                if not _valid_hint(hint, value[hint]):
                    problems.append(
                        resolver.problem(
                            Level.WARNING,
                            f"annotation {hint!r} is unknown or has the wrong type; ignored",
                            at.child(hint),
                        )
                    )
    return problems


def _valid_hint(hint: str, value: Any) -> bool:
    return hint in ANNOTATION_KEYS and isinstance(value, str if hint == "title" else bool)


def _spec_changes(op: Operation) -> dict[str, Any]:
    """The valid x-mcp-* overrides of an operation (invalid ones were reported by select_operations)."""
    ext = dict(op.extensions)
    changes: dict[str, Any] = {}
    if isinstance(ext.get("x-mcp-name"), str) and TOOL_NAME.fullmatch(ext["x-mcp-name"]):
        changes["name"] = ext["x-mcp-name"]
    for key in ("title", "description"):
        if isinstance(ext.get(f"x-mcp-{key}"), str):
            changes[key] = ext[f"x-mcp-{key}"]
    annotations = ext.get("x-mcp-annotations")
    if isinstance(annotations, dict):
        changes["annotations"] = {k: v for k, v in sorted(annotations.items()) if _valid_hint(k, v)}
    return changes


def apply_overrides(
    tools: Sequence[ToolSpec], config: Config, resolver: Resolver
) -> tuple[list[ToolSpec], list[Problem]]:
    problems: list[Problem] = []
    planned: list[tuple[ToolSpec, dict[str, Any], str | None]] = []  # (tool, changes, config file#pointer)
    for tool in tools:
        changes = _spec_changes(tool.operation)
        source: str | None = None
        override = find_override(tool.operation, config.overrides)
        if override is not None:
            changes.update(
                {
                    k: v
                    for k, v in (
                        ("name", override.name),
                        ("title", override.title),
                        ("description", override.description),
                    )
                    if v is not None
                }
            )
            if override.annotations:
                changes["annotations"] = {**changes.get("annotations", {}), **override.annotation_map()}
            source = override.source
        planned.append((tool, changes, source))

    renamed = {
        id(tool): changes["name"] for tool, changes, _ in planned if "name" in changes and changes["name"] != tool.name
    }
    final_names = [renamed.get(id(tool), tool.name) for tool, _, _ in planned]
    result: list[ToolSpec] = []
    for index, (tool, changes, source) in enumerate(planned):
        name = changes.get("name", tool.name)
        if name != tool.name and final_names.count(name) > 1:
            message = f"cannot rename tool {tool.name!r} to {name!r}: another tool has that name"
            if source is not None:
                problems.append(_located(Level.ERROR, message, source))
            else:
                problems.append(resolver.problem(Level.ERROR, message, tool.operation.at.child("x-mcp-name")))
            final_names[index] = tool.name
            name = tool.name
        result.append(_changed(tool, name, changes))
    return result, problems


def _changed(tool: ToolSpec, name: str, changes: Mapping[str, Any]) -> ToolSpec:
    if not changes and name == tool.name:
        return tool  # nothing to change (most tools): no copy
    title = changes.get("title", tool.title)
    annotations = dict(tool.annotations)
    if "title" in changes:
        annotations["title"] = title
    annotations.update(changes.get("annotations", {}))
    return replace(
        tool, name=name, title=title, description=changes.get("description", tool.description), annotations=annotations
    )
