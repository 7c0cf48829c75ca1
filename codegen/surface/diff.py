"""The change in the tool surface between two versions of a spec, as an agent relying on it sees it.

Both specs go through the same pipeline (`analyze`: load, normalize, select, map, override), so the
tools compared are exactly the ones that would be generated. Tools are matched by method and path
(a new name on the same operation is a rename); a tool whose operation moved but kept its name is the
same tool. Each change says whether it breaks a client that was written against the old surface.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .schema_summary import enum_of, members, type_of
from .listed import SurfaceTool

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# an annotation change that makes a tool riskier than a client was told: breaking
RISKIER = {("readOnlyHint", True, False), ("destructiveHint", False, True), ("idempotentHint", True, False)}


@dataclass(frozen=True, slots=True)
class Change:
    tool: str  # the tool's name in the new spec (the old name when it was removed)
    kind: str  # tool-added, argument-removed, ... (see KINDS)
    breaking: bool
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "breaking": self.breaking,
            "message": self.message,
            "details": dict(self.details),
        }


KINDS = (
    "tool-added",
    "tool-removed",
    "tool-renamed",
    "tool-moved",
    "argument-added",
    "argument-removed",
    "argument-now-required",
    "argument-now-optional",
    "argument-retyped",
    "enum-values-removed",
    "enum-values-added",
    "annotation-changed",
    "output-added",
    "output-removed",
    "output-property-added",
    "output-property-removed",
    "output-property-retyped",
)


@dataclass(frozen=True, slots=True)
class Report:
    old_tools: int
    new_tools: int
    changes: tuple[Change, ...]

    @property
    def breaking(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.breaking)

    def to_json(self) -> dict[str, Any]:
        return {
            "old": {"tools": self.old_tools},
            "new": {"tools": self.new_tools},
            "breaking": len(self.breaking),
            "changes": [c.to_json() for c in self.changes],
        }

    def to_markdown(self) -> str:
        breaking = self.breaking
        other = [c for c in self.changes if not c.breaking]
        head = f"## MCP tool surface: {len(breaking)} breaking, {len(other)} other changes"
        lines = [head, "", f"{self.old_tools} tools before, {self.new_tools} after."]
        if not self.changes:
            lines += ["", "No change to the tools."]
        for title, group in (("Breaking", breaking), ("Other changes", other)):
            if group:
                lines += ["", f"### {title}", ""]
                lines += [f"- `{c.tool}`: {c.message}" for c in group]
        return "\n".join(lines) + "\n"

    def to_text(self) -> str:
        """One line per change, for a terminal: `BREAKING tool: message` or `         tool: message`."""
        breaking = len(self.breaking)
        lines = [
            f"{self.old_tools} tools -> {self.new_tools} tools: "
            f"{breaking} breaking, {len(self.changes) - breaking} other changes"
        ]
        for c in self.changes:
            lines.append(f"{'BREAKING' if c.breaking else 'change  '} {c.tool}: {c.message.replace('`', '')}")
        return "\n".join(lines) + "\n"


def diff_tools(old: Sequence[SurfaceTool], new: Sequence[SurfaceTool]) -> Report:
    changes: list[Change] = []
    new_by_route = {_route(t): t for t in new}
    new_by_name = {t.name: t for t in new}
    matched_new: set[str] = set()
    pairs: list[tuple[SurfaceTool, SurfaceTool]] = []
    for tool in old:
        other = new_by_route.get(_route(tool))
        if other is not None and other.name not in matched_new:
            if other.name != tool.name:
                changes.append(
                    Change(
                        other.name,
                        "tool-renamed",
                        True,
                        f"renamed from `{tool.name}` ({_route_text(tool)})",
                        {"old": tool.name, "new": other.name},
                    )
                )
        else:
            other = new_by_name.get(tool.name)
            if other is None or other.name in matched_new or _route(other) in {_route(t) for t in old}:
                changes.append(
                    Change(
                        tool.name,
                        "tool-removed",
                        True,
                        f"removed (was {_route_text(tool)})",
                        {"route": _route_text(tool)},
                    )
                )
                continue
            changes.append(
                Change(
                    tool.name,
                    "tool-moved",
                    False,
                    f"now calls {_route_text(other)} (was {_route_text(tool)})",
                    {"old": _route_text(tool), "new": _route_text(other)},
                )
            )
        matched_new.add(other.name)
        pairs.append((tool, other))
    for tool in new:
        if tool.name not in matched_new:
            required = tool.input_schema.get("required", [])
            args = f" with required arguments {', '.join(f'`{a}`' for a in required)}" if required else ""
            changes.append(
                Change(
                    tool.name, "tool-added", False, f"added ({_route_text(tool)}){args}", {"route": _route_text(tool)}
                )
            )
    for before, after in pairs:
        changes += _arguments(before, after)
        changes += _annotations(before, after)
        changes += _output(before, after)
    ordered = sorted(changes, key=lambda c: (not c.breaking, c.tool, KINDS.index(c.kind), c.message))
    return Report(len(old), len(new), tuple(ordered))


def _route(tool: SurfaceTool) -> tuple[str, str]:
    return tool.plan.method, tool.plan.path


def _route_text(tool: SurfaceTool) -> str:
    return f"{tool.plan.method} {tool.plan.path}"


def tool_summary(old_file: Path, new_text: str | bytes) -> str:
    """For --check: which tools a stale tools.json adds, removes or changes, by name."""
    try:
        old = {t["name"]: t for t in json.loads(old_file.read_text(encoding="utf-8"))}
    except (OSError, ValueError, TypeError, KeyError):
        return "tools: the committed tools.json cannot be read"
    new = {t["name"]: t for t in json.loads(new_text)}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(name for name in set(old) & set(new) if old[name] != new[name])

    def part(label: str, names: list[str]) -> str:
        shown = ", ".join(names[:10]) + (f", ... {len(names) - 10} more" if len(names) > 10 else "")
        return f"{len(names)} {label}" + (f" ({shown})" if names else "")

    return f"tools: {part('added', added)}, {part('removed', removed)}, {part('changed', changed)}"


# -- arguments --------------------------------------------------------------------------------------
def _arguments(before: SurfaceTool, after: SurfaceTool) -> list[Change]:
    name = after.name
    old_props: Mapping[str, Any] = before.input_schema.get("properties", {})
    new_props: Mapping[str, Any] = after.input_schema.get("properties", {})
    old_required = set(before.input_schema.get("required", []))
    new_required = set(after.input_schema.get("required", []))
    old_defs = before.input_schema.get("$defs", {})
    new_defs = after.input_schema.get("$defs", {})
    changes: list[Change] = []
    for arg in sorted(set(new_props) - set(old_props)):
        required = arg in new_required
        what = "required" if required else "optional"
        changes.append(
            Change(
                name,
                "argument-added",
                required,
                f"{what} argument `{arg}` added",
                {"argument": arg, "required": required},
            )
        )
    for arg in sorted(set(old_props) - set(new_props)):
        changes.append(Change(name, "argument-removed", True, f"argument `{arg}` removed", {"argument": arg}))
    for arg in sorted(set(old_props) & set(new_props)):
        if arg in new_required and arg not in old_required:
            changes.append(
                Change(name, "argument-now-required", True, f"argument `{arg}` is now required", {"argument": arg})
            )
        elif arg in old_required and arg not in new_required:
            changes.append(
                Change(name, "argument-now-optional", False, f"argument `{arg}` is now optional", {"argument": arg})
            )
        changes += _schema_change(name, "argument", arg, old_props[arg], old_defs, new_props[arg], new_defs)
    return changes


def _schema_change(
    tool: str, what: str, key: str, old: Any, old_defs: Mapping[str, Any], new: Any, new_defs: Mapping[str, Any]
) -> list[Change]:
    old_type, new_type = type_of(old, old_defs), type_of(new, new_defs)
    label = f"{what} `{key}`" if what == "argument" else f"output property `{key}`"
    if old_type != new_type:
        kind = "argument-retyped" if what == "argument" else "output-property-retyped"
        # an argument may accept more than before (string -> null | string); an output must not return more
        before, after = members(old_type), members(new_type)
        if what == "argument":
            safe = "any" in after or before <= after
        else:
            safe = "any" in before or after <= before
        return [
            Change(
                tool,
                kind,
                not safe,
                f"{label} changed type from `{old_type}` to `{new_type}`",
                {what: key, "old": old_type, "new": new_type},
            )
        ]
    if what != "argument":
        return []
    old_enum, new_enum = enum_of(old, old_defs), enum_of(new, new_defs)
    changes: list[Change] = []
    if old_enum is not None and new_enum is not None:
        removed = [v for v in old_enum if v not in new_enum]
        added = [v for v in new_enum if v not in old_enum]
        if removed:
            changes.append(
                Change(
                    tool,
                    "enum-values-removed",
                    True,
                    f"{label} no longer accepts {_values(removed)}",
                    {what: key, "values": removed},
                )
            )
        if added:
            changes.append(
                Change(
                    tool,
                    "enum-values-added",
                    False,
                    f"{label} also accepts {_values(added)}",
                    {what: key, "values": added},
                )
            )
    elif old_enum is None and new_enum is not None:
        changes.append(
            Change(
                tool,
                "enum-values-removed",
                True,
                f"{label} now accepts only {_values(new_enum)}",
                {what: key, "values": None},
            )
        )
    return changes


def _values(values: Sequence[Any]) -> str:
    return ", ".join(f"`{json.dumps(v)}`" for v in values)


# -- annotations and output -------------------------------------------------------------------------
def _annotations(before: SurfaceTool, after: SurfaceTool) -> list[Change]:
    changes = []
    for hint in HINTS:
        old, new = before.annotations.get(hint), after.annotations.get(hint)
        if old != new:
            breaking = (hint, old, new) in RISKIER
            changes.append(
                Change(
                    after.name,
                    "annotation-changed",
                    breaking,
                    f"`{hint}` changed from `{json.dumps(old)}` to `{json.dumps(new)}`",
                    {"annotation": hint, "old": old, "new": new},
                )
            )
    return changes


def _output(before: SurfaceTool, after: SurfaceTool) -> list[Change]:
    old, new = before.output_schema, after.output_schema
    name = after.name
    if old is None and new is None:
        return []
    if old is None:
        return [Change(name, "output-added", False, "now returns structured output (outputSchema added)")]
    if new is None:
        return [Change(name, "output-removed", True, "no longer returns structured output (outputSchema removed)")]
    old_props: Mapping[str, Any] = old.get("properties", {})
    new_props: Mapping[str, Any] = new.get("properties", {})
    changes: list[Change] = []
    for key in sorted(set(new_props) - set(old_props)):
        changes.append(
            Change(name, "output-property-added", False, f"output property `{key}` added", {"property": key})
        )
    for key in sorted(set(old_props) - set(new_props)):
        changes.append(
            Change(name, "output-property-removed", True, f"output property `{key}` removed", {"property": key})
        )
    for key in sorted(set(old_props) & set(new_props)):
        changes += _schema_change(
            name, "property", key, old_props[key], old.get("$defs", {}), new_props[key], new.get("$defs", {})
        )
    return changes
