#!/usr/bin/env python3
"""http_bench: throughput of a generated server over streamable HTTP (stateless), 1 vs N uvicorn workers.

    python bench/http_bench.py --package github --src /gen/github/src [--workers 1,2] [--json out.json]

Starts the harness's instant-answer upstream (bench_upstream.Upstream) and, for each worker count, the generated
package's app under `uvicorn --factory peers/http_app:app --workers N` on 127.0.0.1 (all at once; an idle
server costs nothing). Then `--rounds` rounds, servers interleaved in each round: `--concurrency` clients
each keep one `tools/call` POST in flight for `--seconds`/`--rounds` seconds. The requests are prebuilt
JSON-RPC requests written on keep-alive connections by a minimal HTTP/1.1 client (no initialize: stateless
servers take calls directly; the client is lean because it shares the CPUs with the servers). A call counts only if the answer is a JSON-RPC result that is not a tool error. Everything is
bounded: start-up 60 s per server, each request 30 s, the whole run --max-total seconds.
Deps: httpx, psutil, uvicorn, and the generated package's own (mcp, httpx, sniffio).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402  (tree_cpu, tree_memory, process-group cleanup)
from bench_upstream import DEFAULT_BODY, Upstream  # noqa: E402

sys.path.insert(0, str(HERE.parent / "tools"))
from server_env import server_environment  # noqa: E402

PROTOCOL_VERSION = "2025-06-18"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    """`workers` processes serving the generated app. `--balance uvicorn`: one `uvicorn --workers N` (the kernel
    hands each new connection to whichever worker accepts first, so long-lived keep-alive connections can pile up on
    one worker); `--balance ports` (default): N single-worker processes on N ports, connections spread round-robin
    by the load generator, which is what a load balancer in front of a stateless deployment does."""

    def __init__(self, workers: int, a: argparse.Namespace, base_url: str, logs: Path) -> None:
        self.workers = workers
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = os.pathsep.join([str(HERE / "peers"), a.src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["BENCH_PACKAGE"] = a.package
        # base URL, and dummy values for the package's credential variables so secured operations reach the upstream
        env.update(server_environment(Path(a.src), a.package, base_url, python=a.python, dummy="bench-credential"))
        separate = a.balance == "ports"
        self.ports = [free_port() for _ in range(workers if separate else 1)]
        self.url = f"http://127.0.0.1:{self.ports[0]}/mcp"
        self.err = open(logs / f"http-{workers}w.stderr.log", "ab")
        self.procs: list[subprocess.Popen[bytes]] = []
        for port in self.ports:
            argv = [
                a.python,
                "-m",
                "uvicorn",
                "--factory",
                "http_app:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(1 if separate else workers),
                "--log-level",
                "warning",
                "--no-access-log",
            ]
            proc = subprocess.Popen(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err, start_new_session=True
            )
            harness.LIVE_PGIDS.add(proc.pid)
            self.procs.append(proc)
        self.calls = self.errors = 0
        self.seconds = self.cpu = self.client_cpu = 0.0
        self.error_sample: str | None = None

    def exited(self) -> int | None:
        return next((p.returncode for p in self.procs if p.poll() is not None), None)

    def tree_cpu(self) -> float:
        return sum(harness.tree_cpu(p.pid) for p in self.procs)

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            harness.LIVE_PGIDS.discard(proc.pid)
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
        if srv.exited() is not None:
            raise RuntimeError(f"{srv.workers}-worker server exited with {srv.exited()}")
        with contextlib.suppress(Exception):
            answers = [await hc.post(f"http://127.0.0.1:{port}/mcp", content=body(tool, args, 0)) for port in srv.ports]
            verdicts = [ok(r.text) for r in answers]
            last = next((why for good, why in verdicts if not good), verdicts[-1][1])
            if all(good for good, _ in verdicts):
                return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"{srv.workers}-worker server not answering tools/call within {timeout:.0f}s: {last}")


class Connection:
    """A minimal keep-alive HTTP/1.1 client for the timed loop: one prebuilt POST, answers read by
    Content-Length or chunked framing. The load generator shares the 2 CPUs with the servers under test, so
    it must cost as little as possible per call (httpx costs several times more CPU per request)."""

    def __init__(self, port: int, request: bytes) -> None:
        self.port = port
        self.request = request
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self) -> tuple[int, bytes]:
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        self.writer.write(self.request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" in headers:
            data = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            data = b"".join(parts)
        else:
            data = await self.reader.read()
            self.writer.close()
        if headers.get("connection", "").lower() == "close":
            self.writer.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def raw_request(port: int, headers: dict[str, str], payload: bytes) -> bytes:
    lines = ["POST /mcp HTTP/1.1", f"host: 127.0.0.1:{port}", f"content-length: {len(payload)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


async def run(a: argparse.Namespace, upstream_url: str, servers: list[HttpServer]) -> None:
    import httpx

    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": PROTOCOL_VERSION,
    }
    args = json.loads(a.args)
    async with httpx.AsyncClient(headers=headers, timeout=30) as hc:  # readiness only
        for srv in servers:
            await wait_ready(hc, srv, a.tool, args, 60)
    deadline = time.monotonic() + a.max_total
    per = a.seconds / a.rounds
    for rnd in range(a.rounds):
        order = servers if rnd % 2 == 0 else servers[::-1]
        for srv in order:
            if time.monotonic() > deadline:
                return
            payload = body(a.tool, args, 1)
            ports = [srv.ports[i % len(srv.ports)] for i in range(a.concurrency)]
            connections = [Connection(port, raw_request(port, headers, payload)) for port in ports]
            for connection in connections:  # warm each connection and the workers' code paths
                for _ in range(max(1, a.warmup // a.concurrency)):
                    await asyncio.wait_for(connection.post(), 30)
            stop_at = time.monotonic() + per

            async def worker(connection: Connection, srv: HttpServer = srv, stop_at: float = stop_at) -> None:
                while time.monotonic() < stop_at and srv.calls + srv.errors < a.max_calls:
                    try:
                        status, data = await asyncio.wait_for(connection.post(), 30)
                        good, why = ok(data.decode()) if status == 200 else (False, f"HTTP {status}")
                    except Exception as e:  # noqa: BLE001
                        good, why = False, f"{type(e).__name__}: {e}"
                        connection.close()
                    if good:
                        srv.calls += 1
                    else:
                        srv.errors += 1
                        srv.error_sample = srv.error_sample or why

            cpu0 = srv.tree_cpu()
            client0 = time.process_time()
            t0 = time.perf_counter()
            await asyncio.gather(*(worker(c) for c in connections))
            srv.seconds += time.perf_counter() - t0
            srv.client_cpu += time.process_time() - client0
            srv.cpu += srv.tree_cpu() - cpu0
            for connection in connections:
                connection.close()
        print(
            f"[http_bench] round {rnd + 1}/{a.rounds}: "
            + ", ".join(f"{s.workers}w {s.calls / max(s.seconds, 1e-9):.0f}/s" for s in servers),
            file=sys.stderr,
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", required=True, help="import package of the generated server")
    ap.add_argument("--src", required=True, help="folder that holds the package (its src/)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with mcp, httpx, uvicorn (default: this)")
    ap.add_argument("--tool", default="", help="tool to call (default: first tool without required arguments)")
    ap.add_argument("--args", default="{}", help="its arguments, a JSON object")
    ap.add_argument("--workers", default="1,2", help="worker counts to compare (default 1,2)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument(
        "--balance",
        choices=("ports", "uvicorn"),
        default="ports",
        help="N workers as N processes on N ports behind the client's round-robin (default), or one "
        "`uvicorn --workers N` sharing one port",
    )
    ap.add_argument("--seconds", type=float, default=10.0, help="total load time per server (default 10)")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds (default 4)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--max-calls", type=int, default=100_000)
    ap.add_argument("--max-total", type=float, default=600.0)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--logs", default=None, help="folder for server stderr (default: a temp folder)")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, harness.on_signal)
    signal.signal(signal.SIGINT, harness.on_signal)
    if not a.tool:
        tools = json.loads((Path(a.src) / a.package / "tools.json").read_text(encoding="utf-8"))
        a.tool = next(t["name"] for t in tools if not t["inputSchema"].get("required"))
    logs = Path(a.logs) if a.logs else Path(tempfile.mkdtemp(prefix="http-bench-"))
    logs.mkdir(parents=True, exist_ok=True)
    up = Upstream(DEFAULT_BODY, a.max_total + 120)
    up.start()
    servers: list[HttpServer] = []
    result: dict[str, Any] = {
        "package": a.package,
        "tool": a.tool,
        "args": json.loads(a.args),
        "concurrency": a.concurrency,
        "balance": a.balance,
        "cpus": os.cpu_count(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "servers": [],
    }
    try:
        servers = [HttpServer(int(w), a, up.base_url, logs) for w in a.workers.split(",")]
        runner = asyncio.run
        with contextlib.suppress(ImportError):
            import uvloop  # the load generator's own loop: less CPU taken from the servers under test

            runner = uvloop.run
        runner(run(a, up.base_url, servers))
        for s in servers:
            result["servers"].append(
                {
                    "workers": s.workers,
                    "calls": s.calls,
                    "errors": s.errors,
                    "error_sample": s.error_sample,
                    "seconds": round(s.seconds, 2),
                    "calls_per_s": round(s.calls / s.seconds, 1) if s.seconds else None,
                    "server_cpu_us_per_call": round(s.cpu / s.calls * 1e6, 1) if s.calls else None,
                    "client_cpu_us_per_call": round(s.client_cpu / s.calls * 1e6, 1) if s.calls else None,
                    "memory": [harness.tree_memory(p.pid) for p in s.procs],
                }
            )
    except Exception as e:  # noqa: BLE001
        result["failed"] = f"{type(e).__name__}: {e}"
    finally:
        for s in servers:
            s.stop()
        up.stop()
        harness.kill_all_children()
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
