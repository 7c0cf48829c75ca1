"""mcp_bench.py's call measurements: the tool each server is called with, sequential calls (latency, server CPU),
calls in flight (in this process, and from a second one: loadgen.py), the same request made directly with httpx;
the server under measurement (Server) and the statistics they are summarized with."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from bench_spec import comparable, no_required, simple_get_operations
from bench_upstream import upstream_stats
from harness import StdioProc, tree_cpu, tree_memory


@dataclass
class Server:
    name: str
    template: str
    argv: list[str] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None
    tools: list[Any] = field(default_factory=list)
    client: Any = None
    transport: StdioProc | None = None
    tool_name: str | None = None
    tool_args: dict[str, Any] = field(default_factory=dict)
    seq_us: list[float] = field(default_factory=list)
    seq_errors: int = 0
    error_sample: str | None = None
    tp_calls: int = 0
    tp_errors: int = 0
    tp_seconds: float = 0.0
    seq_cpu: float = 0.0
    tp_cpu: float = 0.0
    seq_cpu_calls: int = 0


async def loadgen(
    argv: list[str], tool: str, args: dict[str, Any], seconds: float, rounds: int, concurrency: int, timeout: float
) -> dict[str, Any]:
    """calls/s with `concurrency` in flight, measured by bench/loadgen.py in its own process."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve().parent / "loadgen.py"),
        "--tool",
        tool,
        "--args",
        json.dumps(args),
        "--seconds",
        str(seconds),
        "--rounds",
        str(rounds),
        "--concurrency",
        str(concurrency),
        "--",
        *argv,
    ]
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), seconds + timeout)
    except asyncio.TimeoutError:
        proc.kill()
        return {"failed": "timeout"}
    try:
        return json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"failed": err.decode(errors="replace")[-300:]}


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def summary(xs: list[float], nd: int = 1) -> dict[str, Any]:
    if not xs:
        return {}
    return {
        "median": round(statistics.median(xs), nd),
        "min": round(min(xs), nd),
        "max": round(max(xs), nd),
        "p99": round(pct(xs, 99), nd),
        "n": len(xs),
    }


def describe(e: BaseException) -> str:
    """One line for an exception; exception groups (anyio task groups) are unwrapped to their leaves."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}".strip()


def exit_note(tr: StdioProc) -> str:
    rc = tr.proc.returncode if tr.proc else None
    return f" (server exit code {rc})" if rc is not None else ""


def stderr_tail(path: Path, n: int = 6) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(ln.strip()[:200] for ln in lines[-n:])


class Calls:
    """Mixed into mcp_bench.Bench, which holds the servers, the arguments and the deadline."""

    a: argparse.Namespace
    servers: list[Server]
    upstream_url: str
    tool_choices: list[tuple[str, str, dict[str, Any]]]
    direct_us: list[float]
    direct_tp: dict[str, Any]
    direct_request: dict[str, Any] | None
    left: Callable[[], float]  # seconds to the run's deadline
    log: Callable[[str], None]
    open_session: Callable[[Server, contextlib.AsyncExitStack], Awaitable[None]]

    def pick_tools(self, spec: dict[str, Any]) -> None:
        chosen: dict[str, tuple[str, dict[str, Any]]] = {}
        for who, name, args in self.tool_choices:
            for s in self.servers:
                if who in (s.name, "*"):
                    chosen[s.name] = (name, args)
        live = [s for s in self.servers if s.client is not None]
        auto = [s for s in live if s.name not in chosen]
        ops = simple_get_operations(spec)
        by_norm = {s.name: {comparable(t.name): t for t in s.tools if no_required(t)} for s in auto}
        # Prefer one operation that every server exposing spec operations has, so they all make the same
        # HTTP request; servers whose tool names match no operationId (e.g. the floor) pick on their own.
        matchable = [s for s in auto if any(comparable(op) in by_norm[s.name] for op in ops)]
        common = next(
            (op for op in ops if matchable and all(comparable(op) in by_norm[s.name] for s in matchable)), None
        )
        for s in live:
            if s.name in chosen:
                s.tool_name, s.tool_args = chosen[s.name]
                s.result.update(call_tool_picked_by="user (--tool)", call_tool=s.tool_name, call_args=s.tool_args)
                continue
            op = (
                common
                if s in matchable and common
                else next((o for o in ops if comparable(o) in by_norm[s.name]), None)
            )
            if op is not None:
                s.tool_name = by_norm[s.name][comparable(op)].name
                how = "same for all matching servers" if op == common else "first one this server exposes"
                s.result["call_tool_picked_by"] = f"spec operationId {op} (GET, no required params; {how})"
            else:
                hit = next((t for t in s.tools if no_required(t)), None)
                if hit is None:
                    s.result["call_skipped"] = "no tool without required arguments; pass --tool"
                    continue
                s.tool_name = hit.name
                s.result["call_tool_picked_by"] = "first listed tool without required arguments"
            s.result["call_tool"] = s.tool_name
            s.result["call_args"] = s.tool_args

    async def call_once(self, s: Server) -> None:
        import mcp_types as types

        assert s.tool_name is not None
        req = types.CallToolRequest(params=types.CallToolRequestParams(name=s.tool_name, arguments=s.tool_args))
        try:
            res = await s.client.session.send_request(
                req, types.CallToolResult, request_read_timeout_seconds=self.a.request_timeout
            )
            if res.is_error:
                s.seq_errors += 1
                if s.error_sample is None:
                    s.error_sample = str(res.content[0].text if res.content else res)[:300]
        except Exception as e:  # noqa: BLE001
            s.seq_errors += 1
            if s.error_sample is None:
                s.error_sample = describe(e)[:300]

    async def warmup(self, s: Server, hc: Any) -> None:
        before = (await upstream_stats(hc))["count"]
        for _ in range(self.a.warmup):
            await self.call_once(s)
        st = await upstream_stats(hc)
        s.result["upstream_hits_per_call"] = round((st["count"] - before) / max(1, self.a.warmup), 2)
        s.result["upstream_request"] = st["last"] if st["count"] > before else None
        s.result["warmup_errors"] = s.seq_errors
        s.seq_errors = 0
        if self.direct_request is None and st["count"] > before:
            self.direct_request = st["last"]

    async def seq_chunk(self, s: Server, n: int) -> None:
        end = time.monotonic() + min(self.a.phase_timeout, max(0.0, self.left()))
        assert s.transport
        cpu0 = tree_cpu(s.transport.pid)
        k = 0
        for _ in range(n):
            t = time.perf_counter_ns()
            await self.call_once(s)
            s.seq_us.append((time.perf_counter_ns() - t) / 1e3)
            k += 1
            if time.monotonic() > end:
                break
        s.seq_cpu += tree_cpu(s.transport.pid) - cpu0
        s.seq_cpu_calls += k

    async def tp_chunk(self, call: Any, seconds: float, max_calls: int) -> tuple[int, int, float]:
        issued = done = errors = 0
        stop_at = time.monotonic() + seconds

        async def worker() -> None:
            nonlocal issued, done, errors
            while issued < max_calls and time.monotonic() < stop_at:
                issued += 1
                try:
                    await call()
                except Exception:  # noqa: BLE001
                    errors += 1
                done += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(self.a.concurrency)))
        return done, errors, time.perf_counter() - t0

    async def direct_once(self, hc: Any) -> None:
        d = self.direct_request or {"method": "GET", "path": "/", "query": "", "headers": {}, "body": ""}
        target = d["path"] + (f"?{d['query']}" if d.get("query") else "")
        headers = {"accept": "application/json"}
        if d.get("headers", {}).get("content-type"):
            headers["content-type"] = d["headers"]["content-type"]
        r = await hc.request(d["method"], target, headers=headers, content=(d.get("body") or None))
        r.raise_for_status()

    async def run_calls(self, spec: dict[str, Any]) -> None:
        import httpx

        live = [s for s in self.servers if not s.failed]
        if not live or (self.a.calls <= 0 and self.a.tp_seconds <= 0):
            return
        async with contextlib.AsyncExitStack() as stack:
            for s in live:
                self.log(f"{s.name}: opening call session")
                await self.open_session(s, stack)
            self.pick_tools(spec)
            callers = [s for s in live if s.client is not None and s.tool_name]
            limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
            async with (
                httpx.AsyncClient(base_url=self.upstream_url, timeout=30, limits=limits) as hc,
                httpx.AsyncClient(base_url=self.upstream_url, timeout=30) as stats_hc,
            ):
                for s in callers:
                    self.log(f"{s.name}: warmup {self.a.warmup} x {s.tool_name} {json.dumps(s.tool_args)}")
                    await self.warmup(s, stats_hc)
                for _ in range(self.a.warmup):
                    await self.direct_once(hc)
                rounds = max(1, self.a.rounds)
                per = math.ceil(self.a.calls / rounds) if self.a.calls > 0 else 0
                direct_t0: list[float] = []
                for r in range(rounds):  # interleave servers in chunks so noise hits all alike
                    if per == 0 or self.left() <= 0:
                        break
                    self.log(f"sequential calls, round {r + 1}/{rounds} ({per} calls each)")
                    for s in callers:
                        await self.seq_chunk(s, per)
                    for _ in range(per):
                        t = time.perf_counter_ns()
                        await self.direct_once(hc)
                        direct_t0.append((time.perf_counter_ns() - t) / 1e3)
                self.direct_us = direct_t0
                if self.a.tp_seconds > 0:
                    secs = self.a.tp_seconds / rounds
                    cap = math.ceil(self.a.tp_calls / rounds)
                    dd = de = 0
                    dt = 0.0
                    for r in range(rounds):
                        if self.left() <= 0:
                            break
                        self.log(f"throughput, round {r + 1}/{rounds} ({self.a.concurrency} in flight, {secs:.1f}s)")
                        for s in callers:
                            before = s.seq_errors
                            assert s.transport
                            cpu0 = tree_cpu(s.transport.pid)
                            done, errs, el = await self.tp_chunk(lambda s=s: self.call_once(s), secs, cap)
                            s.tp_cpu += tree_cpu(s.transport.pid) - cpu0
                            s.tp_calls += done
                            s.tp_errors += errs + (s.seq_errors - before)
                            s.seq_errors = before
                            s.tp_seconds += el
                        done, errs, el = await self.tp_chunk(lambda: self.direct_once(hc), secs, cap)
                        dd, de, dt = dd + done, de + errs, dt + el
                    self.direct_tp = {
                        "calls": dd,
                        "errors": de,
                        "seconds": round(dt, 2),
                        "calls_per_s": round(dd / dt, 1) if dt else None,
                    }
            for s in live:
                if s.transport is not None:
                    s.result["mem_after_calls"] = tree_memory(s.transport.pid)
        if self.a.loadgen_seconds > 0:  # a fresh server per run, driven from a second process
            for s in callers:
                if self.left() <= 0:
                    break
                self.log(f"{s.name}: load generator, {self.a.concurrency} in flight, {self.a.loadgen_seconds:.0f} s")
                s.result["loadgen"] = await loadgen(
                    s.argv,
                    s.tool_name,
                    s.tool_args,
                    self.a.loadgen_seconds,
                    max(1, self.a.rounds),
                    self.a.concurrency,
                    self.a.start_timeout,
                )
        direct_med = statistics.median(self.direct_us) if self.direct_us else None
        for s in callers:
            c: dict[str, Any] = {"us": summary(s.seq_us), "errors": s.seq_errors, "error_sample": s.error_sample}
            if s.seq_cpu_calls:
                c["server_cpu_us_per_call"] = round(s.seq_cpu / s.seq_cpu_calls * 1e6, 1)
            if direct_med is not None and s.seq_us:
                c["overhead_us"] = round(statistics.median(s.seq_us) - direct_med, 1)
            s.result["call"] = c
            if s.tp_seconds:
                s.result["throughput"] = {
                    "concurrency": self.a.concurrency,
                    "calls": s.tp_calls,
                    "errors": s.tp_errors,
                    "seconds": round(s.tp_seconds, 2),
                    "calls_per_s": round(s.tp_calls / s.tp_seconds, 1),
                    "server_cpu_us_per_call": round(s.tp_cpu / max(1, s.tp_calls) * 1e6, 1),
                }
