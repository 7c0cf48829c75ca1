"""What tools/list costs a model, per surface, for GitHub, Stripe, Asana and Slack (cl100k tokens: a listing's tools
array as compact JSON with sorted keys, the figure mcp-codegen prints; the discovery listing and search answers as
the official client receives them), with FastMCP's listing of the same spec beside it, counted the same way, when
its venv is set up (peers/setup-fastmcp.sh).

For each spec: the `tools` surface (every operation a tool), the `discovery` surface (four tools), what
`auto` picks, and search answers: the spec's benchmark tasks (bench/selection/) sent as search_tools queries
with the default limit (8) to the generated package, in-process through the official MCP client.

    .venv/bin/python bench/tokens.py [--spec github ...] [--no-fastmcp] [--out bench/results/tokens] [--readme]
    .venv/bin/python bench/tokens.py --from-json bench/results/tokens.json   # only rewrite bench/README's table
    .venv/bin/python bench/tokens.py --spec stripe --fastmcp-timeout 1800 --out bench/results/tokens --merge --readme
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "selection"))

from codegen.config import Config  # noqa: E402
from codegen.pipeline import analyze, generate  # noqa: E402
from codegen.surface.discovery import choose  # noqa: E402
from codegen.surface.tokens import count_tokens, wire  # noqa: E402
from codegen.emit.write import write  # noqa: E402
from evaluate import load_tasks, rewrite, spec_paths  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

SPECS = ("github", "stripe", "asana", "slack")
TOOLS_DIR = Path(os.environ.get("MCP_CODEGEN_TOOLS", Path.home() / ".cache" / "mcp-codegen-tools"))
FASTMCP_PYTHON = TOOLS_DIR / "fastmcp-venv" / "bin" / "python"
FASTMCP_TIMEOUT = 600  # seconds for FastMCP to start and list (it builds its tools from the spec at start-up)


def array_tokens(tools: list[dict[str, Any]]) -> int:
    """A listing's tokens as mcp-codegen counts and prints them for the tools surface: its tools array as compact
    JSON with sorted keys (tools.json's text), for our tools and FastMCP's alike."""
    return count_tokens(json.dumps(tools, ensure_ascii=False, sort_keys=True, separators=(",", ":")))


def dumped(result: Any) -> str:
    return wire(result.model_dump(by_alias=True, mode="json", exclude_none=True))


async def search_answers(spec: str, name: str, folder: Path) -> dict[str, Any]:
    """Generate the discovery package, then ask it each benchmark task: tokens of the answers."""
    package = f"tok_{name}"
    result = generate(Config(spec=spec, output=folder / package, surface="discovery", validate=False))
    assert write(folder / package, result.files, force=False) == []
    sys.path.insert(0, str(folder / package / "src"))
    try:
        server = importlib.import_module(f"{package}.server")
        async with Client(server.build_server(), mode="legacy") as client:
            listing = dumped(await client.list_tools())
            sizes = []
            for task in load_tasks(name):
                answer = await client.call_tool("search_tools", {"query": task.text})
                sizes.append(count_tokens(dumped(answer)))
    finally:
        sys.path.remove(str(folder / package / "src"))
    return {"listing": count_tokens(listing), "search_max": max(sizes), "search_median": statistics.median(sizes)}


async def fastmcp_listing(spec: str, timeout: float = FASTMCP_TIMEOUT) -> dict[str, Any] | None:
    if not FASTMCP_PYTHON.is_file():
        return None
    params = StdioServerParameters(
        command=str(FASTMCP_PYTHON),
        args=[str(ROOT / "bench" / "peers" / "fastmcp_server.py"), "--spec", spec, "--base-url", "http://127.0.0.1:9"],
    )
    with anyio.move_on_after(timeout) as scope:
        async with Client(params, mode="legacy") as client:
            tools: list[Any] = []
            cursor = None
            for _ in range(1000):  # pages
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
                if (cursor := page.next_cursor) is None:
                    break
    if scope.cancelled_caught:
        return {"error": f"no complete tools/list within {timeout:g} s"}
    return {"tools": len(tools), "tokens": array_tokens(tools)}


def measure(name: str, spec: str, fastmcp: bool, timeout: float = FASTMCP_TIMEOUT) -> dict[str, Any]:
    started = time.perf_counter()
    _, tools, _ = analyze(Config(spec=spec, validate=False))
    full = array_tokens([tool.to_json() for tool in tools])  # what mcp-codegen prints for the tools surface
    auto, _ = choose(tools, "auto", (), name)
    discovery, _ = choose(tools, "discovery", (), name)
    with tempfile.TemporaryDirectory() as folder:
        served = anyio.run(search_answers, spec, name, Path(folder))
    row: dict[str, Any] = {
        "spec": name,
        "operations": len(tools),
        "tools_tokens": full,
        "discovery_tools": discovery.listed,
        "discovery_tokens": discovery.tokens,
        "served_listing_tokens": served["listing"],
        "auto": auto.name,
        "search8_max": served["search_max"],
        "search8_median": served["search_median"],
    }
    if fastmcp:
        peer = anyio.run(fastmcp_listing, spec, timeout)
        row["fastmcp"] = peer
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| spec | operations | `tools` surface | `discovery` surface (4 tools) | auto | search answer, limit 8 (median / max of the tasks) | FastMCP tools/list |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        peer = r.get("fastmcp")
        fast = "not set up" if not peer else peer.get("error") or f"{peer['tokens']:,} ({peer['tools']} tools)"
        lines.append(
            f"| {r['spec']} | {r['operations']:,} | {r['tools_tokens']:,} | {r['discovery_tokens']:,} | {r['auto']} "
            f"| {r['search8_median']:,.0f} / {r['search8_max']:,} | {fast} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", action="append", choices=SPECS)
    parser.add_argument("--no-fastmcp", action="store_true", help="skip FastMCP even when its venv is there")
    parser.add_argument("--fastmcp-timeout", type=float, default=FASTMCP_TIMEOUT, help="seconds for its tools/list")
    parser.add_argument("--merge", action="store_true", help="with --out: replace only the measured specs' rows")
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    parser.add_argument("--readme", action="store_true", help="also rewrite the table in bench/README.md")
    parser.add_argument("--from-json", type=Path, help="no measuring: the rows of an earlier --out's JSON")
    args = parser.parse_args(argv)
    if args.from_json:
        rows = json.loads(args.from_json.read_text(encoding="utf-8"))
        rewrite(ROOT / "bench" / "README.md", "tokens:table", table(rows))
        return 0
    paths = spec_paths()
    rows = [measure(name, paths[name], not args.no_fastmcp, args.fastmcp_timeout) for name in args.spec or SPECS]
    if args.merge and args.out and args.out.with_suffix(".json").is_file():
        new = {row["spec"]: row for row in rows}
        earlier = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        rows = [new.pop(row["spec"], row) for row in earlier] + list(new.values())
    text = table(rows)
    print(text)
    if args.out:
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        args.out.with_suffix(".md").write_text(text, encoding="utf-8")
    if args.readme:
        rewrite(ROOT / "bench" / "README.md", "tokens:table", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
