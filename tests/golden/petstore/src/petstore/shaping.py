"""JSON results that a model can use: next pages, projection (`fields`) and a result budget (fitting.py cuts).

Every successful JSON answer goes through `respond` (direct calls and any other path that runs a tool alike):

1. auto-pagination, when the call asks for `max_items` / `max_pages` (paging.py);
2. projection: `fields` (dotted paths) keeps only those members, in each item of a list or in the object;
3. the budget (about `tokens` tokens, counted as characters / 4): past it, the item list is cut to whole
   items, then long strings are cut at a word boundary with a marker, so the result stays valid JSON and
   valid against the tool's outputSchema; a note says "showing N of M items" and how to get the rest;
4. `next`: the arguments of the next call, in the structured content (or `_meta` when the outputSchema cannot
   carry it), with a text line; the last page has none.

An answer that needs none of this keeps its text exactly as the API sent it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp.types as types

from .fitting import MIN_CUT, compact, cut_text, fit, project
from .links import link, size
from .paging import (
    Failed,
    Shaping,
    collect,
    item_precise,
    items_of,
    next_arguments,
    resume,
)
from .responses import Checker, _decode, _structured, is_json, to_result
from .upstream import Reply

CHARS_PER_TOKEN = (
    4  # the budget's token count: characters / 4 (no tokenizer is shipped)
)
NOTE_ROOM = 600  # characters of the budget kept for the notes
MAX_NEXT = 4_096  # characters of next arguments passed on (a longer cursor is the API's problem, not the model's)
COLLECT_FACTOR = (
    4  # auto-pagination reads at most this many times the size cap, all pages together
)

Send = Callable[[dict[str, Any]], Awaitable["Reply | Failed"]]


async def respond(
    tool: str,
    shaping: Shaping,
    arguments: Mapping[str, Any],
    reply: Reply,
    send: Send,
    deadline: float,
    *,
    tokens: int,
    structured: bool,
    wrap: bool,
    check: Checker | None,
    limit: int,
    uri: str | None = None,
    whole: bool = False,
) -> types.CallToolResult:
    """The tool result for `reply` (the first page); `send` fetches further pages; `tokens`: the server's budget;
    `uri`: a resource link to the whole answer, added when the result is cut; `whole`: no budget, no notes, no
    next (what `resources/read` of such a link returns)."""
    plain = to_result(
        tool, reply, structured=structured, wrap=wrap, check=check, limit=limit
    )
    base = reply.headers.get("content-type", "").split(";")[0].strip().lower()
    budget = 0 if whole else shaping.tokens if shaping.tokens is not None else tokens
    room = min(budget * CHARS_PER_TOKEN if budget else math.inf, limit)
    if reply.status >= 300 or plain.is_error:
        return plain
    if (
        whole
    ):  # read through a result link: the media type goes along for the resource contents
        plain.meta = {
            **(plain.meta or {}),
            "mimeType": base or "application/octet-stream",
        }
    if not reply.body or reply.truncated or not is_json(base):
        return _over_budget(
            tool, plain, budget * CHARS_PER_TOKEN if budget else math.inf, uri, base
        )
    controls = (shaping.fields, shaping.max_items, shaping.max_pages)
    if (
        shaping.pages is None
        and not any(arguments.get(k) for k in controls if k)
        and size(plain) <= room
    ):
        return plain  # nothing to shape: as the API sent it (parsed once, by to_result)
    raw = _decode(reply.body, reply.headers.get("content-type", ""))
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return plain
    notes: list[str] = []
    following = next_arguments(shaping, arguments, reply.headers, data)
    changed = False
    if shaping.max_items and (
        arguments.get(shaping.max_items) or arguments.get(shaping.max_pages or "")
    ):

        async def fetch(
            next_args: dict[str, Any],
        ) -> tuple[Any, Mapping[str, str], int] | str:
            got = await send(next_args)
            if isinstance(got, Failed):
                return plain_text(got.result)[:300]
            if got.status >= 300 or not is_json(
                got.headers.get("content-type", "").split(";")[0].strip().lower()
            ):
                return f"HTTP {got.status}, {got.headers.get('content-type', 'no content type')[:100]}"
            if got.truncated:
                return "the page passed the size cap"
            try:
                return (
                    json.loads(_decode(got.body, got.headers.get("content-type", ""))),
                    got.headers,
                    len(got.body),
                )
            except (ValueError, RecursionError):
                return "not JSON"

        collected = await collect(
            shaping,
            arguments,
            data,
            reply.headers,
            fetch,
            deadline,
            limit * COLLECT_FACTOR,
        )
        data, following, changed = collected.data, collected.next, True
        notes.append(f"{collected.items} items from {collected.pages} pages")
        notes.extend(collected.notes)
    paths = arguments.get(shaping.fields) if shaping.fields else None
    if isinstance(paths, list) and paths:
        data, missing = project(data, [str(p) for p in paths], shaping.items)
        changed = True
        if missing:
            notes.append(missing)
    if whole:
        text = compact(data) if changed else raw
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            _meta={"mimeType": base},
        )
    nxt: dict[str, Any] | None = (
        {"arguments": following} if following is not None else None
    )
    if nxt is not None and len(compact(nxt)) > MAX_NEXT:
        notes.append(
            f"the API's next position is longer than {MAX_NEXT:,} characters; it is not passed on"
        )
        nxt, changed = None, True
    reserve = NOTE_ROOM + (len(compact(nxt)) * 2 if nxt else 0)
    if not changed and nxt is None and len(plain_text(plain)) <= room:
        return plain  # as the API sent it
    shown: int | None = None
    if len(compact(data)) > room - reserve:
        trimmed, shown, total, strings = fit(
            data, max(int(room - reserve), 0), shaping.items
        )
        if trimmed is None:
            return (
                plain
                if len(plain_text(plain)) <= room
                else _with_link(_as_text(plain, int(room)), tool, uri)
            )
        data, changed = trimmed, True
        if shown is not None and total is not None:
            page = items_of(data, shaping.items or "") or []
            if (
                item_precise(shaping) and page
            ):  # the rest starts right after the last item shown
                nxt = {
                    "arguments": resume(shaping, arguments, page, shown) or following
                }
            sample = page[0] if page else None
            notes.append(
                _showing(
                    shaping,
                    shown,
                    total,
                    nxt is not None,
                    int(room // CHARS_PER_TOKEN),
                    sample,
                )
            )
        if strings:
            notes.append("long strings are cut, marked '… [cut: N more characters]'")
        if uri is not None:
            notes.append("the whole answer: read the resource link")
        result = _result(
            tool,
            shaping,
            data,
            nxt,
            notes,
            structured=structured,
            wrap=wrap,
            check=check,
        )
        return _with_link(result, tool, uri)
    return _result(
        tool, shaping, data, nxt, notes, structured=structured, wrap=wrap, check=check
    )


def _with_link(
    result: types.CallToolResult,
    tool: str,
    uri: str | None,
    mime_type: str = "application/json",
) -> types.CallToolResult:
    if uri is not None:
        result.content.append(link(uri, tool, mime_type))
    return result


def _over_budget(
    tool: str,
    result: types.CallToolResult,
    room: float,
    uri: str | None,
    mime_type: str,
) -> types.CallToolResult:
    """A text, image or file answer past the budget: a text is cut at a word boundary; a link may come too."""
    if size(result) <= room:
        return result
    texts = [b for b in result.content if isinstance(b, types.TextContent)]
    if len(result.content) == 1 and texts:
        cut = cut_text(texts[0].text, max(int(room) - NOTE_ROOM, MIN_CUT))
        note = f"\n[note: cut to the result budget of about {int(room) // CHARS_PER_TOKEN:,} tokens"
        note += "; the whole answer: read the resource link]" if uri else "]"
        texts[0].text = cut + note
    return _with_link(result, tool, uri, mime_type or "application/octet-stream")


def _showing(
    shaping: Shaping, shown: int, total: int, more: bool, budget: int, sample: Any
) -> str:
    note = f"showing {shown} of {total} items (the result budget is about {budget:,} tokens)"
    if item_precise(shaping) and more:
        return note + "; next.arguments continue right after the last item shown"
    ways = []
    size = shaping.pages.size if shaping.pages else None
    if size:
        ways.append(f"a smaller {size}")
    if shaping.fields:
        names = list(sample)[:3] if isinstance(sample, dict) else ["id", "name"]
        ways.append(
            f"{shaping.fields} (e.g. {compact(names)}) for fewer members per item"
        )
    rest = (
        f"; ask again with {' or '.join(ways)} to see the other {total - shown}"
        if ways
        else ""
    )
    after = "; next.arguments give the page after this one" if more else ""
    return note + rest + after


def _result(
    tool: str,
    shaping: Shaping,
    data: Any,
    nxt: dict[str, Any] | None,
    notes: list[str],
    *,
    structured: bool,
    wrap: bool,
    check: Checker | None,
) -> types.CallToolResult:
    meta: dict[str, Any] | None = None
    value: dict[str, Any] | None = None
    if structured:
        value, dropped = _structured(tool, data, wrap, check)
        if dropped:
            notes.append(dropped)
        if nxt is not None and shaping.next_in == "structured":
            value = {**value, "next": nxt}
        elif nxt is not None:
            meta = {"next": nxt}
    elif nxt is not None:
        meta = {"next": nxt}
    lines = [
        compact(data)
    ]  # the answer as shaped (not wrapped); `next` on a line of its own
    if nxt is not None:
        lines.append(
            f"[next page: call {tool} with arguments {compact(nxt['arguments'])}]"
        )
    lines.extend(f"[note: {note}]" for note in notes)
    content: list[types.ContentBlock] = [
        types.TextContent(type="text", text="\n".join(lines))
    ]
    return types.CallToolResult(content=content, structured_content=value, _meta=meta)


def plain_text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _as_text(result: types.CallToolResult, room: int) -> types.CallToolResult:
    """A JSON answer no trimming could bring under the budget: its text cut at a word boundary, unstructured."""
    text = cut_text(plain_text(result), max(room - NOTE_ROOM, MIN_CUT))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=None
    )
