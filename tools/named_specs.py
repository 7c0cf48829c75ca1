"""The named specs of the installed corpus (tools/list-specs --named): GitHub, Stripe, Asana, Slack, ..., petstore.

    sys.path.insert(0, str(ROOT / "tools"))
    from named_specs import named_spec, named_specs

    named_specs()                       # {"github": "/…/api.github.com.json", ...}: the ones installed
    named_specs(install=True)           # tools/fetch-corpus first (a complete install is left alone)
    named_spec("github")                # one path; LookupError naming the spec when it is not installed

Stdlib only: imported by the tests, the benchmarks (bench/) and the other tools.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600  # seconds for tools/fetch-corpus (npm) and, apart, for tools/list-specs


def install_corpus() -> None:
    """tools/fetch-corpus: the corpus installed where it is missing or incomplete."""
    subprocess.run([str(ROOT / "tools" / "fetch-corpus")], check=True, capture_output=True, timeout=TIMEOUT)


def named_specs(install: bool = False) -> dict[str, str]:
    """name -> absolute path of each named spec the corpus holds (none without a corpus)."""
    if install:
        install_corpus()
    listed = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "list-specs"), "--named"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    rows = (line.split("\t") for line in listed.stdout.splitlines())
    return {row[0]: row[1] for row in rows if len(row) >= 2}


def named_spec(name: str, install: bool = False) -> str:
    """The corpus file of one named spec."""
    found = named_specs(install)
    if name not in found:
        raise LookupError(f"{name}: not in the installed corpus (tools/list-specs --named; tools/fetch-corpus)")
    return found[name]
