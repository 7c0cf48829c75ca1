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
SERVERS = ("ours", "compact", "floor", "nosdk", "fastmcp", "omg")
sys.path.insert(0, str(ROOT / "tools"))
from named_specs import named_specs  # noqa: E402
from server_env import server_environment  # noqa: E402

sys.path.insert(0, str(HERE))
import report  # noqa: E402  (bench/report.py)

LABEL = {
    "ours": "mcp-codegen",
    "floor": "SDK floor (same tools)",
    "nosdk": "no-SDK floor (same tools)",
    "fastmcp": "FastMCP",
    "omg": "openapi-mcp-generator",
    "compact": "mcp-codegen --compact",
}


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def sh(argv: list[str], timeout: float, **kw: Any) -> subprocess.CompletedProcess[str]:
    log("$ " + " ".join(map(str, argv)))
    return subprocess.run([str(a) for a in argv], text=True, capture_output=True, timeout=timeout, **kw)


def spec_paths(names: list[str]) -> dict[str, str]:
    """name -> path from tools/list-specs (the corpus is installed by tools/fetch-corpus if it is missing)."""
    found = named_specs()
    if not all(n in found and Path(found[n]).is_file() for n in names):
        log("installing the corpus (tools/fetch-corpus)")
        found = named_specs(install=True)
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"specs not in the corpus: {missing}")
    return {n: found[n] for n in names}


def generate(spec: str, out: Path, extra: list[str], runs: int = 1) -> dict[str, Any]:
    """Run mcp-codegen (including formatting and writing) `runs` times, each in a fresh process and into a fresh
    folder: wall and CPU seconds of the median run, with min/median/max of each. The first run may fill the
    formatting cache (emit/cache.py); `first_seconds` keeps it apart."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(max(1, runs)):
        shutil.rmtree(out, ignore_errors=True)
        t0, c0 = time.perf_counter(), _children_cpu()
        # the `tools` surface: every operation listed, as the peers list them (tokens.py measures the surfaces)
        r = sh([sys.executable, "-m", "codegen", "generate", spec, "-o", out, "-q", "--surface", "tools", *extra], 600)
        walls.append(time.perf_counter() - t0)
        cpus.append(_children_cpu() - c0)
        if r.returncode != 0:
            break
    seconds, cpu = sorted(walls)[len(walls) // 2], sorted(cpus)[len(cpus) // 2]
    pkg = next(iter(sorted(p.name for p in (out / "src").iterdir() if p.is_dir())), None) if r.returncode == 0 else None
    res: dict[str, Any] = {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "ok": r.returncode == 0 and pkg is not None,
        "package": pkg,
        "runs": len(walls),
        "first_seconds": round(walls[0], 2),
        "wall": {"min": round(min(walls), 2), "median": round(seconds, 2), "max": round(max(walls), 2)},
        "cpu": {"min": round(min(cpus), 2), "median": round(cpu, 2), "max": round(max(cpus), 2)},
    }
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


def machine(reference_runs: int = 3) -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    mem = ""
    try:
        kb = int(
            next(
                line.split()[1]
                for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")
            )
        )
        mem = f"{kb / 1048576:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    node = shutil.which("node")
    nv = subprocess.run([node, "--version"], text=True, capture_output=True).stdout.strip() if node else "none"
    return {
        "date": dt.datetime.now().isoformat(timespec="minutes"),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "node": nv,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "reference_cpu_s": reference_seconds(reference_runs),
    }


# A fixed pure-Python workload (JSON both ways, a loop of arithmetic): its CPU seconds say how fast this machine runs
# Python, so runs on different machines can be read side by side (the targets are absolute seconds)
REFERENCE = """
import json, time
start = time.process_time()
rows = [{"id": i, "name": str(i) * 3, "tags": [i % 7, i % 11]} for i in range(200_000)]
json.loads(json.dumps(rows))
sum(i * i for i in range(2_000_000))
print(round(time.process_time() - start, 3))
"""


def reference_seconds(runs: int = 3) -> float | None:
    """The least CPU seconds of `runs` fresh interpreters running REFERENCE (None when it cannot run)."""
    found = []
    for _ in range(runs):
        try:
            done = subprocess.run([sys.executable, "-c", REFERENCE], capture_output=True, text=True, timeout=120)
            found.append(float(done.stdout.strip()))
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return None
    return min(found)


def write_readme(path: Path, results: dict[str, Any], project_readme: Path | None) -> None:
    """The results section of `path` and the summary in the project README, from the results (bench/report.py)."""
    scaling_path = Path(results.get("out") or HERE / "results") / "scaling.json"
    scaling = json.loads(scaling_path.read_text(encoding="utf-8")) if scaling_path.is_file() else None
    report.write_all(results, scaling, path, project_readme)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(
        prog="bench/run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--specs", default=",".join(SPECS), help=f"comma list from tools/list-specs --named ({','.join(SPECS)})"
    )
    ap.add_argument(
        "--servers", default=",".join(SERVERS), help=f"comma list ({','.join(SERVERS)}); ours is always first"
    )
    ap.add_argument("--tiny", action="store_true", help="seconds-long smoke run: petstore, ours only, few calls")
    ap.add_argument(
        "--work",
        default=os.environ.get("BENCH_WORK", "/tmp/mcp-codegen-bench"),
        help="generated packages and peer builds (default /tmp/mcp-codegen-bench)",
    )
    ap.add_argument("--out", default=str(HERE / "results"), help="raw JSON results (default bench/results)")
    ap.add_argument(
        "--readme", default=str(HERE / "README.md"), help="Markdown file whose results section is rewritten"
    )
    ap.add_argument(
        "--project-readme",
        default=str(ROOT / "README.md"),
        help="Markdown file whose bench summary section is rewritten ('' : none; never with --tiny)",
    )
    ap.add_argument("--no-setup", action="store_true", help="do not run peers/setup-all.sh (peers already installed)")
    ap.add_argument("--no-http", action="store_true", help="skip the HTTP 1-vs-2-workers throughput run")
    ap.add_argument(
        "--python",
        help="interpreter that runs the harness and our server (default: the bench venv with "
        "the pinned SDK; with --tiny: this interpreter)",
    )
    ap.add_argument("--runs", type=int, default=7, help="cold starts per server (interleaved)")
    ap.add_argument("--gen-runs", type=int, default=3, help="generations of each spec (min/median/max)")
    ap.add_argument(
        "--loadgen-seconds",
        type=float,
        default=5.0,
        help="seconds of 16-in-flight load from bench/loadgen.py (a second process) per server",
    )
    ap.add_argument("--calls", type=int, default=400, help="sequential calls per server")
    ap.add_argument("--tp-seconds", type=float, default=5.0, help="seconds of 16-in-flight load per server")
    ap.add_argument("--http-seconds", type=float, default=8.0, help="seconds of HTTP load per worker count")
    ap.add_argument("--max-total", type=float, default=2400.0, help="time budget per spec for the harness (s)")
    ap.add_argument(
        "--from-summary", metavar="JSON", help="only rewrite --readme from a summary.json of an earlier run"
    )
    a = ap.parse_args(argv)
    if a.from_summary:
        earlier = json.loads(Path(a.from_summary).read_text(encoding="utf-8"))
        write_readme(Path(a.readme), earlier, None if a.tiny or not a.project_readme else Path(a.project_readme))
        print(report.table(earlier) + "\n\n" + report.targets_table(report.targets(earlier, None)))
        return 0
    specs = [s for s in a.specs.split(",") if s]
    servers = [s for s in a.servers.split(",") if s]
    knobs = [
        "--runs",
        str(a.runs),
        "--calls",
        str(a.calls),
        "--tp-seconds",
        str(a.tp_seconds),
        "--loadgen-seconds",
        str(a.loadgen_seconds),
        "--max-total",
        str(a.max_total),
    ]
    http_knobs = ["--seconds", str(a.http_seconds)]
    if a.tiny:
        if a.specs == ",".join(SPECS):
            specs = ["petstore"]
        if a.servers == ",".join(SERVERS):
            servers = ["ours"]
        knobs = [
            "--runs",
            "1",
            "--cold-warmup",
            "0",
            "--calls",
            "20",
            "--warmup",
            "2",
            "--tp-seconds",
            "0.5",
            "--tp-calls",
            "200",
            "--rounds",
            "1",
            "--loadgen-seconds",
            "0.5",
            "--max-total",
            "300",
        ]
        http_knobs = ["--seconds", "0.5", "--rounds", "1", "--warmup", "2", "--max-total", "120"]
    if "ours" in servers:
        servers = ["ours"] + [s for s in servers if s != "ours"]  # the harness's ratios are relative to it
    if not a.tiny and "omg" not in servers:
        servers.append("omg")  # the Node generator is in every full run: the targets are ratios against it
    work, out = Path(a.work), Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    peers_needed = any(s in servers for s in ("fastmcp", "omg"))
    if peers_needed and not a.no_setup:
        r = sh([PEERS / "setup-all.sh"], 1800)
        if r.returncode != 0:
            raise SystemExit(f"peer set-up failed:\n{r.stderr[-2000:]}")
    py = a.python or (
        sys.executable
        if a.tiny or not (TOOLS / "bench-venv/bin/python").exists()
        else str(TOOLS / "bench-venv/bin/python")
    )
    results: dict[str, Any] = {"machine": machine(1 if a.tiny else 3), "argv": argv, "python": py, "specs": {}}
    if "ours" in servers:  # the generator's modules as bytecode, as a pip install leaves them (an editable
        # install under PYTHONDONTWRITEBYTECODE would otherwise compile them again in every timed run)
        sh([sys.executable, "-m", "compileall", "-q", str(ROOT / "codegen")], 300)
    for name, spec in spec_paths(specs).items():
        r: dict[str, Any] = {"spec": spec, "generate": {}}
        results["specs"][name] = r
        cmds: list[str] = []
        if "ours" in servers:
            gen = generate(spec, work / f"ours-{name}", [], a.gen_runs)
            r["generate"]["ours"] = gen
            log(f"{name}: mcp-codegen {gen['seconds']} s ok={gen['ok']}")
            if gen["ok"]:
                cmds.append(f"ours={our_command(py, work / f'ours-{name}', gen['package'])}")
        if "compact" in servers or ("ours" in servers and not a.tiny):  # its size is in the targets
            gen = r["generate"]["compact"] = generate(spec, work / f"compact-{name}", ["--compact"])
            if gen["ok"] and "compact" in servers:
                cmds.append(f"compact={our_command(py, work / f'compact-{name}', gen['package'])}")
        ours_tools = (
            work / f"ours-{name}" / "src" / str((r["generate"].get("ours") or {}).get("package")) / "tools.json"
        )
        if "floor" in servers and ours_tools.is_file():  # the same tools as ours, on the SDK's default stdio
            cmds.append(f"floor={py} {PEERS / 'floor_server.py'} --base-url {{base_url}} --tools {ours_tools}")
        if "nosdk" in servers and ours_tools.is_file():  # the same tools, no SDK, the same transport (stdio pipes)
            cmds.append(f"nosdk={py} {PEERS / 'nosdk_server.py'} --base-url {{base_url}} --tools {ours_tools}")
        if "fastmcp" in servers:
            cmds.append(
                f"fastmcp={TOOLS / 'fastmcp-venv/bin/python'} {PEERS / 'fastmcp_server.py'} "
                "--spec {spec} --base-url {base_url}"
            )
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
        argv_h = [
            py,
            HERE / "mcp_bench.py",
            "--spec",
            spec,
            "--json",
            report_path,
            "--logs",
            work / f"logs-{name}",
            *knobs,
        ]
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
            hh = sh(
                [
                    py,
                    HERE / "http_bench.py",
                    "--package",
                    gen["package"],
                    "--src",
                    work / f"ours-{name}" / "src",
                    "--python",
                    py,
                    "--json",
                    hp,
                    "--logs",
                    work / f"logs-{name}",
                    *http_knobs,
                ],
                900,
            )
            try:
                r["http"] = json.loads(hp.read_text())
            except (OSError, ValueError):
                r["http"] = {"failed": hh.stderr[-500:], "servers": []}
    results["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    (out / "summary.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    results["out"] = str(out)
    write_readme(Path(a.readme), results, None if a.tiny or not a.project_readme else Path(a.project_readme))
    print(report.table(results))
    print()
    print(report.targets_table(report.targets(results, None)))
    failed = [
        n
        for n, r in results["specs"].items()
        if not (r.get("report") or {}).get("servers") or any(s.get("failed") for s in r["report"]["servers"])
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
