"""The environment a generated server needs to reach a test upstream: its base URL and a dummy value for every
credential variable it reads, so calls to secured operations reach the upstream instead of stopping at
"set <PREFIX>_<SCHEME>". Shared by the corpus runner (tools/corpus_calls.py) and the benchmarks (bench/).

The names come from the generated package itself (settings.ENV_PREFIX, settings.CREDENTIAL_VARIABLES), read by
importing it in a child interpreter that has the package's dependencies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = "from {package} import settings as s; print(s.ENV_PREFIX); print(*s.CREDENTIAL_VARIABLES, sep='\\n')"


def server_environment(
    src: Path, package: str, base_url: str, *, python: str = sys.executable, dummy: str = "test-credential"
) -> dict[str, str]:
    """`<PREFIX>_BASE_URL` and each credential variable of the package under `src` (its src/ folder)."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    lines = subprocess.run(
        [python, "-c", PROBE.format(package=package)], env=env, check=True, capture_output=True, text=True, timeout=120
    ).stdout.split()
    prefix, credentials = lines[0], lines[1:]
    return {f"{prefix}_BASE_URL": base_url} | {name: dummy for name in credentials}
