#!/usr/bin/env python3
"""http_bench: throughput of a generated server over streamable HTTP (stateless), 1 vs N uvicorn workers.

    python bench/http_bench.py --package github --src /gen/github/src [--workers 1,2] [--json out.json]

Starts the harness's instant-answer upstream (mcp_bench.Upstream) and, for each worker count, the generated
package's app under `uvicorn --factory peers/http_app:app --workers N` on 127.0.0.1 (all at once; an idle
server costs nothing). Then `--rounds` rounds, servers interleaved in each round: `--concurrency` clients
each keep one `tools/call` POST in flight for `--seconds`/`--rounds` seconds. The requests are prebuilt
JSON-RPC bodies sent with one keep-alive httpx client (no initialize: stateless servers take calls
directly). A call counts only if the answer is a JSON-RPC result that is not a tool error. Everything is
bounded: start-up 60 s per server, each request 30 s, the whole run --max-total seconds.
Deps: httpx, psutil, uvicorn, and the generated package's own (mcp, httpx, sniffio).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mcp_bench  # noqa: E402  (the harness: Upstream, tree_cpu, tree_memory, process-group cleanup)

PROTOCOL_VERSION = "2025-06-18"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    def __init__(self, workers: int, a: argparse.Namespace, base_url: str, logs: Path) -> None:
        self.workers = workers
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = os.pathsep.join([str(HERE / "peers"), a.src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["BENCH_PACKAGE"] = a.package
        env[a.package.upper() + "_BASE_URL"] = base_url
        # dummy values for the package's credential variables, so secured operations reach the upstream
        settings = (Path(a.src) / a.package / "settings.py").read_text(encoding="utf-8")
        block = settings.split("CREDENTIAL_VARIABLES", 1)[1].split(")", 1)[0] if "CREDENTIAL_VARIABLES" in settings else ""
        env.update({name: "bench-credential" for name in re.findall(r'"([A-Z0-9_]+)"', block)})
        argv = [a.python, "-m", "uvicorn", "--factory", "http_app:app", "--host", "127.0.0.1",
                "--port", str(self.port), "--workers", str(workers), "--log-level", "warning", "--no-access-log"]
        self.err = open(logs / f"http-{workers}w.stderr.log", "ab")
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
                                     start_new_session=True)
        mcp_bench._LIVE_PGIDS.add(self.proc.pid)
        self.calls = self.errors = 0
        self.seconds = self.cpu = 0.0
        self.error_sample: str | None = None

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        mcp_bench._LIVE_PGIDS.discard(self.proc.pid)
        self.err.close()


def body(tool: str, args: dict[str, Any], i: int) -> bytes:
    msg = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": args}}
    return json.dumps(msg).encode()


def ok(text: str) -> tuple[bool, str]:
    """The JSON-RPC answer from a JSON or SSE body: (a result that is not a tool error, a short reason)."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("data:"):
            line = line[5:].strip()
        if line.startswith("{"):
            msg = json.loads(line)
            if "result" in msg:
                return not msg["result"].get("isError", False), json.dumps(msg["result"])[:200]
            return False, json.dumps(msg.get("error"))[:200]
    return False, text[:200]


async def wait_ready(hc: Any, srv: HttpServer, tool: str, args: dict[str, Any], timeout: float) -> None:
    end = time.monotonic() + timeout
    last = ""
    while time.monotonic() < end:
        if srv.proc.poll() is not None:
            raise RuntimeError(f"{srv.workers}-worker server exited with {srv.proc.returncode}")
        with contextlib.suppress(Exception):
            r = await hc.post(srv.url, content=body(tool, args, 0))
            good, last = ok(r.text)
            if good:
                return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"{srv.workers}-worker server not answering tools/call within {timeout:.0f}s: {last}")


async def run(a: argparse.Namespace, upstream_url: str, servers: list[HttpServer]) -> None:
    import httpx

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "mcp-protocol-version": PROTOCOL_VERSION}
    limits = httpx.Limits(max_connections=a.concurrency * 2, max_keepalive_connections=a.concurrency * 2)
    args = json.loads(a.args)
    async with httpx.AsyncClient(headers=headers, timeout=30, limits=limits) as hc:
        for srv in servers:
            await wait_ready(hc, srv, a.tool, args, 60)
            for i in range(a.warmup):  # warm each worker's connection pool and code paths
                await hc.post(srv.url, content=body(a.tool, args, i))
        deadline = time.monotonic() + a.max_total
        per = a.seconds / a.rounds
        for rnd in range(a.rounds):
            order = servers if rnd % 2 == 0 else servers[::-1]
            for srv in order:
                if time.monotonic() > deadline:
                    return
                stop_at = time.monotonic() + per
                counter = iter(range(1, 1 << 62))
                cpu0 = mcp_bench.tree_cpu(srv.proc.pid)

                async def worker(srv: HttpServer = srv, stop_at: float = stop_at, counter: Any = counter) -> None:
                    while time.monotonic() < stop_at and srv.calls + srv.errors < a.max_calls:
                        try:
                            r = await hc.post(srv.url, content=body(a.tool, args, next(counter)))
                            good, why = ok(r.text)
                        except Exception as e:  # noqa: BLE001
                            good, why = False, f"{type(e).__name__}: {e}"
                        if good:
                            srv.calls += 1
                        else:
                            srv.errors += 1
                            srv.error_sample = srv.error_sample or why

                t0 = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(a.concurrency)))
                srv.seconds += time.perf_counter() - t0
                srv.cpu += mcp_bench.tree_cpu(srv.proc.pid) - cpu0
            print(f"[http_bench] round {rnd + 1}/{a.rounds}: "
                  + ", ".join(f"{s.workers}w {s.calls / max(s.seconds, 1e-9):.0f}/s" for s in servers),
                  file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", required=True, help="import package of the generated server")
    ap.add_argument("--src", required=True, help="folder that holds the package (its src/)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with mcp, httpx, uvicorn (default: this)")
    ap.add_argument("--tool", default="", help="tool to call (default: first tool without required arguments)")
    ap.add_argument("--args", default="{}", help="its arguments, a JSON object")
    ap.add_argument("--workers", default="1,2", help="worker counts to compare (default 1,2)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0, help="total load time per server (default 10)")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds (default 4)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--max-calls", type=int, default=100_000)
    ap.add_argument("--max-total", type=float, default=600.0)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--logs", default=None, help="folder for server stderr (default: a temp folder)")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, mcp_bench._on_signal)
    signal.signal(signal.SIGINT, mcp_bench._on_signal)
    if not a.tool:
        tools = json.loads((Path(a.src) / a.package / "tools.json").read_text(encoding="utf-8"))
        a.tool = next(t["name"] for t in tools if not t["inputSchema"].get("required"))
    logs = Path(a.logs) if a.logs else Path(mcp_bench.tempfile.mkdtemp(prefix="http-bench-"))
    logs.mkdir(parents=True, exist_ok=True)
    up = mcp_bench.Upstream(mcp_bench.DEFAULT_BODY, a.max_total + 120)
    up.start()
    servers: list[HttpServer] = []
    result: dict[str, Any] = {"package": a.package, "tool": a.tool, "args": json.loads(a.args),
                              "concurrency": a.concurrency, "cpus": os.cpu_count(),
                              "loadavg_start": [round(x, 2) for x in os.getloadavg()], "servers": []}
    try:
        servers = [HttpServer(int(w), a, up.base_url, logs) for w in a.workers.split(",")]
        asyncio.run(run(a, up.base_url, servers))
        for s in servers:
            result["servers"].append({
                "workers": s.workers, "calls": s.calls, "errors": s.errors, "error_sample": s.error_sample,
                "seconds": round(s.seconds, 2), "calls_per_s": round(s.calls / s.seconds, 1) if s.seconds else None,
                "server_cpu_us_per_call": round(s.cpu / s.calls * 1e6, 1) if s.calls else None,
                "memory": mcp_bench.tree_memory(s.proc.pid)})
    except Exception as e:  # noqa: BLE001
        result["failed"] = f"{type(e).__name__}: {e}"
    finally:
        for s in servers:
            s.stop()
        up.stop()
        mcp_bench._kill_all_children()
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    rates = [s.get("calls_per_s") for s in result["servers"]]
    if len(rates) >= 2 and rates[0] and rates[-1]:
        result["scaling"] = round(rates[-1] / rates[0], 2)
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 1 if result.get("failed") or any(s["errors"] for s in result["servers"]) else 0


if __name__ == "__main__":
    sys.exit(main())
