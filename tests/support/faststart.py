"""The official MCP client against a generated package over stdio, once with the fast start (handshake.py) on and
once with it off: what the client sees must not depend on it.

    listed = await same_both_ways(out, "legacy", lambda client: client.list_tools())
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters

T = TypeVar("T")


async def same_both_ways(out: Path, mode: Any, session: Callable[[Client], Awaitable[T]]) -> T:
    """`session`'s result with the fast start on, checked equal to its result with the fast start off; the server
    (the package under `out`, python -m) has an unreachable upstream."""
    (package,) = [p.name for p in (out / "src").iterdir() if (p / "handshake.py").exists()]
    prefix = package.upper()
    seen: list[T] = []
    for fast in ("1", "0"):
        env = {
            "PYTHONPATH": str(out / "src"),
            f"{prefix}_FAST_START": fast,
            f"{prefix}_BASE_URL": "http://127.0.0.1:9",
        }
        params = StdioServerParameters(command=sys.executable, args=["-m", package], env=env)
        with anyio.fail_after(120):
            async with Client(params, mode=mode) as client:
                seen.append(await session(client))
    assert seen[0] == seen[1]
    return seen[0]
