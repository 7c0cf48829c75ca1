"""A tool surface as a committed package lists it: `tools.json` (what tools/list sends) plus `routes.json`.

The tool-surface report compares what agents see today (the package committed at the base of a pull request)
with what the generator now produces, so the old side is read back from the generated files instead of from a
spec: that covers multi-file specs, overlays and settings changed in the same pull request. `SurfaceTool` is what
the diff needs of a tool; both `ToolSpec` (fresh from the pipeline) and `ListedTool` (read back) provide it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .annotations import implied
from .plans import tool_entry


class Route(Protocol):
    @property
    def method(self) -> str: ...

    @property
    def path(self) -> str: ...


class SurfaceTool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    @property
    def output_schema(self) -> Mapping[str, Any] | None: ...

    @property
    def annotations(self) -> Mapping[str, Any]: ...

    @property
    def plan(self) -> Route: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ListedRoute:
    method: str
    path: str


@dataclass(frozen=True, slots=True)
class ListedTool:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    plan: ListedRoute

    def to_json(self) -> dict[str, Any]:
        return tool_entry(
            self.name, self.title, self.description, self.input_schema, self.output_schema, self.annotations
        )


def tools_text(tools: Sequence[SurfaceTool]) -> str:
    """tools.json exactly as the generator writes it (compact, key-sorted): what tools/list sends."""
    return json.dumps([t.to_json() for t in tools], ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def read_listed(tools_json: str, routes_json: str) -> list[ListedTool]:
    """The tools of a generated package; ValueError when the files are not what the generator writes."""
    tools, routes = json.loads(tools_json), json.loads(routes_json)
    if not isinstance(tools, list) or not isinstance(routes, dict):
        raise ValueError("tools.json must be a list and routes.json an object")
    listed: list[ListedTool] = []
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ValueError("a tool in tools.json has no name")
        route = routes.get(tool["name"])
        if not isinstance(route, dict):
            raise ValueError(f"tool {tool['name']!r} has no route in routes.json")
        output = tool.get("outputSchema")
        # tools.json leaves out what a client infers: hints at their MCP default (or implied by readOnlyHint),
        # a title equal to annotations'
        annotations = implied(_mapping(tool.get("annotations")))
        listed.append(
            ListedTool(
                tool["name"],
                str(tool.get("title", annotations.get("title", ""))),
                str(tool.get("description", "")),
                _mapping(tool.get("inputSchema")),
                output if isinstance(output, dict) else None,
                annotations,
                ListedRoute(str(route.get("method", "")), str(route.get("path", ""))),
            )
        )
    return listed


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}
