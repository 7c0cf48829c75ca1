"""FastMCP's own tool search on the same tasks: run with the FastMCP venv (bench/peers/setup-fastmcp.sh).

Builds FastMCP's server for a spec (FastMCP.from_openapi, its defaults), adds its BM25SearchTransform
(max_results 5, its default) and asks its `search_tools` tool each task through FastMCP's in-process client, as
an agent would. Reads {"spec": PATH, "tasks": {SET: [TEXT, ...]}} as JSON on stdin; writes
{"tools": N, "found": {SET: [["METHOD /path", ...] per task]}} as JSON on stdout. bench/selection/evaluate.py
runs it and scores the answers as it scores ours.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))

from fastmcp_server import load_spec  # noqa: E402  (bench/peers: the same spec reading as the served peer)


async def main() -> None:
    request = json.load(sys.stdin)
    import httpx2
    from fastmcp import Client, FastMCP
    from fastmcp.server.transforms.search.bm25 import BM25SearchTransform

    client = httpx2.AsyncClient(base_url="http://127.0.0.1:9")  # never called: only searched
    server = FastMCP.from_openapi(openapi_spec=load_spec(request["spec"]), client=client, name="bench")
    tools = list(await server.list_tools())
    routes = {tool.name: f"{tool._route.method.upper()} {tool._route.path}" for tool in tools}
    server.add_transform(BM25SearchTransform(max_results=5))
    found: dict[str, list[list[str]]] = {}
    async with Client(server) as mcp:
        for name, texts in request["tasks"].items():
            found[name] = []
            for text in texts:
                result = await mcp.call_tool("search_tools", {"query": text})
                data = result.structured_content or {}
                listed = data.get("result", data) if isinstance(data, dict) else data
                names = [t["name"] for t in listed] if isinstance(listed, list) else []
                found[name].append([routes.get(n, n) for n in names])
    json.dump({"tools": len(tools), "found": found}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
