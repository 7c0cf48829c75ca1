"""JSON results that a model can use: next pages, projection (`fields`) and a result budget.

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
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp.types as types

from .links import link, size
from .paging import (
    Failed,
    Shaping,
    collect,
    item_precise,
    items_of,
    next_arguments,
    resume,
    with_items,
)
from .responses import Checker, _decode, _structured, is_json, to_result
from .upstream import Reply

CHARS_PER_TOKEN = (
    4  # the budget's token count: characters / 4 (no tokenizer is shipped)
)
MIN_CUT = 256  # characters: shorter strings are never cut
CUTS = (
    4_096,
    1_024,
    256,
)  # long strings are cut to these lengths in turn until the result fits
NOTE_ROOM = 600  # characters of the budget kept for the notes
MAX_NEXT = 4_096  # characters of next arguments passed on (a longer cursor is the API's problem, not the model's)
COLLECT_FACTOR = (
    4  # auto-pagination reads at most this many times the size cap, all pages together
)
SEARCH_BACK = 64  # characters searched back for a space to cut at

Send = Callable[[dict[str, Any]], Awaitable["Reply | Failed"]]


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- projection -------------------------------------------------------------------------------------------
def project(value: Any, paths: list[str], items: str | None) -> tuple[Any, str]:
    """`value` with only the members at `paths` (in each item when the result is a list); and a note when none
    of the paths was found."""
    tree: dict[str, Any] = {}
    for path in paths[:200]:
        node = tree
        keys = [k for k in str(path).split(".") if k][:16]
        for index, key in enumerate(keys):
            if node.get(key, {}) is None:
                break  # a shorter path already keeps the whole member
            node = node.setdefault(key, {}) if index < len(keys) - 1 else node
            if index == len(keys) - 1:
                node[key] = None
    if not tree:
        return value, ""
    array = items_of(value, items) if items is not None else None
    if array is not None and items is not None:
        picked = [_pick(item, tree) for item in array]
        out = with_items(value, items, picked)
        sample = array[0] if array else None
        found = any(p for p in picked)
    else:
        out = _pick(value, tree)
        sample = value[0] if isinstance(value, list) and value else value
        found = bool(out) or not value
    if found or not isinstance(sample, dict):
        return out, ""
    members = ", ".join(list(sample)[:30])
    return (
        out,
        f"none of the fields {sorted(tree)} was found; the members are: {members}",
    )


def _pick(value: Any, tree: Mapping[str, Any]) -> Any:
    if isinstance(value, list):
        return [_pick(item, tree) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        k: (value[k] if sub is None else _pick(value[k], sub))
        for k, sub in tree.items()
        if k in value
    }


# -- the budget -------------------------------------------------------------------------------------------
def fit(
    value: Any, limit: int, items: str | None
) -> tuple[Any, int | None, int | None, bool]:
    """`value` cut to at most `limit` characters of compact JSON: (value, items shown, items in all, strings cut).
    Whole items first, then long strings; None for the value when nothing brings it under the limit.
    """
    if len(compact(value)) <= limit:
        return value, None, None, False
    path = items if items is not None else ("" if isinstance(value, list) else None)
    array = items_of(value, path) if path is not None else None
    if array is not None and path is not None:
        kept = _whole_items(value, path, array, limit)
        if kept > 0 or not array:
            return with_items(value, path, array[:kept]), kept, len(array), False
    for length in CUTS:
        cut = _cut_strings(value, length)
        if array is not None and path is not None:
            cut_array = items_of(cut, path) or []
            kept = _whole_items(cut, path, cut_array, limit)
            if kept > 0:
                return with_items(cut, path, cut_array[:kept]), kept, len(array), True
        elif len(compact(cut)) <= limit:
            return cut, None, None, True
    smaller = _halve_arrays(_cut_strings(value, CUTS[-1]), limit)
    return smaller, None, None, True


def _whole_items(value: Any, path: str, array: list[Any], limit: int) -> int:
    """How many leading items of `array` fit in `limit` characters with the rest of `value`."""
    used = len(compact(with_items(value, path, [])))
    for index, item in enumerate(array):
        used += len(compact(item)) + (1 if index else 0)
        if used > limit:
            return index
    return len(array)


def cut_text(text: str, length: int) -> str:
    """`text` cut to about `length` characters at a space (else between two characters, never inside a
    character or before a combining mark), with a marker saying how much was left out.
    """
    if len(text) <= max(length, MIN_CUT):
        return text
    end = length
    space = text.rfind(" ", length - SEARCH_BACK, length)
    if space > 0:
        end = space
    while end > 0 and (
        unicodedata.combining(text[end]) or 0xDC00 <= ord(text[end]) <= 0xDFFF
    ):
        end -= 1
    return f"{text[:end]}… [cut: {len(text) - end:,} more characters]"


def _cut_strings(value: Any, length: int, depth: int = 0) -> Any:
    if isinstance(value, str):
        return cut_text(value, length)
    if depth > 100:
        return value
    if isinstance(value, list):
        return [_cut_strings(v, length, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _cut_strings(v, length, depth + 1) for k, v in value.items()}
    return value


def _halve_arrays(value: Any, limit: int) -> Any:
    """Last resort: the longest array anywhere halved (whole items) until `value` fits; None if it never does."""
    for _ in range(64):
        if len(compact(value)) <= limit:
            return value
        longest = _longest(value, ())
        if longest is None:
            return None
        path, array = longest
        value = _replace(value, path, array[: len(array) // 2])
    return None


def _longest(
    value: Any, at: tuple[Any, ...]
) -> tuple[tuple[Any, ...], list[Any]] | None:
    best: tuple[tuple[Any, ...], list[Any]] | None = (
        (at, value) if isinstance(value, list) and value else None
    )
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        found = _longest(child, (*at, key)) if len(at) < 32 else None
        if found and (best is None or len(compact(found[1])) > len(compact(best[1]))):
            best = found
    return best


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


# -- the result -------------------------------------------------------------------------------------------
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
