"""What this server is and serves: its name and version, tools.json as it is listed, routes.json (the request
plans) read on first use."""

from __future__ import annotations

from typing import Any

from .auth import Security
from .datafiles import read
from .paging import Shaping
from .plans import Route

NAME = "petstore"
VERSION = "1.0.0"


def load_tools() -> list[dict[str, Any]]:
    """The tools exactly as tools/list sends them. They are served as parsed: the SDK validates the
    tools/list result against the client's protocol version anyway, so building `types.Tool` models
    first would only validate and serialize the same data twice."""
    tools: list[dict[str, Any]] = read("tools.json")
    return tools


class Routes:
    """The request plans (routes.json), read at the first call and built per tool on its first use:
    start-up and tools/list do not need them."""

    def __init__(self) -> None:
        self._raw: dict[str, Any] | None = None
        self._built: dict[str, Route] = {}
        self._shaping: dict[str, Shaping] = {}

    def _load(self) -> dict[str, Any]:
        if self._raw is None:
            self._raw = read("routes.json")
        return self._raw

    def security(self, name: str) -> Security:
        """The tool's security requirements: alternatives of schemes -> scopes ([]: none)."""
        raw = self._load().get(name)
        return (raw.get("security") or []) if raw else []

    def names(self) -> list[str]:
        return list(self._load())

    def shaping(self, name: str) -> Shaping:
        """How the tool's JSON results are shaped (next pages, projection, budget)."""
        shaping = self._shaping.get(name)
        if shaping is None:
            raw = self._load().get(name)
            shaping = Shaping.from_json(raw.get("results") if raw else None)
            if raw is not None:
                self._shaping[name] = shaping
        return shaping

    def get(self, name: str) -> Route | None:
        route = self._built.get(name)
        if route is None:
            raw = self._load().get(name)
            if raw is None:
                return None
            route = self._built[name] = Route.from_json(raw)
        return route


def load_routes() -> Routes:
    return Routes()
