"""The tool-surface report: one Markdown page an API owner reads in a minute, for a PR comment or a job summary.

Built on the diff (codegen/diff.py): breaking changes first, each with why it breaks; tools added, removed,
renamed; argument, annotation and output changes; tools whose only change is their description (or title, or
other schema detail) counted apart; the tools/list size in cl100k tokens before and after; and, from CI, the
`--check` status. Everything is sorted, so the same inputs give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .diff import Change, Report, diff_tools
from .listed import SurfaceTool, tools_text
from .tokens import count_tokens

MAX_ITEMS = 100  # lines per section; the rest is counted ("... and 12 more")
WHY = {
    "tool-removed": "agents calling it get an unknown-tool error",
    "tool-renamed": "agents calling the old name get an unknown-tool error",
    "argument-added": "calls without the new required argument are refused",
    "argument-removed": "calls that pass it are refused as an unknown argument",
    "argument-now-required": "calls without it are refused",
    "argument-retyped": "values of the old type are refused",
    "enum-values-removed": "calls with the dropped values are refused",
    "annotation-changed": "clients that approve calls by these hints would run a riskier tool unasked",
    "output-removed": "agents reading structuredContent get none",
    "output-property-removed": "agents reading the property no longer get it",
    "output-property-retyped": "agents reading the property get another type",
}
SECTIONS = (
    ("Tools added", ("tool-added",)),
    ("Tools removed, renamed or moved", ("tool-removed", "tool-renamed", "tool-moved")),
    (
        "Argument changes",
        (
            "argument-added",
            "argument-removed",
            "argument-now-required",
            "argument-now-optional",
            "argument-retyped",
            "enum-values-removed",
            "enum-values-added",
        ),
    ),
    ("Annotation changes", ("annotation-changed",)),
    (
        "Output changes",
        (
            "output-added",
            "output-removed",
            "output-property-added",
            "output-property-removed",
            "output-property-retyped",
        ),
    ),
)


@dataclass(frozen=True)
class SurfaceReport:
    diff: Report
    tokens_before: int
    tokens_after: int
    described: tuple[str, ...] = ()  # tools whose title or description changed, and nothing the diff lists
    detailed: tuple[str, ...] = ()  # tools whose schemas changed only in details (argument descriptions, nesting)
    title: str = "MCP tool surface"
    check: str | None = None  # the --check status line, from CI
    notes: tuple[str, ...] = field(default=())

    def count(self, *kinds: str) -> int:
        return len({c.tool for c in self.diff.changes if c.kind in kinds})

    def outputs(self) -> dict[str, str]:
        """The CI outputs: counts of tools added / removed (renamed ones count as removed) / changed."""
        tool_level = ("tool-added", "tool-removed", "tool-renamed", "tool-moved")
        changed = {c.tool for c in self.diff.changes if c.kind not in tool_level}
        changed |= {c.tool for c in self.diff.changes if c.kind == "tool-moved"}
        changed |= set(self.described) | set(self.detailed)
        return {
            "breaking": "true" if self.diff.breaking else "false",
            "tools-added": str(self.count("tool-added")),
            "tools-removed": str(self.count("tool-removed", "tool-renamed")),
            "tools-changed": str(len(changed)),
        }

    def headline(self) -> str:
        breaking = len(self.diff.breaking)
        parts = [
            f"**{breaking} breaking change{'s' if breaking != 1 else ''}**" if breaking else "no breaking change",
            f"{self.count('tool-added')} added",
            f"{self.count('tool-removed')} removed",
            f"{self.count('tool-renamed')} renamed",
            f"{self.outputs()['tools-changed']} changed ({len(self.described)} in description only, "
            f"{len(self.detailed)} in schema details only)",
        ]
        return " · ".join(parts)

    def to_markdown(self, max_items: int = MAX_ITEMS) -> str:
        count, other = len(self.diff.breaking), len(self.diff.changes) - len(self.diff.breaking)
        lines = [f"## {self.title}: {count} breaking, {other} other changes", "", self.headline(), ""]
        lines += [
            "| | before | after | change |",
            "|---|---:|---:|---:|",
            _row("tools", self.diff.old_tools, self.diff.new_tools),
            _row("tools/list tokens (cl100k)", self.tokens_before, self.tokens_after),
            "",
        ]
        if self.check is not None:
            lines += [self.check, ""]
        lines += [f"> {note}" for note in self.notes] + ([""] if self.notes else [])
        breaking = self.diff.breaking
        if breaking:
            lines += [f"### Breaking changes ({len(breaking)})", ""]
            lines += _items([f"`{c.tool}`: {c.message} — {_why(c)}" for c in breaking], max_items)
        for title, kinds in SECTIONS:
            group = [c for c in self.diff.changes if c.kind in kinds and not c.breaking]
            if group:
                lines += [f"### {title} ({len(group)})", ""]
                lines += _items([f"`{c.tool}`: {c.message}" for c in group], max_items)
        for title, names in (
            ("Description-only changes", self.described),
            ("Schema details changed (argument descriptions, nested schemas)", self.detailed),
        ):
            if names:
                lines += [f"### {title} ({len(names)})", "", f"<details><summary>{len(names)} tools</summary>", ""]
                shown = ", ".join(f"`{n}`" for n in names[:max_items])
                more = f", ... and {len(names) - max_items} more" if len(names) > max_items else ""
                lines += [shown + more, "", "</details>", ""]
        if not self.diff.changes and not self.described and not self.detailed:
            lines += ["No change to the tools.", ""]
        return "\n".join(lines).rstrip("\n") + "\n"


def build_report(
    old: Sequence[SurfaceTool],
    new: Sequence[SurfaceTool],
    *,
    title: str = "MCP tool surface",
    check: str | None = None,
    notes: Sequence[str] = (),
    old_text: str | None = None,
    new_text: str | None = None,
) -> SurfaceReport:
    """`old_text` / `new_text`: the tools.json texts when already at hand (else serialized from the tools)."""
    report = diff_tools(old, new)
    listed = {c.tool for c in report.changes}
    renamed = {c.details["new"]: c.details["old"] for c in report.changes if c.kind == "tool-renamed"}
    before = {t.name: t for t in old}
    described, detailed = [], []
    for tool in new:
        previous = before.get(renamed.get(tool.name, tool.name))
        if previous is None or tool.name in listed:
            continue
        if (previous.title, previous.description) != (tool.title, tool.description):
            described.append(tool.name)
        elif _schemas(previous) != _schemas(tool):
            detailed.append(tool.name)
    return SurfaceReport(
        report,
        count_tokens(old_text if old_text is not None else tools_text(old)),
        count_tokens(new_text if new_text is not None else tools_text(new)),
        tuple(sorted(described)),
        tuple(sorted(detailed)),
        title,
        check,
        tuple(notes),
    )


def _schemas(tool: SurfaceTool) -> tuple[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any]]:
    return tool.input_schema, tool.output_schema, tool.annotations


def _why(change: Change) -> str:
    return WHY.get(change.kind, "clients written against the old surface may fail")


def _row(label: str, before: int, after: int) -> str:
    delta = after - before
    change = f"{delta:+,}"
    if before and delta:
        change += f" ({delta / before:+.1%})"
    return f"| {label} | {before:,} | {after:,} | {change if delta else '0'} |"


def _items(lines: list[str], max_items: int) -> list[str]:
    shown = [f"- {line}" for line in lines[:max_items]]
    if len(lines) > max_items:
        shown.append(f"- ... and {len(lines) - max_items} more")
    return shown + [""]
