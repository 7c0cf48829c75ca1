"""Pagination found in the spec: how the next page of an operation's result is asked for.

Pure: an `Operation`, its argument plans and input schema, and the spec's schemas (through the resolver) ->
a `PagePlan` or None. What is recognised, in this order:

- `link`: a 2xx response declares a `Link` header (RFC 8288; GitHub's lists): the server reads the
  `rel="next"` URL and maps its query onto the tool's query arguments.
- `cursor` / `url`: a response member holds the next position: `next_cursor`, `nextPageToken`,
  `next_page_token`, `endCursor`, `nextMarker`, `paging.next.after`, `next`, ... (up to three objects
  deep), paired with the request parameter that takes it (`cursor`, `pageToken`, `after`, `marker`,
  `start_cursor`, ...). A member that holds a URL (`format: uri`, `next_url`, `nextLink`) is read like a
  Link header (`url`).
- `after_id`: a `has_more` flag, an item array whose items have an `id`, and a `starting_after`
  parameter (Stripe): the next page starts after the last item's id.
- `page` / `offset`: a page number (`page`, `page_number`) or offset (`offset`, `skip`, `start`) parameter,
  with a total (`total_count`, `total`, `total_pages`, ...) or a `has_more`-like flag in the response.

`list_items` finds the array of items in a response (the root array, or `data`, `items`, `results`, ... or
the only array member), which auto-pagination merges and the result budget trims.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from ..spec.media import json_media_rank
from ..spec.model import Operation
from ..spec.refs import Ref, RefError, Resolver

if TYPE_CHECKING:  # plans.py imports this module
    from .plans import ArgPlan

MAX_DEPTH = 3  # objects walked below the response root looking for a cursor member
ITEM_NAMES = (
    "data",
    "items",
    "results",
    "records",
    "values",
    "value",
    "entries",
    "elements",
    "objects",
    "nodes",
    "hits",
    "_embedded",
    "content",
    "rows",
)
NOT_ITEMS = frozenset({"messages", "errors", "warnings", "links", "_links", "includes", "included", "facets"})
# response member (normalized: lower case, no _ or -) -> request parameters (normalized) that take its value
CURSOR_PAIRS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("nextpagetoken", ("pagetoken", "nextpagetoken", "token")),
    ("nexttoken", ("nexttoken", "pagetoken", "token")),
    ("nextcursor", ("cursor", "startcursor", "after", "pagecursor", "nextcursor")),
    ("nextpagecursor", ("cursor", "pagecursor", "after")),
    ("endcursor", ("after", "cursor")),
    ("nextmarker", ("marker", "nextmarker")),
    ("nextcontinuationtoken", ("continuationtoken",)),
    ("continuationtoken", ("continuationtoken",)),
    ("after", ("after",)),
    ("nextoffset", ("offset",)),
    ("offset", ("offset",)),
    ("next", ("cursor", "next", "after", "pagetoken", "starttoken")),
    ("cursor", ("cursor",)),
)
URL_MEMBERS = ("nexturl", "nextlink", "nextpageurl", "next", "nexthref")
AFTER_ID_PARAMS = ("startingafter", "afterid", "startafter")
FLAG_MEMBERS = ("hasmore", "hasnext", "hasnextpage", "more", "moreitems")
TOTAL_MEMBERS = ("totalcount", "total", "totalresults", "totalitems", "totalelements", "totalsize", "count")
PAGES_MEMBERS = ("totalpages", "pagecount", "lastpage", "numpages", "pages")
PAGE_PARAMS = ("page", "pagenumber", "pagenum", "pageindex", "pageno")
OFFSET_PARAMS = ("offset", "skip", "start", "startindex")
SIZE_PARAMS = ("perpage", "pagesize", "limit", "size", "pagelen", "maxresults", "count", "top", "pagelimit")


@dataclass(frozen=True, slots=True)
class PagePlan:
    kind: str  # link | url | cursor | after_id | page | offset
    param: str | None = None  # the argument key that takes the next position (cursor, after_id, page, offset)
    member: str | None = None  # dotted path of the response member holding the next cursor or URL
    flag: str | None = None  # dotted path of a "more pages" boolean
    total: str | None = None  # dotted path of the total item count
    pages: str | None = None  # dotted path of the total page count
    size: str | None = None  # the argument key of the page size
    start: int = 1  # the first page number (page) or offset (offset) when the argument is not given
    query: tuple[tuple[str, str, str], ...] = ()  # (wire name, argument key, JSON type): a next URL's query

    def describe(self) -> str:
        """One line for `mcp-codegen -v`."""
        if self.kind == "link":
            return "Link header rel=next -> " + ", ".join(arg for _, arg, _ in self.query)
        if self.kind == "url":
            return f"next URL in {self.member} -> " + ", ".join(arg for _, arg, _ in self.query)
        if self.kind == "cursor":
            return f"cursor {self.member} -> {self.param}"
        if self.kind == "after_id":
            return f"{self.flag} + last item's id -> {self.param}"
        bound = self.total or self.pages or self.flag
        return f"{self.kind} number {self.param} (size {self.size or '-'}), until {bound}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        for key, value in (
            ("param", self.param),
            ("member", self.member),
            ("flag", self.flag),
            ("total", self.total),
            ("pages", self.pages),
            ("size", self.size),
        ):
            if value is not None:
                data[key] = value
        if self.kind in ("page", "offset"):
            data["start"] = self.start
        if self.query:
            data["query"] = [list(q) for q in self.query]
        return data


def norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").replace(".", "").lower()


# per resolver (so per spec, and gone with it): (id of a schema node, its location, depth) -> _Shape.properties
_PROPERTIES: WeakKeyDictionary[Resolver, dict[tuple[int, Ref, int], Mapping[str, tuple[Any, Ref]]]] = (
    WeakKeyDictionary()
)

_BY_NAME: WeakKeyDictionary[Resolver, dict[tuple[int, Ref], dict[str, list[tuple[str, Any]]]]] = WeakKeyDictionary()


class _Shape:
    """The first 2xx JSON response schema of an operation, read through $refs and allOf."""

    def __init__(self, op: Operation, resolver: Resolver) -> None:
        self.resolver = resolver
        self.root: Any = None
        self.at: Ref | None = None
        for response in op.responses:
            if not response.status.startswith("2"):
                continue
            if response.schema is not None and response.media_type and json_media_rank(response.media_type) <= 1:
                self.root, self.at = self.resolve(response.schema.node, response.schema.at)
            break

    def resolve(self, node: Any, at: Ref) -> tuple[Any, Ref]:
        try:
            return self.resolver.resolve(node, at)
        except RefError:
            return None, at

    def properties(self, node: Any, at: Ref, depth: int = 0) -> Mapping[str, tuple[Any, Ref]]:
        """name -> (resolved schema, location), allOf members merged; remembered per spec node (a large API's
        operations return the same few schemas, whose allOf chains would be walked for each)."""
        if not isinstance(node, dict):
            return {}
        remembered = _PROPERTIES.get(self.resolver)
        if remembered is None:
            remembered = _PROPERTIES[self.resolver] = {}
        key = (id(node), at, depth)  # the node belongs to a document the resolver holds: its id stays its own
        found = remembered.get(key)
        if found is None:
            found = remembered[key] = self._properties(node, at, depth)
        return found

    def _properties(self, node: dict[str, Any], at: Ref, depth: int) -> dict[str, tuple[Any, Ref]]:
        found: dict[str, tuple[Any, Ref]] = {}
        if depth > 8:
            return found
        for index, part in enumerate(node.get("allOf") or []):
            part, part_at = self.resolve(part, at.child("allOf", index))
            found.update(self.properties(part, part_at, depth + 1))
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                found[str(name)] = self.resolve(sub, at.child("properties", str(name)))
        return found

    def by_name(self) -> Mapping[str, list[tuple[str, Any]]]:
        """`members` by their own name, normalized (`norm`); remembered per response schema, like `properties`."""
        if self.at is None:
            return {}
        remembered = _BY_NAME.get(self.resolver)
        if remembered is None:
            remembered = _BY_NAME[self.resolver] = {}
        key = (id(self.root), self.at)
        found = remembered.get(key)
        if found is None:
            found = remembered[key] = {}
            for path, sub in self.members():
                found.setdefault(norm(path.rsplit(".", 1)[-1]), []).append((path, sub))
        return found

    def members(self) -> Iterator[tuple[str, Any]]:
        """(dotted path, resolved schema) of every member up to MAX_DEPTH objects deep, breadth first."""
        if self.at is None:
            return
        level: list[tuple[str, Any, Ref]] = [("", self.root, self.at)]
        for _ in range(MAX_DEPTH):
            below: list[tuple[str, Any, Ref]] = []
            for prefix, node, at in level:
                for name, (sub, sub_at) in sorted(self.properties(node, at).items()):
                    path = f"{prefix}.{name}" if prefix else name
                    yield path, sub
                    if _type(sub) == "object" and "." not in name:
                        below.append((path, sub, sub_at))
            level = below


def _type(node: Any) -> str | None:
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and "properties" in node:
        return "object"
    if kind is None and "items" in node:
        return "array"
    return kind if isinstance(kind, str) else None


def list_items(op: Operation, resolver: Resolver) -> str | None:
    """The dotted path of the item array in the response ("" for a root array); None when there is none."""
    shape = _Shape(op, resolver)
    return _items(shape)


_ITEMS: WeakKeyDictionary[Resolver, dict[tuple[int, Ref], str | None]] = WeakKeyDictionary()


def _items(shape: _Shape) -> str | None:
    """`list_items` of a shape, remembered per response schema (like `_Shape.by_name`)."""
    if shape.at is None:
        return None
    remembered = _ITEMS.get(shape.resolver)
    if remembered is None:
        remembered = _ITEMS[shape.resolver] = {}
    key = (id(shape.root), shape.at)
    if key not in remembered:
        remembered[key] = _find_items(shape)
    return remembered[key]


def _find_items(shape: _Shape) -> str | None:
    assert shape.at is not None
    if _type(shape.root) == "array":
        return ""
    arrays = [name for name, (sub, _) in shape.properties(shape.root, shape.at).items() if _type(sub) == "array"]
    for preferred in ITEM_NAMES:
        if preferred in arrays:
            return preferred
    arrays = [name for name in arrays if name.lower() not in NOT_ITEMS]
    return arrays[0] if len(arrays) == 1 else None


def _item_has_id(shape: _Shape, items: str) -> bool:
    if not items or shape.at is None:
        return False
    array, at = shape.properties(shape.root, shape.at).get(items, (None, shape.at))
    if not isinstance(array, dict):
        return False
    item, item_at = shape.resolve(array.get("items"), at.child("items"))
    return "id" in shape.properties(item, item_at)


def detect(
    op: Operation, args: Sequence[ArgPlan], input_schema: Mapping[str, Any], resolver: Resolver
) -> PagePlan | None:
    """How to ask for the next page of `op`'s result, or None when the spec shows no pagination."""
    props = input_schema.get("properties")
    types = {str(k): _type(v) or "string" for k, v in props.items()} if isinstance(props, dict) else {}
    params: dict[str, str] = {}  # normalized wire name -> argument key (query and body arguments)
    query: list[tuple[str, str, str]] = []
    for arg in args:
        if arg.location in ("query", "body") and types.get(arg.arg) in ("string", "integer", "number", "boolean"):
            params.setdefault(norm(arg.name), arg.arg)
            if arg.location == "query":
                query.append((arg.name, arg.arg, types[arg.arg]))
    if not params:
        return None
    size = next((params[p] for p in SIZE_PARAMS if p in params), None)
    if any(h == "link" for r in op.responses if r.status.startswith("2") for h in r.headers) and query:
        return PagePlan("link", size=size, query=tuple(query))
    shape = _Shape(op, resolver)
    by_name = shape.by_name()
    if query:
        for name in URL_MEMBERS:
            for path, sub in by_name.get(name, []):
                if _type(sub) == "string" and (sub.get("format") in ("uri", "url") or name != "next"):
                    return PagePlan("url", member=path, size=size, query=tuple(query))
    for member, takers in CURSOR_PAIRS:
        for path, sub in by_name.get(member, []):
            if _type(sub) not in ("string", "integer"):
                continue
            taker = next((params[t] for t in takers if t in params), None)
            if taker is not None and not (member in ("offset", "nextoffset") and types.get(taker) != _type(sub)):
                if member in ("offset", "nextoffset") and _type(sub) == "integer":
                    continue  # a numeric offset with a total is the offset kind below
                return PagePlan("cursor", param=taker, member=path, size=size)
    flag = _first(by_name, FLAG_MEMBERS, "boolean")
    items = _items(shape)
    after = next((params[p] for p in AFTER_ID_PARAMS if p in params), None)
    if after is not None and flag is not None and items and _item_has_id(shape, items):
        return PagePlan("after_id", param=after, flag=flag, size=size)
    total = _first(by_name, TOTAL_MEMBERS, "integer")
    pages = _first(by_name, PAGES_MEMBERS, "integer")
    page = next((params[p] for p in PAGE_PARAMS if p in params and types.get(params[p]) == "integer"), None)
    if page is not None and (total or pages or flag) and (size or pages or flag):
        start = _default(props, page, 1)
        return PagePlan("page", param=page, flag=flag, total=total, pages=pages, size=size, start=start)
    offset = next((params[p] for p in OFFSET_PARAMS if p in params and types.get(params[p]) == "integer"), None)
    if offset is not None and (total or flag) and items is not None:
        return PagePlan("offset", param=offset, flag=flag, total=total, size=size, start=_default(props, offset, 0))
    return None


def _first(by_name: Mapping[str, list[tuple[str, Any]]], names: Sequence[str], kind: str) -> str | None:
    for name in names:
        for path, sub in by_name.get(name, []):
            if _type(sub) == kind or (kind == "integer" and _type(sub) == "number"):
                return path
    return None


def _default(props: Any, key: str, fallback: int) -> int:
    schema = props.get(key) if isinstance(props, dict) else None
    value = schema.get("default") if isinstance(schema, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1_000_000 else fallback
