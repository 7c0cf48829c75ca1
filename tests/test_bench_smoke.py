"""Smoke test: `bench/run --tiny` still works end to end (generate petstore, serve it, call it over stdio and
HTTP, write the table). No timing assertions: speed goals live in bench/README.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_run_tiny_writes_a_table(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# bench\n\nkept text\n", encoding="utf-8")
    run = subprocess.run(
        [
            str(ROOT / "bench" / "run"),
            "--tiny",
            "--readme",
            str(readme),
            "--out",
            str(tmp_path / "out"),
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# bench\n\nkept text\n")
    assert "| petstore (20) | mcp-codegen |" in text
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    petstore = summary["specs"]["petstore"]
    assert petstore["generate"]["ours"]["ok"]
    [ours] = petstore["report"]["servers"]
    assert ours["name"] == "ours" and not ours["failed"]
    assert ours["tools"] == 20
    assert ours["upstream_hits_per_call"] == 1
    assert ours["call"]["errors"] == 0 and ours["throughput"]["errors"] == 0
    assert ours["call"]["us"]["n"] == 20
    http = petstore["http"]
    assert [s["workers"] for s in http["servers"]] == [1, 2]
    assert all(s["calls"] > 0 and s["errors"] == 0 for s in http["servers"])
