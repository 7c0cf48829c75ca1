"""Generated packages imported in-process and driven with the official MCP client (in-memory transport).

    package = GeneratedPackage(out_dir)            # adds out_dir/src to sys.path, imports <pkg>.server
    result = package.call(upstream.url, "get_pet", {"petId": 1})   # a CallToolResult
    handshake = import_from(out_dir, "petstore.handshake")          # one module; sys.path as it was
    with on_path(out_dir) as name:                                  # a module-scoped fixture's package
        server = importlib.import_module(f"{name}.server")

Each generated package has its own import name, so several can be loaded in one test session. The server
forwards to `base_url` with a real httpx client, so a real local upstream sees the real request.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp.types as types
from mcp import Client


def import_from(out: Path, module: str) -> ModuleType:
    """`module` of the package generated under `out`, with out/src on sys.path during the import only."""
    sys.path.insert(0, str(out / "src"))
    try:
        return importlib.import_module(module)
    finally:
        sys.path.remove(str(out / "src"))


@contextmanager
def on_path(out: Path) -> Iterator[str]:
    """out/src on sys.path during the block, which gets the package's name; the package's modules are forgotten
    after it, so that another package of that name imports afresh."""
    (name,) = [p.name for p in (out / "src").iterdir() if (p / "__init__.py").exists()]
    sys.path.insert(0, str(out / "src"))
    try:
        yield name
    finally:
        sys.path.remove(str(out / "src"))
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]


class GeneratedPackage:
    def __init__(self, out: Path) -> None:
        src = out / "src"
        (package_dir,) = [p for p in src.iterdir() if (p / "__init__.py").exists()]
        self.name = package_dir.name
        if str(src) not in sys.path:
            sys.path.insert(0, str(src))
        self.server = importlib.import_module(f"{self.name}.server")
        self.settings = importlib.import_module(f"{self.name}.settings")
        self.tools: list[dict[str, Any]] = json.loads((package_dir / "tools.json").read_text(encoding="utf-8"))
        self.routes: dict[str, Any] = json.loads((package_dir / "routes.json").read_text(encoding="utf-8"))

    def tool(self, name: str) -> dict[str, Any]:
        return next(t for t in self.tools if t["name"] == name)

    def call(
        self, base_url: str, tool: str, arguments: dict[str, Any], env: dict[str, str] | None = None
    ) -> types.CallToolResult:
        """Call `tool` on a fresh server whose settings come from `env` (full variable names, e.g.
        credentials) plus <PREFIX>_BASE_URL=base_url; the process environment is not read."""
        environ = {f"{self.settings.ENV_PREFIX}_BASE_URL": base_url, **(env or {})}
        app = self.server.build_server(self.settings.Settings.from_env(environ))

        async def run() -> types.CallToolResult:
            async with Client(app, mode="legacy") as client:
                result: types.CallToolResult = await client.call_tool(tool, arguments)
                return result

        return anyio.run(run)

    def list_tools(self) -> list[types.Tool]:
        app = self.server.build_server(self.settings.Settings(base_url="http://127.0.0.1:9"))

        async def run() -> list[types.Tool]:
            async with Client(app, mode="legacy") as client:
                return list((await client.list_tools()).tools)

        return anyio.run(run)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
