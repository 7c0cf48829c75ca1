#!/usr/bin/env python3
"""Generation time and memory against the number of operations, with a linear fit (bench/results/scaling.json).

    bench/gen_scaling.py                       # Microsoft Graph cut to 10 ... 11,422 operations, 3 runs each
    bench/gen_scaling.py --sizes 10,1000 --runs 1 --out /tmp/scaling.json

The subsets keep the spec whole except `paths`: the first path items (in the document's order) holding at least
N operations. Each generation is a fresh `python -m codegen generate --no-validate` process, timed from spawn to exit
(formatting cache warm after the first run, as in everyday use; without --no-validate, a subset of up to 400 operations would be
validated as a whole 20 MB document, a fixed cost that has nothing to do with the operations); its wall and CPU seconds and peak RSS are recorded, and CPU seconds are fitted
against operations by least squares (bench/report.py renders the table). Bounded: every run has a time limit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from report import linear_fit  # noqa: E402
from run import reference_seconds  # noqa: E402

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def find_graph() -> str:
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "list-specs"), "--tsv", "--set", "directory"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    for line in out.splitlines():
        if line.split("\t")[0].endswith("/microsoft.com/graph.json"):
            return line.split("\t")[0]
    raise SystemExit("Microsoft Graph is not in the corpus (tools/fetch-corpus); pass --spec")


def subset(document: dict[str, Any], operations: int) -> tuple[dict[str, Any], int]:
    paths, count = {}, 0
    for path, item in (document.get("paths") or {}).items():
        if count >= operations:
            break
        paths[path] = item
        count += len(METHODS.intersection(item)) if isinstance(item, dict) else 0
    return {**document, "paths": paths}, count


def measure(spec: Path, out: Path, timeout: float) -> dict[str, float]:
    """One `python -m codegen generate` process, as a user runs it (its exit included): wall seconds from spawn to
    exit, CPU seconds and peak RSS from the kernel's accounting of that process (wait4)."""
    command = [
        sys.executable,
        "-m",
        "codegen",
        "generate",
        str(spec),
        "-o",
        str(out),
        "-q",
        "--name",
        "scaled",
        "--no-validate",
    ]
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, cwd=ROOT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                raise SystemExit(f"generation took more than {timeout} s: {spec}")
            time.sleep(0.02)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"generation exited {process.returncode}: {errors.read().decode()[-1000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", help="a large OpenAPI JSON document (default: Microsoft Graph from the corpus)")
    ap.add_argument("--sizes", default="10,100,300,1000,3000,6000,11422")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=str(HERE / "results" / "scaling.json"))
    a = ap.parse_args()
    spec = a.spec or find_graph()
    document = json.loads(Path(spec).read_text(encoding="utf-8"))
    # the generator's modules as bytecode, as a pip install leaves them (not compiled again in every timed run)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "codegen")], capture_output=True, timeout=300)
    load = [round(x, 2) for x in os.getloadavg()]
    points = []
    with tempfile.TemporaryDirectory(prefix="mcp-codegen-scaling-") as tmp:
        for size in sorted({int(s) for s in a.sizes.split(",")}):
            cut, count = subset(document, size)
            path = Path(tmp) / f"spec-{size}.json"
            path.write_text(json.dumps(cut), encoding="utf-8")
            runs = [measure(path, Path(tmp) / f"out-{size}-{i}", a.timeout) for i in range(a.runs)]
            tools = len(json.loads(next((Path(tmp) / f"out-{size}-0" / "src").glob("*/tools.json")).read_text()))
            walls, cpus = [r["wall"] for r in runs], [r["cpu"] for r in runs]
            points.append(
                {
                    "operations": count,
                    "tools": tools,
                    "seconds": round(statistics.median(walls), 2),
                    "wall": {
                        "min": round(min(walls), 2),
                        "median": round(statistics.median(walls), 2),
                        "max": round(max(walls), 2),
                    },
                    "cpu_seconds": round(statistics.median(cpus), 2),
                    "peak_mib": round(max(r["peak_mib"] for r in runs), 1),
                }
            )
            print(f"[scaling] {count} operations: {points[-1]}", file=sys.stderr, flush=True)
    fit = linear_fit([p["operations"] for p in points], [p["cpu_seconds"] for p in points]) if len(points) > 1 else None
    result = {
        "spec": spec,
        "spec_name": Path(spec).stem,
        "points": points,
        "fit": fit,
        "runs": a.runs,
        "loadavg": load,
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%dT%H:%M"),
        "reference_cpu_s": reference_seconds(),
        "how": f"{Path(spec).name} cut to its first path items, --no-validate, {a.runs} fresh generations per size",
    }
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
