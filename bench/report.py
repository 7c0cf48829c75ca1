"""The benchmark's claims, generated from its results files: no number in a README is typed by hand.

    python bench/report.py                    # bench/results/summary.json (+ scaling.json) -> both READMEs
    python bench/report.py --summary X.json --readme bench/README.md --project-readme README.md

Rewrites the part between `<!-- bench:results:start -->` and `<!-- bench:results:end -->` in bench/README.md
(the full tables) and between `<!-- bench:summary:start -->` and `<!-- bench:summary:end -->` in the project
README (the headline ratios). Every figure is a median with its min–max over the runs, and every table says
when it ran and the load average then; ratios are only ever taken within one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
START, END = "<!-- bench:results:start -->", "<!-- bench:results:end -->"
SUMMARY_START, SUMMARY_END = "<!-- bench:summary:start -->", "<!-- bench:summary:end -->"
LABEL = {
    "ours": "mcp-codegen",
    "compact": "mcp-codegen --compact",
    "floor": "SDK floor (same tools)",
    "nosdk": "no-SDK floor (same tools)",
    "fastmcp": "FastMCP",
    "omg": "openapi-mcp-generator (Node)",
}


def get(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def num(v: Any, spec: str = "{:,.0f}") -> str:
    return "–" if v is None else spec.format(v)


def spread(s: Any, spec: str = "{:,.0f}") -> str:
    """median (min–max) of a summary dict."""
    if not isinstance(s, dict) or s.get("median") is None:
        return "–"
    return f"{num(s['median'], spec)} ({num(s.get('min'), spec)}–{num(s.get('max'), spec)})"


def server(results: dict[str, Any], spec: str, key: str) -> dict[str, Any]:
    rep = get(results, "specs", spec, "report") or {}
    return next((s for s in rep.get("servers", []) if s["name"] == key), {})


def when(results: dict[str, Any]) -> str:
    m = results["machine"]
    argv = " ".join(results.get("argv") or [])
    return (
        f"Run of `bench/run{(' ' + argv) if argv else ''}` on {m['date']}: {m['cpus']} CPUs ({m['cpu'] or '?'}), "
        f"{m['memory']} RAM, Python {m['python']}, Node {m['node']}; load average (1/5/15 min) "
        f"{'/'.join(map(str, m['loadavg']))} at the start, {'/'.join(map(str, results.get('loadavg_end', ['?'])))} "
        f"at the end.{speed(m)}"
    )


def speed(m: dict[str, Any]) -> str:
    """The machine's speed at Python, where the run measured it (bench/run.py's REFERENCE workload)."""
    seconds = m.get("reference_cpu_s")
    if seconds is None:
        return ""
    return (
        f" Machine speed: a fixed pure-Python workload (`REFERENCE` in bench/run.py) took {seconds:.2f} s CPU "
        "(the best of fresh runs; lower is faster)."
    )


def table(results: dict[str, Any]) -> str:
    cols = [
        "spec (ops)",
        "server",
        "generate s: median (min–max)",
        "cold start ms",
        "cold CPU ms",
        "tools",
        "tools/list KiB",
        "tokens (cl100k)",
        "call µs p50",
        "call µs p99",
        "calls/s @16 (loadgen)",
        "loadgen / server CPU µs per call",
        "RSS MiB at tools/list",
        "peak RSS MiB",
    ]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for name, r in results["specs"].items():
        rep = r.get("report") or {}
        ops = get(rep, "meta", "spec_operations")
        for s in rep.get("servers", []):
            key = s["name"]
            gen = (r.get("generate") or {}).get(key) or {}
            if key == "omg" and gen:
                gen_s = num(sum(gen.get(k) or 0 for k in ("generate_s", "install_s", "build_s")), "{:.2f}")
                gen_s += " (generate + npm install + build)"
            else:
                gen_s = spread(gen.get("wall"), "{:.2f}") if gen.get("wall") else num(gen.get("seconds"), "{:.2f}")
            lg = s.get("loadgen") or {}
            rows.append(
                "| "
                + " | ".join(
                    [
                        f"{name} ({num(ops)})",
                        LABEL.get(key, key) + (" FAILED" if s.get("failed") else ""),
                        gen_s if gen else "–",
                        spread(s.get("cold_start_ms")),
                        spread(s.get("cold_cpu_ms")),
                        num(s.get("tools")),
                        num(None if s.get("tools_list_bytes") is None else s["tools_list_bytes"] / 1024, "{:,.1f}"),
                        num(s.get("tokens_cl100k"), "{:,}"),
                        spread(get(s, "call", "us")),
                        num(get(s, "call", "us", "p99")),
                        spread(lg.get("calls_per_s")) if not lg.get("failed") else "failed",
                        f"{num(lg.get('loadgen_cpu_us_per_call'))} / {num(lg.get('server_cpu_us_per_call'))}",
                        num(get(s, "mem_after_list", "rss_mib")),
                        num(get(s, "mem_after_calls", "hwm_mib")),
                    ]
                )
                + " |"
            )
        direct = get(rep, "direct", "us")
        if direct:
            rows.append(
                f"| {name} ({num(ops)}) | direct httpx, no MCP (reference) | | | | | | | {spread(direct)} "
                f"| {num(direct.get('p99'))} | | | | |"
            )
    return "\n".join(rows)


def ratio(a: Any, b: Any) -> str:
    return "–" if not a or not b else f"{a / b:.2f}×"


def targets(results: dict[str, Any], scaling: dict[str, Any] | None) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) for issue 19's targets, from this run only."""
    out: list[tuple[str, str, bool | None]] = []
    g, node = server(results, "github", "ours"), server(results, "github", "omg")
    floor, nosdk = server(results, "github", "floor"), server(results, "github", "nosdk")
    cold = get(g, "cold_start_ms", "median")
    if cold is not None:
        out.append(("GitHub spawn → tools/list ≤ 300 ms", f"{cold:,.0f} ms", cold <= 300))
        node_cold = get(node, "cold_start_ms", "median")
        out.append(
            (
                "… and below the Node server's",
                f"{cold:,.0f} vs {num(node_cold)} ms = {ratio(cold, node_cold)}",
                None if node_cold is None else cold < node_cold,
            )
        )
        for label, other in (("SDK floor (same tools)", floor), ("no-SDK floor (same tools)", nosdk)):
            value = get(other, "cold_start_ms", "median")
            out.append(
                (f"GitHub cold start vs the {label}", f"{cold:,.0f} vs {num(value)} ms = {ratio(cold, value)}", None)
            )
    p50, node_p50 = get(g, "call", "us", "median"), get(node, "call", "us", "median")
    if p50 is not None:
        out.append(
            (
                "GitHub per-call p50 ≤ Node's",
                f"{p50:,.0f} vs {num(node_p50)} µs",
                None if node_p50 is None else p50 <= node_p50,
            )
        )
    tp, node_tp = get(g, "loadgen", "calls_per_s", "median"), get(node, "loadgen", "calls_per_s", "median")
    if tp is not None:
        out.append(
            (
                "GitHub calls/s @16 (second-process load generator), beside Node's",
                f"{tp:,.0f} vs {num(node_tp)} = {ratio(tp, node_tp)}",
                None,
            )
        )
    rss = get(g, "mem_after_list", "rss_mib")
    if rss is not None:
        out.append(
            (
                "GitHub RSS after tools/list ≤ 80 MiB",
                f"{rss:.0f} MiB (peak {num(get(g, 'mem_after_calls', 'hwm_mib'))})",
                rss <= 80,
            )
        )
    for spec, limit in (("petstore", 0.8), ("github", 1.5)):
        gen = get(results, "specs", spec, "generate", "ours") or {}
        node_gen = get(results, "specs", spec, "generate", "omg") or {}
        if gen.get("seconds") is not None:
            node_s = sum(node_gen.get(k) or 0 for k in ("generate_s", "install_s", "build_s")) or None
            out.append(
                (
                    f"{spec} generation ≤ {limit} s",
                    f"{spread(gen.get('wall'), '{:.2f}')} s wall, "
                    f"{num(gen.get('cpu_seconds'), '{:.2f}')} s CPU; Node {num(node_s, '{:.2f}')} s = "
                    f"{ratio(gen['seconds'], node_s)}",
                    gen["seconds"] <= limit,
                )
            )
    if scaling:
        big = max(scaling.get("points") or [{}], key=lambda p: p.get("operations", 0))
        if big.get("seconds"):
            load = "/".join(map(str, scaling.get("loadavg") or []))
            reference = scaling.get("reference_cpu_s")
            at = f", {scaling['date']}" if scaling.get("date") else ""
            speed_note = f", machine speed {reference:.2f} s" if reference is not None else ""
            out.append(
                (
                    f"{scaling.get('spec_name', 'largest')} ({big['operations']:,} ops) generation ≤ 6 s and ≤ 400 MiB",
                    f"{spread(big.get('wall'), '{:.2f}')} s wall, {num(big.get('cpu_seconds'), '{:.2f}')} s CPU, "
                    f"{big.get('peak_mib', 0):.0f} MiB (bench/gen_scaling.py{at}, load average {load}{speed_note})",
                    big["seconds"] <= 6 and big.get("peak_mib", 0) <= 400,
                )
            )
        fit = scaling.get("fit") or {}
        if fit:
            out.append(
                (
                    "generation grows linearly (10 → 11,000 ops)",
                    f"CPU seconds = {fit['intercept']:.2f} + {fit['slope_ms']:.3f} ms × operations, R² = {fit['r2']:.3f}",
                    fit["r2"] >= 0.95,
                )
            )
    return out


def targets_table(rows: list[tuple[str, str, bool | None]]) -> str:
    lines = ["| target | measured | met |", "|---|---|---|"]
    for what, measured, met in rows:
        lines.append(f"| {what} | {measured} | {'–' if met is None else ('yes' if met else '**no**')} |")
    return "\n".join(lines)


def scaling_table(scaling: dict[str, Any]) -> str:
    lines = [
        f"Generation time and memory against the number of operations ({scaling.get('how', '')}); "
        f"{scaling.get('date', '?')}, load average {'/'.join(map(str, scaling.get('loadavg', [])))}"
        + (
            f", machine speed {scaling['reference_cpu_s']:.2f} s (bench/run.py's REFERENCE)"
            if scaling.get("reference_cpu_s") is not None
            else ""
        )
        + ":",
        "",
        "| operations | tools | wall s: median (min–max) | CPU s | peak RSS MiB |",
        "|---|---|---|---|---|",
    ]
    for p in scaling.get("points", []):
        lines.append(
            f"| {p['operations']:,} | {num(p.get('tools'))} | {spread(p.get('wall'), '{:.2f}')} | "
            f"{num(p.get('cpu_seconds'), '{:.2f}')} | {num(p.get('peak_mib'))} |"
        )
    fit = scaling.get("fit")
    if fit:
        lines += [
            "",
            f"Least-squares fit: CPU seconds = {fit['intercept']:.3f} + {fit['slope_ms']:.4f} ms × operations, "
            f"R² = {fit['r2']:.4f} (CPU seconds; residuals within {fit['max_residual']:.2f} s).",
        ]
    return "\n".join(lines)


def replace(path: Path, start: str, end: str, body: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{start}\n{body}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def write_all(
    results: dict[str, Any] | None, scaling: dict[str, Any] | None, readme: Path, project_readme: Path | None
) -> None:
    parts, headline = [], []
    if results:
        rows = targets(results, scaling)
        parts += [
            when(results) + " Raw JSON: `bench/results/`.",
            "",
            table(results),
            "",
            "Targets (ratios within this run):",
            "",
            targets_table(rows),
        ]
        headline += [when(results), "", targets_table(rows)]
    if scaling:
        parts += ["", scaling_table(scaling)]
        if not results:
            headline += [targets_table(targets({"specs": {}}, scaling))]
    if not parts:
        return
    replace(readme, START, END, "\n".join(parts))
    if project_readme is not None:
        replace(
            project_readme,
            SUMMARY_START,
            SUMMARY_END,
            "\n".join(
                headline
                + [
                    "",
                    "Every figure: median of the runs (min–max in bench/README.md), "
                    "generated by `bench/report.py` from `bench/results/`.",
                ]
            ),
        )


def linear_fit(xs: list[float], ys: list[float]) -> dict[str, float]:
    """Least squares y = a + b x, with R² and the largest residual."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    a = my - b * mx
    residuals = [y - (a + b * x) for x, y in zip(xs, ys)]
    sst = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum(r * r for r in residuals) / sst if sst else 1.0
    return {"intercept": a, "slope_ms": b * 1000, "r2": r2, "max_residual": max(abs(r) for r in residuals)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--summary", default=str(HERE / "results" / "summary.json"))
    ap.add_argument("--scaling", default=str(HERE / "results" / "scaling.json"))
    ap.add_argument("--readme", default=str(HERE / "README.md"))
    ap.add_argument("--project-readme", default=str(HERE.parent / "README.md"))
    a = ap.parse_args()
    load = lambda p: json.loads(Path(p).read_text(encoding="utf-8")) if Path(p).is_file() else None  # noqa: E731
    write_all(load(a.summary), load(a.scaling), Path(a.readme), Path(a.project_readme) if a.project_readme else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
