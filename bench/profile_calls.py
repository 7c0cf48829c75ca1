#!/usr/bin/env python3
"""Per-call cost of generated servers, A/B: sequential tools/call over raw stdio JSON-RPC, servers interleaved.

    python bench/profile_calls.py --package-src A=/tmp/a/src --package-src B=/tmp/b/src \
        [--tool meta_root] [--calls 400] [--rounds 6] [--profile B=/tmp/b.prof] [--protocol 2026-07-28]

Each server is started once (the bench venv's interpreter by default), its `initialize` handshake done, then
`--rounds` rounds each make `--calls` sequential calls per server, servers alternating. Per server it prints the
median over rounds of: server CPU µs/call (user+system of its process tree, from /proc) and p50 / p90 call
latency in µs. `--profile NAME=FILE` runs that server under cProfile (numbers then include the profiler; use them
to attribute time, not to compare). `--protocol 2026-07-28` skips the handshake and sends the version per
request (the stateless era). The upstream is the harness's instant local one (bench/bench_upstream.py). Everything binds
127.0.0.1; every wait has a deadline; servers are killed on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tools")]

from harness import tree_cpu  # noqa: E402
from bench_upstream import Upstream  # noqa: E402
from server_env import server_environment  # noqa: E402

PYTHON = os.path.expanduser("~/.cache/mcp-codegen-tools/bench-venv/bin/python")


class Client:
    def __init__(self, name: str, proc: asyncio.subprocess.Process, protocol: str) -> None:
        self.name, self.proc, self.protocol = name, proc, protocol
        self.next_id = 0
        self.cpu: list[float] = []
        self.p50: list[float] = []
        self.p90: list[float] = []

    async def request(self, method: str, params: dict[str, Any]) -> bytes:
        assert self.proc.stdin and self.proc.stdout
        self.next_id += 1
        if self.protocol != "2025-11-25":
            params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": self.protocol}}
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), 30)
            if not line:
                raise RuntimeError(f"{self.name}: the server closed stdout")
            if f'"id":{self.next_id},'.encode() in line or f'"id":{self.next_id}}}'.encode() in line:
                return line


async def start(name: str, src: str, upstream: str, python: str, profile: str | None, protocol: str) -> Client:
    package = next(p.name for p in sorted(Path(src).iterdir()) if (p / "__main__.py").is_file())
    env = {
        **os.environ,
        "PYTHONPATH": src,
        **server_environment(Path(src), package, upstream, python=python, dummy="bench"),
    }
    argv = [python, *(["-m", "cProfile", "-o", profile] if profile else []), "-m", package]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None if os.environ.get("PROFILE_CALLS_STDERR") else asyncio.subprocess.DEVNULL,
        env=env,
        limit=1 << 30,
    )
    client = Client(name, proc, protocol)
    if protocol == "2025-11-25":
        info = {"name": "profile_calls", "version": "1"}
        await client.request("initialize", {"protocolVersion": protocol, "capabilities": {}, "clientInfo": info})
        assert proc.stdin
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return client


async def measure(client: Client, tool: str, args: dict[str, Any], calls: int) -> None:
    params = {"name": tool, "arguments": args}
    times: list[float] = []
    cpu0 = tree_cpu(client.proc.pid)
    for _ in range(calls):
        started = time.perf_counter()
        line = await client.request("tools/call", params)
        times.append(time.perf_counter() - started)
        if b'"isError":true' in line or b'"error":' in line:
            raise RuntimeError(f"{client.name}: {line[:300]!r}")
    client.cpu.append((tree_cpu(client.proc.pid) - cpu0) / calls * 1e6)
    times.sort()
    client.p50.append(times[len(times) // 2] * 1e6)
    client.p90.append(times[len(times) * 9 // 10] * 1e6)


async def run(a: argparse.Namespace) -> None:
    up = Upstream('{"id":1,"name":"bench","status":"ok"}', 3600)
    up.start()
    profiles = dict(p.split("=", 1) for p in a.profile)
    clients: list[Client] = []
    try:
        for spec in a.package_src:
            name, _, src = spec.partition("=")
            clients.append(await start(name, src, up.base_url, a.python, profiles.get(name), a.protocol))
        args = json.loads(a.args)
        for client in clients:
            await measure(client, a.tool, args, a.warmup)
            client.cpu.clear(), client.p50.clear(), client.p90.clear()
        for _ in range(a.rounds):
            for client in clients:
                await measure(client, a.tool, args, a.calls)
        for c in clients:
            print(
                f"{c.name}: server CPU µs/call median {statistics.median(c.cpu):.0f} "
                f"(rounds {', '.join(f'{x:.0f}' for x in c.cpu)}); p50 µs {statistics.median(c.p50):.0f}; "
                f"p90 µs {statistics.median(c.p90):.0f}"
            )
    finally:
        for c in clients:
            if c.proc.stdin:
                c.proc.stdin.close()
            try:
                await asyncio.wait_for(c.proc.wait(), 20)
            except asyncio.TimeoutError:
                c.proc.kill()
                await c.proc.wait()
        up.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package-src", action="append", required=True, metavar="NAME=SRC")
    ap.add_argument("--tool", default="meta_root")
    ap.add_argument("--args", default="{}")
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--protocol", default="2025-11-25")
    ap.add_argument("--profile", action="append", default=[], metavar="NAME=FILE")
    ap.add_argument("--python", default=PYTHON if os.path.exists(PYTHON) else sys.executable)
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
