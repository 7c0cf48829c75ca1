"""Run the MCP Inspector CLI (the project's pinned `tools/inspector`) from a test; stdlib only.

    from support.inspector import run_inspector   # or tests.support.inspector, depending on sys.path

    res = run_inspector([sys.executable, "-m", "myserver", "--method", "tools/list"],
                        env={"API_BASE_URL": base_url})
    assert res.returncode == 0, res.stderr
    tools = json.loads(res.stdout)["tools"]

`args` is everything after `--cli`: the server command (or an http://127.0.0.1:PORT/mcp URL), then the
Inspector options (`--method`, `--tool-name`, `--tool-arg k=v`, `-e KEY=VAL`, ...). The first call may install
the Inspector (npm, ~10 s) into $MCP_CODEGEN_TOOLS (default ~/.cache/mcp-codegen-tools).

Exit codes of Inspector 0.15.0: 0 on success *and* for a result with `isError: true` (check the JSON), 1 for a
JSON-RPC error (unknown tool, invalid structured content, ...).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
INSPECTOR_SCRIPT = REPO_ROOT / "tools" / "inspector"

__all__ = ["INSPECTOR_SCRIPT", "run_inspector"]


def run_inspector(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `tools/inspector --cli *args` and return the finished process (stdout: the result JSON).

    `env` is merged over os.environ for the Inspector; the stdio server it starts inherits that environment
    (Inspector 0.15.0). `-e KEY=VAL` in `args` sets a server variable explicitly. Does not raise on a non-zero
    exit; raises subprocess.TimeoutExpired after `timeout` seconds.
    """
    return subprocess.run(
        [str(INSPECTOR_SCRIPT), "--cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
        check=False,
    )
