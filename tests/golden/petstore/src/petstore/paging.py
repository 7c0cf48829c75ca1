"""Next pages: the arguments of the next call of a paginated tool, and auto-pagination (`max_items`, `max_pages`).

Each paginated tool's plan (routes.json `results.pages`, found by mcp-codegen in the spec) says where the next
position comes from: a `Link: <...>; rel="next"` header or a next URL in the body (its query mapped onto the
tool's query arguments), a cursor member (`next_cursor`, `nextPageToken`, ...) passed to its parameter, the
last item's id after a `has_more` flag (`starting_after`), or a page number / offset checked against a total.
The next arguments are the call's own arguments with that position changed; the last page has none.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import mcp.types as types

MAX_PAGES = 100  # pages one call follows at most, whatever it asks for
_LINK = re.compile(r"\s*<([^>]*)>(.*)", re.DOTALL)
_REL = re.compile(r';\s*rel\s*=\s*(?:"([^"]*)"|([^;\s]+))', re.IGNORECASE)
_INTEGER = re.compile(r"-?[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class Pages:
    kind: str  # link | url | cursor | after_id | page | offset
    param: str | None = None
    member: str | None = None
    flag: str | None = None
    total: str | None = None
    pages: str | None = None
    size: str | None = None
    start: int = 1
    query: tuple[tuple[str, str, str], ...] = ()  # (wire name, argument key, JSON type)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pages:
        return cls(
            kind=data["kind"],
            param=data.get("param"),
            member=data.get("member"),
            flag=data.get("flag"),
            total=data.get("total"),
            pages=data.get("pages"),
            size=data.get("size"),
            start=data.get("start", 1),
            query=tuple((q[0], q[1], q[2]) for q in data.get("query", ())),
        )


@dataclass(frozen=True, slots=True)
class Shaping:
    """routes.json `results`: how a JSON result of the tool is shaped."""

    items: str | None = None  # dotted path of the item array ("": the root array)
    pages: Pages | None = None
    fields: str | None = (
        None  # argument keys of the result controls (never sent to the API)
    )
    max_items: str | None = None
    max_pages: str | None = None
    next_in: str = "meta"  # structured | meta
    tokens: int | None = None  # this tool's budget; None: the server's

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Shaping:
        if not data:
            return cls()
        pages = data.get("pages")
        return cls(
            items=data.get("items"),
            pages=Pages.from_json(pages) if pages else None,
            fields=data.get("fields"),
            max_items=data.get("maxItems"),
            max_pages=data.get("maxPages"),
            next_in=data.get("nextIn", "meta"),
            tokens=data.get("tokens"),
        )

    @property
    def controls(self) -> tuple[str, ...]:
        return tuple(
            k for k in (self.fields, self.max_items, self.max_pages) if k is not None
        )


@dataclass(slots=True)
class Failed:
    """A page that could not be fetched: the error result, with what the audit line records."""

    result: types.CallToolResult
    status: int | str
    retries: int


def member(data: Any, path: str | None) -> Any:
    """The value at a dotted path ("" is `data` itself); None when it is not there."""
    if path is None:
        return None
    for key in path.split(".") if path else ():
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def items_of(data: Any, path: str | None) -> list[Any] | None:
    found = member(data, path)
    return found if isinstance(found, list) else None


def with_items(data: Any, path: str, items: list[Any]) -> Any:
    """`data` with the array at `path` replaced by `items` (copies along the path only)."""
    if not path:
        return items
    head, _, rest = path.partition(".")
    if not isinstance(data, dict):
        return data
    return {**data, head: with_items(data.get(head), rest, items)}


def link_next(header: str | None) -> str | None:
    """The rel="next" target of a Link header (RFC 8288), if any."""
    for part in re.split(r",\s*(?=<)", (header or "")[:16_384]):
        link = _LINK.match(part)
        rel = _REL.search(link.group(2)) if link else None
        if (
            link
            and rel
            and "next" in (rel.group(1) or rel.group(2) or "").lower().split()
        ):
            return link.group(1).strip()
    return None


def from_url(
    pages: Pages, arguments: Mapping[str, Any], url: str
) -> dict[str, Any] | None:
    """`arguments` with the next URL's query values in the tool's query arguments; None if nothing changes."""
    known = {wire: (arg, kind) for wire, arg, kind in pages.query}
    out = dict(arguments)
    for wire, raw in parse_qsl(urlsplit(url).query, keep_blank_values=True)[:200]:
        if wire in known:
            arg, kind = known[wire]
            out[arg] = _typed(raw, kind)
    return out if out != dict(arguments) else None


def _typed(raw: str, kind: str) -> Any:
    if kind == "integer" and _INTEGER.fullmatch(raw):
        return int(raw)
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            return raw
    if kind == "boolean" and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def next_arguments(
    shaping: Shaping,
    arguments: Mapping[str, Any],
    headers: Mapping[str, str],
    data: Any,
) -> dict[str, Any] | None:
    """The arguments of the call that returns the page after this one; None on the last page."""
    pages = shaping.pages
    if pages is None:
        return None
    items = items_of(data, shaping.items)
    if pages.kind == "link":
        url = link_next(headers.get("link"))
        return from_url(pages, arguments, url) if url else None
    if pages.kind == "url":
        url = member(data, pages.member)
        return from_url(pages, arguments, url) if isinstance(url, str) and url else None
    if pages.kind == "cursor" and pages.param is not None:
        cursor = member(data, pages.member)
        if (
            cursor in (None, "", False)
            or cursor == arguments.get(pages.param)
            or isinstance(cursor, (dict, list))
        ):
            return None
        return {**arguments, pages.param: cursor}
    if pages.param is None or (items is not None and not items):
        return None
    if pages.kind == "after_id":
        last = items[-1] if items else None
        if (
            member(data, pages.flag) is not True
            or not isinstance(last, dict)
            or last.get("id") in (None, "")
        ):
            return None
        return {**arguments, pages.param: last["id"]}
    current = _number(arguments.get(pages.param))
    current = pages.start if current is None else current
    count = len(items) if items is not None else None
    if pages.flag is not None and isinstance(member(data, pages.flag), bool):
        more = member(data, pages.flag) is True
    elif pages.kind == "page" and _number(member(data, pages.pages)) is not None:
        more = current - pages.start + 1 < (_number(member(data, pages.pages)) or 0)
    elif _number(member(data, pages.total)) is not None and count is not None:
        total = _number(member(data, pages.total)) or 0
        if pages.kind == "offset":
            more = current + count < total
        else:
            size = _number(arguments.get(pages.size)) if pages.size else None
            more = (current - pages.start + 1) * (size or count) < total
    else:
        more = False
    if not more:
        return None
    step = 1 if pages.kind == "page" else (count or 0)
    return {**arguments, pages.param: current + step} if step else None


def resume(
    shaping: Shaping, page_arguments: Mapping[str, Any], shown: list[Any], kept: int
) -> dict[str, Any] | None:
    """Where the next call starts when only the first `kept` items of the page fetched with `page_arguments`
    are returned (`shown` ends with them): exact for after_id and offset, else that page again.
    """
    pages = shaping.pages
    if pages is None:
        return None
    if (
        pages.kind == "after_id"
        and pages.param
        and shown
        and isinstance(shown[-1], dict)
        and "id" in shown[-1]
    ):
        return {**page_arguments, pages.param: shown[-1]["id"]}
    if pages.kind == "offset" and pages.param:
        start = _number(page_arguments.get(pages.param))
        return {
            **page_arguments,
            pages.param: (pages.start if start is None else start) + kept,
        }
    return dict(page_arguments)


def item_precise(shaping: Shaping) -> bool:
    """Whether a next call can start right after any returned item (not only after a whole page)."""
    return shaping.pages is not None and shaping.pages.kind in ("after_id", "offset")


# the arguments of a page -> (its answer, its headers, its size in bytes), or why it could not be fetched
Fetch = Callable[
    [dict[str, Any]], Awaitable["tuple[Any, Mapping[str, str], int] | str"]
]


@dataclass(slots=True)
class Collected:
    data: Any  # the last page's answer, its items replaced by all the items collected
    items: int
    pages: int
    next: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)


async def collect(
    shaping: Shaping,
    arguments: Mapping[str, Any],
    data: Any,
    headers: Mapping[str, str],
    fetch: Fetch,
    deadline: float,
    max_bytes: int,
) -> Collected:
    """Follow next pages from the first one (`data`, `headers`) until `max_items` items or `max_pages` pages
    (at most MAX_PAGES), the last page, `max_bytes` of answers, or the call's deadline; never fetch a page past
    the bound."""
    path = shaping.items or ""
    max_items = _number(arguments.get(shaping.max_items)) if shaping.max_items else None
    asked = _number(arguments.get(shaping.max_pages)) if shaping.max_pages else None
    max_pages = min(asked or MAX_PAGES, MAX_PAGES)
    items = list(items_of(data, path) or [])
    page_arguments: dict[str, Any] = dict(arguments)
    following = next_arguments(shaping, page_arguments, headers, data)
    notes: list[str] = []
    count, page_start, slowest, read = 1, 0, 0.0, 0
    while (
        following is not None
        and count < max_pages
        and (max_items is None or len(items) < max_items)
    ):
        if deadline - time.monotonic() < max(slowest, 0.05):
            notes.append(f"stopped after {count} pages: the call's time limit was near")
            break
        if read > max_bytes:
            notes.append(
                f"stopped after {count} pages: they hold {read:,} bytes, more than a result can show"
            )
            break
        started = time.monotonic()
        got = await fetch(following)
        slowest = max(slowest, time.monotonic() - started)
        if isinstance(got, str):
            notes.append(
                f"page {count + 1} could not be fetched ({got}); next.arguments ask for it again"
            )
            break
        page_data, page_headers, page_bytes = got
        read += page_bytes
        page_items = items_of(page_data, path)
        if page_items is None:
            notes.append(
                f"page {count + 1} held no list of items; next.arguments ask for it again"
            )
            break
        page_arguments, data, page_start = following, page_data, len(items)
        items.extend(page_items)
        count += 1
        following = next_arguments(shaping, page_arguments, page_headers, page_data)
        if not page_items:
            break
    if max_items is not None and len(items) > max_items:
        kept = max_items - page_start
        items = items[:max_items]
        following = resume(shaping, page_arguments, items, kept)
        if not item_precise(shaping):
            notes.append(
                f"the last page fetched had more items than max_items allowed; next.arguments fetch that page "
                f"again, and its first {kept} items are already here"
            )
    return Collected(with_items(data, path, items), len(items), count, following, notes)
