"""Which surface a package serves, and the discovery surface's four tools.

`tools` lists one tool per operation. `discovery` lists four tools instead (search_tools, describe_tool,
call_tool, call_read_only_tool), plus any pinned operations, so an API of any size fits a client's
context. `auto` picks `tools` for an API that fits (at most MAX_TOOLS tools and MAX_TOKENS tokens of
tools/list), else `discovery`.

Pure: ToolSpecs + settings -> a Surface (data the templates write) and problems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from ..problems import Problem, warning
from .plans import ToolSpec
from .search_index import GROUP_CHARS, build_index, group_counts, group_of
from .listing import listing_tokens as served_tokens
from .tokens import listing_tokens, wire
from .search_analyzer import stemmer
from .search_weights import load_libraries
from .vocabulary import rules

SurfaceName = Literal["tools", "discovery", "auto"]
SURFACES: tuple[SurfaceName, ...] = ("tools", "discovery", "auto")
MAX_TOOLS = 40  # auto: more tools than this -> discovery
MAX_TOKENS = 20_000  # auto: a bigger tools/list -> discovery
GROUPS_CHARS = 1800  # characters of the group list in search_tools' description
META_NAMES = ("search_tools", "describe_tool", "call_tool", "call_read_only_tool")
DEFAULT_LIMIT = 8
MAX_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Surface:
    name: Literal["tools", "discovery"]  # what the server lists by default
    listed: int  # tools in that listing
    tokens: int  # cl100k tokens of that tools/list
    pinned: tuple[str, ...] = ()  # tools listed directly next to the discovery tools
    meta: tuple[Mapping[str, Any], ...] = ()  # the four discovery tools (discovery only)

    def discovery_json(self) -> dict[str, Any]:
        """What the server reads to serve the discovery surface (discovery.json)."""
        return {"surface": self.name, "pinned": list(self.pinned), "tools": list(self.meta)}


def pinned_tools(tools: Sequence[ToolSpec], patterns: Sequence[str]) -> tuple[str, ...]:
    """Tools to list directly: `x-mcp-pin: true`, or a glob matching the tool's name, its operationId or
    its "METHOD /path"."""
    return tuple(
        tool.name
        for tool in tools
        if dict(tool.operation.extensions).get("x-mcp-pin") is True or any(_matches(tool, p) for p in patterns)
    )


def _matches(tool: ToolSpec, pattern: str) -> bool:
    keys = (tool.name, f"{tool.operation.method} {tool.operation.path}", tool.operation.operation_id or "")
    return any(key and fnmatchcase(key, pattern) for key in keys)


def choose(
    tools: Sequence[ToolSpec],
    requested: SurfaceName,
    patterns: Sequence[str],
    api_title: str,
    cap: int | None = None,
    counted: int | None = None,
) -> tuple[Surface, list[Problem]]:
    """The surface to generate: `requested`, with `auto` resolved (`cap`: the most tools a named client takes).
    The tools surface's tokens are those of its tools.json (`counted`, when the listing was counted already)."""
    problems: list[Problem] = []
    if not certainly_discovery(requested, len(tools), cap):  # `tools`, or `auto` on few tools: as their tokens say
        tokens = counted if counted is not None else served_tokens(tools)
        if requested == "tools" or tokens <= MAX_TOKENS:
            if patterns:
                problems.append(warning("pinned tools matter only to the discovery surface; 'pin' ignored"))
            return Surface("tools", len(tools), tokens), problems
    meta = meta_tools(tools, api_title)
    pinned = tuple(name for name in pinned_tools(tools, patterns) if name not in META_NAMES)
    for pattern in patterns:
        if not any(_matches(tool, pattern) for tool in tools):
            problems.append(warning(f"pin {pattern!r} matches no tool"))
    by_name = {tool.name: tool for tool in tools if tool.name in pinned}
    listing = [*meta, *(by_name[name].to_json() for name in pinned)]
    return Surface("discovery", len(listing), listing_tokens(listing), pinned, tuple(meta)), problems


def certainly_discovery(requested: SurfaceName, tools: int, cap: int | None = None) -> bool:
    """Whether `choose` gives the discovery surface to `tools` tools whatever their listing's tokens."""
    return requested == "discovery" or (
        requested == "auto" and (tools > MAX_TOOLS or (cap is not None and tools > cap))
    )


def prepare_index() -> None:
    """What building a search index loads first, whatever the tools: its libraries (bm25s with numpy, the stemmer)
    and the vocabulary's rules. A process that forks the index's helper can load them while it waits anyway."""
    load_libraries()
    stemmer()
    rules()


def search_text(tools: Sequence[ToolSpec]) -> str:
    """search.json's content (without its newline): the discovery surface's search index of `tools`, as sent."""
    return wire(build_index(tools))


def _groups_text(tools: Sequence[ToolSpec]) -> str:
    parts: list[str] = []
    size = 0
    counts = group_counts(group_of(tool) for tool in tools)
    for number, (group, count) in enumerate(counts):
        name = group if len(group) <= GROUP_CHARS else group[: GROUP_CHARS - 1] + "…"
        part = f"{name} ({count})"
        if size + len(part) > GROUPS_CHARS:
            parts.append(f"and {len(counts) - number} more")
            break
        parts.append(part)
        size += len(part) + 2
    return ", ".join(parts)


def meta_tools(tools: Sequence[ToolSpec], api_title: str) -> list[dict[str, Any]]:
    """search_tools, describe_tool, call_tool and call_read_only_tool, as tools/list sends them (their descriptions
    name the number of tools and their groups, as the search index has them)."""
    total = len(tools)
    api = " ".join(api_title.split())[:80] or "the API"
    name_arg = {"type": "string", "description": "A tool name from search_tools."}
    arguments_arg = {"type": "object", "description": "The tool's arguments, as its inputSchema describes."}
    call_input = {  # call_tool's and call_read_only_tool's
        "type": "object",
        "properties": {"name": name_arg, "arguments": arguments_arg},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }
    read_only = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
    found = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "title": {"type": "string"},
            "operation": {"type": "string"},
            "summary": {"type": "string"},
        },
        "required": ["name", "title", "operation", "summary"],
    }
    return [
        {
            "name": "search_tools",
            "title": f"Search the tools of {api}",
            "description": (
                f"Find the tools for a task among the {total} operations of {api}: say what you want to do, "
                "in the API's own words where you know them (e.g. 'create an invoice', 'list members of a team'); "
                "best matches first. Then describe_tool gives a tool's arguments, and call_tool (or "
                "call_read_only_tool for reads) runs it.\n\n"
                f"Groups, for `tag` (tools): {_groups_text(tools)}."
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What you want to do, in a few words."},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "default": DEFAULT_LIMIT,
                        "description": "How many tools to return.",
                    },
                    "tag": {"type": "string", "description": "Only tools in this group."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "properties": {"tools": {"type": "array", "items": found}, "total": {"type": "integer"}},
                "required": ["tools", "total"],
            },
            "annotations": {"title": "Search tools", **read_only, "openWorldHint": False},
        },
        {
            "name": "describe_tool",
            "title": "Describe a tool",
            "description": "A tool's full definition: description, operation, inputSchema (its arguments), "
            "annotations and outputSchema.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": name_arg},
                "required": ["name"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string"},
                    "operation": {"type": "string"},
                    "inputSchema": {"type": "object"},
                    "outputSchema": {"type": "object"},
                    "annotations": {"type": "object"},
                },
                "required": ["name", "title", "description", "operation", "inputSchema", "annotations"],
            },
            "annotations": {"title": "Describe a tool", **read_only, "openWorldHint": False},
        },
        {
            "name": "call_tool",
            "title": "Call a tool",
            "description": "Run a tool found with search_tools: its arguments are checked against its "
            "inputSchema and the API operation is called; the result is the tool's own.",
            "inputSchema": call_input,
            "annotations": {
                "title": "Call a tool",
                "readOnlyHint": False,
                "destructiveHint": True,
                "idempotentHint": False,
                "openWorldHint": True,
            },
        },
        {
            "name": "call_read_only_tool",
            "title": "Call a read-only tool",
            "description": "Run a read-only tool (one whose annotations say readOnlyHint), as call_tool does; "
            "any other tool is refused: use call_tool for those.",
            "inputSchema": call_input,
            "annotations": {"title": "Call a read-only tool", **read_only, "openWorldHint": True},
        },
    ]
