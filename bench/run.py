"""bench/run: generate, set up peers, benchmark, and write the results table into bench/README.md.

Started by the `bench/run` shell wrapper with the project's interpreter (the one that has mcp-codegen).
Everything it needs lives under bench/ (harness, peer set-up scripts) and tools/ (corpus); generated
packages and peer builds go to --work (default /tmp/mcp-codegen-bench). Every step is bounded in time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEERS = HERE / "peers"
TOOLS = Path(os.environ.get("MCP_CODEGEN_TOOLS", Path.home() / ".cache" / "mcp-codegen-tools"))
SPECS = ("petstore", "asana", "github", "stripe")
SERVERS = ("ours", "compact", "floor", "fastmcp", "omg")
sys.path.insert(0, str(ROOT / "tools"))
from server_env import server_environment  # noqa: E402

LABEL = {"ours": "mcp-codegen", "floor": "python floor", "fastmcp": "FastMCP", "omg": "openapi-mcp-generator",
         "compact": "mcp-codegen --compact"}
START, END = "<!-- bench:results:start -->", "<!-- bench:results:end -->"


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def sh(argv: list[str], timeout: float, **kw: Any) -> subprocess.CompletedProcess[str]:
    log("$ " + " ".join(map(str, argv)))
    return subprocess.run([str(a) for a in argv], text=True, capture_output=True, timeout=timeout, **kw)


def spec_paths(names: list[str]) -> dict[str, str]:
    """name -> path from tools/list-specs (the corpus is installed by tools/fetch-corpus if it is missing)."""
    out = sh([sys.executable, ROOT / "tools/list-specs", "--named", "--tsv"], 300)
    found = {line.split("\t")[0]: line.split("\t")[1] for line in out.stdout.splitlines() if "\t" in line}
    if not all(n in found and Path(found[n]).is_file() for n in names):
        sh([ROOT / "tools/fetch-corpus"], 900, check=True)
        out = sh([sys.executable, ROOT / "tools/list-specs", "--named", "--tsv"], 300, check=True)
        found = {line.split("\t")[0]: line.split("\t")[1] for line in out.stdout.splitlines() if "\t" in line}
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"specs not in the corpus: {missing}")
    return {n: found[n] for n in names}


def generate(spec: str, out: Path, extra: list[str]) -> dict[str, Any]:
    """Run mcp-codegen (including formatting and writing) in a fresh process; wall time in seconds."""
    shutil.rmtree(out, ignore_errors=True)
    t0, c0 = time.perf_counter(), _children_cpu()
    # the `tools` surface: every operation listed, as the peers list them (tokens.py measures the surfaces)
    r = sh([sys.executable, "-m", "codegen", "generate", spec, "-o", out, "-q", "--surface", "tools", *extra], 600)
    seconds, cpu = time.perf_counter() - t0, _children_cpu() - c0
    pkg = next(iter(sorted(p.name for p in (out / "src").iterdir() if p.is_dir())), None) if r.returncode == 0 else None
    res: dict[str, Any] = {"seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "ok": r.returncode == 0 and pkg is not None, "package": pkg}
    if not res["ok"]:
        res["error"] = (r.stderr or r.stdout)[-800:]
    else:
        res["tools_json_bytes"] = (out / "src" / pkg / "tools.json").stat().st_size
    return res


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def our_command(py: str, out: Path, pkg: str) -> str:
    """Serve the generated package from its source folder (same files a pip install would copy), with dummy
    values for its credential variables so calls to secured operations reach the upstream."""
    env = server_environment(out / "src", pkg, "{base_url}", python=py, dummy="bench-credential")
    assignments = " ".join(f"{name}={value}" for name, value in env.items())
    return f"env PYTHONPATH={out / 'src'} {assignments} {py} -m {pkg}"


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = ""
    try:
        kb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")))
        mem = f"{kb / 1048576:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    node = shutil.which("node")
    nv = subprocess.run([node, "--version"], text=True, capture_output=True).stdout.strip() if node else "none"
    return {"date": dt.datetime.now().isoformat(timespec="minutes"), "platform": platform.platform(),
            "cpu": cpu, "cpus": os.cpu_count(), "memory": mem, "python": platform.python_version(), "node": nv,
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


def get(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def fmt(v: Any, spec: str = "{:,.0f}") -> str:
    return "–" if v is None else spec.format(v)


def table(results: dict[str, Any]) -> str:
    cols = ["spec (ops)", "server", "generate s (CPU s)", "cold start ms", "cold CPU ms", "tools", "tools/list KiB", "overhead µs med",
            "overhead µs p99", "calls/s @16", "peak RSS MiB", "notes"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for name, r in results["specs"].items():
        rep = r.get("report") or {}
        direct = get(rep, "direct", "us") or {}
        ops = get(rep, "meta", "spec_operations")
        for s in rep.get("servers", []):
            key = s["name"]
            gen = r.get("generate", {}).get(key) or {}
            gen_s = fmt(gen.get("seconds"), "{:.2f}") + (f" ({gen['cpu_seconds']:.2f})" if "cpu_seconds" in gen else "")
            if key == "omg" and gen:
                gen_s = fmt(sum(gen.get(k) or 0 for k in ("generate_s", "install_s", "build_s")), "{:.2f}")
            notes = []
            if key == "omg" and gen.get("status") not in (None, "ok"):
                notes.append(f"build {gen.get('status')}")
            if key == "fastmcp":
                notes.append("builds tools at start-up")
            if s.get("failed"):
                notes.append("FAILED: " + str(s["failed"])[:120].replace("|", "/"))
            errs = (get(s, "call", "errors") or 0) + (get(s, "throughput", "errors") or 0)
            if errs:
                notes.append(f"{errs} tool errors")
            if s.get("upstream_hits_per_call") not in (None, 1, 1.0):
                notes.append(f"upstream hits/call {s.get('upstream_hits_per_call')}")
            call = get(s, "call", "us") or {}
            p99 = call.get("p99") - direct["p99"] if call.get("p99") is not None and direct.get("p99") else None
            rows.append("| " + " | ".join([
                f"{name} ({fmt(ops)})", LABEL.get(key, key), gen_s if gen else "–",
                fmt(get(s, "cold_start_ms", "median")), fmt(get(s, "cold_cpu_ms", "median")), fmt(s.get("tools")),
                fmt(None if s.get("tools_list_bytes") is None else s["tools_list_bytes"] / 1024, "{:,.1f}"),
                fmt(get(s, "call", "overhead_us")), fmt(p99), fmt(get(s, "throughput", "calls_per_s")),
                fmt(get(s, "mem_after_calls", "hwm_mib"), "{:.0f}"), "; ".join(notes)]) + " |")
        if direct:
            rows.append(f"| {name} ({fmt(ops)}) | direct httpx (no MCP) | | | | | | 0 (= {fmt(direct.get('median'))} µs)"
                        f" | (= {fmt(direct.get('p99'))} µs) | {fmt(get(rep, 'direct', 'throughput', 'calls_per_s'))}"
                        " | | reference |")
    http = [(n, r["http"]) for n, r in results["specs"].items() if r.get("http")]
    if http:
        balance = http[0][1].get("balance", "uvicorn")
        how = ("2 workers = 2 single-worker processes on 2 ports, connections spread round-robin as a load balancer "
               "would" if balance == "ports" else "2 workers = `uvicorn --workers 2` on one port")
        rows += ["", f"HTTP transport (stateless streamable HTTP under uvicorn, 16 keep-alive connections; {how}; "
                 "server and load-generator CPU per call):", "",
                 "| spec | calls/s 1 worker | calls/s 2 workers | scaling | server CPU µs/call (1 / 2) "
                 "| load generator CPU µs/call | errors |", "|---|---|---|---|---|---|---|"]
        for n, h in http:
            sv = h.get("servers") or []
            one = next((x for x in sv if x["workers"] == 1), {})
            two = next((x for x in sv if x["workers"] == 2), {})
            errs = sum(x.get("errors") or 0 for x in sv)
            rows.append(f"| {n} | {fmt(one.get('calls_per_s'))} | {fmt(two.get('calls_per_s'))} | "
                        f"{fmt(h.get('scaling'), '{:.2f}×')} | {fmt(one.get('server_cpu_us_per_call'))} / "
                        f"{fmt(two.get('server_cpu_us_per_call'))} | {fmt(one.get('client_cpu_us_per_call'))} | "
                        f"{errs}{' ' + h['failed'] if h.get('failed') else ''} |")
    return "\n".join(rows)


def targets(results: dict[str, Any]) -> str:
    """The issue's targets, as ratios within this run."""
    def srv(spec: str, key: str) -> dict[str, Any]:
        rep = get(results, "specs", spec, "report") or {}
        return next((s for s in rep.get("servers", []) if s["name"] == key), {})

    lines = ["| target | measured | met |", "|---|---|---|"]

    def add(what: str, value: Any, ok: bool | None) -> None:
        if ok is None:
            return
        lines.append(f"| {what} | {value} | {'–' if ok is None else ('yes' if ok else '**no**')} |")

    def ratio(a: Any, b: Any) -> float | None:
        return a / b if a is not None and b else None

    g, gf, gfm = srv("github", "ours"), srv("github", "floor"), srv("github", "fastmcp")
    c, cf, cfm = (get(x, "cold_start_ms", "median") for x in (g, gf, gfm))
    r = ratio(c, cf)
    add("GitHub cold start ≤ 1.15× floor", f"{fmt(c)} ms vs {fmt(cf)} ms = {fmt(r, '{:.2f}×')}",
        None if r is None else r <= 1.15)
    u, uf = get(g, "cold_cpu_ms", "median"), get(gf, "cold_cpu_ms", "median")
    r = ratio(u, uf)
    add("(same, as CPU time of the server: robust to other load)", f"{fmt(u)} ms vs {fmt(uf)} ms = {fmt(r, '{:.2f}×')}",
        None if r is None else r <= 1.15)
    cc = get(srv("github", "compact"), "cold_start_ms", "median")
    r = ratio(cc, cf)
    add("GitHub cold start with --compact ≤ 1.15× floor", f"{fmt(cc)} ms vs {fmt(cf)} ms = {fmt(r, '{:.2f}×')}",
        None if r is None else r <= 1.15)
    r = ratio(cfm, c)
    add("GitHub cold start ≥ 9× faster than FastMCP", f"{fmt(cfm)} ms / {fmt(c)} ms = {fmt(r, '{:.1f}×')}",
        None if r is None else r >= 9)
    for spec in results["specs"]:
        o, f, m = srv(spec, "ours"), srv(spec, "floor"), srv(spec, "fastmcp")
        oo, fo = get(o, "call", "overhead_us"), get(f, "call", "overhead_us")
        if oo is not None and fo is not None:
            add(f"{spec}: per-call overhead ≤ floor + 200 µs", f"{fmt(oo)} vs {fmt(fo)} µs", oo - fo <= 200)
        ot, ft, mt = (get(x, "throughput", "calls_per_s") for x in (o, f, m))
        r = ratio(ot, ft)
        if r is not None:
            add(f"{spec}: calls/s ≥ 0.9× floor", f"{fmt(ot)} vs {fmt(ft)} = {r:.2f}×", r >= 0.9)
        r = ratio(ot, mt)
        if r is not None:
            add(f"{spec}: calls/s ≥ 1.3× FastMCP", f"{fmt(ot)} vs {fmt(mt)} = {r:.2f}×", r >= 1.3)
    h = get(results, "specs", "github", "http") or get(results, "specs", "petstore", "http")
    if h and h.get("scaling") is not None:
        add("HTTP: 2 workers ≥ 1.7× of 1 worker", f"{h['scaling']:.2f}×", h["scaling"] >= 1.7)
    b = g.get("tools_list_bytes")
    if b is not None:
        add("GitHub tools/list ≤ 1.2 MB (output schemas on)", f"{b / 1e6:.2f} MB", b <= 1.2e6)
    gc = get(results, "specs", "github", "generate", "compact", "tools_json_bytes")
    if gc is not None:
        add("GitHub tools/list with --compact (well below 1.2 MB)", f"{gc / 1e6:.2f} MB (tools.json)", gc <= 0.8e6)
    hwm = get(g, "mem_after_calls", "hwm_mib")
    if hwm is not None:
        add("GitHub peak RSS ≤ 100 MiB", f"{hwm:.0f} MiB", hwm <= 100)
    sc = get(srv("stripe", "ours"), "cold_start_ms", "median")
    if sc is not None:
        add("Stripe cold start < 1 s", f"{sc:.0f} ms", sc < 1000)
    gs = get(results, "specs", "github", "generate", "ours", "seconds")
    gc2 = get(results, "specs", "github", "generate", "ours", "cpu_seconds")
    if gs is not None:
        add("GitHub generation ≤ 5 s", f"{gs:.2f} s wall" + (f", {gc2:.2f} s CPU" if gc2 is not None else ""),
            gs <= 5)
    return "\n".join(lines)


def write_readme(path: Path, results: dict[str, Any]) -> None:
    m = results["machine"]
    body = "\n".join([
        START,
        f"Run of `bench/run{(' ' + ' '.join(results['argv'])) if results['argv'] else ''}` on {m['date']}: "
        f"{m['cpus']} CPUs ({m['cpu'] or 'unknown CPU'}), {m['memory']} RAM, {m['platform']}, Python {m['python']}, "
        f"Node {m['node']}; load average {m['loadavg'][0]} at the start, "
        f"{results.get('loadavg_end', ['?'])[0]} at the end. Raw JSON: `bench/results/` (or --out).",
        "",
        table(results),
        "",
        "Targets (ratios within this run):",
        "",
        targets(results),
        END,
    ])
    text = path.read_text(encoding="utf-8") if path.exists() else "# bench\n\n"
    if START in text and END in text:
        text = text[: text.index(START)] + body + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="bench/run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--specs", default=",".join(SPECS), help=f"comma list from tools/list-specs --named ({','.join(SPECS)})")
    ap.add_argument("--servers", default=",".join(SERVERS), help=f"comma list ({','.join(SERVERS)}); ours is always first")
    ap.add_argument("--tiny", action="store_true", help="seconds-long smoke run: petstore, ours only, few calls")
    ap.add_argument("--work", default=os.environ.get("BENCH_WORK", "/tmp/mcp-codegen-bench"),
                    help="generated packages and peer builds (default /tmp/mcp-codegen-bench)")
    ap.add_argument("--out", default=str(HERE / "results"), help="raw JSON results (default bench/results)")
    ap.add_argument("--readme", default=str(HERE / "README.md"), help="Markdown file whose results section is rewritten")
    ap.add_argument("--no-setup", action="store_true", help="do not run peers/setup-all.sh (peers already installed)")
    ap.add_argument("--no-http", action="store_true", help="skip the HTTP 1-vs-2-workers throughput run")
    ap.add_argument("--python", help="interpreter that runs the harness and our server (default: the bench venv with "
                    "the pinned SDK; with --tiny: this interpreter)")
    ap.add_argument("--runs", type=int, default=7, help="cold starts per server (interleaved)")
    ap.add_argument("--calls", type=int, default=400, help="sequential calls per server")
    ap.add_argument("--tp-seconds", type=float, default=5.0, help="seconds of 16-in-flight load per server")
    ap.add_argument("--http-seconds", type=float, default=8.0, help="seconds of HTTP load per worker count")
    ap.add_argument("--max-total", type=float, default=2400.0, help="time budget per spec for the harness (s)")
    ap.add_argument("--from-summary", metavar="JSON", help="only rewrite --readme from a summary.json of an earlier run")
    a = ap.parse_args(argv)
    if a.from_summary:
        earlier = json.loads(Path(a.from_summary).read_text(encoding="utf-8"))
        write_readme(Path(a.readme), earlier)
        print(table(earlier) + "\n\n" + targets(earlier))
        return 0
    specs = [s for s in a.specs.split(",") if s]
    servers = [s for s in a.servers.split(",") if s]
    knobs = ["--runs", str(a.runs), "--calls", str(a.calls), "--tp-seconds", str(a.tp_seconds),
             "--max-total", str(a.max_total)]
    http_knobs = ["--seconds", str(a.http_seconds)]
    if a.tiny:
        if a.specs == ",".join(SPECS):
            specs = ["petstore"]
        if a.servers == ",".join(SERVERS):
            servers = ["ours"]
        knobs = ["--runs", "1", "--cold-warmup", "0", "--calls", "20", "--warmup", "2", "--tp-seconds", "0.5",
                 "--tp-calls", "200", "--rounds", "1", "--max-total", "300"]
        http_knobs = ["--seconds", "0.5", "--rounds", "1", "--warmup", "2", "--max-total", "120"]
    if "ours" in servers:
        servers = ["ours"] + [s for s in servers if s != "ours"]  # the harness's ratios are relative to it
    work, out = Path(a.work), Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    peers_needed = any(s in servers for s in ("floor", "fastmcp", "omg"))
    if peers_needed and not a.no_setup:
        r = sh([PEERS / "setup-all.sh"], 1800)
        if r.returncode != 0:
            raise SystemExit(f"peer set-up failed:\n{r.stderr[-2000:]}")
    py = a.python or (sys.executable if a.tiny or not (TOOLS / "bench-venv/bin/python").exists()
                      else str(TOOLS / "bench-venv/bin/python"))
    results: dict[str, Any] = {"machine": machine(), "argv": argv, "python": py, "specs": {}}
    for name, spec in spec_paths(specs).items():
        r: dict[str, Any] = {"spec": spec, "generate": {}}
        results["specs"][name] = r
        cmds: list[str] = []
        if "ours" in servers:
            gen = generate(spec, work / f"ours-{name}", [])
            r["generate"]["ours"] = gen
            log(f"{name}: mcp-codegen {gen['seconds']} s ok={gen['ok']}")
            if gen["ok"]:
                cmds.append(f"ours={our_command(py, work / f'ours-{name}', gen['package'])}")
        if "compact" in servers or ("ours" in servers and not a.tiny):  # its size is in the targets
            gen = r["generate"]["compact"] = generate(spec, work / f"compact-{name}", ["--compact"])
            if gen["ok"] and "compact" in servers:
                cmds.append(f"compact={our_command(py, work / f'compact-{name}', gen['package'])}")
        if "floor" in servers:
            cmds.append(f"floor={TOOLS / 'bench-venv/bin/python'} {PEERS / 'floor_server.py'} --base-url {{base_url}}")
        if "fastmcp" in servers:
            cmds.append(f"fastmcp={TOOLS / 'fastmcp-venv/bin/python'} {PEERS / 'fastmcp_server.py'} "
                        "--spec {spec} --base-url {base_url}")
        if "omg" in servers:
            d = work / f"omg-{name}"
            shutil.rmtree(d, ignore_errors=True)
            g = sh([PEERS / "gen-openapi-mcp-generator", spec, d], 1800)
            try:
                r["generate"]["omg"] = json.loads((d / "bench-gen.json").read_text())
            except (OSError, ValueError):
                r["generate"]["omg"] = {"status": "failed", "why": g.stderr[-500:]}
            if g.returncode in (0, 2) and g.stdout.strip():
                cmds.append("omg=" + g.stdout.strip().splitlines()[-1])
        if not cmds:
            continue
        report_path = out / f"{name}.json"
        argv_h = [py, HERE / "mcp_bench.py", "--spec", spec, "--json", report_path, "--logs", work / f"logs-{name}",
                  *knobs]
        for c in cmds:
            argv_h += ["--server", c]
        h = sh(argv_h, a.max_total + 600)
        (out / f"{name}.md").write_text(h.stdout)
        if h.returncode != 0:
            log(f"{name}: harness exit {h.returncode}: {h.stderr[-1500:]}")
        try:
            r["report"] = json.loads(report_path.read_text())
        except (OSError, ValueError):
            r["report"] = {"servers": [], "failed": h.stderr[-1500:]}
        gen = r["generate"].get("ours") or {}
        if not a.no_http and gen.get("ok"):
            hp = out / f"{name}.http.json"
            hh = sh([py, HERE / "http_bench.py", "--package", gen["package"], "--src", work / f"ours-{name}" / "src",
                     "--python", py, "--json", hp, "--logs", work / f"logs-{name}", *http_knobs], 900)
            try:
                r["http"] = json.loads(hp.read_text())
            except (OSError, ValueError):
                r["http"] = {"failed": hh.stderr[-500:], "servers": []}
    results["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    (out / "summary.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    write_readme(Path(a.readme), results)
    print(table(results))
    print()
    print(targets(results))
    failed = [n for n, r in results["specs"].items()
              if not (r.get("report") or {}).get("servers") or any(s.get("failed") for s in r["report"]["servers"])]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
