"""Work started ahead: as soon as a large API's tools are final, a helper process (forked.py) makes one large text
the package needs while this process serializes and counts their listing and renders the other files:

- search.json, the discovery surface's search index, for an API certain to get that surface;
- handshake.jsonl, the pre-serialized handshake, for one generated with `--surface tools`.

The file is waited for when it is written (render writes it after the files that do not need it). What the helper
does not deliver, or made for other tools, is made here then: the output is the same either way.

For the search index the helper starts earlier, once the tools are mapped and the spec freed (`warm`): it imports
what building the index needs (numpy, bm25s, the stemmer) while this process fits the listing, then waits for what
the index reads of the final tools (search_index.index_rows: plain data, quick to send), sent when they are known.
"""

from __future__ import annotations

from collections.abc import Callable

from . import forked
from .emit.files import Deferred
from .emit.render import Project, tools_handshake
from .spec.model import Api
from .surface.discovery import SurfaceName, certainly_discovery, search_text
from .surface.search_index import Row, index_parts, index_rows
from .surface.plans import ToolSpec

HELPER_TOOLS = 200  # tools: below this everything is made here (a helper would not pay for its start)


class Ahead:
    """The helper (at most one) and what it was started for; always `end` it (or use it in a `with`)."""

    def __init__(self, requested: SurfaceName, cap: int | None, project: Callable[[Api], Project]) -> None:
        self._requested = requested
        self._cap = cap
        self._project = project  # the generated package's names, from the API (pipeline.project_for)
        self._kind = ""
        self._tools: list[ToolSpec] = []
        self._helper: forked.Helper[str] | None = None

    def warm(self, count: int) -> None:
        """Given the number of tools mapped: for an API certain to get the discovery surface, the index's helper
        starts now and gets ready (`start` gives it the final tools' rows)."""
        if count < HELPER_TOOLS or self._helper is not None:
            return
        if certainly_discovery(self._requested, count, self._cap) and forked.available():
            self._kind, self._helper = "waiting", forked.Waiting(_ready_to_index, self._index)

    @staticmethod
    def _index(rows: list[Row]) -> str:
        return search_text(index_parts(rows))

    def start(self, api: Api, tools: list[ToolSpec]) -> None:
        """Given the final tools (listing.fitted_listing's `ready`): a helper starts on what the package will need."""
        discovery = len(tools) >= HELPER_TOOLS and certainly_discovery(self._requested, len(tools), self._cap)
        if discovery and isinstance(self._helper, forked.Waiting) and self._helper.give(index_rows(tools)):
            self._kind, self._tools = "search", tools
            return
        self.end()  # a helper warmed for these tools that could not take them
        if len(tools) < HELPER_TOOLS:
            return
        if discovery:
            kind, work = "search", lambda: search_text(tools)
        elif self._requested == "tools":
            project = self._project(api)
            kind, work = "handshake", lambda: tools_handshake(tools, project, api)
        else:
            return
        if forked.available():
            self._kind, self._tools = kind, tools
            self._helper = forked.Helper(work)

    def search_json(self, tools: list[ToolSpec]) -> Deferred:
        """search.json's content (without its newline) for `tools`."""
        return Deferred(lambda: self._made("search", tools) or search_text(tools))

    def handshake_jsonl(self, tools: list[ToolSpec], project: Project, api: Api) -> Deferred | None:
        """handshake.jsonl's content for `tools` on the tools surface; None when no helper is making it (render makes
        it then, as for any package)."""
        if self._kind != "handshake":
            return None
        return Deferred(lambda: self._made("handshake", tools) or tools_handshake(tools, project, api))

    def _made(self, kind: str, tools: list[ToolSpec]) -> str | None:
        """The helper's text, when it made `kind` for these very tools."""
        if self._kind != kind or self._helper is None:
            return None
        helper, self._helper = self._helper, None
        found = helper.result()
        same = len(tools) == len(self._tools) and all(a is b for a, b in zip(tools, self._tools))
        return found if isinstance(found, str) and same else None

    def end(self) -> None:
        """Stop a helper whose text was not needed (or generation failed)."""
        if self._helper is not None:
            self._helper.end()
            self._helper = None
        self._kind = ""

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *_: object) -> None:
        self.end()


def _ready_to_index() -> None:
    """What building the search index imports, imported ahead (in the index's helper, while it waits)."""
    from .surface.search_analyzer import Analyzer
    from .surface.search_weights import load_libraries

    Analyzer()
    load_libraries()
