"""mcp_bench.py's report as a Markdown table (one row per server, ratios to the first), with its notes."""

from __future__ import annotations

import json
from typing import Any


def _ratio(v: float | None, base: float | None) -> str:
    if v is None or base is None or v <= 0 or base <= 0:
        return ""
    return f" ({v / base:.2f}×)"


def _g(d: dict[str, Any], *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)  # type: ignore[assignment]
    return d


def markdown(report: dict[str, Any]) -> str:
    rows = report["servers"]
    first = rows[0] if rows else {}
    cols = [
        "server",
        "tools",
        "tools/list KiB",
        "tokens (cl100k)",
        "cold start ms median (min–max)",
        "cold CPU ms",
        "call µs median",
        "call µs p99",
        "overhead µs",
        "server CPU µs/call",
        "calls/s",
        "RSS MiB list → calls",
    ]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]

    def num(x: Any, fmt: str = "{:.0f}") -> str:
        return "–" if x is None else fmt.format(x)

    for i, r in enumerate(rows):
        if r.get("failed") and not r.get("cold_start_ms"):
            out.append(f"| {r['name']} | FAILED (see notes) |" + " |" * (len(cols) - 2))
            continue

        def cell(*path: str, fmt: str = "{:.0f}", scale: float = 1.0, r: dict[str, Any] = r, i: int = i) -> str:
            v, b = _g(r, *path), (_g(first, *path) if i else None)
            v2 = None if v is None else v / scale
            b2 = None if b is None else b / scale
            return num(v2, fmt) + (_ratio(v2, b2) if i else "")

        cs = r.get("cold_start_ms") or {}
        cold = (cell("cold_start_ms", "median") + f" ({num(cs.get('min'))}–{num(cs.get('max'))})") if cs else "–"
        mem = f"{num(_g(r, 'mem_after_list', 'rss_mib'))} → {cell('mem_after_calls', 'rss_mib')}"
        out.append(
            "| "
            + " | ".join(
                [
                    r["name"],
                    num(r.get("tools")),
                    cell("tools_list_bytes", fmt="{:.1f}", scale=1024.0),
                    num(r.get("tokens_cl100k", r.get("tokens_est")), "{:,}"),
                    cold,
                    cell("cold_cpu_ms", "median"),
                    cell("call", "us", "median"),
                    num(_g(r, "call", "us", "p99")),
                    cell("call", "overhead_us"),
                    cell("call", "server_cpu_us_per_call"),
                    cell("throughput", "calls_per_s"),
                    mem,
                ]
            )
            + " |"
        )
    d = report.get("direct") or {}
    if d.get("us"):
        out.append(
            f"| direct httpx, no MCP | | | | | | {num(d['us'].get('median'))} | {num(d['us'].get('p99'))} | 0 |"
            f" | {num(_g(d, 'throughput', 'calls_per_s'))} | |"
        )
    notes = []
    for r in rows:
        bits = []
        if r.get("call_tool"):
            req = r.get("upstream_request") or {}
            q = "?" + req["query"] if req.get("query") else ""
            bits.append(
                f"called `{r['call_tool']}` {json.dumps(r.get('call_args') or {})} → "
                f"{req.get('method', '?')} {req.get('path', '?')}{q}, upstream hits/call "
                f"{r.get('upstream_hits_per_call')}"
            )
        errs = (_g(r, "call", "errors") or 0) + (_g(r, "throughput", "errors") or 0) + (r.get("warmup_errors") or 0)
        if errs:
            bits.append(f"{errs} tool errors (e.g. {(_g(r, 'call', 'error_sample') or '')[:120]!r})")
        if r.get("call_skipped"):
            bits.append(r["call_skipped"])
        if r.get("failed"):
            bits.append("FAILED: " + r["failed"][:400])
        if _g(r, "mem_after_calls", "hwm_mib"):
            bits.append(f"peak RSS (VmHWM) {r['mem_after_calls']['hwm_mib']} MiB")
        if bits:
            notes.append(f"- {r['name']}: " + "; ".join(bits))
    m = report["meta"]
    p = m["params"]
    out.append("")
    out.append(
        f"Spec: {m['spec_title']} ({m['spec_operations']} operations); {m['cpus']} CPUs, load average "
        f"{m['loadavg_start'][0]} → {m['loadavg_end'][0]}. Cold start: spawn → initialize → last byte of the "
        f"complete tools/list, median of {p['runs']}. Calls: {p['calls']} sequential; calls/s with "
        f"{p['concurrency']} in flight for {p['tp_seconds']} s. CPU columns: user+system time of the server's "
        f"process tree (robust to other load). tokens = cl100k_base tokens of the tools array as compact JSON (bpe-openai). (×) = relative to the first server."
    )
    return "\n".join(out + notes)
