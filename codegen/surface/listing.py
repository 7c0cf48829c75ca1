"""What tools/list costs a client, and keeping it within reach.

Output schemas tell a client the shape of a result; no model needs them to choose or call a tool. When the
whole tools/list (cl100k tokens of tools.json as sent) exceeds LISTING_TOKENS with them, they are left out
of it: every tool still returns its result, as text (and structured content where the tool keeps a schema),
and a warning says how much the listing saved. Everything a call needs (names, input schemas, descriptions,
annotations) stays; input schemas only lose the result-shaping arguments' descriptions (the same sentence on
hundreds of tools) and write their definitions used once in place (inline_once.py: the same schema). A listing
without output schemas (--compact) over the limit gets the input-schema savings, without a warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..problems import Level, Problem
from .inline_once import Counted, inline_once
from .listing_text import ListingText
from .plans import ResultPlan, ToolSpec
from .tokens import count_tokens

LISTING_TOKENS = 200_000  # more than any model's context window holds for tools
SMALL = 200  # tools: a listing this short is serialized whole first, as it may fit without being counted


def listing_tokens(tools: Sequence[ToolSpec]) -> int:
    """cl100k tokens of the tools/list entries, serialized as tools.json is (compact, sorted keys)."""
    return count_tokens(_text(tools))


def _text(tools: Sequence[ToolSpec]) -> str:
    return json.dumps([t.to_json() for t in tools], ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def fit_listing(tools: Sequence[ToolSpec], limit: int = LISTING_TOKENS) -> tuple[list[ToolSpec], list[Problem]]:
    """`tools` unchanged while their listing fits `limit` tokens; else the same tools without output schemas (and
    with the input schemas' other savings, see `_without_output_schema`)."""
    fitted, problems, _, _ = fitted_listing(tools, limit)
    return fitted, problems


def fitted_listing(
    tools: Sequence[ToolSpec],
    limit: int = LISTING_TOKENS,
    end: str = "",
    ready: Callable[[list[ToolSpec]], None] | None = None,
) -> tuple[list[ToolSpec], list[Problem], bytes | None, int | None]:
    """fit_listing, and the text of the listing it returns (tools.json) when that was serialized on the way (a
    large API's listing is tens of megabytes: the listing with output schemas is counted only as far as the limit,
    the one returned is serialized and counted once), followed by `end` (tools.json's newline: the file's content
    is then this very object, not a copy of it), as UTF-8 bytes; and the tokens of the listing returned (listing_tokens)
    when they were counted on the way. `ready` is given the list of tools returned as soon as it is known, before
    their listing is serialized or counted (work that needs only the tools can start then)."""
    ready = ready or _ignore
    if len(tools) <= SMALL:  # a token is at least one character: a short listing need not be counted
        text = _text(tools)
        if len(text) <= limit:
            same = list(tools)
            ready(same)
            return same, [], (text + end).encode("utf-8"), None
    writer = ListingText()  # the definitions the tools share: serialized and counted once
    _, before, _ = writer.measure([t.to_json() for t in tools], keep_text=False, stop_above=limit)
    if before <= limit:
        same = list(tools)
        ready(same)
        return same, [], (_text(same) + end).encode("utf-8"), before
    counted: Counted = {}  # the definitions the tools share, each walked once
    fitted = [_without_output_schema(t, counted) for t in tools]
    del counted
    ready(fitted)
    if not any(t.output_schema is not None for t in tools):  # --compact: nothing a client would miss, no warning
        return fitted, [], None, None
    _, after, fitted_text = writer.measure([t.to_json() for t in fitted], end=end)
    message = (
        f"a tools/list of every tool (the tools surface) would cost more than {limit:,} tokens: output schemas are "
        f"left out of it, which brings it to {after:,}; results are still returned whole"
    )
    return fitted, [Problem(Level.WARNING, message, "")], fitted_text, after


def _ignore(_: list[ToolSpec]) -> None:
    pass


def _without_output_schema(tool: ToolSpec, counted: Counted | None = None) -> ToolSpec:
    """The tool without its output schema; a `next` page its result would have carried in structuredContent
    (which that schema declared) travels in the result's `_meta` instead. The result-shaping arguments
    (`fields`, `max_items`, `max_pages`) lose their descriptions, as with --compact: the same sentence on
    hundreds of tools says nothing their names and schemas do not. Definitions used once are written in place.
    The schema is kept aside (`described_output`) for the discovery surface's describe_tool."""
    schema = inline_once(tool.input_schema, counted)
    plan, results = tool.plan, tool.plan.results
    if results is not None:
        if results.next_in == "structured":
            plan = replace(plan, results=replace(results, next_in="meta"))
        schema = _without_control_descriptions(schema, results)
    return replace(tool, input_schema=schema, output_schema=None, described_output=tool.output_schema, plan=plan)


def _without_control_descriptions(schema: Mapping[str, Any], results: ResultPlan) -> Mapping[str, Any]:
    """The input schema without the descriptions of the result-shaping arguments (`fields`, `max_items`, ...)."""
    control = {key for key in (results.fields, results.max_items, results.max_pages) if key}
    if not control:
        return schema
    properties = dict(schema.get("properties") or {})
    for key in control & set(properties):
        properties[key] = {k: v for k, v in properties[key].items() if k != "description"}
    return {**schema, "properties": properties}
