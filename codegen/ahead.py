"""Work started ahead: a helper process (forked.py) makes one large text the package needs while this process
serializes and counts a large API's listing and renders the other files:

- search.json, the discovery surface's search index, for an API certain to get that surface;
- handshake.jsonl, the pre-serialized handshake, for one generated with `--surface tools`.

The file is waited for when it is written (render writes it after the files that do not need it). What the helper
does not deliver is made here then: the output is the same either way.

The search index reads the tools as they are mapped, before the listing is fitted (which writes definitions in
place and drops the result-shaping arguments' descriptions, only where a listing is too large): its helper starts
then (`warm`), while this process fits the listing. The handshake is the final listing's: its helper starts once
the listing is fitted (`start`).
"""

from __future__ import annotations

from collections.abc import Callable

from . import forked
from .emit.files import Deferred
from .emit.render import Project, tools_handshake
from .spec.model import Api
from .surface.discovery import SurfaceName, certainly_discovery, prepare_index, search_text
from .surface.plans import ToolSpec

HELPER_TOOLS = 200  # tools: below this everything is made here (a helper would not pay for its start)


class Ahead:
    """The helper (at most one) and what it was started for; always `end` it (or use it in a `with`)."""

    def __init__(self, requested: SurfaceName, cap: int | None, project: Callable[[Api], Project]) -> None:
        self._requested = requested
        self._cap = cap
        self._project = project  # the generated package's names, from the API (pipeline.project_for)
        self._kind = ""
        self._tools: list[ToolSpec] = []  # the tools the helper works on
        self._indexed: list[ToolSpec] | None = None  # the tools as the search index reads them (`warm`)
        self._helper: forked.Helper[str] | None = None

    def warm(self, tools: list[ToolSpec]) -> None:
        """Given the tools as mapped, before the listing is fitted: they are kept for the search index (unless the
        package serves its tools only), and for a large API certain to get the discovery surface, the index's helper
        starts on them now."""
        if self._requested == "tools":
            return
        self._indexed = tools
        if len(tools) >= HELPER_TOOLS and certainly_discovery(self._requested, len(tools), self._cap):
            self._begin("search", tools, lambda: search_text(tools))

    def prepare(self, tools: int) -> None:
        """Given the number of tools about to be mapped, while this process waits for a helper mapping some: what
        the search index's helper would load first (its libraries), loaded here before it is forked, for a large API
        certain to get the discovery surface."""
        if (
            self._requested != "tools"
            and tools >= HELPER_TOOLS
            and certainly_discovery(self._requested, tools, self._cap)
        ):
            prepare_index()

    def start(self, api: Api, tools: list[ToolSpec]) -> None:
        """Given the final tools (listing.fitted_listing's `ready`): a helper starts on what the package will need,
        unless one started on the search index already (`warm`, when no CPU was idle then)."""
        if self._helper is not None or len(tools) < HELPER_TOOLS:
            return
        indexed = self._indexed
        if indexed is not None and certainly_discovery(self._requested, len(tools), self._cap):
            self._begin("search", indexed, lambda: search_text(indexed))
        elif self._requested == "tools":
            project = self._project(api)
            self._begin("handshake", tools, lambda: tools_handshake(tools, project, api))

    def _begin(self, kind: str, tools: list[ToolSpec], work: Callable[[], str]) -> None:
        if forked.available():
            self._kind, self._tools = kind, tools
            self._helper = forked.Helper(work)

    def search_json(self) -> Deferred:
        """search.json's content (without its newline): the index of the tools `warm` was given."""
        indexed = self._indexed
        if indexed is None:
            raise ValueError("the search index reads the tools as mapped (Ahead.warm)")
        return Deferred(lambda: self._made("search", indexed) or search_text(indexed))

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
