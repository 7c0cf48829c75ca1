"""A load generator that is not the limit: raw JSON-RPC over the server's stdio pipes, in its own process.

    python bench/loadgen.py --tool NAME --args '{}' --seconds 5 --rounds 5 --concurrency 16 -- CMD ARG...

Starts CMD, performs the `initialize` handshake, then keeps `--concurrency` `tools/call` requests in flight for
`--seconds` (split in `--rounds` equal rounds), writing requests and matching answers by id without parsing
them with any SDK. Prints one JSON object: calls/s per round (min/median/max), errors, and the CPU time per
call of the load generator itself and of the server's process tree, which shows which side is the limit.
Bounded: every wait has a deadline; the server is killed on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time
from typing import Any

from harness import tree_cpu  # the same count as every other CPU figure of the bench


async def run(a: argparse.Namespace) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        *a.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 30,
    )
    assert proc.stdin and proc.stdout
    pending: dict[int, asyncio.Future[bytes]] = {}

    async def reader() -> None:
        assert proc.stdout
        while line := await proc.stdout.readline():
            start = line.find(b'"id":')
            if start < 0:
                continue
            end = start + 5
            while end < len(line) and line[end : end + 1].isdigit():
                end += 1
            future = pending.pop(int(line[start + 5 : end]), None) if end > start + 5 else None
            if future is not None and not future.done():
                future.set_result(line)

    read_task = asyncio.ensure_future(reader())
    next_id = 0

    async def request(method: str, params: dict[str, Any]) -> bytes:
        nonlocal next_id
        next_id += 1
        future = asyncio.get_running_loop().create_future()
        pending[next_id] = future
        assert proc.stdin
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}).encode() + b"\n"
        )
        return await asyncio.wait_for(future, a.timeout)

    try:
        client = {"name": "loadgen", "version": "1"}
        await request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client})
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        params = {"name": a.tool, "arguments": json.loads(a.args)}
        for _ in range(a.warmup):
            await request("tools/call", params)
        rates: list[float] = []
        calls = errors = 0
        seconds = 0.0
        own0, server0 = resource.getrusage(resource.RUSAGE_SELF), tree_cpu(proc.pid)
        for _ in range(a.rounds):
            deadline = time.perf_counter() + a.seconds / a.rounds
            done = bad = 0

            async def worker() -> None:
                nonlocal done, bad
                while time.perf_counter() < deadline:
                    line = await request("tools/call", params)
                    done += 1
                    bad += b'"isError":true' in line or b'"error":' in line

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(a.concurrency)))
            elapsed = time.perf_counter() - started
            rates.append(done / elapsed)
            calls, errors, seconds = calls + done, errors + bad, seconds + elapsed
        own1, server1 = resource.getrusage(resource.RUSAGE_SELF), tree_cpu(proc.pid)
        own = (own1.ru_utime + own1.ru_stime) - (own0.ru_utime + own0.ru_stime)
        return {
            "concurrency": a.concurrency,
            "calls": calls,
            "errors": errors,
            "seconds": round(seconds, 2),
            "calls_per_s": {
                "median": round(statistics.median(rates), 1),
                "min": round(min(rates), 1),
                "max": round(max(rates), 1),
                "n": len(rates),
            },
            "loadgen_cpu_us_per_call": round(own / max(1, calls) * 1e6, 1),
            "server_cpu_us_per_call": round((server1 - server0) / max(1, calls) * 1e6, 1),
        }
    finally:
        read_task.cancel()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--args", default="{}", help="the tool's arguments, a JSON object")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds for one answer")
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(run(a), a.seconds + 30 + a.timeout * 2))
    except (asyncio.TimeoutError, OSError, ValueError) as exc:
        result = {"failed": repr(exc)}
    print(json.dumps(result))
    return 0 if "failed" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
