"""Tool and argument names that fit every named client: shortened deterministically and kept unique.

A shortened name keeps its start (cut at a word boundary) and ends with 6 hex digits of the full name's
hash (`naming.shorten`), so it depends on the name alone, not on the order of the tools: regenerating
after the spec gained or lost operations gives every other tool the same name. Only two names that still
collide get a counter (`_2`), in the spec's (sorted) order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..naming import MAX_TOOL_NAME, shorten, tool_name, unique
from ..plans import ArgPlan, ResultPlan, ToolSpec
from .rules import Rules

MIN_NAME = 8  # a name budget below this (a very long server name) is not honoured; the checker reports it


def name_limit(rules: Rules, server: str) -> int:
    """How long a tool name may be: 64, or less when a client counts the server name too."""
    limit = MAX_TOOL_NAME
    if rules.name_budget is not None:
        limit = min(limit, rules.name_budget - len(server))
    return max(limit, MIN_NAME)


def fit_names(tools: Sequence[ToolSpec], rules: Rules, server: str) -> tuple[list[ToolSpec], dict[str, str]]:
    """The tools with names that match every pattern and fit the limit; and old name -> new name."""
    limit = name_limit(rules, server)
    patterns = [re.compile(p) for p in rules.tool_names]
    wanted: list[str] = []
    for tool in tools:
        name = tool.name
        if not all(p.fullmatch(name) for p in patterns):
            name = tool_name(name)  # snake case, starts with a letter, at most 64
        wanted.append(shorten(name, limit))
    taken: set[str] = set()
    renamed: dict[str, str] = {}
    result: list[ToolSpec] = []
    # names that need no counter are taken first, so a counter never displaces a name that was fine
    counts: dict[str, int] = {}
    for name in wanted:
        counts[name] = counts.get(name, 0) + 1
    taken.update(name for name, count in counts.items() if count == 1)
    for tool, name in zip(tools, wanted):
        final = name if counts[name] == 1 else unique(name, taken, limit)
        if final != tool.name:
            renamed[tool.name] = final
            tool = replace(tool, name=final)
        result.append(tool)
    return result, renamed


def fit_arg_names(tool: ToolSpec, rules: Rules) -> tuple[ToolSpec, dict[str, str]]:
    """The tool with top-level argument keys every named client accepts (Gemini: letters, digits and
    underscores, not starting with a digit); the request plan follows the new keys."""
    patterns = [re.compile(p) for p in rules.arg_names]
    properties = tool.input_schema.get("properties")
    if not isinstance(properties, Mapping) or all(all(p.fullmatch(k) for p in patterns) for k in properties):
        return tool, {}
    taken = {k for k in properties if all(p.fullmatch(k) for p in patterns)}
    renames: dict[str, str] = {}
    for key in properties:
        if key not in taken:
            renames[key] = unique(_arg_key(key), taken, 64)
    schema = dict(tool.input_schema)
    schema["properties"] = {renames.get(k, k): v for k, v in properties.items()}
    required = schema.get("required")
    if isinstance(required, list):
        schema["required"] = [renames.get(k, k) if isinstance(k, str) else k for k in required]
    args = tuple(_renamed_arg(a, renames) for a in tool.plan.args)
    body = tool.plan.body
    if body is not None and body.arg in renames:
        body = replace(body, arg=renames[body.arg])
    results = _renamed_results(tool.plan.results, renames) if tool.plan.results is not None else None
    plan = replace(tool.plan, args=args, body=body, results=results)
    return replace(tool, input_schema=schema, plan=plan), renames


def _renamed_arg(arg: ArgPlan, renames: Mapping[str, str]) -> ArgPlan:
    return replace(arg, arg=renames[arg.arg]) if arg.arg in renames else arg


def _renamed_results(results: ResultPlan, renames: Mapping[str, str]) -> ResultPlan:
    """The result plan naming the new keys: the next page's arguments (cursor, page, size, a next URL's query) and
    the projection and auto-pagination arguments are the tool's arguments."""

    def key(name: str | None) -> str | None:
        return renames.get(name, name) if name is not None else None

    pages = results.pages
    if pages is not None:
        query = tuple((wire, renames.get(arg, arg), kind) for wire, arg, kind in pages.query)
        pages = replace(pages, param=key(pages.param), size=key(pages.size), query=query)
    fields, max_items, max_pages = key(results.fields), key(results.max_items), key(results.max_pages)
    return replace(results, pages=pages, fields=fields, max_items=max_items, max_pages=max_pages)


def _arg_key(key: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_]+", "_", key).strip("_")
    if not safe:
        safe = "arg_" + hashlib.sha1(key.encode()).hexdigest()[:6]
    if safe[0].isdigit():
        safe = "_" + safe
    return shorten(safe, 64)


def describe_renames(renamed: Mapping[str, Any]) -> str:
    pairs = sorted(renamed.items())
    shown = ", ".join(f"{old!r} -> {new!r}" for old, new in pairs[:5])
    more = f" and {len(pairs) - 5} more" if len(pairs) > 5 else ""
    return shown + more
