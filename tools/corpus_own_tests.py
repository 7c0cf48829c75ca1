"""The generated package's own tests, for `tools/corpus-run --own-tests`: pytest runs the package's tests/ in its
folder, with PYTHONPATH=<out>/src and this Python (which has the runtime dependencies), limited to a `-k`
selection. The default selection is the per-tool part: every tool gets sample arguments that its inputSchema
accepts (test_sample_arguments, which skips naming the tools it cannot build arguments for) and, called with them,
sends its operation (test_every_tool_sends_its_operation, legacy mode).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SELECTION = "test_sample_arguments or (test_every_tool_sends_its_operation and legacy)"
UNBUILT = re.compile(r"no valid arguments could be built for (\d+) of (\d+) tools")


class OwnTestsFailed(Exception):
    """The package's own tests failed (or did not finish); the message is the useful part of pytest's output."""


def own_pytest(out: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """pytest (quiet, no cache) with `args` in the folder of the package generated in `out`, its src on PYTHONPATH."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=out,
        env={**os.environ, "PYTHONPATH": str(out / "src")},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_own_tests(out: Path, selection: str = SELECTION, timeout: float = 300) -> int:
    """Run the selected tests of the package generated in `out`; returns how many tools had no sample arguments."""
    try:
        run = own_pytest(out, "-rs", "-k", selection, "tests", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise OwnTestsFailed(f"the package's own tests did not finish within {timeout:.0f} s") from None
    if run.returncode != 0 or " passed" not in run.stdout:
        lines = [line for line in run.stdout.splitlines() if line.startswith(("E ", "FAILED", "ERROR"))]
        raise OwnTestsFailed("\n".join(lines[:20])[:1500] or (run.stdout + run.stderr)[-1500:])
    unbuilt = UNBUILT.search(run.stdout)
    return int(unbuilt[1]) if unbuilt else 0
